// Instance destruction after retention: STOPPED acknowledged -> destruction callback acknowledged -> DESTROYED.
#pragma once

#include "core/problem.h"
#include "server/serveroptions.h"

namespace OpsDeck {

class Database;
class DeliveryRepository;
class Journal;

// Spec §2: an instance is only destroyed once the provider acknowledged both its STOPPED
// notification and the destruction callback; until then it shows `awaiting_ack` with the
// blocking delivery and why. An instance that never registered a callback has nobody to tell
// and is destroyed when its retention ends.
class DestructionSweep final
{
public:
    static constexpr int DefaultPageSize = 500;

    // All not owned; used from the worker thread that owns the connection. A pass visits at most
    // pageSize instances (tests use a few).
    DestructionSweep(Database &db, Journal &journal, DeliveryRepository &repository, const ServerOptions &options,
                     int pageSize = DefaultPageSize);

    // One pass over the next page of instances whose retention ended, in (destroy_after, id)
    // order after where the previous pass stopped: how many changed, or -1 (see error).
    // Instances the provider has not acknowledged stay due, so the pages start over from the
    // oldest once a pass reaches the newest: each of N due instances is visited within
    // ceil(N / pageSize) + 1 passes, however many older ones are stuck.
    int run(Problem *error);

    // What every pass runs, for the tests that check the plans: the instances due after a
    // cursor, as spelled for the backend (PostgreSQL binds now, the cursor's destroy_after and
    // id, the page size; SQLite the cursor's destroy_after and id, its destroy_after again, now,
    // the page size) and the newest notification of one instance and kind (binds instance, kind).
    static const QString &dueSql(bool postgres);
    static const QString &latestSql();

private:
    // step() in a write transaction of its own, run again when PostgreSQL chose it as a deadlock
    // victim; false with the problem after the last try.
    bool sweepOne(qint64 instanceId, Problem *error, bool *changed);
    bool step(qint64 instanceId, Problem *error, bool *changed);
    // The instance awaits the acknowledgement of delivery deliveryId, a notification of eventType.
    bool setAwaiting(qint64 instanceId, const QString &reason, qint64 deliveryId, const QString &eventType, Problem *error,
                     bool *changed);
    bool destroy(qint64 instanceId, Problem *error);
    bool emitInstance(qint64 instanceId, Problem *error);

    Database &m_db;
    Journal &m_journal;
    DeliveryRepository &m_repository;
    const ServerOptions &m_options;
    int m_pageSize;
    // The last instance visited, or the start: "" sorts before every timestamp.
    QString m_cursorAt = QStringLiteral("");
    qint64 m_cursorId = 0;
};

} // namespace OpsDeck
