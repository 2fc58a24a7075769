// The REST client: one place that speaks HTTP to the control plane, retries safe reads and decodes errors.
#include "apiclient.h"

#include <QFutureWatcher>
#include <QJsonParseError>
#include <QNetworkAccessManager>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QUuid>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <memory>

namespace OpsDeck {

namespace {

const QByteArray kApiPrefix = QByteArrayLiteral("/api/v1");

Problem localProblem(const QString &code, const QString &title, const QString &detail)
{
    // No HTTP answer came: the problem still needs a non-zero status to be a problem.
    return Problem::make(503, code, title, detail);
}

bool isTransportError(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::RemoteHostClosedError:
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyTimeoutError:
        return true;
    default:
        return false;
    }
}

struct Decoded
{
    QJsonDocument document;
    bool ok = false;
};

Decoded decodeJson(const QByteArray &body)
{
    QJsonParseError error;
    Decoded d;
    d.document = QJsonDocument::fromJson(body, &error);
    d.ok = error.error == QJsonParseError::NoError;
    return d;
}

} // namespace

struct ApiClient::Call
{
    QByteArray method;
    QUrl url;
    QByteArray body;
    RequestOptions options;
    QByteArray idempotencyKey;
    bool mutation = false;
    bool counted = false; // still in pendingMutations()
    int attempts = 0;
    int maxRetries = 0;
    bool timedOut = false;
    QList<QSslError> sslErrors;
};

ApiReply::ApiReply(QObject *parent)
    : QObject(parent)
{
    m_timer.setSingleShot(true);
}

ApiReply::~ApiReply() = default;

void ApiReply::abort()
{
    if (m_finished || m_aborted)
        return;
    m_aborted = true;
    m_timer.stop();
    if (m_network)
        m_network->abort(); // the client sees the aborted attempt and cleans up
    else
        deleteLater();
}

void ApiReply::finish(ApiResult result)
{
    m_result = std::move(result);
    m_finished = true;
    emit finished(m_result);
    deleteLater();
}

ApiClient::ApiClient(QObject *parent)
    : QObject(parent)
    , m_nam(new QNetworkAccessManager(this))
{
    qRegisterMetaType<OpsDeck::ApiResult>();
    // Redirects would silently move a bearer token to another origin.
    m_nam->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
}

ApiClient::~ApiClient() = default;

void ApiClient::setBaseUrl(const QUrl &url)
{
    m_settings.baseUrl = url;
    QString path = m_settings.baseUrl.path();
    while (path.endsWith(u'/'))
        path.chop(1);
    m_settings.baseUrl.setPath(path);
}

void ApiClient::setToken(const QString &token)
{
    m_settings.token = token.trimmed();
}

void ApiClient::setRetryPolicy(int maxRetries, int baseDelayMs, int maxDelayMs)
{
    m_settings.maxRetries = std::max(0, maxRetries);
    m_settings.baseDelayMs = std::max(1, baseDelayMs);
    m_settings.maxDelayMs = std::max(m_settings.baseDelayMs, maxDelayMs);
}

void ApiClient::setSettings(const Settings &settings)
{
    setBaseUrl(settings.baseUrl);
    setToken(settings.token);
    setTimeout(settings.timeoutMs);
    setRetryPolicy(settings.maxRetries, settings.baseDelayMs, settings.maxDelayMs);
    setAcceptedSslErrors(settings.acceptedSslErrors);
}

QUrl ApiClient::urlFor(const QString &path) const
{
    QString relative = path.startsWith(u'/') ? path : u'/' + path;
    const bool rooted = relative.startsWith(QLatin1String("/api/")) || relative.startsWith(QLatin1String("/healthz"))
        || relative.startsWith(QLatin1String("/metrics"));
    if (!rooted)
        relative.prepend(QString::fromLatin1(kApiPrefix));
    QString query;
    const qsizetype mark = relative.indexOf(u'?');
    if (mark >= 0) {
        query = relative.mid(mark + 1);
        relative.truncate(mark);
    }
    QUrl url = m_settings.baseUrl;
    url.setPath(m_settings.baseUrl.path() + relative);
    if (!query.isEmpty())
        url.setQuery(query);
    return url;
}

QUrl ApiClient::webSocketUrlFor(const QString &path) const
{
    QUrl url = urlFor(path);
    url.setScheme(url.scheme() == QLatin1String("https") ? QStringLiteral("wss") : QStringLiteral("ws"));
    return url;
}

QNetworkRequest ApiClient::authorizedRequest(const QUrl &url) const
{
    QNetworkRequest request(url);
    if (!m_settings.token.isEmpty())
        request.setRawHeader("Authorization", "Bearer " + m_settings.token.toUtf8());
    request.setRawHeader("Accept", "application/json, application/problem+json");
    return request;
}

ApiReply *ApiClient::get(const QString &path, const RequestOptions &options)
{
    return send("GET", path, {}, options);
}

ApiReply *ApiClient::post(const QString &path, const QJsonObject &body, const RequestOptions &options)
{
    return send("POST", path, QJsonDocument(body).toJson(QJsonDocument::Compact), options);
}

ApiReply *ApiClient::del(const QString &path, const RequestOptions &options)
{
    return send("DELETE", path, {}, options);
}

void ApiClient::get(const QString &path, QObject *context, Callback done, const RequestOptions &options)
{
    connect(get(path, options), &ApiReply::finished, context, [done = std::move(done)](const ApiResult &r) { done(r); });
}

void ApiClient::post(const QString &path, const QJsonObject &body, QObject *context, Callback done,
                     const RequestOptions &options)
{
    connect(post(path, body, options), &ApiReply::finished, context,
            [done = std::move(done)](const ApiResult &r) { done(r); });
}

void ApiClient::del(const QString &path, QObject *context, Callback done, const RequestOptions &options)
{
    connect(del(path, options), &ApiReply::finished, context, [done = std::move(done)](const ApiResult &r) { done(r); });
}

ApiReply *ApiClient::send(const QByteArray &method, const QString &path, const QByteArray &body,
                          const RequestOptions &options)
{
    auto call = std::make_shared<Call>();
    call->method = method;
    call->url = urlFor(path);
    call->body = body;
    call->options = options;
    call->mutation = method != "GET";
    // Only reads are retried by the client; a mutation is retried by the user, with the same key.
    call->maxRetries = call->mutation ? 0 : options.maxRetries.value_or(m_settings.maxRetries);
    if (call->mutation) {
        call->idempotencyKey = options.idempotencyKey.isEmpty()
            ? QUuid::createUuid().toByteArray(QUuid::WithoutBraces)
            : options.idempotencyKey;
    }
    auto *reply = new ApiReply(this);
    if (call->mutation && !options.readOnly) {
        call->counted = true;
        ++m_pendingMutations;
        emit pendingMutationsChanged(m_pendingMutations);
        // However a reply ends (answered, aborted mid-decode, its client torn down), it leaves the count.
        connect(reply, &QObject::destroyed, this, [this, call] { uncount(*call); });
    }
    startAttempt(reply, call);
    return reply;
}

void ApiClient::startAttempt(ApiReply *reply, std::shared_ptr<Call> call)
{
    ++call->attempts;
    call->timedOut = false;
    call->sslErrors.clear();
    QNetworkRequest request = authorizedRequest(call->url);
    if (!call->body.isEmpty())
        request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (call->options.ifMatch)
        request.setRawHeader("If-Match", '"' + QByteArray::number(*call->options.ifMatch) + '"');
    if (call->mutation) {
        request.setRawHeader("Idempotency-Key", call->idempotencyKey);
        if (!call->options.reason.isEmpty())
            request.setRawHeader("X-OpsDeck-Reason", QUrl::toPercentEncoding(call->options.reason));
    }

    QNetworkReply *network = nullptr;
    if (call->method == "GET")
        network = m_nam->get(request);
    else if (call->method == "POST")
        network = m_nam->post(request, call->body);
    else if (call->method == "DELETE" && call->body.isEmpty())
        network = m_nam->deleteResource(request);
    else
        network = m_nam->sendCustomRequest(request, call->method, call->body);
    reply->m_network = network;

    connect(network, &QNetworkReply::sslErrors, reply, [this, call, network](const QList<QSslError> &errors) {
        if (acceptsSslErrors(errors)) {
            network->ignoreSslErrors(errors);
            return;
        }
        call->sslErrors = errors;
        emit sslErrors(errors, call->url);
    });
    connect(network, &QNetworkReply::finished, reply, [this, reply, call, network] {
        attemptFinished(reply, call, network);
    });

    disconnect(&reply->m_timer, nullptr, reply, nullptr);
    connect(&reply->m_timer, &QTimer::timeout, reply, [call, network] {
        call->timedOut = true;
        network->abort();
    });
    reply->m_timer.start(call->options.timeoutMs.value_or(m_settings.timeoutMs));
}

bool ApiClient::acceptsSslErrors(const QList<QSslError> &errors) const
{
    if (errors.isEmpty())
        return false;
    return std::all_of(errors.cbegin(), errors.cend(), [this](const QSslError &e) {
        const QList<QSslError> &accepted = m_settings.acceptedSslErrors;
        return std::any_of(accepted.cbegin(), accepted.cend(), [&e](const QSslError &a) {
            return a.error() == e.error() && a.certificate() == e.certificate();
        });
    });
}

int ApiClient::retryDelay(int retry, const QNetworkReply *network) const
{
    // A server that says when to come back is believed, within the cap.
    if (network) {
        bool ok = false;
        const int seconds = network->rawHeader("Retry-After").toInt(&ok);
        if (ok && seconds >= 0)
            return std::min(seconds * 1000, m_settings.maxDelayMs);
    }
    const qint64 exponential = qint64(m_settings.baseDelayMs) << std::min(retry, 20);
    const double capped = double(std::min<qint64>(exponential, m_settings.maxDelayMs));
    const double jitter = 0.75 + 0.5 * QRandomGenerator::global()->generateDouble();
    return std::max(1, int(capped * jitter));
}

void ApiClient::attemptFinished(ApiReply *reply, std::shared_ptr<Call> call, QNetworkReply *network)
{
    reply->m_timer.stop();
    reply->m_network = nullptr;
    network->deleteLater();
    if (reply->m_aborted) {
        uncount(*call);
        reply->deleteLater();
        return;
    }

    const QNetworkReply::NetworkError error = network->error();
    // A connection lost mid-answer is no answer, even when the status line had arrived.
    const bool transportFailed = error != QNetworkReply::NoError && error < QNetworkReply::ContentAccessDenied;
    const int status = transportFailed ? 0 : network->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const bool tls = !call->sslErrors.isEmpty() || error == QNetworkReply::SslHandshakeFailedError;
    const bool retryableStatus = status == 502 || status == 503 || status == 504;
    const bool retryableError = status == 0 && !tls && (call->timedOut || isTransportError(error));
    if ((retryableStatus || retryableError) && call->attempts <= call->maxRetries) {
        const int delay = retryDelay(call->attempts - 1, retryableStatus ? network : nullptr);
        QTimer::singleShot(delay, reply, [this, reply, call] {
            if (reply->m_aborted) {
                reply->deleteLater();
                return;
            }
            startAttempt(reply, call);
        });
        return;
    }

    ApiResult result;
    result.status = status;
    result.attempts = call->attempts;
    result.idempotencyKey = call->idempotencyKey;
    if (status == 0) {
        result.mayHaveArrived = call->timedOut
            || (!tls && error != QNetworkReply::ConnectionRefusedError && error != QNetworkReply::HostNotFoundError
                && error != QNetworkReply::ProxyConnectionRefusedError && error != QNetworkReply::ProxyNotFoundError);
        if (call->timedOut) {
            result.problem = localProblem(QStringLiteral("timeout"), tr("The server did not answer in time"),
                                          tr("%1 %2: no answer after %3 s")
                                              .arg(QString::fromLatin1(call->method), call->url.toDisplayString())
                                              .arg(call->options.timeoutMs.value_or(m_settings.timeoutMs) / 1000.0));
        } else if (tls) {
            QStringList reasons;
            for (const QSslError &e : std::as_const(call->sslErrors))
                reasons << e.errorString();
            if (reasons.isEmpty())
                reasons << network->errorString();
            result.problem = localProblem(QStringLiteral("tls-error"), tr("The server's certificate was not trusted"),
                                          reasons.join(QLatin1String("; ")));
        } else {
            result.problem = localProblem(QStringLiteral("network-error"), tr("The server could not be reached"),
                                          network->errorString());
        }
        complete(reply, call, std::move(result));
        return;
    }

    result.body = network->readAll();
    QByteArray etag = network->rawHeader("ETag");
    if (etag.startsWith("W/"))
        etag = etag.mid(2);
    if (etag.size() >= 2 && etag.startsWith('"') && etag.endsWith('"'))
        etag = etag.mid(1, etag.size() - 2);
    result.etag = etag;
    result.replayed = network->rawHeader("Idempotency-Replayed").compare("true", Qt::CaseInsensitive) == 0;
    if (status < 200 || status >= 300) {
        result.problem = Problem::fromJson(status, result.body);
        if (status == 401)
            emit unauthenticated(*result.problem);
    } else {
        emit reply->bodyReceived(result.body);
        if (reply->m_aborted) { // abort() above already scheduled its deletion
            uncount(*call);
            return;
        }
    }

    const QByteArray contentType = network->header(QNetworkRequest::ContentTypeHeader).toByteArray();
    if (!contentType.contains("json") || result.body.isEmpty()) {
        complete(reply, call, std::move(result));
        return;
    }
    if (result.body.size() < m_offThreadBytes) {
        const Decoded decoded = decodeJson(result.body);
        result.json = decoded.document;
        if (!decoded.ok && result.ok())
            result.problem = Problem::make(status, QStringLiteral("unexpected-response"),
                                           tr("The server's answer is not valid JSON"));
        complete(reply, call, std::move(result));
        return;
    }
    // Large pages: parsing a few MB of JSON would stall the GUI thread.
    auto *watcher = new QFutureWatcher<Decoded>(reply);
    const QByteArray body = result.body;
    connect(watcher, &QFutureWatcher<Decoded>::finished, reply,
            [this, reply, call, watcher, result = std::move(result)]() mutable {
                const Decoded decoded = watcher->result();
                watcher->deleteLater();
                if (reply->m_aborted) {
                    reply->deleteLater();
                    return;
                }
                result.json = decoded.document;
                if (!decoded.ok && result.ok())
                    result.problem = Problem::make(result.status, QStringLiteral("unexpected-response"),
                                                   tr("The server's answer is not valid JSON"));
                complete(reply, call, std::move(result));
            });
    watcher->setFuture(QtConcurrent::run(decodeJson, body));
}

void ApiClient::complete(ApiReply *reply, std::shared_ptr<Call> call, ApiResult result)
{
    uncount(*call);
    reply->finish(std::move(result));
}

void ApiClient::uncount(Call &call)
{
    if (!call.counted)
        return;
    call.counted = false;
    --m_pendingMutations;
    emit pendingMutationsChanged(m_pendingMutations);
}

} // namespace OpsDeck
