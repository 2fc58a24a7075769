// The HTTP front: parses, routes, authenticates, applies Idempotency-Key and writes answers.
#include "httpserver.h"

#include "idempotencystore.h"
#include "metrics.h"
#include "requestguard.h"
#include "router.h"
#include "server/auth/tokenstore.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QTimer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QTcpSocket>

#include <algorithm>

namespace OpsDeck {

namespace {

// Set on a connection whose client asked to close it: what it sent after that request is not run.
const char *const kClosing = RequestGuard::ClosingProperty;
// Set on a connection one of whose answers was deferred: it may still be owed.
const char *const kDeferred = "opsdeckDeferred";

// Whether a comma-separated header value (Connection) lists `token`, in any case.
bool hasToken(const QByteArray &value, const char *token)
{
    const QList<QByteArray> options = value.split(',');
    return std::any_of(options.cbegin(), options.cend(),
                       [token](const QByteArray &option) { return option.trimmed().compare(token, Qt::CaseInsensitive) == 0; });
}

// What methodName() calls a method Qt's parser does not name.
const QByteArray kUnknownMethod = QByteArrayLiteral("UNKNOWN");

QByteArray methodName(QHttpServerRequest::Method m)
{
    switch (m) {
    case QHttpServerRequest::Method::Get: return QByteArrayLiteral("GET");
    case QHttpServerRequest::Method::Put: return QByteArrayLiteral("PUT");
    case QHttpServerRequest::Method::Delete: return QByteArrayLiteral("DELETE");
    case QHttpServerRequest::Method::Post: return QByteArrayLiteral("POST");
    case QHttpServerRequest::Method::Head: return QByteArrayLiteral("HEAD");
    case QHttpServerRequest::Method::Options: return QByteArrayLiteral("OPTIONS");
    case QHttpServerRequest::Method::Patch: return QByteArrayLiteral("PATCH");
    case QHttpServerRequest::Method::Connect: return QByteArrayLiteral("CONNECT");
    case QHttpServerRequest::Method::Trace: return QByteArrayLiteral("TRACE");
    default: return kUnknownMethod;
    }
}

// Every 503 is worth a later try (storage busy, unavailable): it says when.
Response withRetryAfter(Response r)
{
    const bool said = std::any_of(r.headers.cbegin(), r.headers.cend(), [](const auto &header) {
        return header.first.compare("Retry-After", Qt::CaseInsensitive) == 0;
    });
    if (r.status == 503 && !r.deferred && !said)
        r.withHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
    return r;
}

Response problem(int status, const char *code, const char *title, const QString &detail)
{
    return Response::problem(Problem::make(status, QString::fromLatin1(code), QString::fromLatin1(title), detail));
}

// Why a request's body cannot be read as what it says it is, or nothing. Every body the API
// takes is JSON (RFC 8259: UTF-8): `application/json` or an `application/<name>+json` type,
// with no charset or UTF-8's. A body whose type is not said is read as JSON; an empty body says
// nothing, whatever its type, and neither does the body of a GET, which no route reads.
QString mediaTypeRefusal(const Request &req)
{
    if (req.method == "GET" || req.body.trimmed().isEmpty())
        return {};
    const QByteArray header = req.header(QByteArrayLiteral("Content-Type")).trimmed();
    if (header.isEmpty())
        return {};
    const QByteArrayList parts = header.split(';');
    const QByteArray type = parts.first().trimmed().toLower();
    if (type.isEmpty())
        return QStringLiteral("the Content-Type \"%1\" names no media type; send application/json")
            .arg(QString::fromLatin1(header));
    const QString sent = QString::fromLatin1(type);
    static const QByteArray kApplication("application/");
    static const QByteArray kSuffix("+json");
    const bool json = type == "application/json"
                      || (type.startsWith(kApplication) && type.endsWith(kSuffix)
                          && type.size() > kApplication.size() + kSuffix.size() && !type.contains('*'));
    if (!json)
        return QStringLiteral("the body is sent as %1; every body here is JSON, sent as application/json").arg(sent);
    for (qsizetype i = 1; i < parts.size(); ++i) {
        const QByteArray parameter = parts.at(i).trimmed();
        const qsizetype equals = parameter.indexOf('=');
        if ((equals < 0 ? parameter : parameter.left(equals)).trimmed().toLower() != "charset")
            continue;
        QByteArray charset = equals < 0 ? QByteArray() : parameter.mid(equals + 1).trimmed();
        if (charset.size() >= 2 && charset.startsWith('"') && charset.endsWith('"'))
            charset = charset.mid(1, charset.size() - 2);
        charset = charset.toLower();
        if (charset != "utf-8" && charset != "utf8")
            return QStringLiteral("the body is sent as %1 in \"%2\"; JSON is UTF-8 (send charset=utf-8 or none)")
                .arg(sent, QString::fromLatin1(charset));
    }
    return {};
}

} // namespace

struct HttpServer::SetAside
{
    explicit SetAside(QHttpServerResponder &&r)
        : responder(std::move(r))
    {
    }

    Request request;
    RouteMatch match;
    QHttpServerResponder responder;
    QPointer<QTcpSocket> socket;
    QElapsedTimer since; // from the request's arrival
    bool ran = true;     // false while it waits behind one of its connection's, never run yet
};

HttpServer::HttpServer(Database &db, Router &router, TokenStore &tokens, IdempotencyStore &idempotency, Metrics &metrics,
                       int maxBodyBytes, QObject *parent)
    : QAbstractHttpServer(parent)
    , m_db(db)
    , m_router(router)
    , m_tokens(tokens)
    , m_idempotency(idempotency)
    , m_metrics(metrics)
    , m_maxBodyBytes(maxBodyBytes)
    , m_asideTimer(new QTimer(this))
    , m_heldKeyTimer(new QTimer(this))
{
    m_asideTimer->setSingleShot(true);
    connect(m_asideTimer, &QTimer::timeout, this, &HttpServer::runAside);
    m_heldKeyTimer->setInterval(200);
    connect(m_heldKeyTimer, &QTimer::timeout, this, &HttpServer::releaseHeldKeys);
}

HttpServer::~HttpServer() = default;

void HttpServer::write(QHttpServerResponder &responder, const Response &response, bool withoutBody)
{
    // Whichever path answered it (a deferred long poll too), a 503 says when to try again.
    const Response r = withRetryAfter(response);
    responder.writeStatusLine(QHttpServerResponder::StatusCode(r.status));
    // A 204 has no content, and says neither its type nor its length (RFC 9110, 8.6).
    if (r.status != 204) {
        responder.writeHeader(QByteArrayLiteral("Content-Type"), r.contentType);
        responder.writeHeader(QByteArrayLiteral("Content-Length"), QByteArray::number(r.body.size()));
    }
    for (const auto &h : r.headers)
        responder.writeHeader(h.first, h.second);
    responder.writeBody(withoutBody ? QByteArray() : r.body);
    // After the answer's bytes: what the guard writes next (100 Continue) must follow them.
    RequestGuard::answered(responder.socket());
}

bool HttpServer::handleRequest(const QHttpServerRequest &raw, QTcpSocket *socket)
{
    // Requests that came after one asking to close the connection, in the same read, are not run.
    if (socket->property(kClosing).toBool())
        return true;
    // WebSocket upgrades: claiming the request (true, nothing written) lets QAbstractHttpServer
    // 6.4 complete the handshake and emit newWebSocketConnection; the feed checks path and token.
    // Only a request that QHttpServer takes for an upgrade (Connection names it): a plain one with
    // an Upgrade header is answered as any other, and keeps its guard.
    const bool upgrade = raw.value(QByteArrayLiteral("upgrade")).compare("websocket", Qt::CaseInsensitive) == 0
                         && hasToken(raw.value(QByteArrayLiteral("connection")), "upgrade");
    // Counted as owed before an earlier answer is flushed: what the guard writes once nothing is
    // owed (100 Continue for a request after this one) must wait for this one's answer too.
    const bool http10 = upgrade ? false : RequestGuard::runs(socket);
    // A request behind one of its connection's that waits for the lock waits its turn behind it,
    // set aside too: running it now would mean waiting for the earlier one here first, and every
    // other client with it. A WebSocket's 101 cannot wait (after it the connection speaks
    // WebSocket frames), so what it follows is run first, however long that takes.
    const bool behindAside = !upgrade && hasSetAside(socket);
    // Otherwise an answer still owed to an earlier request (a long poll) goes first.
    if (!behindAside && socket->property(kDeferred).toBool()) {
        socket->setProperty(kDeferred, false);
        runAsideNow(socket);
        if (m_deferredFlush)
            m_deferredFlush(socket);
    }
    if (upgrade) {
        RequestGuard::remove(socket);
        return true;
    }

    QElapsedTimer timer;
    timer.start();
    QHttpServerResponder responder = makeResponder(raw, socket);
    Request req;
    req.method = methodName(raw.method());
    req.path = raw.url().path();
    req.query = raw.query();
    // HEAD is GET without the body (RFC 9110, 9.3.2): the same status and headers, its query
    // checked as the GET's is. It never waits as a long poll would (Request::head).
    const bool head = req.method == "HEAD";
    if (head)
        req.method = QByteArrayLiteral("GET");
    req.head = head;
    req.body = raw.body();
    req.raw = &raw;
    req.responder = &responder;
    // The client asked for the connection to end with this answer (RFC 9112, 9.6); an HTTP/1.0
    // client unless it asked to keep it (RFC 9112, 9.3).
    const QByteArray connection = raw.value(QByteArrayLiteral("connection"));
    const bool keepAlive10 = http10 && hasToken(connection, "keep-alive");
    req.connection = hasToken(connection, "close") || (http10 && !keepAlive10) ? QByteArrayLiteral("close")
                     : keepAlive10                                             ? QByteArrayLiteral("keep-alive")
                                                                               : QByteArray();

    const RouteMatch match = m_router.match(req.method, req.path);
    const auto waitAside = [&](bool ran) {
        auto waiting = std::make_unique<SetAside>(std::move(responder));
        waiting->request = std::move(req);
        waiting->match = match;
        waiting->socket = socket;
        waiting->since = timer;
        waiting->ran = ran;
        setAside(std::move(waiting));
        return true;
    };
    if (behindAside)
        return waitAside(false);
    // While the set-aside requests find the lock held, a new one only looks (it would wait its
    // 20 ms for nothing): each of a stream of writes would hold the thread up again.
    const Response r = dispatchWaiting(req, match, m_asideMisses > 0 ? std::chrono::milliseconds(0) : LockWaitPerTry);
    if (mayWaitAside(r, timer.nsecsElapsed()))
        return waitAside(true);
    answer(req, match, r, responder, socket, timer.nsecsElapsed());
    return true;
}

bool HttpServer::hasSetAside(const QTcpSocket *socket) const
{
    return std::any_of(m_aside.cbegin(), m_aside.cend(), [socket](const auto &w) { return w->socket == socket; });
}

void HttpServer::answer(Request &req, const RouteMatch &match, const Response &r, QHttpServerResponder &responder,
                        QTcpSocket *socket, qint64 elapsedNs, bool ran)
{
    const QString route = match.route               ? match.route->pattern
                          : match.allowed.isEmpty() ? QStringLiteral("unmatched")
                          : req.method == "OPTIONS" ? QStringLiteral("options")
                                                    : QStringLiteral("method-not-allowed");
    if (req.closeAfter()) // nothing the client sent after it runs; a deferred answer closes when written
        socket->setProperty(kClosing, true);
    if (r.deferred)
        socket->setProperty(kDeferred, true);
    if (!r.deferred) {
        write(responder, req.connection.isEmpty() ? r : Response(r).withHeader(QByteArrayLiteral("Connection"), req.connection),
              req.head);
        if (req.closeAfter())
            socket->disconnectFromHost();
    }
    // A failure may mean the database connection died (a restarted PostgreSQL): mend it for the
    // next request rather than failing every request from now on.
    if (r.status >= 500 && ran)
        m_db.recover();
    m_metrics.record(route, req.method, r.deferred ? 200 : r.status, double(elapsedNs) / 1e9);
    releaseKeyLater(req);
}

Response HttpServer::dispatchWaiting(Request &req, const RouteMatch &match, std::chrono::milliseconds lockWait)
{
    m_db.clearLockMissed();
    const ScopedLockWait waiting(m_db, lockWait);
    return dispatch(req, match);
}

bool HttpServer::mayWaitAside(const Response &r, qint64 elapsedNs) const
{
    // Nothing of the request was written (the statement that missed the lock was its first
    // write, or its transaction's BEGIN), so it can run again from the start, as a conflict does.
    return m_db.lockMissed() && !r.deferred && r.status == 503
           && Problem::fromJson(r.status, r.body).code == QLatin1String(Database::BusyCode)
           && elapsedNs < qint64(Database::SqliteBusyTimeoutMs) * 1000000;
}

void HttpServer::setAside(std::unique_ptr<SetAside> waiting)
{
    // Another process (a backup, a shell's BEGIN IMMEDIATE) may hold SQLite's write lock for
    // seconds, or another replica PostgreSQL's write turn. A request that waited for it here held
    // up every other request, reads and /healthz too, which never need that lock. Set aside, it is
    // tried again after 5 ms, then twice as long each time up to 200 ms, within the same 5 s in
    // all as a waiting statement.
    waiting->request.keepHeaders();
    waiting->request.responder = nullptr; // a route that answers later never waits for the lock
    // Owed before anything the client sends after it: that runs it now (runAsideNow()).
    waiting->socket->setProperty(kDeferred, true);
    if (waiting->request.closeAfter())
        waiting->socket->setProperty(kClosing, true);
    m_aside.push_back(std::move(waiting));
    scheduleAside();
}

void HttpServer::scheduleAside()
{
    if (m_aside.empty() || m_asideTimer->isActive())
        return;
    m_asideTimer->start(std::min(200, 5 << std::min(m_asideMisses, 6)));
}

void HttpServer::runAside()
{
    const qint64 budgetNs = qint64(Database::SqliteBusyTimeoutMs) * 1000000;
    for (auto it = m_aside.begin(); it != m_aside.end();) {
        SetAside &w = **it;
        // A client that went away meanwhile hears nothing, so nothing runs for it: its retry will.
        if (!w.socket || w.socket->state() != QAbstractSocket::ConnectedState) {
            releaseKeyLater(w.request);
            it = m_aside.erase(it);
            continue;
        }
        // As long as a statement would have waited: answered as one that waited would be. One
        // that never ran (it waited behind another) is run first: it may need no lock at all.
        if (w.ran && w.since.nsecsElapsed() >= budgetNs) {
            const Response busy = Response::problem(
                Database::busyProblem(QStringLiteral("the database's write lock was held elsewhere for %1 s;"
                                                     " nothing was written, retry later")
                                          .arg(Database::SqliteBusyTimeoutMs / 1000)));
            answer(w.request, w.match, busy, w.responder, w.socket, w.since.nsecsElapsed(), false); // lets its key go
            it = m_aside.erase(it);
            continue;
        }
        ++it;
    }
    bool gotTheLock = true;
    while (gotTheLock && !m_aside.empty()) {
        std::unique_ptr<SetAside> w = std::move(m_aside.front());
        m_aside.erase(m_aside.begin());
        const Response r = dispatchWaiting(w->request, w->match, LockWaitPerTry);
        w->ran = true;
        if (mayWaitAside(r, w->since.nsecsElapsed())) {
            m_aside.insert(m_aside.begin(), std::move(w));
            gotTheLock = false;
            break;
        }
        answer(w->request, w->match, r, w->responder, w->socket, w->since.nsecsElapsed());
    }
    m_asideMisses = gotTheLock ? 0 : m_asideMisses + 1;
    scheduleAside();
}

void HttpServer::runAsideNow(QTcpSocket *socket)
{
    for (auto it = m_aside.begin(); it != m_aside.end();) {
        if ((*it)->socket != socket) {
            ++it;
            continue;
        }
        std::unique_ptr<SetAside> w = std::move(*it);
        it = m_aside.erase(it);
        // The rest of its 5 s, waited for here: the client's next request must not overtake it.
        const qint64 leftMs = std::max<qint64>(1, Database::SqliteBusyTimeoutMs - w->since.elapsed());
        const Response r = dispatchWaiting(w->request, w->match, std::chrono::milliseconds(leftMs));
        answer(w->request, w->match, r, w->responder, socket, w->since.nsecsElapsed());
    }
}

void HttpServer::answerSetAside()
{
    m_asideTimer->stop();
    const Response stopping = problem(503, "stopping", "Server stopping",
                                      QStringLiteral("the server stopped while the request waited for the database's"
                                                     " write lock; nothing was written, retry it"));
    for (std::unique_ptr<SetAside> &w : std::exchange(m_aside, {})) {
        if (!w->socket || w->socket->state() != QAbstractSocket::ConnectedState) {
            releaseKeyLater(w->request);
            continue;
        }
        w->request.connection = QByteArrayLiteral("close");
        answer(w->request, w->match, stopping, w->responder, w->socket, w->since.nsecsElapsed(), false); // closes after it
        // Out before the server goes, which drops its connections with whatever they still hold.
        w->socket->flush();
    }
    releaseHeldKeys();
}

void HttpServer::releaseKeyLater(const Request &req)
{
    if (!req.heldKey)
        return;
    m_heldKeys.push_back(*req.heldKey);
    if (!m_heldKeyTimer->isActive())
        m_heldKeyTimer->start();
}

void HttpServer::releaseHeldKeys()
{
    const ScopedLockWait briefly(m_db, LockWaitPerTry);
    for (auto it = m_heldKeys.begin(); it != m_heldKeys.end();) {
        if (it->takenAt.elapsed() > HeldKeyRetryMs) {
            it = m_heldKeys.erase(it);
            continue;
        }
        m_db.clearLockMissed();
        if (m_idempotency.abandon(it->caller, it->key)) {
            it = m_heldKeys.erase(it);
            continue;
        }
        if (m_db.lockMissed())
            break; // still held elsewhere: the others wait for the next tick, not 20 ms each
        ++it;
    }
    if (m_heldKeys.empty())
        m_heldKeyTimer->stop();
}

void HttpServer::missingHandler(const QHttpServerRequest &request, QTcpSocket *socket)
{
    QHttpServerResponder responder = makeResponder(request, socket);
    write(responder, problem(404, "not-found", "Not found", QStringLiteral("no such route")));
}

Response HttpServer::dispatch(Request &req, const RouteMatch &match)
{
    // A method Qt's parser does not name (TRACE in Qt 6.4, PROPFIND): none is implemented here,
    // whatever the path (RFC 9110 §15.6.2), and "UNKNOWN is not allowed" would name none.
    if (req.method == kUnknownMethod)
        return problem(501, "not-implemented", "Not implemented",
                       QStringLiteral("this server implements GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS"));
    if (!match.route) {
        if (match.allowed.isEmpty())
            return problem(404, "not-found", "Not found", QStringLiteral("no route for %1").arg(req.path));
        // OPTIONS says what the path allows (RFC 9110, 9.3.7), and nothing else.
        if (req.method == "OPTIONS")
            return Response::text(204, QByteArray(), QByteArray()).withHeader(QByteArrayLiteral("Allow"), match.allowed.join(", "));
        Response r = problem(405, "method-not-allowed", "Method not allowed",
                             QStringLiteral("%1 is not allowed on %2; allowed: %3")
                                 .arg(QString::fromLatin1(req.method), req.path,
                                      QString::fromLatin1(match.allowed.join(", "))));
        return r.withHeader(QByteArrayLiteral("Allow"), match.allowed.join(", "));
    }
    if (req.body.size() > m_maxBodyBytes)
        return problem(413, "payload-too-large", "Payload too large",
                       QStringLiteral("the body has %1 bytes; the limit is %2").arg(req.body.size()).arg(m_maxBodyBytes));
    const Route &route = *match.route;
    req.ids = match.ids;
    if (route.roles) {
        const QByteArray auth = req.header(QByteArrayLiteral("Authorization"));
        if (auth.isEmpty())
            return problem(401, "unauthenticated", "Unauthenticated",
                           QStringLiteral("send Authorization: Bearer <token>"))
                .withHeader(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer"));
        bool storageDown = false;
        if (const QByteArray bearer = TokenStore::bearerOf(auth); !bearer.isEmpty())
            req.caller = m_tokens.authenticate(bearer, &storageDown);
        if (storageDown)
            return problem(503, "storage-unavailable", "Storage unavailable",
                           QStringLiteral("the database does not answer; retry shortly"))
                .withHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
        if (!req.caller)
            return problem(401, "unauthenticated", "Unauthenticated",
                           QStringLiteral("the bearer token is unknown or revoked"))
                .withHeader(QByteArrayLiteral("WWW-Authenticate"), QByteArrayLiteral("Bearer error=\"invalid_token\""));
        if (!route.roles.testFlag(req.caller->role))
            return problem(403, "forbidden", "Forbidden",
                           QStringLiteral("the %1 role may not %2 %3")
                               .arg(actorName(req.caller->role), QString::fromLatin1(req.method), route.pattern));
    }
    if (const QString refusal = mediaTypeRefusal(req); !refusal.isEmpty())
        return problem(415, "unsupported-media-type", "Unsupported media type", refusal);
    const QByteArray key = req.header(QByteArrayLiteral("Idempotency-Key"));
    if (route.mutation && !key.isEmpty() && req.caller) {
        if (key.size() > 255)
            return problem(400, "invalid-request", "Invalid request",
                           QStringLiteral("Idempotency-Key is longer than 255 characters"));
        // Kept as text: a byte that is not printable ASCII would be read as U+FFFD, and two
        // different keys would then be one.
        if (std::any_of(key.cbegin(), key.cend(), [](char c) { return c < 0x20 || c > 0x7e; }))
            return problem(400, "invalid-request", "Invalid request",
                           QStringLiteral("Idempotency-Key must be printable ASCII (a UUID, say)"));
        return runIdempotent(req, match, key);
    }
    return runHandler(route, req);
}

Response HttpServer::runHandler(const Route &route, Request &req, const std::function<void()> &beforeEach)
{
    constexpr int kMaxAttempts = 5;
    for (int attempt = 1;; ++attempt) {
        if (beforeEach)
            beforeEach();
        Response r;
        try {
            r = route.handler(req);
        } catch (...) {
            return problem(500, "internal", "Internal error", QStringLiteral("unexpected failure"));
        }
        // Everything the handler wrote was rolled back with its transaction; nothing was
        // answered yet (a deferred long-poll is never a conflict).
        const bool conflict = !r.deferred && r.status == 503 && Database::isConflict(Problem::fromJson(r.status, r.body));
        if (!conflict)
            return withRetryAfter(std::move(r));
        if (attempt == kMaxAttempts)
            return r.withHeader(QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1"));
    }
}

Response HttpServer::runIdempotent(Request &req, const RouteMatch &match, const QByteArray &key)
{
    const QString caller = req.caller->key();
    const QString k = QString::fromUtf8(key);
    // A retry under the key with another If-Match or header reason is another request: the stale
    // If-Match's 412 was replayed to the corrected one, and a second reason was dropped unheard.
    // In this order, not the order Qt lists them in: that is a hash's, seeded per process.
    QByteArrayList conditions;
    for (const QByteArray &field : {QByteArrayLiteral("If-Match"), QByteArrayLiteral("X-OpsDeck-Reason")}) {
        if (req.hasHeader(field))
            conditions.append(field + ": " + req.header(field));
    }
    const QByteArray fp = IdempotencyStore::fingerprint(req.method, req.path, req.query.toString(QUrl::FullyEncoded),
                                                        req.body, conditions);
    auto rec = m_idempotency.find(caller, k);
    // Set aside after it took the key, and the key could not be let go then: it is this request's.
    const bool ours = rec && rec->running && req.heldKey && req.heldKey->caller == caller && req.heldKey->key == k
                      && rec->fingerprint == fp;
    // Requests are answered within seconds; a key still "running" after a minute belongs to a
    // process that died mid-request before anything of it committed, so the retry may run it.
    if (rec && rec->running && !ours && rec->createdAt < timestamp(QDateTime::currentDateTimeUtc().addSecs(-60))) {
        m_idempotency.abandon(caller, k);
        rec.reset();
    }
    if (rec && !ours)
        return replay(*rec, fp);
    Problem stored;
    QElapsedTimer takenAt;
    takenAt.start();
    if (ours)
        takenAt = req.heldKey->takenAt;
    if (!ours && !m_idempotency.begin(caller, k, fp, &stored)) {
        if (!stored.isNull())
            return withRetryAfter(Response::problem(stored));
        return problem(409, "idempotency-key-in-use", "Idempotency key in use",
                       QStringLiteral("the original request with this Idempotency-Key is still running"));
    }
    // The key is marked in the request's own transaction: once that commits, no retry runs it again.
    bool marked = false;
    bool lost = false;
    Response r = runHandler(*match.route, req, [&] {
        // An attempt run again (a conflict rolled the last one back, mark included) starts unmarked.
        marked = false;
        lost = false;
        m_db.setBeforeCommit([&](Problem *error) { return marked = m_idempotency.markCommitted(caller, k, error, &lost); });
    });
    m_db.setBeforeCommit({});
    req.heldKey.reset();
    // Rolled back, its key another's now: nothing of it to keep or let go.
    if (lost)
        return r;
    if (r.deferred || (r.status >= 500 && !marked)) {
        // With the write lock held elsewhere this may fail too: the request set aside then runs
        // again under its key (a retry from the client hears "in use" meanwhile).
        if (!m_idempotency.abandon(caller, k))
            req.heldKey = Request::HeldKey{caller, k, takenAt};
    } else if (r.status < 500) {
        IdempotencyRecord answer;
        answer.status = r.status;
        answer.contentType = r.contentType;
        answer.body = r.body;
        for (const auto &h : r.headers) {
            if (h.first == "ETag")
                answer.etag = h.second;
            else if (h.first == "Location")
                answer.location = h.second;
        }
        // A token or signing secret is shown once: a retry is told so, and never gets it from here.
        answer.withheld = shownOnceMember(r);
        if (!answer.withheld.isEmpty())
            answer.body.clear();
        // After the commit, whatever holds the lock now: a missed answer would be lost for good.
        const ScopedLockWait fully(m_db, std::chrono::milliseconds(Database::SqliteBusyTimeoutMs));
        m_idempotency.finish(caller, k, answer);
    }
    // A 500 after the commit leaves the key committed: a retry hears that, and nothing runs twice.
    return r;
}

QByteArray HttpServer::shownOnceMember(const Response &r)
{
    if (!r.contentType.startsWith("application/json"))
        return {};
    for (const QByteArray &member : {QByteArrayLiteral("token"), QByteArrayLiteral("secret")}) {
        if (!r.body.contains('"' + member + '"'))
            continue;
        if (QJsonDocument::fromJson(r.body).object().value(QString::fromLatin1(member)).isString())
            return member;
    }
    return {};
}

Response HttpServer::replay(const IdempotencyRecord &rec, const QByteArray &fingerprint)
{
    if (rec.fingerprint != fingerprint)
        return problem(422, "idempotency-key-reused", "Idempotency key reused",
                       QStringLiteral("this Idempotency-Key was used for a different request"));
    if (rec.running)
        return problem(409, "idempotency-key-in-use", "Idempotency key in use",
                       QStringLiteral("the original request with this Idempotency-Key is still running"));
    if (rec.committed)
        return problem(409, "idempotency-answer-lost", "Idempotency answer lost",
                       QStringLiteral("the original request with this Idempotency-Key was carried out, but the server "
                                      "stopped before its answer was kept; read the object to see where it stands"));
    Response r = rec.withheld.isEmpty()
                     ? Response::text(rec.status, rec.body, rec.contentType)
                     : problem(409, "idempotency-secret-withheld", "Idempotency answer withheld",
                               QStringLiteral("the original request with this Idempotency-Key succeeded (%1), but its "
                                              "answer held a %2, which is shown once and never kept%3")
                                   .arg(rec.status)
                                   .arg(QString::fromLatin1(rec.withheld),
                                        rec.location.isEmpty() ? QString()
                                                               : QStringLiteral("; Location names what it created")));
    if (!rec.etag.isEmpty() && rec.withheld.isEmpty())
        r.withHeader(QByteArrayLiteral("ETag"), rec.etag);
    if (!rec.location.isEmpty())
        r.withHeader(QByteArrayLiteral("Location"), rec.location);
    return r.withHeader(QByteArrayLiteral("Idempotency-Replayed"), QByteArrayLiteral("true"));
}

} // namespace OpsDeck
