// Instance destruction after retention: STOPPED acknowledged -> destruction callback acknowledged -> DESTROYED.
#include "destructionsweep.h"

#include "deliveryrepository.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "core/instance.h"
#include "server/api/instancesapi.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonObject>
#include <QSqlQuery>

namespace OpsDeck {

namespace {

const QString kInstance = QStringLiteral("instance");

struct LatestDelivery
{
    qint64 id = 0;
    QString state;
};

LatestDelivery latest(Database &db, qint64 instanceId, const QString &eventType)
{
    QSqlQuery &q = db.query(DestructionSweep::latestSql());
    q.addBindValue(instanceId);
    q.addBindValue(eventType);
    LatestDelivery d;
    if (q.exec() && q.next()) {
        d.id = q.value(0).toLongLong();
        d.state = q.value(1).toString();
    }
    q.finish();
    return d;
}

} // namespace

DestructionSweep::DestructionSweep(Database &db, Journal &journal, DeliveryRepository &repository,
                                   const ServerOptions &options)
    : m_db(db)
    , m_journal(journal)
    , m_repository(repository)
    , m_options(options)
{
}

const QString &DestructionSweep::dueSql()
{
    static const QString sql = QStringLiteral(
        "SELECT id FROM instances WHERE status = 'STOPPED' AND destroy_after IS NOT NULL AND destroy_after <= ?"
        " ORDER BY destroy_after, id LIMIT 500");
    return sql;
}

const QString &DestructionSweep::latestSql()
{
    static const QString sql = QStringLiteral(
        "SELECT id, state FROM deliveries WHERE instance_id = ? AND event_type = ? ORDER BY id DESC LIMIT 1");
    return sql;
}

int DestructionSweep::run(Problem *error)
{
    QList<qint64> due;
    {
        QSqlQuery &q = m_db.query(dueSql());
        q.addBindValue(nowTimestamp());
        if (!q.exec()) {
            *error = Database::sqlProblem(q);
            q.finish();
            return -1;
        }
        while (q.next())
            due.append(q.value(0).toLongLong());
        q.finish();
    }
    int changedCount = 0;
    for (qint64 id : std::as_const(due)) {
        WriteTransaction tx(m_db);
        bool changed = false;
        if (!step(id, error, &changed))
            return -1;
        if (!tx.commit(error))
            return -1;
        if (changed)
            ++changedCount;
    }
    return changedCount;
}

bool DestructionSweep::step(qint64 id, Problem *error, bool *changed)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "SELECT callback_url, organization_id, version FROM instances WHERE id = ? AND status = 'STOPPED'"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        q.finish();
        return true; // changed meanwhile (started again): nothing to do
    }
    const QString callback = q.value(0).toString();
    const qint64 organization = q.value(1).toLongLong();
    const qint64 version = q.value(2).toLongLong();
    q.finish();

    if (callback.isEmpty()) {
        *changed = true;
        return destroy(id, error);
    }
    const LatestDelivery stopped = latest(m_db, id, Instance::StatusChangedEvent);
    if (stopped.id != 0 && stopped.state != Delivery::Delivered)
        return setAwaiting(id,
                           QStringLiteral("the provider has not acknowledged the STOPPED notification (delivery %1 is %2)")
                               .arg(stopped.id)
                               .arg(stopped.state),
                           stopped.id, error, changed);
    const LatestDelivery destroyed = latest(m_db, id, Instance::DestroyedEvent);
    if (destroyed.id == 0) {
        const QJsonObject body{{QStringLiteral("type"), Instance::DestroyedEvent},
                               {QStringLiteral("instance_id"), id},
                               {QStringLiteral("status"), Instance::Destroyed},
                               {QStringLiteral("previous_status"), Instance::Stopped},
                               {QStringLiteral("version"), version + 1},
                               {QStringLiteral("changed_at"), nowTimestamp()},
                               {QStringLiteral("organization_id"), organization}};
        const auto d = m_repository.enqueue(id, Instance::DestroyedEvent, body, error);
        if (!d)
            return false;
        return setAwaiting(id, QStringLiteral("waiting for the provider to acknowledge the destruction callback"),
                           d->value(QStringLiteral("id")).toInteger(), error, changed);
    }
    if (destroyed.state == Delivery::Delivered) {
        *changed = true;
        return destroy(id, error);
    }
    if (destroyed.state == Delivery::Pending)
        return setAwaiting(id, QStringLiteral("waiting for the provider to acknowledge the destruction callback"),
                           destroyed.id, error, changed);
    return setAwaiting(id,
                       QStringLiteral("the provider has not acknowledged the destruction callback (delivery %1 is %2)")
                           .arg(destroyed.id)
                           .arg(destroyed.state),
                       destroyed.id, error, changed);
}

bool DestructionSweep::setAwaiting(qint64 id, const QString &reason, qint64 deliveryId, Problem *error, bool *changed)
{
    QSqlQuery &u = m_db.query(QStringLiteral(
        "UPDATE instances SET awaiting_ack_reason = ?, awaiting_ack_delivery = ?, version = version + 1, updated_at = ?"
        " WHERE id = ? AND (awaiting_ack_reason IS NULL OR awaiting_ack_reason <> ? OR awaiting_ack_delivery IS NULL"
        " OR awaiting_ack_delivery <> ?)"));
    u.addBindValue(reason);
    u.addBindValue(deliveryId);
    u.addBindValue(nowTimestamp());
    u.addBindValue(id);
    u.addBindValue(reason);
    u.addBindValue(deliveryId);
    if (!u.exec()) {
        *error = Database::sqlProblem(u);
        u.finish();
        return false;
    }
    const bool updated = u.numRowsAffected() == 1;
    u.finish();
    if (!updated)
        return true;
    *changed = true;
    return emitInstance(id, error);
}

bool DestructionSweep::destroy(qint64 id, Problem *error)
{
    const QString now = nowTimestamp();
    QSqlQuery &u = m_db.query(QStringLiteral(
        "UPDATE instances SET status = 'DESTROYED', version = version + 1, updated_at = ?, status_changed_at = ?,"
        " awaiting_ack_reason = NULL, awaiting_ack_delivery = NULL, destroy_after = NULL WHERE id = ? AND status = 'STOPPED'"));
    u.addBindValue(now);
    u.addBindValue(now);
    u.addBindValue(id);
    if (!u.exec()) {
        *error = Database::sqlProblem(u);
        u.finish();
        return false;
    }
    u.finish();
    QSqlQuery &who = m_db.query(QStringLiteral("SELECT provider_id, owner FROM instances WHERE id = ?"));
    who.addBindValue(id);
    Audience audience;
    if (who.exec() && who.next()) {
        audience.provider = who.value(0).toLongLong();
        audience.owner = who.value(1).toString();
    }
    who.finish();
    const Caller system{Actor::System, QStringLiteral("retention"), 0};
    return m_journal.audit(system,
                           {QStringLiteral("destroy"), kInstance, id, Instance::Stopped, Instance::Destroyed,
                            QStringLiteral("retention period of %1 s ended").arg(m_options.instanceRetention.count())},
                           audience, error)
        && emitInstance(id, error);
}

bool DestructionSweep::emitInstance(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + InstancesApi::columns() + QStringLiteral(" FROM instances WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec() || !q.next()) {
        *error = Database::sqlProblem(q);
        q.finish();
        return false;
    }
    const QJsonObject o = InstancesApi::instanceJson(q);
    q.finish();
    Audience audience;
    audience.provider = o.value(QStringLiteral("provider_id")).toInteger();
    audience.owner = o.value(QStringLiteral("owner")).toString();
    return m_journal.event(kInstance, id, o.value(QStringLiteral("version")).toInteger(), QStringLiteral("updated"), o,
                           audience, error)
        != 0;
}

} // namespace OpsDeck
