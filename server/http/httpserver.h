// The HTTP front: parses, routes, authenticates, applies Idempotency-Key and writes answers.
#pragma once

#include "request.h"

#include <QAbstractHttpServer>
#include <QString>

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

class QTimer;

namespace OpsDeck {

class Database;
class IdempotencyStore;
struct IdempotencyRecord;
class Metrics;
class Router;
struct Route;
class TokenStore;
struct Response;
struct RouteMatch;

class HttpServer final : public QAbstractHttpServer
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HttpServer)

public:
    // The database, stores and router are not owned and must outlive the server.
    HttpServer(Database &db, Router &router, TokenStore &tokens, IdempotencyStore &idempotency, Metrics &metrics,
               int maxBodyBytes, QObject *parent = nullptr);
    ~HttpServer() override;

    // withoutBody: the answer to a HEAD request, its headers (Content-Length too) and no body.
    static void write(QHttpServerResponder &responder, const Response &response, bool withoutBody = false);

    // Answers at once what a route deferred on this connection (a long poll): called before a
    // request that came after it on the same connection runs, so the answers keep the requests'
    // order (RFC 9112, 9.3.2).
    void setDeferredFlush(std::function<void(QTcpSocket *)> flush) { m_deferredFlush = std::move(flush); }

    // How long a request's statement waits for SQLite's write lock (or its transaction for
    // PostgreSQL's write turn) held by another connection before the request is set aside, to run
    // again a moment later while this thread answers others; and how long in all before it is
    // answered 503 storage-busy.
    static constexpr std::chrono::milliseconds LockWaitPerTry{20};
    // How long after it was taken a key left "running" by a request that ended without running is
    // tried to be let go of: less than the minute after which the next request with the key takes
    // it over anyway (runIdempotent()), whose key letting go later could take away.
    static constexpr int HeldKeyRetryMs = 55000;

    // At stop: the requests still set aside never ran. Each is answered 503 "stopping" (nothing
    // of it was written) and its connection closed once that answer is out, rather than closed
    // with no answer, which would leave the client not knowing whether it was done.
    void answerSetAside();
    int requestsSetAside() const { return int(m_aside.size()); }

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    struct SetAside;

    Response dispatch(Request &request, const RouteMatch &match);
    // dispatch() with the statements waiting at most `lockWait` for SQLite's write lock.
    Response dispatchWaiting(Request &request, const RouteMatch &match, std::chrono::milliseconds lockWait);
    // The answer written (Connection header, close after it), what the database needs after a
    // failure (unless the server gave the answer without running the request: `ran` false), and
    // the request counted in the metrics.
    void answer(Request &request, const RouteMatch &match, const Response &response, QHttpServerResponder &responder,
                QTcpSocket *socket, qint64 elapsedNs, bool ran = true);
    // Whether the request found the write lock held elsewhere and may wait for it set aside.
    bool mayWaitAside(const Response &response, qint64 elapsedNs) const;
    void setAside(std::unique_ptr<SetAside> waiting);
    void scheduleAside();
    // The set-aside requests' turn: the oldest tries the lock, and the others follow only once it
    // got it, so the thread waits for the lock once per turn however many wait.
    void runAside();
    // Runs now, waiting for the lock as long as it takes, what this connection set aside: an
    // answer owed before a WebSocket upgrade that came after it.
    void runAsideNow(QTcpSocket *socket);
    // Whether a request of this connection is set aside: one after it waits behind it.
    bool hasSetAside(const QTcpSocket *socket) const;
    // A request that ends without having run (its client left, or its time ran out) lets its
    // idempotency key go, later if the lock is still held.
    void releaseKeyLater(const Request &request);
    void releaseHeldKeys();
    Response runIdempotent(Request &request, const RouteMatch &match, const QByteArray &key);
    // What a retry with a known key hears: the first answer again, or why not.
    static Response replay(const IdempotencyRecord &record, const QByteArray &fingerprint);
    // "token" or "secret" when the answer holds one (shown once, so never kept), else empty.
    static QByteArray shownOnceMember(const Response &response);
    // The route's handler, run again (a bounded number of times) when storage gave its
    // transaction up to a deadlock or serialization failure, so the client sees no 500 for it.
    // beforeEach runs before every attempt (a conflict runs the handler again).
    Response runHandler(const Route &route, Request &request, const std::function<void()> &beforeEach = {});

    Database &m_db;
    Router &m_router;
    TokenStore &m_tokens;
    IdempotencyStore &m_idempotency;
    Metrics &m_metrics;
    int m_maxBodyBytes;
    std::function<void(QTcpSocket *)> m_deferredFlush;
    std::vector<std::unique_ptr<SetAside>> m_aside; // oldest first
    QTimer *m_asideTimer = nullptr;
    int m_asideMisses = 0; // turns in a row whose first request found the lock held
    std::vector<Request::HeldKey> m_heldKeys;
    QTimer *m_heldKeyTimer = nullptr;
};

} // namespace OpsDeck
