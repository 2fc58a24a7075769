// The delivery worker's claims: the budgets and per-endpoint limits that decide when it asks the
// store for work and for which endpoints, and what it does with what a claim brings.
#include "deliveryworker.h"

#include "outboxstore.h"

#include <QSet>

#include <algorithm>

namespace OpsDeck {

namespace {

constexpr int kMinClaimBatch = 128;
// The poll's claim for the endpoints that hold none of a full budget, after such claims found
// nothing, comes every 2, 4, ... polls, at most every this many.
constexpr int kMaxOthersClaimPolls = 32;

} // namespace

int DeliveryWorker::endpointLimit(qint64 endpointId) const
{
    // An endpoint gets one attempt at a time until it has answered well (slow start), and again
    // while it fails: a hanging provider holds one slot, never the process's whole budget.
    return m_proven.contains(endpointId) ? std::max(1, m_options.endpointConcurrency) : 1;
}

int DeliveryWorker::claimAheadFor(int limit, qint64 answerGapUs, qint64 claimRoundTripUs, qsizetype budgetShare)
{
    // Claimed attempts wait here so that a freed slot is filled at once instead of after a round
    // trip to the store. As many as the endpoint has slots sufficed while the store answered at
    // once; under load it answers a claim after the batch it is recording (milliseconds), and an
    // endpoint answering every 40 µs had emptied those long before: the provider then waited for
    // the store (docs/benchmarks.md). So an endpoint asks for more while what waits here is less
    // than it answers in a few of the store's answer times; a slow one asks no sooner than before
    // (what waits here is leased: no other server sends it, and a cancel finds it on its way).
    // What waits counts against the budget the proven endpoints share: beyond the old twice its
    // slots, an endpoint takes no more than its share of it, so that a few fast endpoints do not
    // fill it with waiting attempts while others have work.
    if (answerGapUs <= 0)
        return 2 * limit;
    const qint64 horizon = std::max(ClaimHorizonFloorUs, ClaimHorizonRounds * claimRoundTripUs);
    const qint64 paced = limit + std::clamp<qint64>(horizon / answerGapUs, limit, qint64(MaxClaimAheadFactor) * limit);
    return int(std::max<qint64>(2 * limit, std::min<qint64>(paced, budgetShare)));
}

int DeliveryWorker::claimAhead(qint64 endpointId) const
{
    if (!m_proven.contains(endpointId))
        return 1;
    const auto known = m_known.constFind(endpointId);
    const qsizetype holders = m_inFlight.size() + (m_inFlight.contains(endpointId) ? 0 : 1);
    return claimAheadFor(endpointLimit(endpointId), known == m_known.cend() ? 0 : known->answerGapUs, m_claimRoundTripUs,
                         std::max(1, m_options.deliveryConcurrency) / holders);
}

bool DeliveryWorker::wantsWork(qint64 endpointId) const
{
    int held = m_inFlight.value(endpointId) + int(m_queued.value(endpointId).size());
    // One sent an attempt at a time asks for the next once the last one is recorded: the claims
    // in between leave it out, so that they reach past its backlog to the other endpoints' work.
    if (!m_proven.contains(endpointId))
        held += m_unrecorded.value(endpointId);
    return held < claimAhead(endpointId);
}

QList<qint64> DeliveryWorker::takeQueued(qint64 endpointId)
{
    QList<qint64> ids;
    const auto queued = m_queued.find(endpointId);
    if (queued == m_queued.end())
        return ids;
    for (const Claimed &c : std::as_const(queued.value())) {
        m_busyInstances.remove(c.target.instanceId);
        ids.append(c.target.id);
    }
    m_queued.erase(queued);
    return ids;
}

QList<qint64> DeliveryWorker::heldEndpoints() const
{
    QList<qint64> held = m_inFlight.keys();
    for (auto it = m_queued.cbegin(); it != m_queued.cend(); ++it) {
        if (!m_inFlight.contains(it.key()))
            held.append(it.key());
    }
    for (auto it = m_unrecorded.cbegin(); it != m_unrecorded.cend(); ++it) {
        if (!m_inFlight.contains(it.key()) && !m_queued.contains(it.key()) && !m_proven.contains(it.key()))
            held.append(it.key());
    }
    return held;
}

DeliveryWorker::Budget DeliveryWorker::budget() const
{
    Budget b;
    for (auto it = m_inFlight.cbegin(); it != m_inFlight.cend(); ++it)
        (m_proven.contains(it.key()) ? b.usedInFlight : b.probingInFlight) += it.value();
    b.used = b.usedInFlight;
    b.probing = b.probingInFlight;
    for (auto it = m_queued.cbegin(); it != m_queued.cend(); ++it)
        (m_proven.contains(it.key()) ? b.used : b.probing) += int(it.value().size());
    return b;
}

void DeliveryWorker::pump()
{
    m_pumpQueued = false;
    if (!m_running)
        return;
    const QDateTime now = QDateTime::currentDateTimeUtc();

    // First what was claimed earlier and waits for a slot of its endpoint.
    QList<qint64> expired;
    for (auto it = m_queued.begin(); it != m_queued.end();) {
        sendQueued(it.value(), it.key(), now, &expired);
        it = it.value().isEmpty() ? m_queued.erase(it) : std::next(it);
    }
    if (!expired.isEmpty())
        m_store->release(expired);

    // Endpoints that have not answered well (new, failing, hanging) get one attempt each, outside
    // the budget the answering ones share, so hanging endpoints never take their slots; they have
    // a budget of their own, twice as large (every new endpoint's first attempt comes from it too).
    const Budget b = budget();
    const int limit = std::max(1, m_options.deliveryConcurrency);
    const int freeProven = limit - b.used;
    // With the probing budget all taken (that many endpoints hanging at once), a claim could hand
    // out more attempts to such endpoints: it then names the proven endpoints it takes work for.
    const bool provenOnly = 2 * limit - b.probing <= 0;
    const int free = provenOnly ? freeProven : std::min(freeProven, 2 * limit - b.probing);
    // A claim that finds nothing scans every due row of the endpoints it leaves out; after an
    // empty one, claim again only when something changed (a wake, the poll, an endpoint wanting
    // more, a recorded batch). One claim at a time: its answer says how many slots it filled.
    if (m_claimPending)
        return;
    if (free <= 0) {
        // The budget is full, and freed slots go to the earliest due rows: those of the endpoints
        // that hold it, when they have a backlog (a provider's endpoints answering slowly, say).
        // Another endpoint's notification would wait behind all of it. Once per poll, a small
        // claim for the endpoints that hold nothing here, beyond the budget: they wait a poll or
        // so. What all such claims add stays under one endpoint's concurrency beyond the budget,
        // and within the probing budget, and ends with those attempts.
        const int ec = std::max(1, m_options.endpointConcurrency);
        const int room = std::min(2 * limit - b.probing, ec - (b.used - limit));
        if (m_othersClaimDue && room > 0) {
            m_othersClaimDue = false;
            postClaim(now, room, holdersLeftOut(), OutboxStore::ClaimMode::Aside);
            m_othersClaimPending = true;
        }
        return;
    }
    // An endpoint that wanted more when an attempt finished may have been refilled since by a
    // claim: claiming for it then would only scan past its due rows (all of them, with one
    // endpoint) and find nothing.
    for (auto it = m_wanting.begin(); it != m_wanting.end();)
        it = wantsWork(*it) ? std::next(it) : m_wanting.erase(it);
    if (!(m_mayHaveWork || m_woken || !m_wanting.isEmpty()))
        return;
    EndpointFilter endpoints;
    if (provenOnly) {
        QList<qint64> wanting;
        for (const qint64 endpointId : std::as_const(m_proven)) {
            if (wantsWork(endpointId))
                wanting.append(endpointId);
        }
        endpoints = EndpointFilter::only(wanting);
    } else {
        for (const qint64 endpointId : heldEndpoints()) {
            if (!wantsWork(endpointId))
                endpoints.ids.append(endpointId);
        }
        // The others are sent one attempt at a time: what a claim took beyond that would wait
        // here, leased and held from every other server, however long their attempts take.
        endpoints.oneEachExcept = m_proven.values();
    }
    if (!endpoints.admitsAny())
        return; // what asked for a claim still asks when the probing budget has room again
    const bool onlyNew = !m_mayHaveWork && m_wanting.isEmpty();
    m_mayHaveWork = false;
    m_wanting.clear();
    m_woken = false;
    // Batches stay bounded so one claim does not take far more than the endpoints can take now
    // (never more than the free budget). At least 128: a claim costs the store about as much
    // for 128 rows as for 64, and passes the due rows of busy (hanging) endpoints once per batch,
    // so larger batches leave the store more time to record (docs/benchmarks.md).
    postClaim(now, std::min(free, std::max(2 * std::max(1, m_options.endpointConcurrency), kMinClaimBatch)), endpoints,
              onlyNew ? OutboxStore::ClaimMode::OnlyNew : OutboxStore::ClaimMode::Round);
}

EndpointFilter DeliveryWorker::holdersLeftOut() const
{
    EndpointFilter endpoints(heldEndpoints());
    endpoints.oneEachExcept = m_proven.values();
    return endpoints;
}

void DeliveryWorker::postClaim(const QDateTime &now, int batch, const EndpointFilter &endpoints, OutboxStore::ClaimMode mode)
{
    const QDateTime leaseUntil = now.addMSecs(2 * m_options.deliveryTimeout.count() + 5000);
    m_claimPending = true;
    m_claimPostedUs = m_clock.nsecsElapsed() / 1000;
    m_store->claim(now, leaseUntil, batch, endpoints, mode, this,
                   [this, leaseUntil](const QList<DeliveryTarget> &targets, bool full, const Problem &problem) {
                       onClaimed(targets, full, leaseUntil, problem);
                   });
}

void DeliveryWorker::onClaimed(const QList<DeliveryTarget> &targets, bool full, const QDateTime &leaseUntil,
                               const Problem &problem)
{
    m_claimPending = false;
    // The store's answer time, for claimAhead(): that of the round's claims, which keep endpoints
    // fed. The poll's claim for the endpoints holding none of a full budget reads past all of the
    // holders' due rows, and a failed one may have waited out a busy database.
    if (m_running && problem.isNull() && !m_othersClaimPending) {
        const qint64 roundTrip = std::min(ClaimRoundTripCapUs, m_clock.nsecsElapsed() / 1000 - m_claimPostedUs);
        m_claimRoundTripUs = averaged(m_claimRoundTripUs, roundTrip);
    }
    if (!m_running) {
        // Answered while shutting down (releaseUnsent()): none of them was sent.
        QList<qint64> unsent;
        for (const DeliveryTarget &t : targets)
            unsent.append(t.id);
        if (!unsent.isEmpty() && m_store)
            m_store->release(unsent);
        return;
    }
    if (std::exchange(m_othersClaimPending, false)) {
        // One that finds nothing read the whole due backlog of the endpoints it left out: while
        // they keep finding nothing, they come less often (a new endpoint then waits that long).
        if (problem.isNull())
            m_othersClaimPolls = targets.isEmpty() ? std::min(2 * m_othersClaimPolls, kMaxOthersClaimPolls) : 1;
    }
    if (!problem.isNull())
        reportFailure(problem.detail);
    if (std::exchange(m_cycleClaim, false))
        endCycle();
    int waiting = 0;
    QList<qint64> held;
    for (const DeliveryTarget &t : targets) {
        // An older notification of the instance is still being sent by this worker (its lease
        // already holds the newer one back from the claim; this guards the rest): the newer one
        // waits, so they arrive in order.
        if (m_busyInstances.contains(t.instanceId)) {
            held.append(t.id);
            ++waiting;
            continue;
        }
        if (m_inFlight.value(t.endpointId) >= endpointLimit(t.endpointId)) {
            // An endpoint sent one attempt at a time keeps nothing waiting beyond it: this claim
            // was asked for before it failed.
            if (!m_proven.contains(t.endpointId) && !wantsWork(t.endpointId)) {
                held.append(t.id);
                continue;
            }
            m_busyInstances.insert(t.instanceId);
            m_queued[t.endpointId].append(Claimed{t, leaseUntil});
            continue;
        }
        m_busyInstances.insert(t.instanceId);
        send(t);
    }
    if (!held.isEmpty())
        m_store->release(held);
    // A full batch suggests more work; not when it was full of rows that must wait (they would
    // come back first again), nor when it all went to endpoints that now have enough: claiming
    // again would only scan past their rows (a batch of one endpoint says nothing of the others).
    // A batch is full when the claim read as many due rows as it could take, though it took one
    // row each of the endpoints sent one attempt at a time: then the others may have work beyond
    // what it read, and the next claim leaves those endpoints out and goes on after it.
    if (full && waiting == 0) {
        QSet<qint64> endpoints;
        bool oneEach = false;
        for (const DeliveryTarget &t : targets) {
            endpoints.insert(t.endpointId);
            oneEach = oneEach || !m_proven.contains(t.endpointId);
        }
        if (endpoints.size() > 1 || oneEach)
            m_mayHaveWork = true;
        for (qint64 endpointId : std::as_const(endpoints)) {
            if (wantsWork(endpointId))
                m_wanting.insert(endpointId);
        }
    }
    schedulePump();
}

} // namespace OpsDeck
