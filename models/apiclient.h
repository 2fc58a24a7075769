// The console's REST client: bearer auth, problem+json errors, preconditions, idempotency, safe retries.
#pragma once

#include "core/problem.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QSslError>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <optional>

class QNetworkAccessManager;
class QNetworkRequest;

namespace OpsDeck {

// The outcome of one request, after any retries.
struct ApiResult
{
    int status = 0;              // HTTP status; 0 when no answer came (network, timeout, TLS)
    QByteArray body;
    QJsonDocument json;          // the decoded body when it is JSON
    QByteArray etag;             // the version from ETag, quotes removed ("7")
    QByteArray idempotencyKey;   // the key a mutation was sent with: resend it to retry safely
    bool replayed = false;       // Idempotency-Replayed: true
    int attempts = 0;
    // When no answer came: whether the request may have reached the server all the same (it timed
    // out, or the connection broke after it was written) rather than surely not (refused, an
    // unknown host, a TLS handshake that failed). A mutation that may have arrived may be done.
    bool mayHaveArrived = false;
    // Set for every failure: the server's problem+json, or a local one with status 503 and code
    // "network-error", "timeout" or "tls-error" when no answer came.
    std::optional<Problem> problem;

    bool ok() const { return !problem && status >= 200 && status < 300; }
    QJsonObject object() const { return json.object(); }
};

struct RequestOptions
{
    std::optional<qint64> ifMatch;   // sends If-Match: "<version>"; a stale one gets 412
    QByteArray idempotencyKey;       // mutations: a fresh QUuid when empty
    QString reason;                  // X-OpsDeck-Reason (percent-encoded) for body-less mutations
    std::optional<int> timeoutMs;    // overrides the client's timeout (long-polls)
    std::optional<int> maxRetries;   // overrides the client's retry count (GET only)
    // A POST that changes nothing on the server (a dry run): it is still sent as a mutation, but
    // it is no operation waiting for its confirmation, so pendingMutations() leaves it out.
    bool readOnly = false;
};

// One request in flight. Parented to the client, deletes itself after finished().
class ApiReply final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ApiReply)

public:
    explicit ApiReply(QObject *parent = nullptr);
    ~ApiReply() override;

    bool isFinished() const { return m_finished; }
    const ApiResult &result() const { return m_result; }
    // Stops the request (and its retries); finished() is not emitted afterwards.
    void abort();

signals:
    // A 2xx body as it arrived, before it is decoded: a pager can ask for the next page while
    // this one is still being parsed. finished() follows.
    void bodyReceived(const QByteArray &body);
    void finished(const OpsDeck::ApiResult &result);

private:
    friend class ApiClient;
    void finish(ApiResult result);

    ApiResult m_result;
    bool m_finished = false;
    bool m_aborted = false;
    QPointer<QNetworkReply> m_network;
    QTimer m_timer; // attempt timeout, then retry delay
};

class ApiClient final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ApiClient)

public:
    using Callback = std::function<void(const ApiResult &)>;

    explicit ApiClient(QObject *parent = nullptr);
    ~ApiClient() override;

    // The server root ("https://opsdeck.example:8443"); API paths are appended to it.
    void setBaseUrl(const QUrl &url);
    QUrl baseUrl() const { return m_settings.baseUrl; }
    void setToken(const QString &token);
    QString token() const { return m_settings.token; }
    void setTimeout(int ms) { m_settings.timeoutMs = ms; }
    int timeout() const { return m_settings.timeoutMs; }
    // Retries of GET on connection errors and 502/503/504: delay = base * 2^n, capped, +-25% jitter.
    void setRetryPolicy(int maxRetries, int baseDelayMs, int maxDelayMs);
    // Bodies above this size are decoded on a worker thread (list pages).
    void setOffThreadDecodeThreshold(int bytes) { m_offThreadBytes = bytes; }
    // TLS errors the user looked at and accepted for this server; anything else still fails.
    void setAcceptedSslErrors(const QList<QSslError> &errors) { m_settings.acceptedSslErrors = errors; }
    // Whether every one of errors was accepted (for connections made outside the client: WebSocket).
    bool acceptsSslErrors(const QList<QSslError> &errors) const;

    // Everything the setters above set, so that a second client (one living on another thread)
    // asks the same server the same way.
    struct Settings
    {
        QUrl baseUrl;
        QString token;
        int timeoutMs = 30000;
        int maxRetries = 3;
        int baseDelayMs = 250;
        int maxDelayMs = 8000;
        QList<QSslError> acceptedSslErrors;
    };
    Settings settings() const { return m_settings; }
    void setSettings(const Settings &settings);

    // Paths: "/instances?limit=5" is under /api/v1; paths starting with "/api/", "/healthz" or
    // "/metrics" are taken as they are.
    QUrl urlFor(const QString &path) const;
    // The same URL for a WebSocket (ws/wss).
    QUrl webSocketUrlFor(const QString &path) const;
    // A request with the bearer header, for callers that open their own connections (WebSocket).
    QNetworkRequest authorizedRequest(const QUrl &url) const;
    QNetworkAccessManager *networkAccessManager() const { return m_nam; }

    ApiReply *get(const QString &path, const RequestOptions &options = {});
    ApiReply *post(const QString &path, const QJsonObject &body, const RequestOptions &options = {});
    ApiReply *del(const QString &path, const RequestOptions &options = {});
    // Callback forms: done runs in context's thread, and not at all once context is gone.
    void get(const QString &path, QObject *context, Callback done, const RequestOptions &options = {});
    void post(const QString &path, const QJsonObject &body, QObject *context, Callback done,
              const RequestOptions &options = {});
    void del(const QString &path, QObject *context, Callback done, const RequestOptions &options = {});

    // Mutations sent and not yet answered, read-only ones (RequestOptions::readOnly) left out.
    int pendingMutations() const { return m_pendingMutations; }

signals:
    // TLS errors are surfaced, never ignored: the request fails with "tls-error" unless the user
    // accepted these very errors with setAcceptedSslErrors() before.
    void sslErrors(const QList<QSslError> &errors, const QUrl &url);
    // A 401 from the server: the token is missing, expired or revoked.
    void unauthenticated(const OpsDeck::Problem &problem);
    void pendingMutationsChanged(int count);

private:
    struct Call;
    ApiReply *send(const QByteArray &method, const QString &path, const QByteArray &body, const RequestOptions &options);
    void startAttempt(ApiReply *reply, std::shared_ptr<Call> call);
    void attemptFinished(ApiReply *reply, std::shared_ptr<Call> call, QNetworkReply *network);
    void complete(ApiReply *reply, std::shared_ptr<Call> call, ApiResult result);
    int retryDelay(int retry, const QNetworkReply *network) const;
    void uncount(Call &call);

    QNetworkAccessManager *m_nam = nullptr; // child
    Settings m_settings;
    int m_offThreadBytes = 64 * 1024;
    int m_pendingMutations = 0;
};

} // namespace OpsDeck

Q_DECLARE_METATYPE(OpsDeck::ApiResult)
