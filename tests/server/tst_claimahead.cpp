// How far ahead the delivery worker claims for an endpoint.
#include "server/outbox/deliveryworker.h"

#include <QtTest>

using namespace OpsDeck;

class tst_ClaimAhead : public QObject
{
    Q_OBJECT

private slots:
    void followsTheEndpointsPace_data();
    void followsTheEndpointsPace();
};

void tst_ClaimAhead::followsTheEndpointsPace_data()
{
    QTest::addColumn<int>("limit");
    QTest::addColumn<qint64>("answerGapUs");
    QTest::addColumn<qint64>("claimRoundTripUs");
    QTest::addColumn<qsizetype>("budgetShare");
    QTest::addColumn<int>("expected");

    // Before its pace is known: twice its slots, as always.
    QTest::newRow("pace unknown") << 16 << qint64(0) << qint64(3000) << qsizetype(256) << 32;
    // Slow endpoints: never fewer waiting than slots, and no more.
    QTest::newRow("an answer a second") << 16 << qint64(1000000) << qint64(3000) << qsizetype(256) << 32;
    QTest::newRow("an answer per 10 ms") << 4 << qint64(10000) << qint64(1000) << qsizetype(256) << 8;
    // What it answers in four of the store's answer times waits beside its slots.
    QTest::newRow("store answers in 1 ms") << 4 << qint64(250) << qint64(1000) << qsizetype(256) << 4 + 16;
    QTest::newRow("store answers in 2.5 ms") << 16 << qint64(500) << qint64(2500) << qsizetype(256) << 16 + 20;
    // A store that answers at once still leaves 2 ms of the endpoint's answers waiting.
    QTest::newRow("store answers at once") << 16 << qint64(100) << qint64(0) << qsizetype(256) << 16 + 20;
    QTest::newRow("floor") << 16 << qint64(100) << qint64(200) << qsizetype(256) << 16 + 20;
    // A fast endpoint behind a slow store: at most eight times its slots waiting.
    QTest::newRow("ceiling") << 16 << qint64(40) << qint64(3000) << qsizetype(256) << 16 + 128;
    QTest::newRow("one slot") << 1 << qint64(40) << qint64(3000) << qsizetype(256) << 1 + 8;
    // Waiting attempts take budget: beyond twice its slots, an endpoint keeps no more than its
    // share of the budget (two endpoints holding work: half of 256 each), and never less than
    // twice its slots (sixteen of them: 16 each).
    QTest::newRow("a half share") << 16 << qint64(40) << qint64(3000) << qsizetype(128) << 128;
    QTest::newRow("a share below twice its slots") << 16 << qint64(40) << qint64(3000) << qsizetype(16) << 32;
    QTest::newRow("a share above what it needs") << 16 << qint64(500) << qint64(2500) << qsizetype(128) << 16 + 20;
}

void tst_ClaimAhead::followsTheEndpointsPace()
{
    QFETCH(int, limit);
    QFETCH(qint64, answerGapUs);
    QFETCH(qint64, claimRoundTripUs);
    QFETCH(qsizetype, budgetShare);
    QFETCH(int, expected);
    QCOMPARE(DeliveryWorker::claimAheadFor(limit, answerGapUs, claimRoundTripUs, budgetShare), expected);
}

QTEST_GUILESS_MAIN(tst_ClaimAhead)
#include "tst_claimahead.moc"
