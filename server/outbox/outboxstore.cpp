// The delivery worker's storage side: claims, records and releases deliveries on a thread and connection of its own.
#include "outboxstore.h"

#include "deliveryschedule.h"
#include "destructionsweep.h"

#include "server/storage/database.h"
#include "server/storage/journal.h"

namespace OpsDeck {

OutboxStore::OutboxStore(ServerOptions options, QString owner, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    // ControlPlane::start() refuses options whose schedule does not parse.
    , m_schedule(retryScheduleFor(m_options).value_or(RetrySchedule()))
    , m_owner(std::move(owner))
{
}

OutboxStore::~OutboxStore()
{
    close();
}

bool OutboxStore::open(Problem *error)
{
    m_db = std::make_unique<Database>(m_options.databaseUrl);
    if (!m_db->open(error)) {
        m_db.reset();
        return false;
    }
    // Its thread has nothing to do but wait for its turn to write (PostgreSQL).
    m_db->setQueuesForWriteTurn(true);
    if (m_db->backend() == Database::Backend::Sqlite) {
        // The store reads the deliveries table and its indexes all the time: a page cache of its
        // own large enough to hold a backlog's hot pages instead of reading them again each claim
        // (the default is 2 MiB). Durability is the connection's (WAL, synchronous=NORMAL: a
        // commit survives the process being killed; only power loss may lose the last ones).
        // The store also commits more than anyone: its commits would be the ones to checkpoint,
        // waiting for the copy and the sync while attempts finish. Whoever runs the store runs a
        // WalCheckpointer beside it instead (ControlPlane does).
        if (!m_db->exec(QStringLiteral("PRAGMA cache_size=-32768"), error)
            || !m_db->exec(QStringLiteral("PRAGMA wal_autocheckpoint=0"), error)) {
            m_db->close();
            m_db.reset();
            return false;
        }
    }
    m_journal = std::make_unique<Journal>(*m_db);
    m_repository = std::make_unique<DeliveryRepository>(*m_db, *m_journal, m_schedule);
    m_destruction = std::make_unique<DestructionSweep>(*m_db, *m_journal, *m_repository, m_options);
    return true;
}

void OutboxStore::close()
{
    if (m_db)
        flush();
    // The last second's health counters, which the next poll would have shown.
    if (m_repository) {
        Problem problem;
        m_repository->showHealth(&problem);
    }
    m_destruction.reset();
    m_repository.reset();
    m_journal.reset();
    if (m_db)
        m_db->close();
    m_db.reset();
}

void OutboxStore::claim(const QDateTime &now, const QDateTime &leaseUntil, int limit, const EndpointFilter &endpoints,
                        ClaimMode mode, QObject *context, ClaimDone done)
{
    QMetaObject::invokeMethod(
        this,
        [this, now, leaseUntil, limit, endpoints, mode, target = QPointer<QObject>(context),
         done = std::move(done)] {
            QList<DeliveryTarget> targets;
            Problem problem;
            bool full = false;
            if (m_repository && mode == ClaimMode::Aside) {
                ClaimScan scan;
                targets = m_repository->claim(m_owner, now, leaseUntil, limit, endpoints, &problem, std::nullopt, nullptr,
                                              &scan);
                full = scan.candidates >= limit;
            } else if (m_repository) {
                const bool onlyNew = mode == ClaimMode::OnlyNew;
                // Recording inserts no deliveries, so this may look before what waits is recorded.
                const qint64 newest = m_repository->newestId(&problem);
                // A claim that takes any endpoint's rows stops at its limit anyway: only one that
                // leaves some out can scan far for nothing.
                const bool skip = onlyNew && endpoints.names() && problem.isNull() && newest <= m_newestSeen;
                if (problem.isNull())
                    m_newestSeen = newest;
                if (!skip && problem.isNull())
                    targets = claimFromCursor(now, leaseUntil, limit, endpoints, &problem, &full);
            }
            flush();
            if (target)
                QMetaObject::invokeMethod(target.data(), [done, targets, full, problem] { done(targets, full, problem); },
                                          Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

EndpointFilter OutboxStore::endpointsBesides(const EndpointFilter &endpoints, const QList<DeliveryTarget> &taken)
{
    if (!endpoints.oneEachExcept)
        return endpoints;
    // An endpoint limited to one row each already has its row.
    EndpointFilter rest = endpoints;
    const QSet<qint64> exempt(endpoints.oneEachExcept->cbegin(), endpoints.oneEachExcept->cend());
    for (const DeliveryTarget &t : taken) {
        if (exempt.contains(t.endpointId))
            continue;
        if (rest.mode == EndpointFilter::Mode::Only)
            rest.ids.removeAll(t.endpointId);
        else if (!rest.ids.contains(t.endpointId))
            rest.ids.append(t.endpointId);
    }
    return rest;
}

QList<DeliveryTarget> OutboxStore::claimFromCursor(const QDateTime &now, const QDateTime &leaseUntil, int limit,
                                                   const EndpointFilter &endpoints, Problem *problem, bool *full)
{
    // Each claim goes on where the last one stopped and starts over from the oldest due row only
    // when it runs out, so the due rows of busy endpoints (a hanging one can have thousands) are
    // passed once per round instead of once per claim.
    ClaimCursor last;
    ClaimScan scan;
    QList<DeliveryTarget> targets;
    // What waits is recorded first, so the claim sees those deliveries settled and their
    // instances' next notifications come free; both in one transaction, one commit.
    QList<qint64> leased;
    bool leasedWithRecords = false;
    if (!m_pending.isEmpty()) {
        leasedWithRecords = recordPending([&](Problem *error) {
            return m_repository->leaseDue(m_owner, now, leaseUntil, limit, endpoints, &leased, error, m_cursor, &scan);
        });
    }
    if (leasedWithRecords)
        targets = m_repository->leasedTargets(leased, m_owner, now, problem, &last);
    else
        targets = m_repository->claim(m_owner, now, leaseUntil, limit, endpoints, problem, m_cursor, &last, &scan);
    // The cursor ran out when the claim read fewer rows than it could have leased. With one row
    // each it may lease fewer than it read: those it left behind are passed as well.
    *full = scan.candidates >= limit;
    if (problem->isNull() && m_cursor && !*full) {
        m_cursor.reset();
        last = {};
        const int rest = limit - int(targets.size());
        const QList<DeliveryTarget> more = m_repository->claim(m_owner, now, leaseUntil, rest, endpointsBesides(endpoints, targets),
                                                               problem, std::nullopt, &last, &scan);
        targets += more;
        *full = scan.candidates >= rest;
    }
    if (std::pair(scan.last.at, scan.last.id) > std::pair(last.at, last.id))
        last = scan.last;
    if (!problem->isNull() || last.id == 0)
        m_cursor.reset();
    else
        m_cursor = last;
    return targets;
}

void OutboxStore::record(const QList<AttemptRecord> &records, QObject *context, RecordDone done)
{
    QMetaObject::invokeMethod(
        this,
        [this, records, target = QPointer<QObject>(context), done = std::move(done)] {
            m_pending.append(Pending{records, target, done});
            if (m_flushQueued)
                return;
            // Behind whatever else was posted meanwhile: those records join this batch.
            m_flushQueued = true;
            QMetaObject::invokeMethod(this, &OutboxStore::flush, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void OutboxStore::release(const QList<qint64> &ids)
{
    QMetaObject::invokeMethod(
        this,
        [this, ids] {
            if (!m_repository)
                return;
            for (qint64 id : ids)
                m_repository->release(id, m_owner);
        },
        Qt::QueuedConnection);
}

void OutboxStore::recordSilence(const QList<qint64> &endpointIds, const QDateTime &at, QObject *context,
                                std::function<void(const Problem &problem)> done)
{
    QMetaObject::invokeMethod(
        this,
        [this, endpointIds, at, target = QPointer<QObject>(context), done = std::move(done)] {
            if (!m_repository)
                return;
            Problem problem;
            m_repository->recordSilence(endpointIds, at, &problem);
            if (target)
                QMetaObject::invokeMethod(target.data(), [done, problem] { done(problem); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void OutboxStore::maintain(QObject *context, MaintainDone done)
{
    QMetaObject::invokeMethod(
        this,
        [this, target = QPointer<QObject>(context), done = std::move(done)] {
            if (!m_repository || !target)
                return;
            // Whatever queues a notification or makes one due again supersedes the stale ones
            // itself; the pass (which reads every PENDING row) is for rows from before an upgrade
            // or written behind those paths' backs, so it runs at start and then seldom.
            Upkeep upkeep;
            if (!m_lastSupersede.isValid() || m_lastSupersede.hasExpired(m_options.outboxSupersedeInterval.count())) {
                upkeep.superseded = m_repository->supersedeStale(&upkeep.supersedeProblem);
                // A failed pass is tried again at the next poll, and so is a full one: a backlog
                // from before an upgrade is gone in seconds, not a thousand rows a minute.
                if (upkeep.superseded >= 0 && upkeep.superseded < DeliveryRepository::StalePassLimit)
                    m_lastSupersede.start();
            }
            upkeep.swept = m_destruction->run(&upkeep.sweepProblem);
            // Cancelled or superseded while in flight on a worker that is gone: no claim takes
            // them, so their expired leases are let go here, their attempts logged as interrupted.
            upkeep.leasesLetGo = m_repository->letGoOfExpiredSettledLeases(&upkeep.leasesProblem);
            // Health counters a batch changed without showing: shown now, a poll later at most.
            upkeep.healthShown = m_repository->showHealth(&upkeep.healthProblem);
            QMetaObject::invokeMethod(target.data(), [done, upkeep] { done(upkeep); }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void OutboxStore::flush()
{
    recordPending({});
}

bool OutboxStore::recordPending(const std::function<bool(Problem *)> &alsoInTransaction)
{
    m_flushQueued = false;
    if (m_pending.isEmpty() || !m_repository)
        return false;
    const QList<Pending> pending = std::exchange(m_pending, {});
    QList<AttemptRecord> all;
    for (const Pending &p : pending)
        all += p.records;
    QList<RecordResult> results;
    Problem problem;
    const bool recorded =
        m_repository->recordBatch(all, m_owner, m_options.autoPauseWindow, &results, &problem, alsoInTransaction);
    if (!recorded) {
        QList<qint64> ids;
        for (const AttemptRecord &r : std::as_const(all))
            ids.append(r.target.id);
        Problem releaseProblem;
        m_repository->releaseUnrecorded(ids, m_owner, problem.detail, &releaseProblem);
    }
    for (const Pending &p : pending) {
        if (!p.context)
            continue;
        QMetaObject::invokeMethod(
            p.context.data(), [done = p.done, records = p.records, problem] { done(records, problem); },
            Qt::QueuedConnection);
    }
    return recorded;
}

} // namespace OpsDeck
