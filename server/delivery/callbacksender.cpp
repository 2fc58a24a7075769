// Sends one signed callback attempt and classifies its outcome for the attempt log.
#include "callbacksender.h"

#include "core/retryschedule.h"
#include "core/webhooksignature.h"

#include <QElapsedTimer>
#include <QHostInfo>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QNetworkReply>
#include <QTimer>

namespace OpsDeck {

struct CallbackSender::Job
{
    quint64 id = 0;
    CallbackRequest request;
    AttemptResult result;
    QList<QPair<QByteArray, QByteArray>> headers; // unredacted, as sent
    QElapsedTimer elapsed;
    QPointer<QTimer> timer; // child of the sender; deleted later, it may be the one calling
    int lookupId = -1;
    QPointer<QNetworkReply> reply;
    bool hasCallback = false;
    QPointer<const QObject> context;
    Callback done;
    bool timedOut = false;
    bool aborted = false;
    bool holdsPool = false;
};

namespace {

QString classify(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::HostNotFoundError:
        return AttemptResult::Dns;
    case QNetworkReply::TimeoutError:
        return AttemptResult::Timeout;
    case QNetworkReply::SslHandshakeFailedError:
        return AttemptResult::Tls;
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::BackgroundRequestNotAllowedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::OperationCanceledError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProxyAuthenticationRequiredError:
    case QNetworkReply::UnknownProxyError:
        return AttemptResult::Connect;
    case QNetworkReply::InsecureRedirectError:
    case QNetworkReply::TooManyRedirectsError:
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
        return AttemptResult::InvalidUrl;
    default:
        return AttemptResult::Http;
    }
}

} // namespace

CallbackSender::CallbackSender(const CallbackUrlGuard &guard, QNetworkAccessManager *manager, QObject *parent)
    : QObject(parent)
    , m_guard(guard)
    , m_manager(manager)
    , m_clock([] { return QDateTime::currentDateTimeUtc(); })
{
    if (!m_manager) {
        m_manager = new QNetworkAccessManager(this);
        // A proxy would resolve the host itself and defeat the address check.
        m_manager->setProxy(QNetworkProxy::NoProxy);
    }
    m_monotonic.start();
    m_poolSweep = new QTimer(this);
    m_poolSweep->setInterval(IdlePoolMs / 2);
    connect(m_poolSweep, &QTimer::timeout, this, &CallbackSender::dropIdlePools);
}

CallbackSender::~CallbackSender()
{
    // Replies belong to the manager, which may outlive us; none may call back into a dead sender.
    for (auto &[id, job] : m_jobs) {
        if (job->lookupId >= 0)
            QHostInfo::abortHostLookup(job->lookupId);
        if (job->reply) {
            job->reply->disconnect(this);
            job->reply->abort();
            job->reply->deleteLater();
        }
    }
}

void CallbackSender::setClock(Clock clock)
{
    m_clock = std::move(clock);
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
    job.timer = new QTimer(this);
    job.timer->setSingleShot(true);
    connect(job.timer, &QTimer::timeout, this, [this, id] { onTimeout(id); });
    job.timer->start(request.timeout);

    job.headers = {
        {"Content-Type", "application/json"},
        {"User-Agent", UserAgent},
        {"webhook-id", request.webhookId},
        {"webhook-timestamp", QByteArray::number(job.result.webhookTimestamp)},
    };
    QString signingError;
    if (request.scheme == SigningScheme::StandardWebhooks) {
        QList<QByteArray> keys;
        for (const QByteArray &secret : request.secrets) {
            const WebhookSignature::DecodedSecret decoded = WebhookSignature::decodeSecret(QString::fromLatin1(secret));
            if (!decoded.ok())
                signingError = decoded.error;
            keys.append(decoded.key);
        }
        if (keys.isEmpty())
            signingError = QStringLiteral("no signing secret");
        if (signingError.isEmpty())
            job.headers.append({"webhook-signature",
                                WebhookSignature::signatureHeader(request.webhookId, job.result.webhookTimestamp,
                                                                  request.body, keys)});
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
    const Problem problem = m_guard.validate(request.url);
    if (!problem.isNull()) {
        const QString detail = problem.detail;
        QMetaObject::invokeMethod(this, [this, id, detail] { fail(id, AttemptResult::InvalidUrl, detail); },
                                  Qt::QueuedConnection);
        return;
    }

    const QString host = request.url.host();
    if (!QHostAddress(host).isNull()) {
        // A literal address was checked by validate(); nothing to resolve.
        QMetaObject::invokeMethod(
            this, [this, id] { if (Job *j = findJob(id)) post(*j, {}); }, Qt::QueuedConnection);
        return;
    }
    job.lookupId = QHostInfo::lookupHost(host, this, [this, id](const QHostInfo &info) { onResolved(id, info); });
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
    post(*j, chosen.toString());
}

void CallbackSender::post(Job &job, const QString &pinnedAddress)
{
    const quint64 id = job.id;
    QUrl url = job.request.url;
    QNetworkRequest request;
    if (!pinnedAddress.isEmpty()) {
        const QUrl original = job.request.url;
        url.setHost(pinnedAddress);
        QByteArray hostHeader = original.host(QUrl::FullyEncoded).toLatin1();
        if (original.port() >= 0)
            hostHeader += ':' + QByteArray::number(original.port());
        request.setRawHeader("Host", hostHeader);
        request.setPeerVerifyName(original.host());
    }
    request.setUrl(url);
    for (const auto &[name, value] : std::as_const(job.headers))
        request.setRawHeader(name, value);
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    request.setAttribute(QNetworkRequest::CacheLoadControlAttribute, QNetworkRequest::AlwaysNetwork);
    request.setAttribute(QNetworkRequest::CacheSaveControlAttribute, false);
    request.setAttribute(QNetworkRequest::CookieLoadControlAttribute, QNetworkRequest::Manual);
    request.setAttribute(QNetworkRequest::CookieSaveControlAttribute, QNetworkRequest::Manual);

    QNetworkReply *reply = acquire(job.request.isolationKey)->post(request, job.request.body);
    job.holdsPool = true;
    job.reply = reply;
    connect(reply, &QNetworkReply::readyRead, this, [this, id] { onReadyRead(id); });
    connect(reply, &QNetworkReply::finished, this, [this, id] { onReplyFinished(id); });
}

void CallbackSender::onReadyRead(quint64 id)
{
    Job *j = findJob(id);
    if (!j || !j->reply || !j->reply->isOpen())
        return;
    // Keep the first 4 KiB; read and drop the rest so the connection can be reused.
    const QByteArray chunk = j->reply->readAll();
    const qsizetype room = AttemptResult::MaxResponseBodyBytes - j->result.responseBody.size();
    if (chunk.size() > room)
        j->result.responseTruncated = true;
    if (room > 0)
        j->result.responseBody.append(chunk.left(room));
}

void CallbackSender::onReplyFinished(quint64 id)
{
    Job *j = findJob(id);
    if (!j || !j->reply)
        return;
    QNetworkReply *reply = j->reply;
    onReadyRead(id);
    AttemptResult &result = j->result;
    result.httpStatus = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    result.responseHeaders = reply->rawHeaderPairs();
    reply->deleteLater();
    j->reply.clear();

    if (j->timedOut) {
        fail(id, AttemptResult::Timeout, QStringLiteral("no complete answer within %1 ms").arg(j->request.timeout.count()));
        return;
    }
    if (j->aborted) {
        fail(id, AttemptResult::Connect, QStringLiteral("cancelled"));
        return;
    }
    if (result.httpStatus > 0) {
        if (result.httpStatus >= 200 && result.httpStatus < 300) {
            result.delivered = true;
            complete(id);
            return;
        }
        result.gone = result.httpStatus == 410;
        if (result.httpStatus == 429 || result.httpStatus == 503)
            result.retryAfter = RetrySchedule::parseRetryAfter(reply->rawHeader("Retry-After"), m_clock());
        QString message = QStringLiteral("HTTP %1").arg(result.httpStatus);
        const QString reason = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
        if (!reason.isEmpty())
            message += QLatin1Char(' ') + reason;
        if (result.httpStatus >= 300 && result.httpStatus < 400) {
            const QByteArray location = reply->rawHeader("Location");
            message += location.isEmpty() ? QStringLiteral(" (redirects are not followed)")
                                          : QStringLiteral(" to %1 (redirects are not followed)")
                                                .arg(QString::fromUtf8(location));
        }
        fail(id, AttemptResult::Http, message);
        return;
    }
    fail(id, classify(reply->error()), reply->errorString());
}

void CallbackSender::onTimeout(quint64 id)
{
    Job *j = findJob(id);
    if (!j)
        return;
    j->timedOut = true;
    if (j->reply) {
        // finished() follows synchronously or soon, and reports the timeout.
        j->reply->abort();
        return;
    }
    if (j->lookupId >= 0) {
        QHostInfo::abortHostLookup(j->lookupId);
        j->lookupId = -1;
    }
    fail(id, AttemptResult::Timeout,
         QStringLiteral("no complete answer within %1 ms").arg(j->request.timeout.count()));
}

QNetworkAccessManager *CallbackSender::acquire(const QString &isolationKey)
{
    if (isolationKey.isEmpty())
        return m_manager;
    auto it = m_pools.find(isolationKey);
    if (it == m_pools.end()) {
        if (int(m_pools.size()) >= MaxIsolatedPools)
            return m_manager;
        Pool pool;
        pool.manager = new QNetworkAccessManager(this);
        pool.manager->setProxy(QNetworkProxy::NoProxy);
        it = m_pools.emplace(isolationKey, pool).first;
        if (!m_poolSweep->isActive())
            m_poolSweep->start();
    }
    ++it->second.inFlight;
    return it->second.manager;
}

void CallbackSender::release(const QString &isolationKey)
{
    const auto it = m_pools.find(isolationKey);
    // Not found: the key was over the cap and used the shared manager.
    if (it == m_pools.end())
        return;
    --it->second.inFlight;
    it->second.idleSinceMs = m_monotonic.elapsed();
}

void CallbackSender::dropIdlePools()
{
    const qint64 now = m_monotonic.elapsed();
    for (auto it = m_pools.begin(); it != m_pools.end();) {
        if (it->second.inFlight == 0 && now - it->second.idleSinceMs >= IdlePoolMs) {
            it->second.manager->deleteLater();
            it = m_pools.erase(it);
        } else {
            ++it;
        }
    }
    if (m_pools.empty())
        m_poolSweep->stop();
}

void CallbackSender::abortAll()
{
    QList<quint64> ids;
    for (const auto &[id, job] : m_jobs)
        ids.append(id);
    for (const quint64 id : ids) {
        Job *j = findJob(id);
        if (!j)
            continue;
        j->aborted = true;
        if (j->reply) {
            j->reply->abort();
            continue;
        }
        if (j->lookupId >= 0) {
            QHostInfo::abortHostLookup(j->lookupId);
            j->lookupId = -1;
        }
        fail(id, AttemptResult::Connect, QStringLiteral("cancelled"));
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
    if (finishedJob->timer) {
        finishedJob->timer->stop();
        finishedJob->timer->deleteLater();
    }
    finishedJob->result.latencyMs = finishedJob->elapsed.elapsed();
    if (finishedJob->reply) {
        finishedJob->reply->disconnect(this);
        finishedJob->reply->deleteLater();
    }
    if (finishedJob->holdsPool)
        release(finishedJob->request.isolationKey);
    emit finished(id, finishedJob->result);
    if (finishedJob->hasCallback && finishedJob->context && finishedJob->done)
        finishedJob->done(finishedJob->result);
}

} // namespace OpsDeck
