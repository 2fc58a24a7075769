// Instance destruction after retention: STOPPED acknowledged -> destruction callback acknowledged -> DESTROYED.
#include "destructionsweep.h"

#include "deliveryrepository.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "core/endpoint.h"
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
    qint64 endpointId = 0;
    QString endpointState; // empty when the endpoint is gone

    // A PENDING notification whose endpoint is paused or disabled is not sent at all until the
    // endpoint is resumed: the reason says so first (nothing reached the provider), and what to do.
    bool held() const
    {
        return state == Delivery::Pending && !endpointState.isEmpty() && endpointState != Endpoint::Active;
    }
    QString heldReason(const QString &what) const
    {
        return QStringLiteral("the %1 (delivery %2) is not sent: its endpoint %3 is %4; resume the endpoint to send it")
            .arg(what)
            .arg(id)
            .arg(endpointId)
            .arg(endpointState);
    }
};

// The newest notification of the instance and kind (id 0 when there is none); false when the
// read failed, which must not pass for "none": the step would queue a second one.
bool latest(Database &db, qint64 instanceId, const QString &eventType, LatestDelivery *d, Problem *error)
{
    QSqlQuery &q = db.query(DestructionSweep::latestSql());
    q.addBindValue(instanceId);
    q.addBindValue(eventType);
    if (!q.exec()) {
        *error = Database::sqlProblem(q);
        q.finish();
        return false;
    }
    if (q.next()) {
        d->id = q.value(0).toLongLong();
        d->state = q.value(1).toString();
        d->endpointId = q.value(2).toLongLong();
        d->endpointState = q.value(3).toString();
    }
    q.finish();
    return true;
}

struct DueInstance
{
    qint64 id = 0;
    QString destroyAfter;
};

// The page of due instances after (at, id).
bool readDue(Database &db, const QString &at, qint64 id, int pageSize, QList<DueInstance> *page, Problem *error)
{
    const bool postgres = db.backend() == Database::Backend::Postgres;
    QSqlQuery &q = db.query(DestructionSweep::dueSql(postgres));
    const QString now = nowTimestamp();
    if (postgres) {
        q.addBindValue(now);
        q.addBindValue(at);
        q.addBindValue(id);
    } else {
        q.addBindValue(at);
        q.addBindValue(id);
        q.addBindValue(at);
        q.addBindValue(now);
    }
    q.addBindValue(pageSize);
    if (!q.exec()) {
        *error = Database::sqlProblem(q);
        q.finish();
        return false;
    }
    while (q.next())
        page->append({q.value(0).toLongLong(), q.value(1).toString()});
    q.finish();
    return true;
}

QString awaitingDestruction(const LatestDelivery &d)
{
    if (d.held())
        return d.heldReason(QStringLiteral("destruction callback"));
    return QStringLiteral("waiting for the provider to acknowledge the destruction callback (delivery %1)").arg(d.id);
}

} // namespace

DestructionSweep::DestructionSweep(Database &db, Journal &journal, DeliveryRepository &repository,
                                   const ServerOptions &options, int pageSize)
    : m_db(db)
    , m_journal(journal)
    , m_repository(repository)
    , m_options(options)
    , m_pageSize(pageSize)
{
    Q_ASSERT(pageSize > 0);
}

const QString &DestructionSweep::dueSql(bool postgres)
{
    // A pass reads its page, not the stuck instances before it. PostgreSQL seeks the partial
    // index to the row comparison. SQLite seeks only on destroy_after and would read again every
    // instance of the cursor's instant (a bulk stop gives thousands the same one): there, the
    // rest of that instant and what comes after are two seeks, merged in the sweep's order.
    static const QString rowValue = QStringLiteral(
        "SELECT id, destroy_after FROM instances WHERE status = 'STOPPED' AND destroy_after IS NOT NULL"
        " AND destroy_after <= ? AND (destroy_after, id) > (?, ?) ORDER BY destroy_after, id LIMIT ?");
    // Named, since for the first seek the planner otherwise prefers instances_status (every
    // STOPPED instance after the id, due or not). The cursor's instant was due when it was read,
    // so the first seek needs no bound: another would keep it from seeking on the id.
    static const QString twoSeeks = QStringLiteral(
        "SELECT id, destroy_after FROM instances INDEXED BY instances_destroy_due WHERE status = 'STOPPED'"
        " AND destroy_after = ? AND id > ?"
        " UNION ALL SELECT id, destroy_after FROM instances INDEXED BY instances_destroy_due WHERE status = 'STOPPED'"
        " AND destroy_after IS NOT NULL AND destroy_after > ? AND destroy_after <= ? ORDER BY 2, 1 LIMIT ?");
    return postgres ? rowValue : twoSeeks;
}

const QString &DestructionSweep::latestSql()
{
    static const QString sql = QStringLiteral(
        "SELECT d.id, d.state, d.endpoint_id, e.state FROM deliveries d LEFT JOIN endpoints e ON e.id = d.endpoint_id"
        " WHERE d.instance_id = ? AND d.event_type = ? ORDER BY d.id DESC LIMIT 1");
    return sql;
}

int DestructionSweep::run(Problem *error)
{
    const bool fromStart = m_cursorId == 0;
    QList<DueInstance> due;
    if (!readDue(m_db, m_cursorAt, m_cursorId, m_pageSize, &due, error))
        return -1;
    // The previous pass ended on a full page that was the last one: start over now rather than
    // spend this pass on nothing.
    if (due.isEmpty() && !fromStart) {
        m_cursorAt = QStringLiteral("");
        m_cursorId = 0;
        if (!readDue(m_db, m_cursorAt, m_cursorId, m_pageSize, &due, error))
            return -1;
    }
    int changedCount = 0;
    for (const DueInstance &d : std::as_const(due)) {
        // Past it before it is tried: one that keeps failing waits for the next round instead of
        // holding up those after it every pass.
        m_cursorAt = d.destroyAfter;
        m_cursorId = d.id;
        bool changed = false;
        if (!sweepOne(d.id, error, &changed))
            return -1;
        if (changed)
            ++changedCount;
    }
    // A short page reached the newest: the next pass starts over from the oldest.
    if (due.size() < m_pageSize) {
        m_cursorAt = QStringLiteral("");
        m_cursorId = 0;
    }
    return changedCount;
}

bool DestructionSweep::sweepOne(qint64 id, Problem *error, bool *changed)
{
    // A deadlock victim's step runs again from its start, a few times, before the pass gives up
    // (the worker runs the next pass at its next poll).
    return runAgainOnConflict(
        [this, id, changed](Problem *problem) {
            WriteTransaction tx(m_db);
            if (!tx.isActive()) {
                *problem = tx.problem();
                return false;
            }
            bool stepChanged = false;
            if (!step(id, problem, &stepChanged) || !tx.commit(problem))
                return false;
            *changed = stepChanged;
            return true;
        },
        error);
}

bool DestructionSweep::step(qint64 id, Problem *error, bool *changed)
{
    // On PostgreSQL the first read takes the instance's row lock, held until the commit, so the
    // rest of the step runs after every transaction that holds or wants the instance: another
    // replica's sweep of it (which locks it here too, and whose destruction callback latest() then
    // sees: one is queued, not two), a status change (it updates the row), a retry through the API
    // (it locks the instance first), and any transaction that queued a notification of it (the
    // foreign key's share lock on the row, which FOR UPDATE waits for and FOR NO KEY UPDATE would
    // not). The instance before its deliveries, the order every writer takes them in: the
    // reverse would deadlock with a status change. SQLite's write transaction already keeps every
    // other writer out, and SQLite has no FOR UPDATE.
    static const QString read = QStringLiteral(
        "SELECT callback_url, organization_id, version FROM instances WHERE id = ? AND status = 'STOPPED'");
    static const QString readLocked = read + QStringLiteral(" FOR UPDATE");
    QSqlQuery &q = m_db.query(m_db.backend() == Database::Backend::Postgres ? readLocked : read);
    q.addBindValue(id);
    if (!q.exec()) {
        // A deadlock victim (its transaction is gone) or a lost connection: not "nothing to do".
        *error = Database::sqlProblem(q);
        q.finish();
        return false;
    }
    if (!q.next()) {
        q.finish();
        return true; // changed meanwhile (started again, or another replica destroyed it): nothing to do
    }
    const QString callback = q.value(0).toString();
    const qint64 organization = q.value(1).toLongLong();
    const qint64 version = q.value(2).toLongLong();
    q.finish();

    if (callback.isEmpty()) {
        *changed = true;
        return destroy(id, error);
    }
    LatestDelivery stopped;
    if (!latest(m_db, id, Instance::StatusChangedEvent, &stopped, error))
        return false;
    if (stopped.id != 0 && stopped.state != Delivery::Delivered)
        return setAwaiting(id,
                           stopped.held()
                               ? stopped.heldReason(QStringLiteral("STOPPED notification"))
                               : QStringLiteral("the provider has not acknowledged the STOPPED notification (delivery %1 is %2)")
                                     .arg(stopped.id)
                                     .arg(stopped.state),
                           stopped.id, Instance::StatusChangedEvent, error, changed);
    LatestDelivery destroyed;
    if (!latest(m_db, id, Instance::DestroyedEvent, &destroyed, error))
        return false;
    if (destroyed.id == 0) {
        // The version the instance will have once DESTROYED: this transaction's setAwaiting() takes
        // the next one, the destruction the one after. (Should the callback fail and be retried,
        // the awaiting_ack bookkeeping meanwhile takes versions too, and DESTROYED comes later than
        // the body says; it is never earlier than a version the provider was told before.)
        const QJsonObject body{{QStringLiteral("type"), Instance::DestroyedEvent},
                               {QStringLiteral("instance_id"), id},
                               {QStringLiteral("status"), Instance::Destroyed},
                               {QStringLiteral("previous_status"), Instance::Stopped},
                               {QStringLiteral("version"), version + 2},
                               {QStringLiteral("changed_at"), nowTimestamp()},
                               {QStringLiteral("organization_id"), organization}};
        const auto d = m_repository.enqueue(id, Instance::DestroyedEvent, body, error);
        if (!d)
            return false;
        const qint64 queued = d->value(QStringLiteral("id")).toInteger();
        // Read back with its endpoint, so a paused one is named now, not a pass later.
        LatestDelivery fresh;
        if (!latest(m_db, id, Instance::DestroyedEvent, &fresh, error))
            return false;
        Q_ASSERT(fresh.id == queued);
        return setAwaiting(id, awaitingDestruction(fresh), queued, Instance::DestroyedEvent, error, changed);
    }
    if (destroyed.state == Delivery::Delivered) {
        *changed = true;
        return destroy(id, error);
    }
    if (destroyed.state == Delivery::Pending)
        return setAwaiting(id, awaitingDestruction(destroyed), destroyed.id, Instance::DestroyedEvent, error, changed);
    return setAwaiting(id,
                       QStringLiteral("the provider has not acknowledged the destruction callback (delivery %1 is %2)")
                           .arg(destroyed.id)
                           .arg(destroyed.state),
                       destroyed.id, Instance::DestroyedEvent, error, changed);
}

bool DestructionSweep::setAwaiting(qint64 id, const QString &reason, qint64 deliveryId, const QString &eventType,
                                   Problem *error, bool *changed)
{
    QSqlQuery &u = m_db.query(QStringLiteral(
        "UPDATE instances SET awaiting_ack_reason = ?, awaiting_ack_delivery = ?, awaiting_ack_event = ?,"
        " version = version + 1, updated_at = ?"
        " WHERE id = ? AND (awaiting_ack_reason IS NULL OR awaiting_ack_reason <> ? OR awaiting_ack_delivery IS NULL"
        " OR awaiting_ack_delivery <> ?)"));
    u.addBindValue(reason);
    u.addBindValue(deliveryId);
    u.addBindValue(eventType);
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
        " awaiting_ack_reason = NULL, awaiting_ack_delivery = NULL, awaiting_ack_event = NULL, destroy_after = NULL"
        " WHERE id = ? AND status = 'STOPPED'"));
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
    const Caller system{Actor::System, QStringLiteral("retention"), 0, {}};
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
