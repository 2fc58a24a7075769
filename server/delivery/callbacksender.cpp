// Sends one signed callback attempt and classifies its outcome for the attempt log.
#include "callbacksender.h"

#include "core/retryschedule.h"
#include "core/webhooksignature.h"

#include <QElapsedTimer>
#include <QHostInfo>
#include <QTimer>
#include <QTimerEvent>

#include <algorithm>

namespace OpsDeck {

struct CallbackSender::Job
{
    quint64 id = 0;
    CallbackRequest request;
    AttemptResult result;
    QList<QPair<QByteArray, QByteArray>> headers; // unredacted, as sent
    QElapsedTimer elapsed;
    bool hasDeadline = false;
    Deadlines::iterator deadline; // valid while hasDeadline
    int lookupId = -1;
    CallbackConnectionPool *pool = nullptr; // not owned; set while the pool holds the request
    bool hasCallback = false;
    QPointer<const QObject> context;
    Callback done;
};

namespace {

QString timeoutMessage(std::chrono::milliseconds timeout)
{
    return QStringLiteral("no complete answer within %1 ms").arg(timeout.count());
}

// What `cache` holds for `key`, made by `make` on first use; a cache that reached `bound` entries
// starts over.
template<typename Key, typename Value, typename Make>
const Value &cached(QHash<Key, Value> &cache, const Key &key, qsizetype bound, Make make)
{
    const auto found = cache.constFind(key);
    if (found != cache.cend())
        return *found;
    if (cache.size() >= bound)
        cache.clear();
    return *cache.insert(key, make());
}

} // namespace

CallbackSender::CallbackSender(const CallbackUrlGuard &guard, QObject *parent)
    : QObject(parent)
    , m_guard(guard)
    , m_clock([] { return QDateTime::currentDateTimeUtc(); })
    , m_idleSweep(new QTimer(this))
{
    m_monotonic.start();
    m_idleSweep->setInterval(IdleConnectionMs / 2);
    connect(m_idleSweep, &QTimer::timeout, this, &CallbackSender::sweepIdle);
}

CallbackSender::CallbackSender(const CallbackUrlGuard &guard, std::nullptr_t, QObject *parent)
    : CallbackSender(guard, parent)
{
}

CallbackSender::~CallbackSender()
{
    for (auto &[id, job] : m_jobs) {
        if (job->lookupId >= 0)
            QHostInfo::abortHostLookup(job->lookupId);
    }
    // The pools (children) go with us and report nothing more. Deleted from inside one of their
    // signals, they hang up now and are deleted once the emitting socket is done.
    for (const PoolEntry &entry : std::as_const(m_pools)) {
        entry.pool->disconnect(this);
        if (m_inPoolSignal > 0) {
            entry.pool->setParent(nullptr);
            entry.pool->closeAll();
            entry.pool->deleteLater();
        }
    }
}

void CallbackSender::setClock(Clock clock)
{
    m_clock = std::move(clock);
}

void CallbackSender::setMaxConnectionsPerPool(int maxConnections)
{
    m_maxConnectionsPerPool = qMax(1, maxConnections);
    for (const PoolEntry &entry : std::as_const(m_pools))
        entry.pool->setMaxConnections(m_maxConnectionsPerPool);
}

int CallbackSender::isolatedPools() const
{
    int count = 0;
    for (const PoolEntry &entry : m_pools)
        count += entry.isolated ? 1 : 0;
    return count;
}

int CallbackSender::openConnections() const
{
    int count = 0;
    for (const PoolEntry &entry : m_pools)
        count += entry.pool->connections();
    return count;
}

quint64 CallbackSender::send(const CallbackRequest &request)
{
    auto job = std::make_unique<Job>();
    job->request = request;
    return enqueue(std::move(job));
}

quint64 CallbackSender::send(const CallbackRequest &request, const QObject *context, Callback done)
{
    auto job = std::make_unique<Job>();
    job->request = request;
    job->hasCallback = true;
    job->context = context;
    job->done = std::move(done);
    return enqueue(std::move(job));
}

quint64 CallbackSender::enqueue(std::unique_ptr<Job> job)
{
    const quint64 id = m_nextId++;
    job->id = id;
    Job &ref = *job;
    m_jobs.emplace(id, std::move(job));
    start(ref);
    return id;
}

CallbackSender::Job *CallbackSender::findJob(quint64 id)
{
    const auto it = m_jobs.find(id);
    return it == m_jobs.end() ? nullptr : it->second.get();
}

void CallbackSender::start(Job &job)
{
    const quint64 id = job.id;
    const CallbackRequest &request = job.request;
    job.elapsed.start();
    job.result.startedAt = m_clock();
    job.result.url = request.url;
    job.result.requestBody = request.body;
    job.result.webhookTimestamp = job.result.startedAt.toSecsSinceEpoch();

    // Everything ends by the deadline, whatever stage it is in.
    const qint64 due = m_monotonic.elapsed() + std::max(request.timeout, std::chrono::milliseconds(0)).count();
    job.deadline = m_deadlines.emplace(due, id);
    job.hasDeadline = true;
    watchDeadline(due);

    job.headers = {
        {"Content-Type", "application/json"},
        {"User-Agent", UserAgent},
        {"webhook-id", request.webhookId},
        {"webhook-timestamp", QByteArray::number(job.result.webhookTimestamp)},
    };
    QString signingError;
    if (request.scheme == SigningScheme::StandardWebhooks) {
        m_attemptKeys.clear();
        for (const QByteArray &secret : request.secrets) {
            const SigningKey &signing = signingKey(secret);
            if (!signing.error.isEmpty())
                signingError = signing.error;
            m_attemptKeys.append(signing.key);
        }
        if (m_attemptKeys.isEmpty())
            signingError = QStringLiteral("no signing secret");
        if (signingError.isEmpty()) {
            QByteArray signature;
            WebhookSignature::signatureHeader(request.webhookId, job.result.webhookTimestamp, request.body,
                                              m_attemptKeys, signature);
            job.headers.append({"webhook-signature", signature});
        }
    } else {
        if (request.secrets.isEmpty())
            signingError = QStringLiteral("no signing secret");
        // The legacy scheme has room for one signature only: the newest secret signs.
        else
            job.headers.append({"X-Hub-Signature", WebhookSignature::hubSignature(request.body, request.secrets.first())});
    }
    job.result.requestHeaders = WebhookSignature::redactSignatureHeaders(job.headers);

    if (!signingError.isEmpty()) {
        QMetaObject::invokeMethod(this, [this, id, signingError] { fail(id, AttemptResult::Signing, signingError); },
                                  Qt::QueuedConnection);
        return;
    }
    const Destination &destination = this->destination(request.url);
    if (!destination.problem.isNull()) {
        const QString detail = destination.problem.detail;
        QMetaObject::invokeMethod(this, [this, id, detail] { fail(id, AttemptResult::InvalidUrl, detail); },
                                  Qt::QueuedConnection);
        return;
    }

    const QString host = destination.host;
    // With the address known, the request goes out now: a connection reports whatever befalls
    // it on a later turn, so nothing completes from inside send(). Written at once, a request sent
    // from a finished attempt's callback reaches the provider while the sender is still reading
    // the other responses of that turn.
    if (!destination.literal.isNull()) {
        // A literal address was checked by validate(); nothing to resolve.
        post(job, destination, destination.literal);
        return;
    }
    const auto vetted = m_vettedHosts.constFind(host);
    if (vetted != m_vettedHosts.cend() && vetted->expiresAt > m_monotonic.elapsed()) {
        post(job, destination, vetted->address);
        return;
    }
    job.lookupId = QHostInfo::lookupHost(host, this, [this, id](const QHostInfo &info) { onResolved(id, info); });
}

const CallbackSender::SigningKey &CallbackSender::signingKey(const QByteArray &secret)
{
    // Secrets are few (two per endpoint during a rotation); the bound only keeps a sender that
    // lives through many rotations from keeping every secret it ever saw.
    return cached(m_signingKeys, secret, MaxSigningKeys, [&secret] {
        const WebhookSignature::DecodedSecret decoded = WebhookSignature::decodeSecret(QString::fromLatin1(secret));
        SigningKey signing;
        if (decoded.ok())
            signing.key = WebhookSignature::PreparedKey(decoded.key);
        else
            signing.error = decoded.error;
        return signing;
    });
}

void CallbackSender::onResolved(quint64 id, const QHostInfo &info)
{
    Job *j = findJob(id);
    if (!j)
        return;
    j->lookupId = -1;
    if (info.error() != QHostInfo::NoError || info.addresses().isEmpty()) {
        fail(id, AttemptResult::Dns,
             QStringLiteral("%1: %2").arg(info.hostName(), info.error() == QHostInfo::NoError
                                                               ? QStringLiteral("no addresses")
                                                               : info.errorString()));
        return;
    }
    // Every address must pass, or an attacker could pair a public and a private one and hope.
    for (const QHostAddress &address : info.addresses()) {
        const Problem problem = m_guard.checkResolved(address);
        if (!problem.isNull()) {
            fail(id, AttemptResult::InvalidUrl, QStringLiteral("%1 resolves to %2").arg(info.hostName(), problem.detail));
            return;
        }
    }
    // IPv4 first: without happy eyeballs over a pinned address, it is the more often reachable.
    QHostAddress chosen = info.addresses().first();
    for (const QHostAddress &address : info.addresses()) {
        if (address.protocol() == QAbstractSocket::IPv4Protocol) {
            chosen = address;
            break;
        }
    }
    // Only a name all of whose addresses passed is remembered, and only the address chosen.
    if (m_vettedHosts.size() >= MaxVettedHosts)
        m_vettedHosts.clear();
    m_vettedHosts.insert(j->request.url.host(), {chosen, m_monotonic.elapsed() + VettedHostMs});
    post(*j, destination(j->request.url), chosen);
}

const CallbackSender::Destination &CallbackSender::destination(const QUrl &url)
{
    // A URL that did not parse is not kept: QUrl's equality and hash may not tell it from a
    // valid one.
    if (!url.isValid()) {
        m_unkeptDestination = makeDestination(url);
        return m_unkeptDestination;
    }
    // Endpoints are few next to attempts; the bound only keeps a sender that sees many URLs in
    // its life from keeping them all.
    return cached(m_destinations, url, MaxDestinations, [this, &url] { return makeDestination(url); });
}

CallbackSender::Destination CallbackSender::makeDestination(const QUrl &url) const
{
    Destination d;
    d.problem = m_guard.validate(url);
    d.host = url.host();
    d.literal = QHostAddress(d.host);
    d.tls = url.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0;
    d.port = quint16(url.port(d.tls ? 443 : 80));
    d.hostHeader = url.host(QUrl::FullyEncoded).toLatin1();
    if (d.hostHeader.contains(':'))
        d.hostHeader = '[' + d.hostHeader + ']';
    if (url.port() >= 0)
        d.hostHeader += ':' + QByteArray::number(url.port());
    d.target = url.path(QUrl::FullyEncoded).toLatin1();
    if (d.target.isEmpty())
        d.target = "/";
    if (url.hasQuery())
        d.target += '?' + url.query(QUrl::FullyEncoded).toLatin1();
    return d;
}

void CallbackSender::post(Job &job, const Destination &d, const QHostAddress &address)
{
    const QByteArray &host = d.hostHeader;
    const QByteArray &target = d.target;

    // Connecting to the vetted address with the original name as Host and TLS peer name: the
    // name is never resolved again. No cookies, no credentials, no Accept-Encoding: what the
    // receiver answers is recorded as it came.
    QByteArray wire;
    wire.reserve(160 + target.size() + job.request.body.size() + 64 * job.headers.size());
    wire.append("POST ").append(target).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n");
    for (const auto &[name, value] : std::as_const(job.headers))
        wire.append(name).append(": ").append(value).append("\r\n");
    wire.append("Content-Length: ").append(QByteArray::number(job.request.body.size())).append("\r\n\r\n");
    wire.append(job.request.body);

    job.pool = pool({address, d.port, d.tls, d.host}, host, job.request.isolationKey);
    job.pool->submit(job.id, wire);
}

CallbackConnectionPool *CallbackSender::pool(const CallbackConnection::Target &target, const QByteArray &host,
                                             const QString &isolationKey)
{
    const QByteArray address = target.address.toString().toLatin1();
    const QByteArray isolation = isolationKey.toUtf8();
    QByteArray key;
    key.reserve(16 + address.size() + host.size() + isolation.size());
    key.append(target.tls ? "https|" : "http|").append(address).append('|');
    key.append(QByteArray::number(target.port)).append('|').append(host).append('|').append(isolation);
    PoolEntry &entry = m_pools[key];
    if (entry.pool)
        return entry.pool;
    entry.pool = new CallbackConnectionPool(target, m_maxConnectionsPerPool, AttemptResult::MaxResponseBodyBytes, this);
    entry.isolated = !isolationKey.isEmpty();
    connect(entry.pool, &CallbackConnectionPool::responded, this, &CallbackSender::onResponse);
    connect(entry.pool, &CallbackConnectionPool::failed, this, &CallbackSender::onPoolFailed);
    if (!m_idleSweep->isActive())
        m_idleSweep->start();
    return entry.pool;
}

void CallbackSender::onPoolFailed(quint64 id, const QString &errorClass, const QString &message)
{
    Job *j = findJob(id);
    if (!j)
        return;
    j->pool = nullptr;
    const QPointer<CallbackSender> self(this);
    ++m_inPoolSignal;
    fail(id, errorClass, message);
    if (self)
        --m_inPoolSignal;
}

void CallbackSender::onResponse(quint64 id, const HttpResponse &response)
{
    Job *j = findJob(id);
    if (!j)
        return;
    j->pool = nullptr;
    const QPointer<CallbackSender> self(this);
    ++m_inPoolSignal;
    record(*j, response);
    if (self)
        --m_inPoolSignal;
}

void CallbackSender::record(Job &job, const HttpResponse &response)
{
    const quint64 id = job.id;
    AttemptResult &result = job.result;
    result.httpStatus = response.status;
    result.responseHeaders = response.headers;
    result.responseBody = response.body;
    result.responseTruncated = response.bodyTruncated;
    if (result.httpStatus >= 200 && result.httpStatus < 300) {
        result.delivered = true;
        complete(id);
        return;
    }
    result.gone = result.httpStatus == 410;
    if (result.httpStatus == 429 || result.httpStatus == 503)
        result.retryAfter = RetrySchedule::parseRetryAfter(response.header("Retry-After"), m_clock());
    QString message = QStringLiteral("HTTP %1").arg(result.httpStatus);
    if (!response.reason.isEmpty())
        message += QLatin1Char(' ') + QString::fromLatin1(response.reason);
    if (result.httpStatus >= 300 && result.httpStatus < 400) {
        const QByteArray location = response.header("Location");
        // 304 Not Modified and the like carry no Location: they are no redirect, only no success.
        message += location.isEmpty() ? QStringLiteral(" (only a 2xx answer is a success)")
                                      : QStringLiteral(" to %1 (redirects are not followed)").arg(QString::fromUtf8(location));
    }
    fail(id, AttemptResult::Http, message);
}

void CallbackSender::watchDeadline(qint64 due)
{
    if (m_deadlineTimerId != 0) {
        if (m_deadlineTimerDue <= due)
            return;
        killTimer(m_deadlineTimerId);
    }
    m_deadlineTimerDue = due;
    m_deadlineTimerId = startTimer(std::chrono::milliseconds(std::max<qint64>(0, due - m_monotonic.elapsed())),
                                   Qt::PreciseTimer);
}

void CallbackSender::timerEvent(QTimerEvent *event)
{
    if (event->timerId() != m_deadlineTimerId || m_deadlineTimerId == 0) {
        QObject::timerEvent(event);
        return;
    }
    killTimer(m_deadlineTimerId);
    m_deadlineTimerId = 0;
    const qint64 now = m_monotonic.elapsed();
    QList<quint64> expired;
    for (auto it = m_deadlines.begin(); it != m_deadlines.end() && it->first <= now; it = m_deadlines.erase(it)) {
        if (Job *j = findJob(it->second))
            j->hasDeadline = false;
        expired.append(it->second);
    }
    // A receiver of finished() may delete the sender; the attempts still due are then gone too.
    const QPointer<CallbackSender> self(this);
    for (const quint64 id : std::as_const(expired)) {
        onTimeout(id);
        if (!self)
            return;
    }
    if (!m_deadlines.empty())
        watchDeadline(m_deadlines.begin()->first);
}

void CallbackSender::onTimeout(quint64 id)
{
    Job *j = findJob(id);
    if (!j)
        return;
    if (j->lookupId >= 0) {
        QHostInfo::abortHostLookup(j->lookupId);
        j->lookupId = -1;
    }
    QString message = timeoutMessage(j->request.timeout);
    // A receiver that sent its status line and then stalled: the log says how far it got (the
    // attempt still failed; its status is not the delivery's last status).
    if (const HttpResponse *head = j->pool ? j->pool->responseSoFar(id) : nullptr) {
        message = QStringLiteral("HTTP %1%2 arrived, but not the rest of the answer within %3 ms")
                      .arg(head->status)
                      .arg(head->reason.isEmpty() ? QString() : QLatin1Char(' ') + QString::fromLatin1(head->reason))
                      .arg(j->request.timeout.count());
    }
    fail(id, AttemptResult::Timeout, message);
}

void CallbackSender::sweepIdle()
{
    for (auto it = m_pools.begin(); it != m_pools.end();) {
        it->pool->closeIdle(IdleConnectionMs);
        if (it->pool->isUnused()) {
            it->pool->deleteLater();
            it = m_pools.erase(it);
        } else {
            ++it;
        }
    }
    if (m_pools.isEmpty())
        m_idleSweep->stop();
}

QList<quint64> CallbackSender::unsent() const
{
    QList<quint64> ids;
    for (const auto &[id, job] : m_jobs) {
        if (!job->pool || !job->pool->mayHaveReached(id))
            ids.append(id);
    }
    return ids;
}

void CallbackSender::abortAll()
{
    // A callback may start a new attempt (a worker fills the freed slot from its queue): those are
    // ended too, round after round, until none is left. A callback may also delete the sender.
    const QPointer<CallbackSender> self(this);
    while (!m_jobs.empty()) {
        QList<quint64> ids;
        ids.reserve(qsizetype(m_jobs.size()));
        for (const auto &[id, job] : m_jobs)
            ids.append(id);
        for (const quint64 id : std::as_const(ids)) {
            Job *j = findJob(id);
            if (!j)
                continue;
            if (j->lookupId >= 0) {
                QHostInfo::abortHostLookup(j->lookupId);
                j->lookupId = -1;
            }
            fail(id, AttemptResult::Connect, QStringLiteral("cancelled"));
            if (!self)
                return;
        }
    }
}

void CallbackSender::fail(quint64 id, const QString &errorClass, const QString &message)
{
    Job *j = findJob(id);
    if (!j)
        return;
    j->result.delivered = false;
    j->result.errorClass = errorClass;
    j->result.errorMessage = message;
    complete(id);
}

void CallbackSender::complete(quint64 id)
{
    const auto it = m_jobs.find(id);
    if (it == m_jobs.end())
        return;
    // Out of the table first: the receiver may well send the next attempt from its slot.
    std::unique_ptr<Job> finishedJob = std::move(it->second);
    m_jobs.erase(it);
    // The timer stays set for this deadline if it was the earliest; it then finds nothing due
    // and moves on to the next.
    if (finishedJob->hasDeadline)
        m_deadlines.erase(finishedJob->deadline);
    // Still waiting or on the wire (a timeout, an abort): the pool forgets it, hanging up its
    // connection if it had one.
    if (finishedJob->pool)
        finishedJob->pool->cancel(id);
    finishedJob->result.latencyMs = finishedJob->elapsed.elapsed();
    emit finished(id, finishedJob->result);
    if (finishedJob->hasCallback && finishedJob->context && finishedJob->done)
        finishedJob->done(finishedJob->result);
}

} // namespace OpsDeck
