// Leases of deliveries another worker held: let go when the row settles without it, kept while it lives.
#include "deliveryapifixture.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/journal.h"

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_DeliveryLease : public QObject, private DeliveryApiFixture
{
    Q_OBJECT

private slots:
    void initTestCase();
    void abandonedLeaseIsLetGo_data();
    void abandonedLeaseIsLetGo();
    void expiredLeaseOfASettledRowIsLetGoByTheUpkeep_data();
    void expiredLeaseOfASettledRowIsLetGoByTheUpkeep();
};

void tst_DeliveryLease::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    startServer();
}

void tst_DeliveryLease::abandonedLeaseIsLetGo_data()
{
    QTest::addColumn<QString>("how");
    QTest::addColumn<bool>("live");
    QTest::newRow("cancelled, its worker gone") << QStringLiteral("cancel") << false;
    QTest::newRow("cancelled mid-attempt") << QStringLiteral("cancel") << true;
    QTest::newRow("superseded by a stop, its worker gone") << QStringLiteral("stop") << false;
    QTest::newRow("superseded by a stop mid-attempt") << QStringLiteral("stop") << true;
    QTest::newRow("retried, its worker gone") << QStringLiteral("retry") << false;
    QTest::newRow("retried mid-attempt") << QStringLiteral("retry") << true;
}

void tst_DeliveryLease::abandonedLeaseIsLetGo()
{
    // A settled row with a lease still set is "in flight" to the claim, which then holds the
    // instance's newer notifications back while the lease lasts, and keeps the row in its in-flight
    // index. A lease whose worker is gone (expired) is let go when the row is cancelled,
    // superseded or retried, and the attempt it held is logged as interrupted; a live one stays
    // until its attempt is recorded.
    QFETCH(QString, how);
    QFETCH(bool, live);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 first = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    const QString until = live ? QStringLiteral("2999-01-01T00:00:00.000Z") : QStringLiteral("2000-01-01T00:00:00.000Z");
    QVERIFY(store(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-elsewhere', lease_until = '%1' WHERE id = %2")
                      .arg(until)
                      .arg(first)));
    const qint64 versionBefore = delivery(first).value(QStringLiteral("version")).toInteger();
    const qint64 seqBefore = lastSeq();
    if (how == QLatin1String("cancel") || how == QLatin1String("retry"))
        QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/%2").arg(first).arg(how)).status, 200);
    else
        QCOMPARE(post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance)).status, 200);
    const QJsonObject after = delivery(first);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), how == QLatin1String("cancel") ? QStringLiteral("CANCELLED")
                                                              : how == QLatin1String("retry") ? QStringLiteral("PENDING")
                                                                                              : QStringLiteral("SUPERSEDED"));
    QCOMPARE(leaseOf(first), live ? until : QStringLiteral("NULL"));
    const QJsonArray log = after.value(QStringLiteral("attempt_log")).toArray();
    QCOMPARE(log.size(), live ? 0 : 1);
    if (!live) {
        QCOMPARE(log.first().toObject().value(QStringLiteral("error_class")).toString(), QStringLiteral("interrupted"));
        QVERIFY(log.first().toObject().value(QStringLiteral("error")).toString().contains(QLatin1String("w-elsewhere")));
    }
    // The feed's last event of the delivery carries its final version.
    const QJsonArray events = m_server->get(QStringLiteral("/api/v1/events?after=%1&limit=100").arg(seqBefore), m_server->operatorToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    qint64 lastVersion = 0;
    for (const QJsonValue &e : events) {
        if (e.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("delivery")
            && e.toObject().value(QStringLiteral("id")).toInteger() == first)
            lastVersion = e.toObject().value(QStringLiteral("version")).toInteger();
    }
    QCOMPARE(lastVersion, after.value(QStringLiteral("version")).toInteger());
    QVERIFY(lastVersion > versionBefore);
}

void tst_DeliveryLease::expiredLeaseOfASettledRowIsLetGoByTheUpkeep_data()
{
    QTest::addColumn<bool>("testEvent");
    QTest::newRow("a notification") << false;
    QTest::newRow("a test event") << true;
}

void tst_DeliveryLease::expiredLeaseOfASettledRowIsLetGoByTheUpkeep()
{
    // Cancelled while in flight on a worker that is gone: no claim takes a settled row, so the
    // store's upkeep lets go of its expired lease and logs the attempt. A test event's attempt is
    // an attempt like any other.
    QFETCH(bool, testEvent);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    qint64 id = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    if (testEvent) {
        const qint64 endpoint = delivery(id).value(QStringLiteral("endpoint_id")).toInteger();
        const Reply test = post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint));
        QCOMPARE(test.status, 202);
        id = test.json().value(QStringLiteral("id")).toInteger();
        QCOMPARE(test.json().value(QStringLiteral("event_type")).toString(), DeliveryRepository::TestEvent);
    }
    QVERIFY(store(QStringLiteral("UPDATE deliveries SET state = 'CANCELLED', next_attempt_at = NULL, lease_owner = 'w-gone',"
                                 " lease_until = '2000-01-01T00:00:00.000Z' WHERE id = %1").arg(id)));
    Database db(m_server->databaseUrl());
    QVERIFY(db.open());
    Journal journal(db);
    DeliveryRepository repository(db, journal);
    Problem problem;
    QCOMPARE(repository.letGoOfExpiredSettledLeases(&problem), 1);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(repository.letGoOfExpiredSettledLeases(&problem), 0);
    QCOMPARE(leaseOf(id), QStringLiteral("NULL"));
    const QJsonObject after = delivery(id);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    const QJsonArray log = after.value(QStringLiteral("attempt_log")).toArray();
    QCOMPARE(log.size(), 1);
    QCOMPARE(log.first().toObject().value(QStringLiteral("error_class")).toString(), QStringLiteral("interrupted"));
    QVERIFY(log.first().toObject().value(QStringLiteral("latency_ms")).isNull());
}

QTEST_GUILESS_MAIN(tst_DeliveryLease)
#include "tst_deliverylease.moc"
