// Tests for the query line typed and erased a key at a time, filtered on the GUI thread or the worker.
#include "models/filterproxymodel.h"

#include "proxyfixture.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <utility>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_FilterProxyTyping final : public QObject
{
    Q_OBJECT

private slots:
    void typingEqualsBruteForce_data();
    void typingEqualsBruteForce();
    void asyncTypingEqualsBruteForce_data();
    void asyncTypingEqualsBruteForce();
    void fastTypingShowsTheLastQuery();
};

void tst_FilterProxyTyping::typingEqualsBruteForce_data()
{
    QTest::addColumn<QString>("query");

    QTest::newRow("state and words") << "state:running dataviz-ac";
    QTest::newRow("negated word") << "-acme crm";
    QTest::newRow("negated state grows") << "-state:fa dataviz";
    QTest::newRow("alternatives") << "state:run,sto acme";
    QTest::newRow("name term") << "name:viz-gl";
    QTest::newRow("non-ascii word") << "ärger";
    QTest::newRow("kelvin folds to k") << "kelvin-k";
    QTest::newRow("id digits") << "1 4";
    QTest::newRow("provider and age") << "provider:8 age>1d";
}

void tst_FilterProxyTyping::typingEqualsBruteForce()
{
    QFETCH(QString, query);
    Fixture f;
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= 300; ++id)
        rows << generated(id, 0);
    f.model.replaceAll(rows);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    // Typed and erased one character at a time, as the query line sends it.
    QList<QString> keystrokes;
    for (qsizetype n = 1; n <= query.size(); ++n)
        keystrokes << query.left(n);
    for (qsizetype n = query.size() - 1; n >= 0; --n)
        keystrokes << query.left(n);
    QString lastGood;
    for (const QString &text : std::as_const(keystrokes)) {
        if (f.proxy.setQuery(text))
            lastGood = text;
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
}

void tst_FilterProxyTyping::asyncTypingEqualsBruteForce_data()
{
    typingEqualsBruteForce_data();
    QTest::newRow("provider by name") << "-state:failed provider:acm";
}

void tst_FilterProxyTyping::asyncTypingEqualsBruteForce()
{
    QFETCH(QString, query);
    Fixture f;
    f.proxy.setAsyncThreshold(0); // every filter and sort on the worker
    f.model.replaceAll(generatedRows(400, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    QVERIFY(f.proxy.isFiltering());
    QTRY_COMPARE(published.count(), 1);
    QVERIFY(!f.proxy.isFiltering());
    QString lastGood;
    auto key = [&](const QString &text) {
        if (f.proxy.setQuery(text))
            lastGood = text;
    };
    for (qsizetype n = 1; n <= query.size(); ++n) {
        key(query.left(n));
        QTRY_VERIFY(!f.proxy.isFiltering());
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
    for (qsizetype n = query.size() - 1; n >= 0; --n) {
        key(query.left(n));
        QTRY_VERIFY(!f.proxy.isFiltering());
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
}

void tst_FilterProxyTyping::fastTypingShowsTheLastQuery()
{
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    f.model.replaceAll(generatedRows(3000, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"), Qt::DescendingOrder);
    // Every keystroke without waiting: older jobs are overtaken and their results dropped.
    const QString query = QStringLiteral("-state:fa dataviz-ac");
    for (qsizetype n = 1; n <= query.size(); ++n)
        f.proxy.setQuery(query.left(n)); // "-" alone is an error: the last good query stays asked for
    QVERIFY(f.proxy.isFiltering());
    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    QTRY_VERIFY(!f.proxy.isFiltering());
    QCOMPARE(published.count(), 1); // only the newest result is shown
    QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
    QCOMPARE(f.proxy.sortColumn(), f.model.kind().fieldIndex(u"name"));
    QString why;
    QVERIFY2(inNameOrder(f.proxy, Qt::DescendingOrder, &why), qPrintable(why));
}

QTEST_GUILESS_MAIN(tst_FilterProxyTyping)
#include "tst_filterproxytyping.moc"
