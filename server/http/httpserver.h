// The HTTP front: parses, routes, authenticates, applies Idempotency-Key and writes answers.
#pragma once

#include <QAbstractHttpServer>

#include <functional>

namespace OpsDeck {

class Database;
class IdempotencyStore;
struct IdempotencyRecord;
class Metrics;
class Router;
struct Route;
class TokenStore;
struct Request;
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

    // withoutBody: the answer to a HEAD request, its headers (Content-Length too) and no body.
    static void write(QHttpServerResponder &responder, const Response &response, bool withoutBody = false);

    // Answers at once what a route deferred on this connection (a long poll): called before a
    // request that came after it on the same connection runs, so the answers keep the requests'
    // order (RFC 9112, 9.3.2).
    void setDeferredFlush(std::function<void(QTcpSocket *)> flush) { m_deferredFlush = std::move(flush); }

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    Response dispatch(Request &request, const RouteMatch &match);
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
};

} // namespace OpsDeck
