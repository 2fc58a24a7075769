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
    // All not owned; used from the worker thread that owns the connection.
    DestructionSweep(Database &db, Journal &journal, DeliveryRepository &repository, const ServerOptions &options);

    // One pass over the instances whose retention ended: how many changed, or -1 (see error).
    int run(Problem *error);

    // What every pass runs, for the tests that check the plans: the instances due (binds now)
    // and the newest notification of one instance and kind (binds instance, kind).
    static const QString &dueSql();
    static const QString &latestSql();

private:
    bool step(qint64 instanceId, Problem *error, bool *changed);
    bool setAwaiting(qint64 instanceId, const QString &reason, qint64 deliveryId, Problem *error, bool *changed);
    bool destroy(qint64 instanceId, Problem *error);
    bool emitInstance(qint64 instanceId, Problem *error);

    Database &m_db;
    Journal &m_journal;
    DeliveryRepository &m_repository;
    const ServerOptions &m_options;
};

} // namespace OpsDeck
