// The delivery worker: claims due callbacks, sends them with bounded concurrency and records the outcome
// (what it claims, and when: deliveryworkerclaims.cpp).
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

qint64 DeliveryWorker::averaged(qint64 average, qint64 sample)
{
    return average == 0 ? sample : (7 * average + sample) / 8;
}

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
    // Every poll, or every few after such claims found nothing (deliveryworkerclaims.cpp); a
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
