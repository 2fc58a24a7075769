// Claim order: the claim checks an instance's older notifications through the partial indexes of
// the undelivered and in-flight rows, never its delivered history, and leases what the walk over it leased.
#include "queryplans.h"
#include "testdatabase.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <algorithm>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// The claim's per-instance order check as it was: every older row of the instance, read through
// deliveries_instance, delivered ones included. The checker must catch it, and the claim that
// replaced it must lease exactly what it leased.
QString historyWalkingLeaseSql(bool postgres)
{
    QString select = QStringLiteral(
        "SELECT d.id FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id"
        " WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)"
        " AND e.state = 'ACTIVE'"
        " AND (d.event_type = 'opsdeck.test' OR NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.instance_id = d.instance_id"
        " AND o.id < d.id AND o.event_type <> 'opsdeck.test'"
        " AND (o.state = 'PENDING' OR (o.lease_until IS NOT NULL AND o.lease_until >= ?))))"
        " ORDER BY d.next_attempt_at, d.id LIMIT ?");
    if (postgres)
        select += QStringLiteral(" FOR UPDATE OF d SKIP LOCKED");
    return QStringLiteral("UPDATE deliveries SET lease_owner = ?, lease_until = ? WHERE id IN (") + select
           + QStringLiteral(") AND (lease_until IS NULL OR lease_until < ?) RETURNING id");
}

} // namespace

class tst_ClaimOrder : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void claimOrderReadsOnlyWhatCanBlock_data();
    void claimOrderReadsOnlyWhatCanBlock();
    void claimLeasesWhatTheHistoryWalkLeased();

private:
    std::unique_ptr<TestDatabase> m_scratch;
    std::unique_ptr<Database> m_db;
};

void tst_ClaimOrder::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QString error;
    QVERIFY2(openPlanDatabase(&m_scratch, &m_db, &error), qPrintable(error));
}

void tst_ClaimOrder::claimOrderReadsOnlyWhatCanBlock_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<bool>("readsHistory");
    const bool postgres = TestDatabase::wantsPostgres();
    QTest::newRow("the check as it was: every older row") << historyWalkingLeaseSql(postgres) << true;
    for (const auto &[name, sql] : leaseStatements(postgres, "claim"))
        QTest::newRow(name.constData()) << sql << false;
}

void tst_ClaimOrder::claimOrderReadsOnlyWhatCanBlock()
{
    // The per-instance order check (alias o) may read an instance's older rows only through a
    // partial index: the undelivered and in-flight ones, not the delivered history that grows
    // with every start and stop the instance ever had.
    QFETCH(QString, sql);
    QFETCH(bool, readsHistory);
    QString failure;
    const QStringList reads = readsBesidePartial(*m_db, sql, QStringLiteral("o"), &failure);
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY2(reads.isEmpty() != readsHistory,
             qPrintable((reads.isEmpty() ? QStringLiteral("only partial indexes") : reads.join(QStringLiteral("; ")))
                        + QStringLiteral(" in: ") + sql));
}

void tst_ClaimOrder::claimLeasesWhatTheHistoryWalkLeased()
{
    // Instances with a delivered history (OPSDECK_QUERYPLANS_CLAIM_HISTORY rows each) and, after
    // it, live rows in every arrangement the order check decides on. The claim leases exactly
    // what the walk over the whole history leased: the same semantics, read from fewer rows.
    bool ok = false;
    int history = qEnvironmentVariableIntValue("OPSDECK_QUERYPLANS_CLAIM_HISTORY", &ok);
    if (!ok || history < 0)
        history = 20;
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem) && db.migrate(&problem), qPrintable(problem.detail));
    const bool postgres = db.backend() == Database::Backend::Postgres;
    QSqlQuery q(db.connection());
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                        " VALUES ('org', 'ACTIVE', 1, ?, ?) RETURNING id"),
                      {kAt, kAt}) && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 organization = q.value(0).toLongLong();
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                                        " VALUES ('provider', ?, '[]', 1, ?, ?) RETURNING id"),
                      {organization, kAt, kAt}) && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 provider = q.value(0).toLongLong();
    QVERIFY2(execWith(q, QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                        " VALUES (?, 'https://provider.example/hook', 'ACTIVE', 1, ?, ?) RETURNING id"),
                      {provider, kAt, kAt}) && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 endpoint = q.value(0).toLongLong();

    const QString now = QStringLiteral("2026-06-01T00:00:00.000Z");
    const QString future = QStringLiteral("2999-01-01T00:00:00.000Z");
    const QString past = QStringLiteral("2000-01-01T00:00:00.000Z");
    const QString status = QStringLiteral("instance.status_changed");
    const QString destroyed = QStringLiteral("instance.destroyed");
    const QString test = DeliveryRepository::TestEvent;
    struct Live
    {
        QString state;
        QString eventType;
        QString due;        // next_attempt_at, PENDING rows only
        QString leaseUntil; // empty: not leased
        bool leased = false; // the claim must lease it
    };
    const auto row = [&](const QString &state, const QString &eventType, const QString &leaseUntil, bool leased,
                         const QString &due = QString()) {
        return Live{state, eventType, state == QLatin1String("PENDING") ? (due.isEmpty() ? kAt : due) : QString(),
                    leaseUntil, leased};
    };
    const QString pending = QStringLiteral("PENDING");
    // Oldest first for each instance.
    const QList<QList<Live>> patterns = {
        {row(pending, status, {}, true)},
        {row(pending, status, {}, true), row(pending, status, {}, false)},
        {row(pending, destroyed, {}, true), row(pending, status, {}, false)},
        {row(pending, status, {}, false, future), row(pending, status, {}, false)},
        {row(pending, status, future, false), row(pending, status, {}, false)},
        {row(pending, status, past, true), row(pending, status, {}, false)},
        {row(QStringLiteral("CANCELLED"), status, future, false), row(pending, status, {}, false)},
        {row(QStringLiteral("SUPERSEDED"), status, future, false), row(pending, status, {}, false)},
        {row(QStringLiteral("CANCELLED"), status, past, false), row(pending, status, {}, true)},
        {row(QStringLiteral("FAILED"), status, {}, false), row(pending, status, {}, true)},
        {row(QStringLiteral("DELIVERED"), status, {}, false), row(pending, status, {}, true)},
        {row(pending, status, {}, true), row(pending, test, {}, true)},
        {row(pending, test, future, false), row(pending, status, {}, true)},
        {row(QStringLiteral("SUPERSEDED"), test, future, false), row(pending, status, {}, true)},
        {row(pending, status, {}, false, future), row(pending, test, {}, true)},
    };
    const int instances = int(patterns.size()) * 4;
    QVERIFY2(execWith(q, QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                                        " INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version,"
                                        " created_at, updated_at, status_changed_at, callback_url)"
                                        " SELECT 'instance-' || CAST(i AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), 'app', 'alice',"
                                        " 'RUNNING', 1, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), 'https://provider.example/hook'"
                                        " FROM n"),
                      {instances, organization, provider, kAt, kAt, kAt}),
             qPrintable(q.lastError().text()));
    QList<qint64> instanceIds;
    QVERIFY(execWith(q, QStringLiteral("SELECT id FROM instances ORDER BY id")));
    while (q.next())
        instanceIds.append(q.value(0).toLongLong());
    QCOMPARE(instanceIds.size(), instances);
    if (history > 0)
        QVERIFY2(execWith(q, QStringLiteral("WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)"
                                            " INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state,"
                                            " body, attempts, created_at, updated_at, version)"
                                            " SELECT 'history-' || CAST(i.id AS TEXT) || '-' || CAST(n.k AS TEXT),"
                                            " 'instance.status_changed', i.id, i.provider_id, CAST(? AS BIGINT), 'DELIVERED', '{}', 1,"
                                            " CAST(? AS TEXT), CAST(? AS TEXT), 1 FROM n, instances i ORDER BY n.k, i.id"),
                          {history, endpoint, kAt, kAt}),
                 qPrintable(q.lastError().text()));
    QList<qint64> expected;
    int serial = 0;
    for (int i = 0; i < instances; ++i) {
        for (const Live &live : patterns.at(i % patterns.size())) {
            QVERIFY2(execWith(q, QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                                " state, body, attempts, next_attempt_at, lease_owner, lease_until, created_at,"
                                                " updated_at, version) VALUES (?, ?, ?, ?, ?, ?, '{}', 0, ?, ?, ?, ?, ?, 1) RETURNING id"),
                              {QStringLiteral("live-%1").arg(++serial), live.eventType, instanceIds.at(i), provider, endpoint,
                               live.state, live.due.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(live.due),
                               live.leaseUntil.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(QStringLiteral("w-old")),
                               live.leaseUntil.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(live.leaseUntil),
                               kAt, kAt})
                              && q.next(),
                     qPrintable(q.lastError().text()));
            if (live.leased)
                expected.append(q.value(0).toLongLong());
        }
    }
    q.finish();
    std::sort(expected.begin(), expected.end());
    if (postgres)
        QVERIFY(q.exec(QStringLiteral("ANALYZE")));

    // Each lease in a transaction rolled back, so both statements see the same rows.
    const auto lease = [&db](const QString &sql, const QString &at) {
        QList<qint64> leased;
        if (!db.begin())
            return leased;
        QSqlQuery l(db.connection());
        l.prepare(sql);
        for (const QVariant &v : QVariantList{QStringLiteral("w-new"), QStringLiteral("2999-12-31T00:00:00.000Z"), at, at, at,
                                              100000, at})
            l.addBindValue(v);
        if (l.exec())
            while (l.next())
                leased.append(l.value(0).toLongLong());
        l.finish();
        db.rollback();
        std::sort(leased.begin(), leased.end());
        return leased;
    };
    const QString claim = DeliveryRepository::leaseSql(postgres, DeliveryRepository::EndpointClause::None, false);
    QCOMPARE(lease(historyWalkingLeaseSql(postgres), now), expected);
    QCOMPARE(lease(claim, now), expected);
    const double walkMs = medianMs(7, [&] { lease(historyWalkingLeaseSql(postgres), now); });
    const double claimMs = medianMs(7, [&] { lease(claim, now); });
    qInfo("%s, %d instances with %d delivered rows each: a claim of %d with the history walk %.2f ms, with the partial"
          " indexes %.2f ms (medians of 7)",
          qPrintable(db.backendName()), instances, history, int(expected.size()), walkMs, claimMs);
}

QTEST_GUILESS_MAIN(tst_ClaimOrder)
#include "tst_claimorder.moc"
