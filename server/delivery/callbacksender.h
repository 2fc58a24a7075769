// Sends one signed callback attempt and classifies its outcome for the attempt log.
#pragma once

#include "attemptresult.h"
#include "callbackrequest.h"
#include "urlguard.h"

#include <QElapsedTimer>
#include <QObject>
#include <QPointer>

#include <functional>
#include <map>
#include <memory>

class QHostInfo;
class QNetworkAccessManager;
class QNetworkReply;
class QTimer;

namespace OpsDeck {

// One attempt per send(): sign (Standard Webhooks or X-Hub-Signature), check the URL with the
// guard, resolve the host and check every address it resolves to (DNS rebinding), then POST to
// the vetted address itself (Host header and TLS peer name keep the original host), so the
// name cannot be re-resolved inward between the check and the connect. Redirects are never
// followed: a 3xx is an "http" failure. Cookies are neither stored nor sent.
//
// Sends run concurrently; the caller bounds concurrency. QNetworkAccessManager opens at most
// 6 HTTP/1.1 connections per host:port and queues the rest, so a worker that wants more
// parallelism towards one endpoint gains nothing past 6 (HTTP/2 over TLS multiplexes instead),
// and 6 hanging attempts would stall everything else bound for that host:port. Requests with an
// isolation key therefore get a manager (own connections, own network thread) per key, made on
// first use and dropped after IdlePoolMs without traffic; past MaxIsolatedPools keys they fall
// back to the shared manager. Give each worker thread its own sender: QNetworkAccessManager is
// not thread-safe.
class CallbackSender final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CallbackSender)

public:
    using Callback = std::function<void(const AttemptResult &)>;
    using Clock = std::function<QDateTime()>;

    static inline const QByteArray UserAgent = QByteArrayLiteral("OpsDeck-Webhooks/1");
    static constexpr int MaxIsolatedPools = 256;
    static constexpr int IdlePoolMs = 60 * 1000;

    // Without a manager the sender makes its own (no proxy). A given manager is not owned.
    explicit CallbackSender(const CallbackUrlGuard &guard, QNetworkAccessManager *manager = nullptr,
                            QObject *parent = nullptr);
    ~CallbackSender() override;

    // Starts an attempt and returns its id; finished() always follows, never from inside send().
    quint64 send(const CallbackRequest &request);
    // The same, also calling `done` with the result unless `context` is gone by then.
    quint64 send(const CallbackRequest &request, const QObject *context, Callback done);

    int inFlight() const { return int(m_jobs.size()); }
    // Ends every attempt in flight now; each still reports finished() (class "connect",
    // "cancelled"), so a worker can put its deliveries back.
    void abortAll();

    // For tests: where webhook-timestamp and startedAt come from (default: the system clock).
    void setClock(Clock clock);
    // Connection pools currently kept for isolation keys.
    int isolatedPools() const { return int(m_pools.size()); }
    const CallbackUrlGuard &guard() const { return m_guard; }

signals:
    void finished(quint64 sendId, const OpsDeck::AttemptResult &result);

private:
    struct Job;
    struct Pool
    {
        QNetworkAccessManager *manager = nullptr; // child
        int inFlight = 0;
        qint64 idleSinceMs = 0;
    };

    quint64 enqueue(std::unique_ptr<Job> job);
    void start(Job &job);
    void onResolved(quint64 id, const QHostInfo &info);
    void post(Job &job, const QString &pinnedAddress);
    void onReadyRead(quint64 id);
    void onReplyFinished(quint64 id);
    void onTimeout(quint64 id);
    void fail(quint64 id, const QString &errorClass, const QString &message);
    void complete(quint64 id);
    Job *findJob(quint64 id);
    QNetworkAccessManager *acquire(const QString &isolationKey);
    void release(const QString &isolationKey);
    void dropIdlePools();

    CallbackUrlGuard m_guard;
    QNetworkAccessManager *m_manager; // owned when we created it (child), otherwise borrowed
    Clock m_clock;
    std::map<QString, Pool> m_pools;
    QTimer *m_poolSweep; // child
    QElapsedTimer m_monotonic;
    quint64 m_nextId = 1;
    std::map<quint64, std::unique_ptr<Job>> m_jobs;
};

} // namespace OpsDeck
