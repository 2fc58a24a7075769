// Sends one signed callback attempt and classifies its outcome for the attempt log.
#pragma once

#include "attemptresult.h"
#include "callbackconnectionpool.h"
#include "callbackrequest.h"
#include "urlguard.h"

#include "core/webhooksignature.h"

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QPointer>

#include <cstddef>
#include <functional>
#include <memory>
#include <map>
#include <unordered_map>

class QHostInfo;
class QTimer;
class QTimerEvent;

namespace OpsDeck {

// One attempt per send(): sign (Standard Webhooks or X-Hub-Signature), check the URL with the
// guard, resolve the host and check every address it resolves to (DNS rebinding), then POST to
// the vetted address itself (Host header and TLS peer name keep the original host), so the
// name cannot be re-resolved inward between the check and the connect. Redirects are never
// followed: a 3xx is an "http" failure. Cookies are neither stored nor sent, and no proxy is used.
//
// HTTP/1.1 is spoken directly over QTcpSocket / QSslSocket: keep-alive connections are pooled
// per (scheme, vetted address, port, Host, isolation key), at most maxConnectionsPerPool() open
// per pool, further requests of that pool waiting in order. Pools share nothing, so attempts
// hanging in one pool never hold up another; the caller bounds the total. Connections idle for
// IdleConnectionMs are closed. Everything runs in the thread the sender lives in, with no
// thread of its own: give each worker thread its own sender.
class CallbackSender final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CallbackSender)

public:
    using Callback = std::function<void(const AttemptResult &)>;
    using Clock = std::function<QDateTime()>;

    static inline const QByteArray UserAgent = QByteArrayLiteral("OpsDeck-Webhooks/1");
    static constexpr int DefaultMaxConnectionsPerPool = 6;
    // Below the keep-alive timeout of common servers (5 s), so that an idle connection is
    // rarely closed by the server just as a request goes out on it.
    static constexpr int IdleConnectionMs = 4000;

    explicit CallbackSender(const CallbackUrlGuard &guard, QObject *parent = nullptr);
    // Source compatibility with the former (guard, network manager, parent) signature, which
    // was always given nullptr.
    CallbackSender(const CallbackUrlGuard &guard, std::nullptr_t, QObject *parent);
    ~CallbackSender() override;

    // Starts an attempt and returns its id; finished() always follows, never from inside send().
    quint64 send(const CallbackRequest &request);
    // The same, also calling `done` with the result unless `context` is gone by then.
    quint64 send(const CallbackRequest &request, const QObject *context, Callback done);

    int inFlight() const { return int(m_jobs.size()); }
    // The attempts in flight none of whose bytes can have reached the receiver yet: still being
    // resolved, waiting for a connection, connecting, or about to report a failure of their own
    // (signing, URL). A worker stopping gives their deliveries back as never sent.
    QList<quint64> unsent() const;
    // Ends every attempt in flight now; each still reports finished() (class "connect",
    // "cancelled"), so a worker can put its deliveries back.
    void abortAll();

    // Connections a pool opens at most (at least 1); the delivery worker passes its
    // per-endpoint concurrency. Applies to existing pools too; lowering it closes nothing.
    void setMaxConnectionsPerPool(int maxConnections);
    int maxConnectionsPerPool() const { return m_maxConnectionsPerPool; }

    // For tests: where webhook-timestamp and startedAt come from (default: the system clock).
    void setClock(Clock clock);
    // Connection pools currently kept, and those among them for an isolation key.
    int pools() const { return int(m_pools.size()); }
    int isolatedPools() const;
    // Connections currently open (busy or idle) in all pools.
    int openConnections() const;
    // Host names whose vetted address is currently reused without a new lookup.
    int vettedHosts() const { return int(m_vettedHosts.size()); }
    const CallbackUrlGuard &guard() const { return m_guard; }

signals:
    void finished(quint64 sendId, const OpsDeck::AttemptResult &result);

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    struct Job;
    static constexpr qsizetype MaxSigningKeys = 4096;
    static constexpr qsizetype MaxVettedHosts = 4096;
    static constexpr qsizetype MaxDestinations = 4096;
    // How long a name's vetted address is used without asking DNS again. Short, so a provider
    // moving its endpoint is followed soon; the attempt connects to the vetted address itself,
    // so a name that meanwhile resolves inward is never connected to.
    static constexpr qint64 VettedHostMs = 10000;

    quint64 enqueue(std::unique_ptr<Job> job);
    void start(Job &job);
    void onResolved(quint64 id, const QHostInfo &info);
    struct Destination;
    // Writes the request to `address`, where `destination` (the job's URL's) resolved to.
    void post(Job &job, const Destination &destination, const QHostAddress &address);
    void onResponse(quint64 id, const HttpResponse &response);
    void onPoolFailed(quint64 id, const QString &errorClass, const QString &message);
    // Classifies a response and completes the attempt.
    void record(Job &job, const HttpResponse &response);
    void onTimeout(quint64 id);
    void fail(quint64 id, const QString &errorClass, const QString &message);
    void complete(quint64 id);
    Job *findJob(quint64 id);
    // The pool for that target, Host header and isolation key, made on first use.
    CallbackConnectionPool *pool(const CallbackConnection::Target &target, const QByteArray &host,
                                 const QString &isolationKey);
    void sweepIdle();
    struct SigningKey
    {
        WebhookSignature::PreparedKey key;
        QString error; // the secret could not be decoded
    };
    // The secret's decoded and prepared key, made on first use: decoding and the HMAC key
    // schedule are then paid once per secret instead of once per attempt.
    const SigningKey &signingKey(const QByteArray &secret);
    // What a callback URL says of where it goes, taken apart and vetted once per URL rather than
    // once per attempt (the guard's checks of the URL alone do not change; those of a name's
    // addresses are made at each lookup).
    struct Destination
    {
        Problem problem;         // the guard refused the URL
        QString host;            // the name or literal address, as QUrl::host() gives it
        QHostAddress literal;    // null unless the host is an address
        bool tls = false;
        quint16 port = 0;
        QByteArray hostHeader;   // with the port when the URL names one
        QByteArray target;       // path and query, encoded
    };
    // The destination of `url`; the reference lasts until the next call.
    const Destination &destination(const QUrl &url);
    Destination makeDestination(const QUrl &url) const;

    CallbackUrlGuard m_guard;
    Clock m_clock;
    int m_maxConnectionsPerPool = DefaultMaxConnectionsPerPool;
    struct PoolEntry
    {
        CallbackConnectionPool *pool = nullptr; // child
        bool isolated = false;
    };
    QHash<QByteArray, PoolEntry> m_pools;
    QHash<QByteArray, SigningKey> m_signingKeys; // by secret text
    struct VettedHost
    {
        QHostAddress address;
        qint64 expiresAt = 0; // ms of m_monotonic
    };
    QHash<QString, VettedHost> m_vettedHosts; // by the URL's host name
    QHash<QUrl, Destination> m_destinations;
    Destination m_unkeptDestination; // destination() of an invalid URL
    QList<WebhookSignature::PreparedKey> m_attemptKeys; // scratch of start()
    QTimer *m_idleSweep; // child
    quint64 m_nextId = 1;
    std::unordered_map<quint64, std::unique_ptr<Job>> m_jobs;
    // Attempts' deadlines (ms of m_monotonic) in order, watched by one timer set for the
    // earliest: a timer per attempt cost a registration and a removal in the event dispatcher.
    using Deadlines = std::multimap<qint64, quint64>;
    Deadlines m_deadlines;
    QElapsedTimer m_monotonic;
    int m_deadlineTimerId = 0;
    qint64 m_deadlineTimerDue = 0; // when the timer is set for, while m_deadlineTimerId != 0
    void watchDeadline(qint64 due);
    // Pool signals being handled: a receiver of finished() may delete the sender from inside
    // one, and the socket that emitted it must outlive that.
    int m_inPoolSignal = 0;
};

} // namespace OpsDeck
