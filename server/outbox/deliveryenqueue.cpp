// The callback outbox in storage: queueing notifications and superseding the stale ones.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>

namespace OpsDeck {

using namespace DeliverySql;

namespace {

const QString kTestEvent = QStringLiteral("opsdeck.test");

} // namespace

const QString &DeliveryRepository::staleSql()
{
    // Stale: undelivered, not in flight, and a newer notification of its instance and kind that
    // was not cancelled exists. Only PENDING and FAILED rows can be, so each state is read through
    // its own partial index: a pass (at start, then once a minute) reads the rows still in play, never the DELIVERED
    // history that a long-lived installation holds millions of. The PENDING index is in claim
    // order; MATERIALIZED keeps SQLite from walking the whole table in id order for the ORDER BY
    // instead of reading that index and sorting the few rows found.
    static const QString staleOf = QStringLiteral(
        " AND d.event_type <> 'opsdeck.test' AND (d.lease_until IS NULL OR d.lease_until < ?)"
        " AND EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id AND n.event_type = d.event_type"
        " AND n.id > d.id AND n.state <> 'CANCELLED')");
    static const QString sql = QStringLiteral("WITH pending AS MATERIALIZED (SELECT d.id FROM deliveries d WHERE d.state = 'PENDING'")
                               + staleOf
                               + QStringLiteral(") SELECT id FROM pending UNION ALL SELECT d.id FROM deliveries d WHERE d.state = 'FAILED'")
                               + staleOf + QStringLiteral(" ORDER BY 1 LIMIT %1").arg(StalePassLimit);
    return sql;
}

const QString &DeliveryRepository::olderSiblingsSql()
{
    static const QString sql = QStringLiteral(
        "SELECT id FROM deliveries WHERE instance_id = ? AND event_type = ? AND id < ? AND state IN ('PENDING', 'FAILED')"
        " ORDER BY id");
    return sql;
}

bool DeliveryRepository::supersedeOlder(qint64 instanceId, const QString &eventType, qint64 newerId, const QString &now,
                                        Problem *error)
{
    // A test event says nothing of the instance: it neither replaces nor is replaced.
    if (eventType == kTestEvent)
        return true;
    QSqlQuery &older = m_db.query(olderSiblingsSql());
    older.addBindValue(instanceId);
    older.addBindValue(eventType);
    older.addBindValue(newerId);
    QList<qint64> rows;
    const bool read = older.exec();
    while (read && older.next())
        rows.append(older.value(0).toLongLong());
    if (!read || older.lastError().isValid()) {
        *error = failed(older);
        older.finish();
        return false;
    }
    older.finish();
    for (const qint64 id : std::as_const(rows)) {
        // A live lease stays: its attempt is on the wire, and the claim holds the newer
        // notification back until that attempt is recorded, so no replica overtakes it (recording
        // leaves a settled row's state as it is). An expired one is let go (its attempt logged as
        // interrupted), so the row leaves the claim's in-flight index. The state is checked
        // again: on PostgreSQL the row may have been recorded DELIVERED or cancelled since it was
        // read, by a transaction that held its lock, and a settled row stays as it is.
        bool letGo = false;
        if (!letGoOfExpiredLease(id, now, error, &letGo))
            return false;
        QSqlQuery &u = m_db.query(QStringLiteral(
            "UPDATE deliveries SET state = 'SUPERSEDED', next_attempt_at = NULL, give_up_at = NULL,"
            " version = version + 1, updated_at = ? WHERE id = ? AND state IN ('PENDING', 'FAILED')"));
        u.addBindValue(now);
        u.addBindValue(id);
        const bool ok = u.exec();
        const bool superseded = ok && u.numRowsAffected() == 1;
        if (!ok)
            *error = failed(u);
        u.finish();
        if (!ok || ((superseded || letGo) && !emitDelivery(id, QStringLiteral("updated"), error)))
            return false;
    }
    return true;
}

int DeliveryRepository::supersedeStale(Problem *error)
{
    const QString now = nowTimestamp();
    QList<qint64> rows;
    {
        QSqlQuery &q = m_db.query(staleSql());
        q.addBindValue(now);
        q.addBindValue(now);
        if (!q.exec()) {
            *error = failed(q);
            q.finish();
            return -1;
        }
        while (q.next())
            rows.append(q.value(0).toLongLong());
        q.finish();
    }
    return eachInOneTransaction(rows, error, [&](qint64 id, Problem *problem) {
        bool letGo = false;
        if (!letGoOfExpiredLease(id, now, problem, &letGo))
            return -1;
        QSqlQuery &u = m_db.query(QStringLiteral(
            "UPDATE deliveries SET state = 'SUPERSEDED', next_attempt_at = NULL, give_up_at = NULL,"
            " version = version + 1, updated_at = ?"
            " WHERE id = ? AND state IN ('PENDING', 'FAILED') AND (lease_until IS NULL OR lease_until < ?)"));
        u.addBindValue(now);
        u.addBindValue(id);
        u.addBindValue(now);
        const bool ok = u.exec();
        const int n = u.numRowsAffected();
        if (!ok)
            *problem = failed(u);
        u.finish();
        if (!ok || ((n == 1 || letGo) && !emitDelivery(id, QStringLiteral("updated"), problem)))
            return -1;
        return n;
    });
}

std::optional<QJsonObject> DeliveryRepository::enqueue(qint64 instanceId, const QString &eventType,
                                                       const QJsonObject &body, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "SELECT i.provider_id, e.id FROM instances i JOIN endpoints e ON e.provider_id = i.provider_id AND e.url = i.callback_url"
        " WHERE i.id = ?"));
    q.addBindValue(instanceId);
    if (!q.exec() || !q.next()) {
        *error = q.lastError().isValid() ? failed(q)
                                          : Problem::make(409, QStringLiteral("no-callback"), QStringLiteral("No callback"),
                                                          QStringLiteral("instance %1 has no registered callback endpoint")
                                                              .arg(instanceId));
        q.finish();
        return std::nullopt;
    }
    const qint64 provider = q.value(0).toLongLong();
    const qint64 endpoint = q.value(1).toLongLong();
    q.finish();

    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    QSqlQuery &ins = m_db.query(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, give_up_at, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, 0, ?, ?, ?, ?, 1)"
        " RETURNING id"));
    ins.addBindValue(newWebhookId());
    ins.addBindValue(eventType);
    ins.addBindValue(instanceId);
    ins.addBindValue(provider);
    ins.addBindValue(endpoint);
    ins.addBindValue(QString::fromUtf8(QJsonDocument(body).toJson(QJsonDocument::Compact)));
    ins.addBindValue(now);
    ins.addBindValue(giveUpAt(nowAt));
    ins.addBindValue(now);
    ins.addBindValue(now);
    if (!ins.exec() || !ins.next()) {
        *error = failed(ins);
        ins.finish();
        return std::nullopt;
    }
    const qint64 id = ins.value(0).toLongLong();
    ins.finish();
    if (!supersedeOlder(instanceId, eventType, id, now, error))
        return std::nullopt;
    if (!emitDelivery(id, QStringLiteral("created"), error))
        return std::nullopt;
    return delivery(id, error);
}

} // namespace OpsDeck
