// The callback outbox in storage: leasing due deliveries to a worker and giving them back.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QSqlQuery>

#include <utility>

namespace OpsDeck {

using namespace DeliverySql;

QList<DeliveryTarget> DeliveryRepository::claim(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil,
                                                int limit, const QList<qint64> &busyEndpoints, Problem *error,
                                                const std::optional<ClaimCursor> &after, ClaimCursor *last)
{
    if (limit <= 0)
        return {};
    WriteTransaction tx(m_db);
    QList<qint64> ids;
    if (!leaseDue(owner, nowAt, leaseUntil, limit, busyEndpoints, &ids, error, after) || ids.isEmpty()
        || !tx.commit(error))
        return {};
    return leasedTargets(ids, owner, nowAt, error, last);
}

bool DeliveryRepository::leaseDue(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil, int limit,
                                  const QList<qint64> &busyEndpoints, QList<qint64> *ids, Problem *error,
                                  const std::optional<ClaimCursor> &after)
{
    ids->clear();
    if (limit <= 0)
        return true;
    const QString now = timestamp(nowAt);
    const bool postgres = m_db.backend() == Database::Backend::Postgres;
    // An older row of the instance blocks a newer one while it is undelivered or still in flight
    // (a superseded row may be mid-attempt), so the provider sees one instance's changes in order.
    QString select = QStringLiteral(
        "SELECT d.id FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id"
        " WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)"
        " AND e.state = 'ACTIVE'");
    // The busy endpoints as one JSON array parameter, so the statement's text (and its cached
    // preparation) does not change with them.
    if (!busyEndpoints.isEmpty())
        select += postgres ? QStringLiteral(" AND d.endpoint_id NOT IN (SELECT value::bigint FROM json_array_elements_text(?::json))")
                           : QStringLiteral(" AND d.endpoint_id NOT IN (SELECT value FROM json_each(?))");
    if (after)
        select += QStringLiteral(" AND d.next_attempt_at >= ? AND (d.next_attempt_at > ? OR d.id > ?)");
    select += QStringLiteral(
        " AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.instance_id = d.instance_id AND o.id < d.id"
        " AND o.event_type <> 'opsdeck.test' AND (o.state = 'PENDING' OR (o.lease_until IS NOT NULL AND o.lease_until >= ?)))"
        " ORDER BY d.next_attempt_at, d.id LIMIT ?");
    if (postgres)
        select += QStringLiteral(" FOR UPDATE OF d SKIP LOCKED");

    QSqlQuery &q = m_db.query(QStringLiteral("UPDATE deliveries SET lease_owner = ?, lease_until = ? WHERE id IN (") + select
                              + QStringLiteral(") AND (lease_until IS NULL OR lease_until < ?) RETURNING id"));
    q.addBindValue(owner);
    q.addBindValue(timestamp(leaseUntil));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!busyEndpoints.isEmpty())
        q.addBindValue(QLatin1Char('[') + idList(busyEndpoints) + QLatin1Char(']'));
    if (after) {
        q.addBindValue(after->at);
        q.addBindValue(after->at);
        q.addBindValue(after->id);
    }
    q.addBindValue(now);
    q.addBindValue(limit);
    q.addBindValue(now);
    if (!q.exec()) {
        if (error)
            *error = failed(q);
        q.finish();
        return false;
    }
    while (q.next())
        ids->append(q.value(0).toLongLong());
    q.finish();
    return true;
}

QList<DeliveryTarget> DeliveryRepository::leasedTargets(const QList<qint64> &ids, const QString &owner,
                                                        const QDateTime &nowAt, Problem *error, ClaimCursor *last)
{
    QList<DeliveryTarget> targets;
    if (ids.isEmpty())
        return targets;
    const QString now = timestamp(nowAt);
    // One placeholder per id, so a statement is prepared once per claim size, not once per claim.
    QString marks;
    marks.reserve(3 * ids.size());
    for (qsizetype i = 0; i < ids.size(); ++i)
        marks += i == 0 ? QStringLiteral("?") : QStringLiteral(", ?");
    QSqlQuery &d = m_db.query(QStringLiteral(
        "SELECT d.id, d.webhook_id, d.event_type, d.instance_id, d.provider_id, d.endpoint_id, e.url,"
        " i.callback_signing, i.secret, g.previous_secret, g.valid_until, d.body, d.attempts, d.next_attempt_at"
        " FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN instances i ON i.id = d.instance_id"
        " LEFT JOIN outbox_secret_grace g ON g.instance_id = d.instance_id WHERE d.id IN (")
                              + marks + QStringLiteral(") ORDER BY d.id"));
    for (qint64 id : std::as_const(ids))
        d.addBindValue(id);
    if (!d.exec()) {
        if (error)
            *error = failed(d);
        d.finish();
        for (qint64 id : std::as_const(ids))
            release(id, owner);
        return targets;
    }
    while (d.next()) {
        DeliveryTarget t;
        t.id = d.value(0).toLongLong();
        t.webhookId = d.value(1).toString();
        t.eventType = d.value(2).toString();
        t.instanceId = d.value(3).toLongLong();
        t.providerId = d.value(4).toLongLong();
        t.endpointId = d.value(5).toLongLong();
        t.url = d.value(6).toString();
        t.signing = d.value(7).toString();
        if (!d.value(8).toString().isEmpty())
            t.secrets.append(d.value(8).toString());
        if (!d.value(9).toString().isEmpty() && d.value(10).toString() > now)
            t.secrets.append(d.value(9).toString());
        t.body = d.value(11).toString().toUtf8();
        t.attempts = d.value(12).toInt();
        targets.append(t);
        const ClaimCursor at{d.value(13).toString(), t.id};
        if (last && std::pair(at.at, at.id) > std::pair(last->at, last->id))
            *last = at;
    }
    d.finish();
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

qint64 DeliveryRepository::newestId(Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM deliveries"));
    qint64 id = -1;
    if (q.exec() && q.next())
        id = q.value(0).toLongLong();
    else
        *error = failed(q);
    q.finish();
    return id;
}

} // namespace OpsDeck
