// Query plans: what runs on every poll, claim, enqueue and feed wake-up reaches its rows through an
// index, never by walking a whole table that grows with the installation's age.
#include "testdatabase.h"

#include "server/feed/changefeed.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/destructionsweep.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <algorithm>
#include <functional>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// Tables that only grow. A statement may read one whole only through a partial index: its rows are
// the few still in play (a backlog, the failed ones), not the history.
const QStringList kGrowing = {QStringLiteral("deliveries"), QStringLiteral("delivery_attempts"), QStringLiteral("events"),
                              QStringLiteral("audit"), QStringLiteral("instances")};

// supersedeStale() as it was: one walk of deliveries in id order, every second. The checker must
// catch it, and the statement that replaced it must find the same rows.
const QString kScanningSupersede = QStringLiteral(
    "SELECT d.id FROM deliveries d WHERE d.state IN ('PENDING', 'FAILED') AND d.event_type <> 'opsdeck.test'"
    " AND (d.lease_until IS NULL OR d.lease_until < ?)"
    " AND EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id AND n.event_type = d.event_type"
    " AND n.id > d.id AND n.state <> 'CANCELLED') ORDER BY d.id LIMIT 1000");

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

const QString kAt = QStringLiteral("2026-01-01T00:00:00.000Z");

qsizetype placeholders(const QString &sql)
{
    return sql.count(QLatin1Char('?'));
}

// "SELECT ... ?, ?" as PostgreSQL's PREPARE spells it: $1, $2.
QString numbered(const QString &sql)
{
    QString out;
    int n = 0;
    for (const QChar c : sql) {
        if (c == QLatin1Char('?'))
            out += QLatin1Char('$') + QString::number(++n);
        else
            out += c;
    }
    return out;
}

// Names in the statement (tables and their aliases) that stand for a growing table.
QHash<QString, QString> growingNames(const QString &sql)
{
    static const QStringList keywords = {QStringLiteral("where"), QStringLiteral("set"), QStringLiteral("join"),
                                         QStringLiteral("left"), QStringLiteral("inner"), QStringLiteral("on"),
                                         QStringLiteral("order"), QStringLiteral("group"), QStringLiteral("limit"),
                                         QStringLiteral("union"), QStringLiteral("as")};
    static const QRegularExpression from(QStringLiteral("\\b(?:FROM|JOIN|UPDATE)\\s+(\\w+)(?:\\s+(?:AS\\s+)?(\\w+))?"),
                                         QRegularExpression::CaseInsensitiveOption);
    QHash<QString, QString> names;
    for (auto it = from.globalMatch(sql); it.hasNext();) {
        const auto m = it.next();
        const QString table = m.captured(1).toLower();
        if (!kGrowing.contains(table))
            continue;
        names.insert(table, table);
        const QString alias = m.captured(2).toLower();
        if (!alias.isEmpty() && !keywords.contains(alias))
            names.insert(alias, table);
    }
    return names;
}

bool execOrFail(QSqlQuery &q, const QString &sql, QString *failure)
{
    if (q.exec(sql))
        return true;
    *failure = sql + QStringLiteral(": ") + q.lastError().text();
    return false;
}

// SQLite: a SCAN of a growing table, bare or through an index that holds every row.
QStringList sqliteFullScans(Database &db, const QString &sql, QString *failure)
{
    QSqlQuery meta(db.connection());
    QStringList partial;
    if (!execOrFail(meta, QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'"),
                    failure))
        return {};
    while (meta.next())
        partial.append(meta.value(0).toString());
    QSqlQuery q(db.connection());
    if (!q.prepare(QStringLiteral("EXPLAIN QUERY PLAN ") + sql)) {
        *failure = q.lastError().text();
        return {};
    }
    for (qsizetype i = 0; i < placeholders(sql); ++i)
        q.addBindValue(QVariant());
    if (!q.exec()) {
        *failure = q.lastError().text();
        return {};
    }
    const QHash<QString, QString> names = growingNames(sql);
    static const QRegularExpression scan(QStringLiteral("^SCAN (\\w+)(?: USING (?:COVERING )?INDEX (\\w+))?"));
    QStringList scans;
    while (q.next()) {
        const QString detail = q.value(3).toString();
        const auto m = scan.match(detail);
        if (m.hasMatch() && names.contains(m.captured(1).toLower()) && !partial.contains(m.captured(2)))
            scans.append(detail);
    }
    return scans;
}

void collectPgScans(const QJsonObject &node, const QHash<QString, QString> &indexTables, const QStringList &partial,
                    QStringList *scans)
{
    const QString type = node.value(QStringLiteral("Node Type")).toString();
    const QString index = node.value(QStringLiteral("Index Name")).toString();
    const QString table = node.contains(QStringLiteral("Relation Name"))
                              ? node.value(QStringLiteral("Relation Name")).toString()
                              : indexTables.value(index);
    if (kGrowing.contains(table)) {
        const bool walksIndex = type.startsWith(QLatin1String("Index")) || type == QLatin1String("Bitmap Index Scan");
        if (type == QLatin1String("Seq Scan"))
            scans->append(type + QStringLiteral(" on ") + table);
        else if (walksIndex && !node.contains(QStringLiteral("Index Cond")) && !partial.contains(index))
            scans->append(type + QStringLiteral(" using ") + index + QStringLiteral(" on ") + table);
    }
    for (const QJsonValue child : node.value(QStringLiteral("Plans")).toArray())
        collectPgScans(child.toObject(), indexTables, partial, scans);
}

// PostgreSQL plans by statistics, and an empty table is cheapest to read whole: with sequential
// scans priced out and a generic plan, a Seq Scan left means no index serves the statement, and an
// index walked without a condition is the same read unless the index is partial.
QStringList postgresFullScans(Database &db, const QString &sql, QString *failure)
{
    QSqlQuery q(db.connection());
    QHash<QString, QString> indexTables;
    QStringList partial;
    if (!execOrFail(q, QStringLiteral("SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema()"),
                    failure))
        return {};
    while (q.next()) {
        indexTables.insert(q.value(0).toString(), q.value(1).toString());
        if (q.value(2).toString().contains(QLatin1String(" WHERE ")))
            partial.append(q.value(0).toString());
    }
    QStringList nulls;
    for (qsizetype i = 0; i < placeholders(sql); ++i)
        nulls.append(QStringLiteral("NULL"));
    const QString execute = nulls.isEmpty() ? QStringLiteral("EXECUTE plan_check")
                                            : QStringLiteral("EXECUTE plan_check(%1)").arg(nulls.join(QLatin1Char(',')));
    if (!execOrFail(q, QStringLiteral("SET enable_seqscan = off"), failure)
        || !execOrFail(q, QStringLiteral("SET plan_cache_mode = force_generic_plan"), failure)
        || !execOrFail(q, QStringLiteral("PREPARE plan_check AS ") + numbered(sql), failure))
        return {};
    QStringList scans;
    if (execOrFail(q, QStringLiteral("EXPLAIN (FORMAT JSON) ") + execute, failure) && q.next()) {
        const QJsonArray plans = QJsonDocument::fromJson(q.value(0).toString().toUtf8()).array();
        for (const QJsonValue plan : plans)
            collectPgScans(plan.toObject().value(QStringLiteral("Plan")).toObject(), indexTables, partial, &scans);
    }
    q.exec(QStringLiteral("DEALLOCATE plan_check"));
    return scans;
}

// SQLite: the steps of the plan that read table `alias` other than through a partial index.
QStringList sqliteReadsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure)
{
    QSqlQuery meta(db.connection());
    QStringList partial;
    if (!execOrFail(meta, QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'"),
                    failure))
        return {};
    while (meta.next())
        partial.append(meta.value(0).toString());
    QSqlQuery q(db.connection());
    if (!q.prepare(QStringLiteral("EXPLAIN QUERY PLAN ") + sql)) {
        *failure = q.lastError().text();
        return {};
    }
    for (qsizetype i = 0; i < placeholders(sql); ++i)
        q.addBindValue(QVariant());
    if (!q.exec()) {
        *failure = q.lastError().text();
        return {};
    }
    static const QRegularExpression step(QStringLiteral("^(?:SCAN|SEARCH) (\\w+)(?: USING (?:COVERING )?INDEX (\\w+))?"));
    QStringList reads;
    int seen = 0;
    while (q.next()) {
        const QString detail = q.value(3).toString();
        const auto m = step.match(detail);
        if (!m.hasMatch() || m.captured(1) != alias)
            continue;
        ++seen;
        if (!partial.contains(m.captured(2)))
            reads.append(detail);
    }
    if (seen == 0)
        *failure = QStringLiteral("no step of the plan reads %1").arg(alias);
    return reads;
}

void collectPgReads(const QJsonObject &node, const QString &alias, const QStringList &partial, bool underAlias,
                    QStringList *reads, int *seen)
{
    const QString type = node.value(QStringLiteral("Node Type")).toString();
    const bool mine = node.value(QStringLiteral("Alias")).toString() == alias;
    if (mine || (underAlias && type == QLatin1String("Bitmap Index Scan"))) {
        ++*seen;
        // A bitmap heap scan reads what its index scans below it found: those are checked.
        if (type != QLatin1String("Bitmap Heap Scan") && !partial.contains(node.value(QStringLiteral("Index Name")).toString()))
            reads->append(type + QStringLiteral(" ") + node.value(QStringLiteral("Index Name")).toString());
    }
    for (const QJsonValue child : node.value(QStringLiteral("Plans")).toArray())
        collectPgReads(child.toObject(), alias, partial, mine && type == QLatin1String("Bitmap Heap Scan"), reads, seen);
}

// PostgreSQL: the same, on the generic plan with sequential scans priced out (as postgresFullScans).
QStringList postgresReadsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure)
{
    QSqlQuery q(db.connection());
    QStringList partial;
    if (!execOrFail(q, QStringLiteral("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
                                      " AND indexdef LIKE '% WHERE %'"),
                    failure))
        return {};
    while (q.next())
        partial.append(q.value(0).toString());
    QStringList nulls;
    for (qsizetype i = 0; i < placeholders(sql); ++i)
        nulls.append(QStringLiteral("NULL"));
    if (!execOrFail(q, QStringLiteral("SET enable_seqscan = off"), failure)
        || !execOrFail(q, QStringLiteral("SET plan_cache_mode = force_generic_plan"), failure)
        || !execOrFail(q, QStringLiteral("PREPARE plan_check AS ") + numbered(sql), failure))
        return {};
    QStringList reads;
    int seen = 0;
    if (execOrFail(q, QStringLiteral("EXPLAIN (FORMAT JSON) EXECUTE plan_check(%1)").arg(nulls.join(QLatin1Char(','))), failure)
        && q.next()) {
        const QJsonArray plans = QJsonDocument::fromJson(q.value(0).toString().toUtf8()).array();
        for (const QJsonValue plan : plans)
            collectPgReads(plan.toObject().value(QStringLiteral("Plan")).toObject(), alias, partial, false, &reads, &seen);
    }
    q.exec(QStringLiteral("DEALLOCATE plan_check"));
    if (failure->isEmpty() && seen == 0)
        *failure = QStringLiteral("no node of the plan reads %1").arg(alias);
    return reads;
}

QStringList readsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure)
{
    return db.backend() == Database::Backend::Postgres ? postgresReadsBesidePartial(db, sql, alias, failure)
                                                       : sqliteReadsBesidePartial(db, sql, alias, failure);
}

QStringList fullScans(Database &db, const QString &sql, QString *failure)
{
    return db.backend() == Database::Backend::Postgres ? postgresFullScans(db, sql, failure)
                                                       : sqliteFullScans(db, sql, failure);
}

QList<qint64> ids(Database &db, const QString &sql, const QString &now)
{
    QSqlQuery q(db.connection());
    q.prepare(sql);
    for (qsizetype i = 0; i < placeholders(sql); ++i)
        q.addBindValue(now);
    QList<qint64> out;
    if (q.exec())
        while (q.next())
            out.append(q.value(0).toLongLong());
    return out;
}

// Milliseconds `run` took, the median of several.
double medianMs(int runs, const std::function<void()> &run)
{
    QList<double> times;
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer t;
        t.start();
        run();
        times.append(double(t.nsecsElapsed()) / 1e6);
    }
    std::sort(times.begin(), times.end());
    return times.at(times.size() / 2);
}

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
    void claimOrderReadsOnlyWhatCanBlock_data();
    void claimOrderReadsOnlyWhatCanBlock();
    void claimLeasesWhatTheHistoryWalkLeased();

private:
    std::unique_ptr<TestDatabase> m_scratch;
    std::unique_ptr<Database> m_db;
};

void tst_QueryPlans::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    m_scratch = std::make_unique<TestDatabase>();
    QVERIFY2(m_scratch->isValid(), qPrintable(m_scratch->error()));
    m_db = std::make_unique<Database>(m_scratch->url());
    Problem problem;
    QVERIFY2(m_db->open(&problem) && m_db->migrate(&problem), qPrintable(problem.detail));
}

void tst_QueryPlans::hotStatementsUseIndexes_data()
{
    QTest::addColumn<QString>("sql");
    const bool postgres = TestDatabase::wantsPostgres();
    QTest::newRow("outbox poll: supersede stale") << DeliveryRepository::staleSql();
    QTest::newRow("enqueue: older siblings") << DeliveryRepository::staleSiblingsSql();
    QTest::newRow("claim: newest id") << DeliveryRepository::newestIdSql();
    for (const bool busy : {false, true}) {
        for (const bool after : {false, true}) {
            const QByteArray name = QByteArrayLiteral("claim: lease") + (busy ? " past busy endpoints" : "")
                                    + (after ? " after a cursor" : "");
            QTest::newRow(name.constData()) << DeliveryRepository::leaseSql(postgres, busy, after);
        }
    }
    QTest::newRow("claim: leased rows") << DeliveryRepository::leasedTargetsSql(32);
    QTest::newRow("destruction sweep: instances due") << DestructionSweep::dueSql();
    QTest::newRow("destruction sweep: newest notification") << DestructionSweep::latestSql();
    QTest::newRow("feed: last seq") << ChangeFeed::lastSeqSql();
    QTest::newRow("feed: read as operator") << ChangeFeed::readSql(Caller{Actor::Operator, QStringLiteral("op"), 0});
    QTest::newRow("feed: read as provider") << ChangeFeed::readSql(Caller{Actor::Provider, QStringLiteral("1"), 0});
    QTest::newRow("feed: read as owner") << ChangeFeed::readSql(Caller{Actor::Owner, QStringLiteral("alice"), 0});
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
    const auto run = [&q](const QString &sql, const QVariantList &values = {}) {
        if (!q.prepare(sql))
            return false;
        for (const QVariant &v : values)
            q.addBindValue(v);
        return q.exec();
    };
    // Every value in a SELECT list is cast: PostgreSQL cannot tell a bare parameter's type there.
    QVERIFY2(run(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                " VALUES ('org', 'ACTIVE', 1, ?, ?)"),
                 {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(run(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                                " SELECT 'provider', MIN(id), '[]', 1, CAST(? AS TEXT), CAST(? AS TEXT) FROM organizations"),
                 {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(run(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                " SELECT MIN(id), 'https://provider.example/hook', 'ACTIVE', 1, CAST(? AS TEXT),"
                                " CAST(? AS TEXT) FROM providers"),
                 {kAt, kAt}),
             qPrintable(q.lastError().text()));
    QVERIFY2(run(QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
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
    QVERIFY2(run(QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)")
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
            QVERIFY2(run(QStringLiteral("WITH n(i) AS (SELECT CAST(? AS INTEGER))")
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

void tst_QueryPlans::claimOrderReadsOnlyWhatCanBlock_data()
{
    QTest::addColumn<QString>("sql");
    QTest::addColumn<bool>("readsHistory");
    const bool postgres = TestDatabase::wantsPostgres();
    QTest::newRow("the check as it was: every older row") << historyWalkingLeaseSql(postgres) << true;
    for (const bool busy : {false, true}) {
        for (const bool after : {false, true}) {
            const QByteArray name = QByteArrayLiteral("claim") + (busy ? " past busy endpoints" : "")
                                    + (after ? " after a cursor" : "");
            QTest::newRow(name.constData()) << DeliveryRepository::leaseSql(postgres, busy, after) << false;
        }
    }
}

void tst_QueryPlans::claimOrderReadsOnlyWhatCanBlock()
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

void tst_QueryPlans::claimLeasesWhatTheHistoryWalkLeased()
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
    const auto run = [&q](const QString &sql, const QVariantList &values = {}) {
        if (!q.prepare(sql))
            return false;
        for (const QVariant &v : values)
            q.addBindValue(v);
        return q.exec();
    };
    QVERIFY2(run(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                " VALUES ('org', 'ACTIVE', 1, ?, ?) RETURNING id"),
                 {kAt, kAt}) && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 organization = q.value(0).toLongLong();
    QVERIFY2(run(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                                " VALUES ('provider', ?, '[]', 1, ?, ?) RETURNING id"),
                 {organization, kAt, kAt}) && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 provider = q.value(0).toLongLong();
    QVERIFY2(run(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
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
    QVERIFY2(run(QStringLiteral("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
                                " INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version,"
                                " created_at, updated_at, status_changed_at, callback_url)"
                                " SELECT 'instance-' || CAST(i AS TEXT), CAST(? AS BIGINT), CAST(? AS BIGINT), 'app', 'alice',"
                                " 'RUNNING', 1, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), 'https://provider.example/hook'"
                                " FROM n"),
                 {instances, organization, provider, kAt, kAt, kAt}),
             qPrintable(q.lastError().text()));
    QList<qint64> instanceIds;
    QVERIFY(run(QStringLiteral("SELECT id FROM instances ORDER BY id")));
    while (q.next())
        instanceIds.append(q.value(0).toLongLong());
    QCOMPARE(instanceIds.size(), instances);
    if (history > 0)
        QVERIFY2(run(QStringLiteral("WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)"
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
            QVERIFY2(run(QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
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
    const QString claim = DeliveryRepository::leaseSql(postgres, false, false);
    QCOMPARE(lease(historyWalkingLeaseSql(postgres), now), expected);
    QCOMPARE(lease(claim, now), expected);
    const double walkMs = medianMs(7, [&] { lease(historyWalkingLeaseSql(postgres), now); });
    const double claimMs = medianMs(7, [&] { lease(claim, now); });
    qInfo("%s, %d instances with %d delivered rows each: a claim of %d with the history walk %.2f ms, with the partial"
          " indexes %.2f ms (medians of 7)",
          qPrintable(db.backendName()), instances, history, int(expected.size()), walkMs, claimMs);
}

QTEST_GUILESS_MAIN(tst_QueryPlans)
#include "tst_queryplans.moc"
