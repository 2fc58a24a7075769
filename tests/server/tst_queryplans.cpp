// Query plans: what runs on every poll, claim, enqueue and feed wake-up reaches its rows through an
// index, never by walking a whole table that grows with the installation's age.
#include "queryplans.h"
#include "testdatabase.h"

#include "server/feed/changefeed.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/destructionsweep.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// supersedeStale() as it was: one walk of deliveries in id order, every second. The checker must
// catch it, and the statement that replaced it must find the same rows.
const QString kScanningSupersede = QStringLiteral(
    "SELECT d.id FROM deliveries d WHERE d.state IN ('PENDING', 'FAILED') AND d.event_type <> 'opsdeck.test'"
    " AND (d.lease_until IS NULL OR d.lease_until < ?)"
    " AND EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id AND n.event_type = d.event_type"
    " AND n.id > d.id AND n.state <> 'CANCELLED') ORDER BY d.id LIMIT 1000");

} // namespace

class tst_QueryPlans : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void hotStatementsUseIndexes_data();
    void hotStatementsUseIndexes();
    void checkerCatchesFullScans_data();
    void checkerCatchesFullScans();
    void supersedeFindsWhatTheScanFound();

private:
    std::unique_ptr<TestDatabase> m_scratch;
    std::unique_ptr<Database> m_db;
};

void tst_QueryPlans::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QString error;
    QVERIFY2(openPlanDatabase(&m_scratch, &m_db, &error), qPrintable(error));
}

void tst_QueryPlans::hotStatementsUseIndexes_data()
{
    QTest::addColumn<QString>("sql");
    const bool postgres = TestDatabase::wantsPostgres();
    QTest::newRow("outbox poll: supersede stale") << DeliveryRepository::staleSql();
    QTest::newRow("enqueue: older siblings") << DeliveryRepository::olderSiblingsSql();
    QTest::newRow("outbox poll: expired settled leases") << DeliveryRepository::expiredSettledLeasesSql();
    QTest::newRow("claim: newest id") << DeliveryRepository::newestIdSql();
    for (const auto &[name, sql] : leaseStatements(postgres, "claim: lease"))
        QTest::newRow(name.constData()) << sql;
    QTest::newRow("claim: lease of the rows picked") << DeliveryRepository::leaseIdsSql(32);
    QTest::newRow("claim: leased rows") << DeliveryRepository::leasedTargetsSql(32);
    QTest::newRow("destruction sweep: instances due") << DestructionSweep::dueSql(postgres);
    QTest::newRow("destruction sweep: newest notification") << DestructionSweep::latestSql();
    QTest::newRow("feed: last seq") << ChangeFeed::lastSeqSql();
    QTest::newRow("feed: read as operator") << ChangeFeed::readSql(Caller{Actor::Operator, QStringLiteral("op"), 0, {}});
    QTest::newRow("feed: read as provider") << ChangeFeed::readSql(Caller{Actor::Provider, QStringLiteral("1"), 0, {}});
    QTest::newRow("feed: read as owner") << ChangeFeed::readSql(Caller{Actor::Owner, QStringLiteral("alice"), 0, {}});
    QTest::newRow("feed: trim") << ChangeFeed::pruneSql();
}

void tst_QueryPlans::hotStatementsUseIndexes()
{
    QFETCH(QString, sql);
    QString failure;
    const QStringList scans = fullScans(*m_db, sql, &failure);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY2(scans.isEmpty(), qPrintable(scans.join(QStringLiteral("; ")) + QStringLiteral(" in: ") + sql));
}

void tst_QueryPlans::checkerCatchesFullScans_data()
{
    QTest::addColumn<QString>("sql");
    QTest::newRow("supersede as one walk in id order") << kScanningSupersede;
    QTest::newRow("a whole index walked in its order")
        << QStringLiteral("SELECT id FROM deliveries ORDER BY instance_id, event_type, id LIMIT 10");
    QTest::newRow("events by an unindexed column") << QStringLiteral("SELECT e.seq FROM events e WHERE e.kind = ?");
    QTest::newRow("delivered rows counted")
        << QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'");
}

void tst_QueryPlans::checkerCatchesFullScans()
{
    QFETCH(QString, sql);
    QString failure;
    const QStringList scans = fullScans(*m_db, sql, &failure);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY2(!scans.isEmpty(), qPrintable(sql));
}

void tst_QueryPlans::supersedeFindsWhatTheScanFound()
{
    // A long-lived outbox: a delivered history (OPSDECK_QUERYPLANS_ROWS rows; docs/benchmarks.md
    // times a million) and, after it, the live rows of a few hundred instances, some stale.
    bool ok = false;
    int history = qEnvironmentVariableIntValue("OPSDECK_QUERYPLANS_ROWS", &ok);
    if (!ok || history <= 0)
        history = 20000;
    const int instances = 1000;
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem) && db.migrate(&problem), qPrintable(problem.detail));
    QSqlQuery q(db.connection());
    // Every value in a SELECT list is cast: PostgreSQL cannot tell a bare parameter's type there.
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                        " VALUES ('org', 'ACTIVE', 1, ?, ?)"),
                      {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                                        " SELECT 'provider', MIN(id), '[]', 1, CAST(? AS TEXT), CAST(? AS TEXT) FROM organizations"),
                      {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                        " SELECT MIN(id), 'https://provider.example/hook', 'ACTIVE', 1, CAST(? AS TEXT),"
                                        " CAST(? AS TEXT) FROM providers"),
                      {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(execWith(q, QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                                        " INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version,"
                                        " created_at, updated_at, status_changed_at, callback_url)"
                                        " SELECT 'instance-' || CAST(i AS TEXT), p.organization_id, p.id, 'app', 'alice', 'RUNNING', 1,"
                                        " CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), 'https://provider.example/hook' FROM n,"
                                        " (SELECT MIN(id) AS id, MIN(organization_id) AS organization_id FROM providers) p"),
                      {instances, kAt, kAt, kAt}),
             qPrintable(q.lastError().text()));
    // The size of a real status notification, so the table has as many pages as a real one.
    const QString body = QStringLiteral(
        "{\"type\":\"instance.status_changed\",\"instance_id\":1,\"status\":\"RUNNING\",\"previous_status\":\"STARTING\","
        "\"version\":3,\"changed_at\":\"2026-01-01T00:00:00.000Z\",\"organization_id\":1,\"application\":\"app\","
        "\"owner\":\"alice\",\"name\":\"instance-1\"}");
    // %1 event type, %2 instance offset, %3 state, %4 next_attempt_at, %5 lease_until.
    const QString insert = QStringLiteral(
        " INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, lease_until, created_at, updated_at, version)"
        " SELECT CAST(? AS TEXT) || CAST(i AS TEXT), %1, x.first + %2, x.provider, x.endpoint, %3, CAST(? AS TEXT), 1, %4, %5,"
        " CAST(? AS TEXT), CAST(? AS TEXT), 1 FROM n,"
        " (SELECT MIN(i.id) AS first, MIN(i.provider_id) AS provider, MIN(e.id) AS endpoint FROM instances i, endpoints e) x");
    const QString text = QStringLiteral("CAST(? AS TEXT)");
    QVERIFY2(execWith(q, QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)")
                         + insert.arg(QStringLiteral("CASE WHEN i % 7 = 0 THEN 'instance.destroyed' ELSE 'instance.status_changed' END"),
                                      QStringLiteral("i % %1").arg(instances), QStringLiteral("'DELIVERED'"),
                                      QStringLiteral("NULL"), QStringLiteral("NULL")),
                      {history, QStringLiteral("history-"), body, kAt, kAt}),
             qPrintable(q.lastError().text()));

    // The live rows, oldest first for each instance; `stale` marks what the pass must supersede:
    // an undelivered row, not in flight, with a newer one of its kind that was not cancelled.
    struct Live
    {
        QString state;
        bool stale = false;
        QString leaseUntil;
        bool testEvent = false;
    };
    const QString future = QStringLiteral("2999-01-01T00:00:00.000Z");
    const QString past = QStringLiteral("2000-01-01T00:00:00.000Z");
    const QString pending = QStringLiteral("PENDING");
    const QString failed = QStringLiteral("FAILED");
    const auto row = [](const QString &state, bool stale = false, const QString &leaseUntil = {}, bool testEvent = false) {
        Live r;
        r.state = state;
        r.stale = stale;
        r.leaseUntil = leaseUntil;
        r.testEvent = testEvent;
        return r;
    };
    const QList<QList<Live>> patterns = {
        {row(pending)},
        {row(failed)},
        {row(pending, true), row(pending)},
        {row(failed, true), row(pending)},
        {row(failed, true), row(QStringLiteral("DELIVERED"))},
        {row(pending), row(QStringLiteral("CANCELLED"))},
        {row(pending, false, future), row(pending)},
        {row(pending, true, past), row(failed)},
        {row(failed, false, {}, true), row(pending, false, {}, true)},
        {row(failed, true), row(QStringLiteral("SUPERSEDED"))},
    };
    QList<qint64> expected;
    int serial = 0;
    for (int instance = 0; instance < 250; ++instance) {
        for (const Live &live : patterns.at(instance % patterns.size())) {
            const bool due = live.state == pending;
            QVariantList values{++serial, QStringLiteral("live-"), live.testEvent ? DeliveryRepository::TestEvent
                                                                                 : QStringLiteral("instance.status_changed"),
                                instance, live.state, body};
            if (due)
                values.append(kAt);
            if (!live.leaseUntil.isEmpty())
                values.append(live.leaseUntil);
            values += QVariantList{kAt, kAt};
            QVERIFY2(execWith(q, QStringLiteral("WITH n(i) AS (SELECT CAST(? AS INTEGER))")
                                 + insert.arg(text, QStringLiteral("CAST(? AS INTEGER)"), text, due ? text : QStringLiteral("NULL"),
                                              live.leaseUntil.isEmpty() ? QStringLiteral("NULL") : text)
                                 + QStringLiteral(" RETURNING id"),
                              values)
                              && q.next(),
                     qPrintable(q.lastError().text()));
            if (live.stale)
                expected.append(q.value(0).toLongLong());
        }
    }
    q.finish();
    QCOMPARE(expected.size(), 125);
    if (db.backend() == Database::Backend::Postgres)
        QVERIFY(q.exec(QStringLiteral("ANALYZE")));

    const QString now = QStringLiteral("2026-06-01T00:00:00.000Z");
    QCOMPARE(ids(db, kScanningSupersede, now), expected);
    QCOMPARE(ids(db, DeliveryRepository::staleSql(), now), expected);
    const double scanMs = medianMs(7, [&] { ids(db, kScanningSupersede, now); });
    const double indexedMs = medianMs(7, [&] { ids(db, DeliveryRepository::staleSql(), now); });

    Journal journal(db);
    DeliveryRepository repository(db, journal);
    Problem error;
    QCOMPARE(repository.supersedeStale(&error), int(expected.size()));
    QVERIFY2(error.isNull(), qPrintable(error.detail));
    QSqlQuery check(db.connection());
    QVERIFY(check.exec(QStringLiteral("SELECT id FROM deliveries WHERE state = 'SUPERSEDED' AND webhook_id LIKE 'live-%'"
                                      " ORDER BY id")));
    QList<qint64> superseded;
    while (check.next())
        superseded.append(check.value(0).toLongLong());
    check.finish();
    // The pattern's own SUPERSEDED rows come back too: one in ten instances.
    QCOMPARE(superseded.size(), expected.size() + 25);
    for (const qint64 id : std::as_const(expected))
        QVERIFY(superseded.contains(id));
    // The steady state, what every poll pays: nothing left to supersede.
    int again = 0;
    const double passMs = medianMs(7, [&] { again += repository.supersedeStale(&error); });
    QVERIFY2(error.isNull(), qPrintable(error.detail));
    QCOMPARE(again, 0);
    qInfo("%s, %d delivered rows: one walk in id order %.2f ms, partial indexes %.2f ms;"
          " supersedeStale() with nothing stale %.2f ms (medians of 7)",
          qPrintable(db.backendName()), history, scanMs, indexedMs, passMs);
}

QTEST_GUILESS_MAIN(tst_QueryPlans)
#include "tst_queryplans.moc"
