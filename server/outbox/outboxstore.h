// The delivery worker's storage side: claims, records and releases deliveries on a thread and connection of its own.
#pragma once

#include "deliveryrepository.h"

#include "core/retryschedule.h"
#include "server/serveroptions.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include <functional>
#include <optional>
#include <memory>

namespace OpsDeck {

class Database;
class DestructionSweep;
class Journal;

// Lives in its own thread, so the worker's thread only sends: it never waits for a claim, a
// commit or the SQLite write lock. Every call is posted here and answered by posting back to
// the given context in its thread. Attempts that arrive while a batch commits are recorded
// together in the next one (group commit), and a claim first records what is waiting, so it
// sees those deliveries settled and their instances' next notifications come free.
class OutboxStore final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(OutboxStore)

public:
    // `full`: the claim read as many due rows as it could lease, so more may be due beyond them.
    using ClaimDone = std::function<void(const QList<DeliveryTarget> &targets, bool full, const Problem &problem)>;
    // The records as given; on failure (problem set) they were not recorded and their deliveries
    // were released, so those attempts are sent again: at least once, never lost.
    using RecordDone = std::function<void(const QList<AttemptRecord> &records, const Problem &problem)>;

    // `owner` is the worker's lease owner: claims take leases for it, records and releases need it.
    OutboxStore(ServerOptions options, QString owner, QObject *parent = nullptr);
    ~OutboxStore() override;

    // In the store's thread: opens the connection.
    bool open(Problem *error);
    // In the store's thread: records what waits and closes the connection.
    void close();

    // What a poll cycle's upkeep did: notifications superseded, instances destroyed, endpoints
    // whose health it showed; each -1 with its problem set when that step failed.
    struct Upkeep
    {
        int superseded = 0;
        Problem supersedeProblem;
        int swept = 0;
        Problem sweepProblem;
        int healthShown = 0;
        Problem healthProblem;
        int leasesLetGo = 0;
        Problem leasesProblem;
    };
    using MaintainDone = std::function<void(const Upkeep &upkeep)>;

    enum class ClaimMode {
        Round,   // goes on after the last claim's cursor, from the oldest due row when it runs out
        OnlyNew, // the same, but only if deliveries were inserted since the last claim (a wake: the
                 // control plane wakes the worker on every feed event, its own commits included);
                 // skipping saves scanning past the due rows of the endpoints the claim leaves out
        Aside,   // from the oldest due row, leaving the round's cursor where it is
    };
    // Thread-safe: post the work to the store's thread; `done` runs in `context`'s thread.
    void claim(const QDateTime &now, const QDateTime &leaseUntil, int limit, const EndpointFilter &endpoints,
               ClaimMode mode, QObject *context, ClaimDone done);
    void record(const QList<AttemptRecord> &records, QObject *context, RecordDone done);
    void release(const QList<qint64> &ids);
    // Counts a silence for each of the endpoints (DeliveryRepository::recordSilence()); `done`
    // runs in `context`'s thread with the problem, if any.
    void recordSilence(const QList<qint64> &endpointIds, const QDateTime &at, QObject *context,
                       std::function<void(const Problem &problem)> done);
    // Supersedes stale notifications (at the first call, then every outboxSupersedeInterval) and
    // runs the destruction sweep.
    void maintain(QObject *context, MaintainDone done);

    // `endpoints` less those limited to one row each (EndpointFilter::oneEachExcept) that have it
    // in `taken`: for a second claim in the same round.
    static EndpointFilter endpointsBesides(const EndpointFilter &endpoints, const QList<DeliveryTarget> &taken);

private:
    struct Pending
    {
        QList<AttemptRecord> records;
        QPointer<QObject> context;
        RecordDone done;
    };

    void flush();
    // flush() with `alsoInTransaction` run as DeliveryRepository::recordBatch() runs it. True if
    // records were waiting and are recorded.
    bool recordPending(const std::function<bool(Problem *)> &alsoInTransaction);
    QList<DeliveryTarget> claimFromCursor(const QDateTime &now, const QDateTime &leaseUntil, int limit,
                                          const EndpointFilter &endpoints, Problem *problem, bool *full);

    ServerOptions m_options;
    RetrySchedule m_schedule;
    QString m_owner;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<Journal> m_journal;
    std::unique_ptr<DeliveryRepository> m_repository;
    std::unique_ptr<DestructionSweep> m_destruction;
    QList<Pending> m_pending;
    qint64 m_newestSeen = -1; // the highest delivery id when the last claim ran
    std::optional<ClaimCursor> m_cursor; // where the last claim stopped
    bool m_flushQueued = false;
    QElapsedTimer m_lastSupersede; // since the last pass of supersedeStale() that went through and was not full
};

} // namespace OpsDeck
