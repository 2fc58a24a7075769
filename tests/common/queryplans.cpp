// Query-plan readers: SQLite's EXPLAIN QUERY PLAN and PostgreSQL's EXPLAIN (FORMAT JSON), read for full scans.
#include "queryplans.h"

#include "testdatabase.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>

namespace OpsDeck::Test {

namespace {

// Tables that only grow. A statement may read one whole only through a partial index: its rows are
// the few still in play (a backlog, the failed ones), not the history.
const QStringList kGrowing = {QStringLiteral("deliveries"), QStringLiteral("delivery_attempts"), QStringLiteral("events"),
                              QStringLiteral("audit"), QStringLiteral("instances")};

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

// SQLite: the detail of every step of the plan (every parameter NULL), and the partial indexes
// into *partial.
QStringList sqlitePlan(Database &db, const QString &sql, QStringList *partial, QString *failure)
{
    QSqlQuery meta(db.connection());
    if (!execOrFail(meta, QStringLiteral("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '% WHERE %'"),
                    failure))
        return {};
    while (meta.next())
        partial->append(meta.value(0).toString());
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
    QStringList details;
    while (q.next())
        details.append(q.value(3).toString());
    return details;
}

// SQLite: a SCAN of a growing table, bare or through an index that holds every row.
QStringList sqliteFullScans(Database &db, const QString &sql, QString *failure)
{
    QStringList partial;
    const QStringList details = sqlitePlan(db, sql, &partial, failure);
    const QHash<QString, QString> names = growingNames(sql);
    static const QRegularExpression scan(QStringLiteral("^SCAN (\\w+)(?: USING (?:COVERING )?INDEX (\\w+))?"));
    QStringList scans;
    for (const QString &detail : details) {
        const auto m = scan.match(detail);
        if (m.hasMatch() && names.contains(m.captured(1).toLower()) && !partial.contains(m.captured(2)))
            scans.append(detail);
    }
    return scans;
}

// SQLite: the steps of the plan that read table `alias` other than through a partial index.
QStringList sqliteReadsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure)
{
    QStringList partial;
    const QStringList details = sqlitePlan(db, sql, &partial, failure);
    static const QRegularExpression step(QStringLiteral("^(?:SCAN|SEARCH) (\\w+)(?: USING (?:COVERING )?INDEX (\\w+))?"));
    QStringList reads;
    int seen = 0;
    for (const QString &detail : details) {
        const auto m = step.match(detail);
        if (!m.hasMatch() || m.captured(1) != alias)
            continue;
        ++seen;
        if (!partial.contains(m.captured(2)))
            reads.append(detail);
    }
    if (failure->isEmpty() && seen == 0)
        *failure = QStringLiteral("no step of the plan reads %1").arg(alias);
    return reads;
}

// PostgreSQL plans by statistics, and an empty table is cheapest to read whole: with sequential
// scans priced out and a generic plan, a Seq Scan left means no index serves the statement, and an
// index walked without a condition is the same read unless the index is partial. The plans of
// EXPLAIN (FORMAT JSON); the table of every index into *indexTables, the partial ones into *partial.
QJsonArray postgresPlan(Database &db, const QString &sql, QHash<QString, QString> *indexTables, QStringList *partial,
                        QString *failure)
{
    QSqlQuery q(db.connection());
    if (!execOrFail(q, QStringLiteral("SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema()"),
                    failure))
        return {};
    while (q.next()) {
        indexTables->insert(q.value(0).toString(), q.value(1).toString());
        if (q.value(2).toString().contains(QLatin1String(" WHERE ")))
            partial->append(q.value(0).toString());
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
    QJsonArray plans;
    if (execOrFail(q, QStringLiteral("EXPLAIN (FORMAT JSON) ") + execute, failure) && q.next())
        plans = QJsonDocument::fromJson(q.value(0).toString().toUtf8()).array();
    q.exec(QStringLiteral("DEALLOCATE plan_check"));
    return plans;
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

QStringList postgresFullScans(Database &db, const QString &sql, QString *failure)
{
    QHash<QString, QString> indexTables;
    QStringList partial;
    QStringList scans;
    for (const QJsonValue plan : postgresPlan(db, sql, &indexTables, &partial, failure))
        collectPgScans(plan.toObject().value(QStringLiteral("Plan")).toObject(), indexTables, partial, &scans);
    return scans;
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
    QHash<QString, QString> indexTables;
    QStringList partial;
    QStringList reads;
    int seen = 0;
    for (const QJsonValue plan : postgresPlan(db, sql, &indexTables, &partial, failure))
        collectPgReads(plan.toObject().value(QStringLiteral("Plan")).toObject(), alias, partial, false, &reads, &seen);
    if (failure->isEmpty() && seen == 0)
        *failure = QStringLiteral("no node of the plan reads %1").arg(alias);
    return reads;
}

} // namespace

bool openPlanDatabase(std::unique_ptr<TestDatabase> *scratch, std::unique_ptr<Database> *db, QString *error)
{
    *scratch = std::make_unique<TestDatabase>();
    if (!(*scratch)->isValid()) {
        *error = (*scratch)->error();
        return false;
    }
    *db = std::make_unique<Database>((*scratch)->url());
    Problem problem;
    if ((*db)->open(&problem) && (*db)->migrate(&problem))
        return true;
    *error = problem.detail;
    return false;
}

QStringList fullScans(Database &db, const QString &sql, QString *failure)
{
    return db.backend() == Database::Backend::Postgres ? postgresFullScans(db, sql, failure)
                                                       : sqliteFullScans(db, sql, failure);
}

QStringList readsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure)
{
    return db.backend() == Database::Backend::Postgres ? postgresReadsBesidePartial(db, sql, alias, failure)
                                                       : sqliteReadsBesidePartial(db, sql, alias, failure);
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

QList<std::pair<QByteArray, QString>> leaseStatements(bool postgres, const char *prefix)
{
    using Clause = DeliveryRepository::EndpointClause;
    const std::pair<Clause, const char *> clauses[] = {
        {Clause::None, ""}, {Clause::Except, " past busy endpoints"}, {Clause::Only, " for named endpoints"}};
    QList<std::pair<QByteArray, QString>> statements;
    for (const auto &[clause, clauseName] : clauses) {
        for (const bool after : {false, true}) {
            const QByteArray name = QByteArray(prefix) + clauseName + (after ? " after a cursor" : "");
            statements.append({name, DeliveryRepository::leaseSql(postgres, clause, after)});
            statements.append({name + ", candidates for one row each",
                               DeliveryRepository::selectionSql(postgres, clause, after, true)});
        }
    }
    return statements;
}

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

} // namespace OpsDeck::Test
