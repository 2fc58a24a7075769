// The delivery worker: claims due callbacks, sends them with bounded concurrency and records the outcome.
#include "deliveryworker.h"

#include "deliveryschedule.h"
#include "destructionsweep.h"

#include "server/delivery/callbacksender.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QUuid>

#include <algorithm>

namespace OpsDeck {

DeliveryWorker::DeliveryWorker(ServerOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    // ControlPlane::start() refuses options whose schedule does not parse.
    , m_schedule(retryScheduleFor(m_options).value_or(RetrySchedule()))
    , m_owner(QStringLiteral("w-") + QUuid::createUuid().toString(QUuid::Id128).left(16))
{
    m_pollTimer.setParent(this);
    connect(&m_pollTimer, &QTimer::timeout, this, &DeliveryWorker::poll);
}

DeliveryWorker::~DeliveryWorker()
{
    shutdown();
    m_destruction.reset();
    m_repository.reset();
    m_journal.reset();
    if (m_db)
        m_db->close();
}

void DeliveryWorker::start()
{
    if (m_running)
        return;
    m_db = std::make_unique<Database>(m_options.databaseUrl);
    Problem problem;
    if (!m_db->open(&problem)) {
        reportFailure(problem.detail);
        return;
    }
    m_journal = std::make_unique<Journal>(*m_db);
    m_repository = std::make_unique<DeliveryRepository>(*m_db, *m_journal, m_schedule);
    m_destruction = std::make_unique<DestructionSweep>(*m_db, *m_journal, *m_repository, m_options);
    m_sender = new CallbackSender(CallbackUrlGuard(m_options.allowPrivateCallbacks), nullptr, this);
    m_running = true;
    m_pollTimer.start(int(std::max<qint64>(10, m_options.outboxPollInterval.count())));
    poll();
}

void DeliveryWorker::wake()
{
    if (!m_running)
        return;
    m_mayHaveWork = true;
    schedulePump();
}

void DeliveryWorker::shutdown()
{
    if (!m_running)
        return;
    flushDone();
    m_running = false;
    m_pollTimer.stop();
    if (m_sender) {
        // Their leases expire and they are sent again: at least once, never lost.
        delete m_sender;
        m_sender = nullptr;
    }
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
    m_cycleFailed = false;
    Problem problem;
    const int superseded = m_repository->supersedeStale(&problem);
    if (superseded < 0)
        reportFailure(problem.detail);
    const int swept = m_destruction->run(&problem);
    if (swept < 0)
        reportFailure(problem.detail);
    if (superseded > 0 || swept > 0)
        Q_EMIT committed();
    pump();
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

void DeliveryWorker::pump()
{
    m_pumpQueued = false;
    if (!m_running)
        return;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const qint64 timeoutMs = m_options.deliveryTimeout.count();

    // First what was claimed earlier and waits for a slot of its endpoint. One that could no
    // longer finish inside its lease goes back, so no other worker takes it over mid-attempt.
    for (auto it = m_queued.begin(); it != m_queued.end();) {
        QList<Claimed> &queue = it.value();
        while (!queue.isEmpty() && m_inFlight.value(it.key()) < endpointLimit(it.key())) {
            const Claimed next = queue.takeFirst();
            if (now.addMSecs(timeoutMs + 1000) >= next.leaseUntil) {
                --m_total;
                m_mayHaveWork = true;
                m_busyInstances.remove(next.target.instanceId);
                m_repository->release(next.target.id, m_owner);
                continue;
            }
            --m_total; // send() counts it again
            send(next.target);
        }
        it = queue.isEmpty() ? m_queued.erase(it) : std::next(it);
    }

    const int free = std::max(1, m_options.deliveryConcurrency) - m_total;
    // A claim that finds nothing scans every due row of the busy endpoints; after an empty one,
    // claim again only when something changed (a wake, the poll, a freed endpoint slot).
    if (free <= 0 || !m_mayHaveWork)
        return;
    m_mayHaveWork = false;
    QList<qint64> busy;
    for (auto it = m_inFlight.cbegin(); it != m_inFlight.cend(); ++it) {
        if (it.value() + int(m_queued.value(it.key()).size()) >= endpointLimit(it.key()))
            busy.append(it.key());
    }
    const QDateTime leaseUntil = now.addMSecs(2 * timeoutMs + 5000);
    Problem problem;
    // Batches stay small so one claim does not take far more than the endpoints can take now.
    const int batch = std::min(free, std::max(2 * std::max(1, m_options.endpointConcurrency), 32));
    const QList<DeliveryTarget> targets = m_repository->claim(m_owner, now, leaseUntil, batch, busy, &problem);
    if (!problem.isNull())
        reportFailure(problem.detail);
    int waiting = 0;
    for (const DeliveryTarget &t : targets) {
        // An older notification of the instance is still being sent by this worker (its lease
        // already holds the newer one back from the claim; this guards the rest): the newer one
        // waits, so they arrive in order.
        if (m_busyInstances.contains(t.instanceId)) {
            m_repository->release(t.id, m_owner);
            ++waiting;
            continue;
        }
        m_busyInstances.insert(t.instanceId);
        if (m_inFlight.value(t.endpointId) >= endpointLimit(t.endpointId)) {
            ++m_total;
            m_queued[t.endpointId].append(Claimed{t, leaseUntil});
            continue;
        }
        send(t);
    }
    // A full batch suggests more work; not when it was full of rows that must wait (they would
    // come back first again).
    if (targets.size() == batch && waiting == 0) {
        m_mayHaveWork = true;
        schedulePump();
    }
}

void DeliveryWorker::send(const DeliveryTarget &target)
{
    CallbackRequest request;
    request.url = QUrl(target.url);
    request.body = target.body;
    request.webhookId = target.webhookId.toUtf8();
    request.scheme = target.signing == QLatin1String("x-hub-signature") ? SigningScheme::HubSignature
                                                                        : SigningScheme::StandardWebhooks;
    for (const QString &secret : target.secrets)
        request.secrets.append(secret.toUtf8());
    request.timeout = m_options.deliveryTimeout;
    ++m_inFlight[target.endpointId];
    ++m_total;
    m_sender->send(request, this, [this, target](const AttemptResult &result) { finish(target, result); });
}

void DeliveryWorker::finish(const DeliveryTarget &target, const AttemptResult &result)
{
    if (--m_inFlight[target.endpointId] <= 0)
        m_inFlight.remove(target.endpointId);
    --m_total;
    if (m_busyInstances.remove(target.instanceId))
        m_mayHaveWork = true;
    // A freed slot of an endpoint with nothing queued locally may let more of its work through.
    if (m_queued.value(target.endpointId).isEmpty())
        m_mayHaveWork = true;
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

    m_done.append(AttemptRecord{target, log, outcome});
    if (!m_flushQueued) {
        m_flushQueued = true;
        QMetaObject::invokeMethod(this, &DeliveryWorker::flushDone, Qt::QueuedConnection);
    }
}

void DeliveryWorker::flushDone()
{
    m_flushQueued = false;
    if (m_done.isEmpty() || !m_running)
        return;
    const QList<AttemptRecord> done = std::exchange(m_done, {});
    QList<RecordResult> results;
    Problem problem;
    if (!m_repository->recordBatch(done, m_owner, m_options.autoPauseWindow, &results, &problem)) {
        // Sent again once released: at least once, never lost.
        for (const AttemptRecord &r : done)
            m_repository->release(r.target.id, m_owner);
        m_mayHaveWork = true;
        reportFailure(problem.detail);
    } else {
        for (const AttemptRecord &r : done) {
            const bool delivered = r.outcome.verdict == AttemptOutcome::Verdict::Delivered;
            if (delivered)
                m_proven.insert(r.target.endpointId);
            else
                m_proven.remove(r.target.endpointId);
            Q_EMIT attemptRecorded(r.target.id, delivered);
        }
        Q_EMIT committed();
    }
    schedulePump();
}

} // namespace OpsDeck
