// The delivery worker: claims due callbacks, sends them with bounded concurrency and records the outcome.
#include "deliveryworker.h"

#include "deliveryschedule.h"
#include "outboxstore.h"

#include "server/delivery/callbacksender.h"

#include <QCoreApplication>
#include <QEvent>
#include <QThread>
#include <QUuid>

#include <algorithm>
#include <limits>

namespace OpsDeck {

namespace {

constexpr int kMinClaimBatch = 128;
// The poll's claim for the endpoints that hold none of a full budget, after such claims found
// nothing, comes every 2, 4, ... polls, at most every this many.
constexpr int kMaxOthersClaimPolls = 32;

// A running average that weighs each new sample an eighth; 0 means none yet.
qint64 averaged(qint64 average, qint64 sample)
{
    return average == 0 ? sample : (7 * average + sample) / 8;
}

} // namespace

DeliveryWorker::DeliveryWorker(ServerOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    // ControlPlane::start() refuses options whose schedule does not parse.
    , m_schedule(retryScheduleFor(m_options).value_or(RetrySchedule()))
    , m_owner(QStringLiteral("w-") + QUuid::createUuid().toString(QUuid::Id128).left(16))
{
    m_pollTimer.setParent(this);
    connect(&m_pollTimer, &QTimer::timeout, this, &DeliveryWorker::poll);
    m_flushTimer.setParent(this);
    m_flushTimer.setSingleShot(true);
    m_flushTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_flushTimer, &QTimer::timeout, this, &DeliveryWorker::flushDone);
    // A retry goes when it falls due, not at the next poll (a second later with the defaults, a
    // fifth of the first 5 s step): the poll is for what other workers and replicas scheduled.
    m_retryTimer.setParent(this);
    m_retryTimer.setSingleShot(true);
    m_retryTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_retryTimer, &QTimer::timeout, this, [this] { armRetryTimer(); });
    m_stallTimer.setParent(this);
    m_stallTimer.setInterval(int(std::max<qint64>(10, std::min<qint64>(StallFloorMs, m_options.endpointStallAfter.count()) / 2)));
    connect(&m_stallTimer, &QTimer::timeout, this, &DeliveryWorker::checkStalls);
}

DeliveryWorker::~DeliveryWorker()
{
    shutdown();
    stopStore();
}

void DeliveryWorker::start()
{
    if (m_running)
        return;
    Problem problem;
    m_storeThread = new QThread(this);
    m_storeThread->setObjectName(QStringLiteral("opsdeck-store"));
    m_store = new OutboxStore(m_options, m_owner);
    m_store->moveToThread(m_storeThread);
    m_storeThread->start();
    bool opened = false;
    QMetaObject::invokeMethod(
        m_store, [this, &opened, &problem] { opened = m_store->open(&problem); }, Qt::BlockingQueuedConnection);
    if (!opened) {
        stopStore();
        reportFailure(problem.detail);
        return;
    }
    m_sender = new CallbackSender(CallbackUrlGuard(m_options.allowPrivateCallbacks), this);
    m_sender->setMaxConnectionsPerPool(std::max(1, m_options.endpointConcurrency));
    m_running = true;
    m_clock.start();
    m_pollTimer.start(int(std::max<qint64>(10, m_options.outboxPollInterval.count())));
    poll();
}

void DeliveryWorker::wake()
{
    if (!m_running)
        return;
    m_woken = true;
    // New deliveries: perhaps for an endpoint holding none of a full budget.
    m_othersClaimPolls = 1;
    schedulePump();
}

void DeliveryWorker::shutdown()
{
    if (!m_running)
        return;
    flushDone();
    m_running = false;
    m_pollTimer.stop();
    m_retryTimer.stop();
    m_retryTimes.clear();
    m_stallTimer.stop();
    QList<qint64> unsent;
    if (m_sender) {
        // What may have reached its endpoint keeps its lease: it expires and the delivery is sent
        // again, at least once and never lost, and the server that takes the lease over logs the
        // attempt as interrupted. What cannot have (still connecting, say) goes back now.
        const QList<quint64> unsentIds = m_sender->unsent();
        const QSet<quint64> notSent(unsentIds.cbegin(), unsentIds.cend());
        for (auto it = m_sendIds.cbegin(); it != m_sendIds.cend(); ++it) {
            if (notSent.contains(it.value()))
                unsent.append(it.key());
        }
        delete m_sender;
        m_sender = nullptr;
    }
    m_sendIds.clear();
    releaseUnsent(unsent);
    // What finished before is recorded before the store closes.
    stopStore();
}

void DeliveryWorker::releaseUnsent(QList<qint64> unsent)
{
    // What was claimed and never sent goes back now, so that no worker later logs an attempt
    // of it as interrupted: a claim still on its way (its answer is posted here once the store
    // has run it) and what waits for a slot of its endpoint.
    if ((m_claimPending || m_othersClaimPending) && m_store && m_storeThread && m_storeThread->isRunning()) {
        QMetaObject::invokeMethod(m_store, [] {}, Qt::BlockingQueuedConnection);
        QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);
    }
    for (auto it = m_queued.cbegin(); it != m_queued.cend(); ++it) {
        for (const Claimed &c : it.value())
            unsent.append(c.target.id);
    }
    m_queued.clear();
    if (!unsent.isEmpty() && m_store)
        m_store->release(unsent);
}

void DeliveryWorker::stopStore()
{
    if (!m_storeThread)
        return;
    if (m_storeThread->isRunning()) {
        QMetaObject::invokeMethod(m_store, &OutboxStore::close, Qt::BlockingQueuedConnection);
        m_storeThread->quit();
        m_storeThread->wait();
    }
    delete m_store;
    m_store = nullptr;
    delete m_storeThread;
    m_storeThread = nullptr;
}

void DeliveryWorker::schedulePump()
{
    if (m_pumpQueued)
        return;
    m_pumpQueued = true;
    QMetaObject::invokeMethod(this, &DeliveryWorker::pump, Qt::QueuedConnection);
}

void DeliveryWorker::poll()
{
    if (!m_running)
        return;
    m_mayHaveWork = true; // retries fall due and leases expire with time
    forgetIdleEndpoints();
    const Budget b = budget();
    Q_EMIT load(b.usedInFlight + b.probingInFlight, b.usedInFlight, b.used + b.probing - b.usedInFlight - b.probingInFlight,
                b.used - b.usedInFlight, int(m_known.size()), int(m_proven.size()));
    // Every poll, or every few after such claims found nothing (up to kMaxOthersClaimPolls); a
    // poll that finds the budget with room starts them afresh for the next time it is full (a
    // moment's room between two attempts of a busy budget does not).
    if (b.used < std::max(1, m_options.deliveryConcurrency))
        m_othersClaimPolls = 1;
    if (++m_pollsSinceOthersClaim >= m_othersClaimPolls) {
        m_othersClaimDue = true;
        m_pollsSinceOthersClaim = 0;
    }
    m_cycleFailed = false;
    // The upkeep runs on the store's thread like every other statement, so sending never waits
    // for it; the cycle goes on when it has answered.
    m_store->maintain(this, [this](const OutboxStore::Upkeep &upkeep) {
        if (!m_running)
            return;
        if (upkeep.superseded < 0)
            reportFailure(upkeep.supersedeProblem.detail);
        if (upkeep.swept < 0)
            reportFailure(upkeep.sweepProblem.detail);
        if (upkeep.healthShown < 0)
            reportFailure(upkeep.healthProblem.detail);
        if (upkeep.leasesLetGo < 0)
            reportFailure(upkeep.leasesProblem.detail);
        if (upkeep.superseded > 0 || upkeep.swept > 0 || upkeep.healthShown > 0 || upkeep.leasesLetGo > 0)
            Q_EMIT committed();
        pump();
        // The cycle ends with its claim's answer when one is on its way.
        if (m_claimPending)
            m_cycleClaim = true;
        else
            endCycle();
    });
}

void DeliveryWorker::endCycle()
{
    if (m_failing && !m_cycleFailed) {
        m_failing = false;
        Q_EMIT recovered();
    }
}

void DeliveryWorker::reportFailure(const QString &detail)
{
    m_failing = true;
    m_cycleFailed = true;
    Q_EMIT failed(detail);
}

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

void DeliveryWorker::sendQueued(QList<Claimed> &queue, qint64 endpointId, const QDateTime &now, QList<qint64> *expired)
{
    // One that could no longer finish inside its lease goes back, whether a slot is free or not:
    // no other worker takes it over mid-attempt, and none finds its lease expired and logs an
    // attempt that never went out as interrupted. A queue is in claim order, so its leases end
    // in that order too: only its front can be due.
    const QDateTime lastStart = now.addMSecs(m_options.deliveryTimeout.count() + 1000);
    while (!queue.isEmpty() && lastStart >= queue.constFirst().leaseUntil) {
        const Claimed late = queue.takeFirst();
        m_mayHaveWork = true;
        m_busyInstances.remove(late.target.instanceId);
        expired->append(late.target.id);
    }
    while (!queue.isEmpty() && m_inFlight.value(endpointId) < endpointLimit(endpointId))
        send(queue.takeFirst().target);
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

void DeliveryWorker::send(const DeliveryTarget &target)
{
    const qint64 now = m_clock.elapsed();
    Known &known = m_known[target.endpointId];
    // The endpoint's URL parsed once, and shared: the sender knows it again by it.
    if (known.urlText != target.url || known.url.isEmpty()) {
        known.urlText = target.url;
        known.url = QUrl(target.url);
        // Its host and port are taken again from the new one below.
        const auto host = m_hostEndpoints.find(known.host);
        if (host != m_hostEndpoints.end()) {
            host->remove(target.endpointId);
            if (host->isEmpty())
                m_hostEndpoints.erase(host);
        }
        known.host.clear();
    }
    CallbackRequest request;
    request.url = known.url;
    request.body = target.body;
    request.webhookId = target.webhookId.toUtf8();
    request.scheme = target.signing == QLatin1String("x-hub-signature") ? SigningScheme::HubSignature
                                                                        : SigningScheme::StandardWebhooks;
    for (const QString &secret : target.secrets)
        request.secrets.append(secret.toUtf8());
    request.timeout = m_options.deliveryTimeout;
    // Each endpoint its own connections: hanging ones on a host never hold up the others there.
    request.isolationKey = QString::number(target.endpointId);
    if (m_inFlight[target.endpointId]++ == 0)
        m_lastAnswer.insert(target.endpointId, now);
    known.lastSent = now;
    if (known.host.isEmpty()) {
        known.host = QStringLiteral("%1:%2").arg(
            request.url.host(), QString::number(request.url.port(request.url.scheme() == QLatin1String("https") ? 443 : 80)));
        m_hostEndpoints[known.host].insert(target.endpointId);
    }
    if (!m_stallTimer.isActive() && m_options.endpointStallAfter < m_options.deliveryTimeout)
        m_stallTimer.start();
    m_sendIds.insert(target.id, m_sender->send(request, this, [this, target](const AttemptResult &result) { finish(target, result); }));
}

void DeliveryWorker::finish(const DeliveryTarget &target, const AttemptResult &result)
{
    m_sendIds.remove(target.id);
    if (--m_inFlight[target.endpointId] <= 0) {
        m_inFlight.remove(target.endpointId);
        m_lastAnswer.remove(target.endpointId);
    } else {
        m_lastAnswer.insert(target.endpointId, m_clock.elapsed());
    }
    // The instance's next notification stays held back by this one's lease until it is recorded
    // (onRecorded claims again then).
    m_busyInstances.remove(target.instanceId);
    if (!m_running)
        return;

    AttemptLog log;
    log.at = result.startedAt.isValid() ? result.startedAt : QDateTime::currentDateTimeUtc();
    log.requestHeaders = result.requestHeaders;
    log.requestBody = result.requestBody.isEmpty() ? target.body : result.requestBody;
    log.status = result.httpStatus;
    log.responseHeaders = result.responseHeaders;
    log.responseBody = result.responseBody;
    log.latencyMs = result.latencyMs;
    log.errorClass = result.errorClass;
    log.error = result.errorMessage;

    AttemptOutcome outcome;
    if (result.delivered) {
        outcome.verdict = AttemptOutcome::Verdict::Delivered;
    } else {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        const int failedAttempts = target.attempts + 1;
        const auto next = m_schedule.nextAttemptAt(failedAttempts, now, result.retryAfter);
        if (next) {
            outcome.verdict = AttemptOutcome::Verdict::Retry;
            outcome.nextAttemptAt = *next;
            outcome.giveUpAt = m_schedule.giveUpAt(failedAttempts, *next);
        } else {
            outcome.verdict = AttemptOutcome::Verdict::Exhausted;
        }
        outcome.disableEndpoint = result.gone;
    }

    // Slow start follows what the endpoint answered, not when the store got it recorded.
    if (result.delivered) {
        m_proven.insert(target.endpointId);
        // A late answer after a silence counts in full: an endpoint that hangs most attempts but
        // answers the odd one is then given its time again (up to the cap) before the next demotion.
        qint64 &slowest = m_slowAnswer[target.endpointId];
        slowest = std::max(result.latencyMs, slowest - slowest / 8);
        // Its pace, for claimAhead(); a quiet spell in between counts once and fades.
        Known &known = m_known[target.endpointId];
        const qint64 nowUs = m_clock.nsecsElapsed() / 1000;
        if (known.lastAnsweredUs >= 0) {
            const qint64 gap = std::max<qint64>(1, nowUs - known.lastAnsweredUs);
            known.answerGapUs = averaged(known.answerGapUs, gap);
        }
        known.lastAnsweredUs = nowUs;
    } else {
        // What waits here for it goes back: it now gets one attempt at a time, and what waits
        // would hold leases (and budget) meanwhile. Claims bring it one row at a time.
        if (m_proven.remove(target.endpointId)) {
            const QList<qint64> released = takeQueued(target.endpointId);
            if (!released.isEmpty()) {
                m_store->release(released);
                m_mayHaveWork = true;
            }
        }
        m_slowAnswer.remove(target.endpointId);
    }
    m_done.append(AttemptRecord{target, log, outcome});
    ++m_unrecorded[target.endpointId];
    // A freed slot of an endpoint below its claim-ahead may let more of its work through: claim
    // now, not when the store next answers (recording is paced).
    if (wantsWork(target.endpointId)) {
        m_wanting.insert(target.endpointId);
        schedulePump();
    }
    scheduleFlush();
    // The freed slot takes the endpoint's next claimed attempt now, on the connection that just
    // answered, rather than after every other response of this turn: the provider gets to work on
    // it meanwhile instead of both sides taking turns (docs/benchmarks.md).
    const auto queued = m_queued.find(target.endpointId);
    if (queued != m_queued.end()) {
        QList<qint64> expired;
        sendQueued(queued.value(), target.endpointId, QDateTime::currentDateTimeUtc(), &expired);
        if (queued.value().isEmpty())
            m_queued.erase(queued);
        if (!expired.isEmpty()) {
            m_store->release(expired);
            schedulePump();
        }
    }
}

void DeliveryWorker::scheduleFlush()
{
    if (m_flushTimer.isActive() || m_recording || m_done.isEmpty())
        return;
    // A recording commit costs about as much for one attempt as for dozens, and every hand-over
    // is a message to the store's thread and one back: under load the store gets one batch at a
    // time, at most every outboxRecordPacing, so each carries what finished meanwhile
    // (docs/benchmarks.md). After a quiet spell the first goes at once (on the next turn, with
    // whatever else finishes in this one: a timer of 0 ms fires on the next turn).
    const qint64 wait = m_lastFlush.isValid() ? m_options.outboxRecordPacing.count() - m_lastFlush.elapsed() : 0;
    m_flushTimer.start(int(std::max<qint64>(0, wait)));
}

void DeliveryWorker::flushDone()
{
    m_flushTimer.stop();
    if (m_done.isEmpty() || !m_store)
        return;
    m_recording = true;
    m_lastFlush.start();
    m_store->record(std::exchange(m_done, {}), this,
                    [this](const QList<AttemptRecord> &records, const Problem &problem) { onRecorded(records, problem); });
}

void DeliveryWorker::onRecorded(const QList<AttemptRecord> &records, const Problem &problem)
{
    m_recording = false;
    scheduleFlush();
    // Settled deliveries let their instances' next notifications through (to the same endpoint,
    // so only where it takes more); released ones are due again.
    if (!problem.isNull())
        m_mayHaveWork = true;
    for (const AttemptRecord &r : records) {
        const auto unrecorded = m_unrecorded.find(r.target.endpointId);
        if (unrecorded != m_unrecorded.end() && --unrecorded.value() <= 0)
            m_unrecorded.erase(unrecorded);
    }
    for (const AttemptRecord &r : records) {
        if (wantsWork(r.target.endpointId))
            m_wanting.insert(r.target.endpointId);
    }
    if (!problem.isNull()) {
        // The store released them: sent again, at least once, never lost.
        reportFailure(problem.detail);
    } else {
        Q_EMIT committed();
        armRetryTimer(records);
    }
    schedulePump();
}

void DeliveryWorker::armRetryTimer(const QList<AttemptRecord> &records)
{
    for (const AttemptRecord &r : records) {
        if (r.outcome.verdict == AttemptOutcome::Verdict::Retry && r.outcome.nextAttemptAt.isValid())
            m_retryTimes.insert(r.outcome.nextAttemptAt.toMSecsSinceEpoch());
    }
    // Those due now make a claim worth it; the next one is waited for until a millisecond after
    // it, so that the claim's "now" has passed the stored time.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const auto due = m_retryTimes.upper_bound(now - 1);
    if (due != m_retryTimes.begin()) {
        m_retryTimes.erase(m_retryTimes.begin(), due);
        m_mayHaveWork = true;
        schedulePump();
    }
    if (m_retryTimes.empty()) {
        m_retryTimer.stop();
        return;
    }
    const qint64 wait = *m_retryTimes.begin() + 1 - now;
    m_retryTimer.start(int(std::min<qint64>(wait, std::numeric_limits<int>::max())));
}

} // namespace OpsDeck
