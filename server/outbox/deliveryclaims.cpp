// The callback outbox in storage: leasing due deliveries to a worker and giving them back.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "server/storage/database.h"
#include "server/storage/statement.h"
#include "server/storage/timestamps.h"

#include <QSqlQuery>

#include <optional>
#include <utility>

namespace OpsDeck {

using namespace DeliverySql;

QList<DeliveryTarget> DeliveryRepository::claim(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil,
                                                int limit, const EndpointFilter &endpoints, Problem *error,
                                                const std::optional<ClaimCursor> &after, ClaimCursor *last,
                                                ClaimScan *scan)
{
    if (scan)
        *scan = {};
    if (limit <= 0 || !endpoints.admitsAny())
        return {};
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        if (error)
            *error = tx.problem();
        return {};
    }
    QList<qint64> ids;
    if (!leaseDue(owner, nowAt, leaseUntil, limit, endpoints, &ids, error, after, scan) || ids.isEmpty()
        || !tx.commit(error))
        return {};
    return leasedTargets(ids, owner, nowAt, error, last);
}

QString DeliveryRepository::selectionSql(bool postgres, EndpointClause endpoints, bool after, bool withEndpoint)
{
    // An older row of the instance blocks a newer one while it is undelivered or still in flight
    // (a superseded row may be mid-attempt), so the provider sees one instance's changes in order.
    QString due = QStringLiteral(
        " FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id"
        " WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)"
        " AND e.state = 'ACTIVE'");
    // The endpoints as one JSON array parameter, so the statement's text (and its cached
    // preparation) does not change with them.
    if (endpoints != EndpointClause::None)
        due += (endpoints == EndpointClause::Only ? QStringLiteral(" AND d.endpoint_id IN") : QStringLiteral(" AND d.endpoint_id NOT IN"))
               + jsonIdsSql(postgres);
    // A test event says nothing of the instance: it neither waits for the instance's backlog (a
    // notification retried in an hour would hold it that long) nor holds anything back. What can
    // hold a row back is read through the two partial indexes of migrations 6 and 12, never the
    // instance's delivered history: its PENDING rows, and the settled ones whose attempt is still
    // in flight (cancelled meanwhile). Each check spells every term of its index's condition, the
    // form in which SQLite's planner takes a partial index (PostgreSQL's proves it either way);
    // the second adds the test-event term that its index, deliveries_settled_in_flight (which
    // the upkeep reads, test events included), does not have.
    const QString unblocked = QStringLiteral(
        " AND (d.event_type = 'opsdeck.test' OR (NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.instance_id = d.instance_id"
        " AND o.id < d.id AND o.state = 'PENDING' AND o.event_type <> 'opsdeck.test')"
        " AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.instance_id = d.instance_id AND o.id < d.id"
        " AND o.state <> 'PENDING' AND o.lease_until IS NOT NULL AND o.event_type <> 'opsdeck.test' AND o.lease_until >= ?)))");
    const bool merged = after && !postgres;
    const QString columns = withEndpoint ? QStringLiteral("SELECT d.id, d.next_attempt_at, d.endpoint_id")
                            : merged     ? QStringLiteral("SELECT d.id, d.next_attempt_at")
                                         : QStringLiteral("SELECT d.id");
    const QString order = QStringLiteral(" ORDER BY d.next_attempt_at, d.id LIMIT ?");
    const QString locked = postgres ? QStringLiteral(" FOR UPDATE OF d SKIP LOCKED") : QString();
    if (!after)
        return columns + due + unblocked + order + locked;
    // After the cursor, in claim order: PostgreSQL seeks the index to a row comparison.
    if (postgres)
        return columns + due + QStringLiteral(" AND (d.next_attempt_at, d.id) > (?, ?)") + unblocked + order + locked;
    // SQLite seeks only on the time and filters the id, so every row already passed at the
    // cursor's time would be read again by each claim: with one timestamp for a whole backlog (a
    // bulk change, a test's seed) and a hanging endpoint's rows left behind, a claim read them
    // all. The rest of the cursor's time and what comes after are two seeks instead, merged in
    // claim order.
    return columns + due + QStringLiteral(" AND d.next_attempt_at = ? AND d.id > ?") + unblocked
           + QStringLiteral(" UNION ALL ") + columns + due + QStringLiteral(" AND d.next_attempt_at > ?") + unblocked
           + QStringLiteral(" ORDER BY 2, 1 LIMIT ?");
}

QString DeliveryRepository::jsonIdsSql(bool postgres)
{
    return postgres ? QStringLiteral(" (SELECT value::bigint FROM json_array_elements_text(?::json))")
                    : QStringLiteral(" (SELECT value FROM json_each(?))");
}

QString DeliveryRepository::leaseSql(bool postgres, EndpointClause endpoints, bool after)
{
    QString select = selectionSql(postgres, endpoints, after, false);
    if (after && !postgres)
        select = QStringLiteral("SELECT id FROM (") + select + QStringLiteral(")");
    return leaseWhereSql(select);
}

QString DeliveryRepository::leaseIdsSql(qsizetype count)
{
    return leaseWhereSql(placeholders(count));
}

QString DeliveryRepository::placeholders(qsizetype count)
{
    // One placeholder per id, so a statement is prepared once per claim size, not once per claim.
    QString marks;
    marks.reserve(3 * count);
    for (qsizetype i = 0; i < count; ++i)
        marks += i == 0 ? QStringLiteral("?") : QStringLiteral(", ?");
    return marks;
}

QString DeliveryRepository::leaseWhereSql(const QString &select)
{
    // A row still naming a lease owner was neither recorded nor released by it (both clear the
    // owner): its lease expired. Both backends evaluate SET from the row as it was, so the owner
    // taken over is returned beside the id.
    return QStringLiteral("UPDATE deliveries SET lease_owner = ?, lease_until = ?, previous_lease_owner = lease_owner"
                          " WHERE id IN (")
           + select + QStringLiteral(") AND (lease_until IS NULL OR lease_until < ?) RETURNING id, previous_lease_owner");
}

bool DeliveryRepository::leaseDue(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil, int limit,
                                  const EndpointFilter &endpoints, QList<qint64> *ids, Problem *error,
                                  const std::optional<ClaimCursor> &after, ClaimScan *scan)
{
    ids->clear();
    if (scan)
        *scan = {};
    if (limit <= 0 || !endpoints.admitsAny())
        return true;
    const QString now = timestamp(nowAt);
    const bool postgres = m_db.backend() == Database::Backend::Postgres;
    const EndpointClause clause = !endpoints.names()                              ? EndpointClause::None
                                  : endpoints.mode == EndpointFilter::Mode::Only ? EndpointClause::Only
                                                                                  : EndpointClause::Except;
    const QString named = QLatin1Char('[') + idList(endpoints.ids) + QLatin1Char(']');
    // The parameters of selectionSql(): now twice and the endpoints if any for each part, the
    // cursor's place, the limit.
    const auto bindSelection = [&](Statement &q) {
        const auto bindDue = [&] {
            q.bindText(now).bindText(now);
            if (clause != EndpointClause::None)
                q.bindText(named);
        };
        bindDue();
        if (after && !postgres) {
            q.bindText(after->at).bind(after->id).bindText(now);
            bindDue();
            q.bindText(after->at);
        } else if (after) {
            q.bindText(after->at).bind(after->id);
        }
        q.bindText(now).bind(limit);
    };
    std::optional<Statement> statement;
    if (!endpoints.oneEachExcept) {
        Statement &q = statement.emplace(m_db, leaseSql(postgres, clause, after.has_value()));
        q.bindText(owner).bindText(timestamp(leaseUntil));
        bindSelection(q);
        q.bindText(now);
    } else {
        // One row each for the endpoints not exempt: the candidates first (locked on PostgreSQL
        // until the claim commits), then the lease of those picked. Picking among them costs a
        // pass over the few candidates, never over an endpoint's whole backlog; the rest of a
        // limited endpoint's candidates wait for later claims, and the cursor goes past them all.
        QList<qint64> picked;
        {
            Statement c(m_db, selectionSql(postgres, clause, after.has_value(), true));
            bindSelection(c);
            ClaimScan seen;
            if (!pickOneEach(c, *endpoints.oneEachExcept, &picked, &seen, error))
                return false;
            if (scan)
                *scan = seen;
        }
        if (picked.isEmpty())
            return true;
        Statement &q = statement.emplace(m_db, leaseIdsSql(picked.size()));
        q.bindText(owner).bindText(timestamp(leaseUntil));
        for (const qint64 id : std::as_const(picked))
            q.bind(id);
        q.bindText(now);
    }
    Statement &q = *statement;
    if (!q.exec(error))
        return false;
    QList<std::pair<qint64, QString>> takenOver; // delivery, what its interrupted attempt says
    while (q.next()) {
        ids->append(q.integer(0));
        if (!q.isNull(1))
            takenOver.append({q.integer(0), expiredLeaseMessage(q.string(1))});
    }
    if (q.failed()) {
        if (error)
            *error = q.problem();
        return false;
    }
    if (scan && !endpoints.oneEachExcept)
        scan->candidates = int(ids->size());
    statement.reset(); // before the log's statements run on the same connection
    Problem ignored;
    return takenOver.isEmpty() || logInterrupted(takenOver, now, error ? error : &ignored);
}

bool DeliveryRepository::pickOneEach(Statement &candidates, const QList<qint64> &exempt, QList<qint64> *picked,
                                     ClaimScan *scan, Problem *error)
{
    if (!candidates.exec(error))
        return false;
    const QSet<qint64> unlimited(exempt.cbegin(), exempt.cend());
    QHash<qint64, qint64> oldest; // limited endpoint -> its oldest candidate
    // The rows come in claim order: the last one read is where the next claim goes on.
    while (candidates.next()) {
        const qint64 id = candidates.integer(0);
        const qint64 endpoint = candidates.integer(2);
        ++scan->candidates;
        scan->last = ClaimCursor{candidates.string(1), id};
        if (unlimited.contains(endpoint)) {
            picked->append(id);
            continue;
        }
        const auto first = oldest.find(endpoint);
        if (first == oldest.end())
            oldest.insert(endpoint, id);
        else
            *first = std::min(*first, id);
    }
    if (candidates.failed()) {
        if (error)
            *error = candidates.problem();
        return false;
    }
    for (const qint64 id : std::as_const(oldest))
        picked->append(id);
    return true;
}

QString DeliveryRepository::leasedTargetsSql(qsizetype count)
{
    return QStringLiteral(
               "SELECT d.id, d.webhook_id, d.event_type, d.instance_id, d.provider_id, d.endpoint_id, e.url,"
               " i.callback_signing, i.secret, g.previous_secret, g.valid_until, d.body, d.attempts, d.next_attempt_at"
               " FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN instances i ON i.id = d.instance_id"
               " LEFT JOIN outbox_secret_grace g ON g.instance_id = d.instance_id WHERE d.id IN (")
           + placeholders(count) + QStringLiteral(") ORDER BY d.id");
}

QList<DeliveryTarget> DeliveryRepository::leasedTargets(const QList<qint64> &ids, const QString &owner,
                                                        const QDateTime &nowAt, Problem *error, ClaimCursor *last)
{
    QList<DeliveryTarget> targets;
    if (ids.isEmpty())
        return targets;
    const QString now = timestamp(nowAt);
    std::optional<Statement> d;
    d.emplace(m_db, leasedTargetsSql(ids.size()));
    for (qint64 id : std::as_const(ids))
        d->bind(id);
    bool ok = d->exec(error);
    while (ok && d->next()) {
        DeliveryTarget t;
        t.id = d->integer(0);
        t.webhookId = d->string(1);
        t.eventType = d->string(2);
        t.instanceId = d->integer(3);
        t.providerId = d->integer(4);
        t.endpointId = d->integer(5);
        t.url = d->string(6);
        t.signing = d->string(7);
        const QString secret = d->string(8);
        if (!secret.isEmpty())
            t.secrets.append(secret);
        const QString previous = d->string(9);
        if (!previous.isEmpty() && d->string(10) > now)
            t.secrets.append(previous);
        t.body = d->text(11);
        t.attempts = int(d->integer(12));
        targets.append(t);
        const ClaimCursor at{d->string(13), t.id};
        if (last && std::pair(at.at, at.id) > std::pair(last->at, last->id))
            *last = at;
    }
    if (ok && d->failed()) {
        if (error)
            *error = d->problem();
        ok = false;
    }
    if (!ok) {
        // The statement is reset before the releases run on the same connection.
        d.reset();
        targets.clear();
        for (qint64 id : std::as_const(ids))
            release(id, owner);
    }
    return targets;
}

void DeliveryRepository::release(qint64 id, const QString &owner)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "UPDATE deliveries SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?"));
    q.addBindValue(id);
    q.addBindValue(owner);
    q.exec();
    q.finish();
}

const QString &DeliveryRepository::newestIdSql()
{
    static const QString sql = QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM deliveries");
    return sql;
}

qint64 DeliveryRepository::newestId(Problem *error)
{
    QSqlQuery &q = m_db.query(newestIdSql());
    qint64 id = -1;
    if (q.exec() && q.next())
        id = q.value(0).toLongLong();
    else
        *error = failed(q);
    q.finish();
    return id;
}

} // namespace OpsDeck
