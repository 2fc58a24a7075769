// Refuses what QHttpServer would take wrongly: bodies far over the limit, requests of unsure framing.
#pragma once

#include "requestframing.h"

#include <QObject>
#include <QTcpServer>
#include <QTimer>

#include <chrono>

#if QT_CONFIG(ssl)
#include <QSslServer>
#endif

class QTcpSocket;

namespace OpsDeck {

// Watches one connection's bytes before QHttpServer 6.4 reads them, and answers itself
// (problem+json, Connection: close), passes no more bytes on, and closes the connection after the
// client has had the time to read the answer, when:
// - more than the body limit plus room for the headers has arrived since the server last wrote an
//   answer (413): QHttpServer hands a request over only once all of it has been read, so a client
//   announcing a 1 GB body would have the server hold 1 GB (and a few copies) before the route
//   could answer. Bodies just over the limit still reach the route's own 413;
// - a request's end is not certain (RequestFraming: 400, 431, 501 or 505), which QHttpServer
//   would guess, taking the rest of a body for a request of its own. Whole requests that arrived
//   before it are run and answered first;
// - a request asks for 100 Continue with a Content-Length over the body limit (413, at once);
// - no whole request arrived within the idle timeout of the connection's last answer (or of its
//   start) while part of one did (408). A connection that is simply idle that long is closed.
// It also does for QHttpServer 6.4 what HTTP/1.1 asks and that version does not: it writes
// "100 Continue" to a client that waits for it before sending a body (once every earlier answer
// is written), and tells the server each request's version (an HTTP/1.0 connection ends with its
// answer unless the client asked to keep it).
class RequestGuard final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RequestGuard)

public:
    static constexpr qint64 HeaderRoom = 64 * 1024;
    // Set (true) on a connection whose client asked to close it with a request already run: what
    // it sends after that is never run, nor framed (an answer still to come must not be replaced
    // by a refusal of those bytes).
    static constexpr const char *ClosingProperty = "opsdeckClosing";

    // Guards `socket` (and is its child). Install it before anything else connects to the
    // socket's readyRead: it must see the bytes first.
    static void install(QTcpSocket *socket, qint64 maxBodyBytes, std::chrono::milliseconds idleTimeout);
    // A connection upgraded to a WebSocket is no longer HTTP requests: stop guarding it.
    static void remove(QTcpSocket *socket);
    // QHttpServer runs the next request of `socket`; an answer is owed until answered(). Whether
    // that request is HTTP/1.0.
    static bool runs(QTcpSocket *socket);
    // An answer to a request of `socket` was written (deferred ones too).
    static void answered(QTcpSocket *socket);

private:
    RequestGuard(QTcpSocket *socket, qint64 maxBodyBytes, std::chrono::milliseconds idleTimeout);
    static RequestGuard *of(QTcpSocket *socket);
    void onReadyRead();
    // QHttpServer's pass parses up to `end` (a request's end, or all that arrived).
    void parsesTo(qint64 end, bool http10 = false);
    // A refusal found: the whole requests before it are run first, one a pass.
    void refuseOrRunTheNextWhole();
    // Writes 100 Continue when a request waits for it and every request before it was run (all of
    // them parsed up to `parsed`) and answered.
    void continueIfWaited(qint64 parsed);
    void onIdle();
    // Answers `status` and ends the connection, once every answer owed before it is written.
    void refuse(int status, const QString &code, const QString &title, const QString &detail);
    void writeRefusal();

    QTcpSocket *m_socket;
    qint64 m_maxBodyBytes;
    qint64 m_unanswered = 0;
    RequestFraming m_framing{HeaderRoom};
    qint64 m_parsed = 0; // position in the connection's bytes up to which QHttpServer has parsed
    bool m_parsedHttp10 = false; // the request ending at m_parsed, which QHttpServer runs
    int m_owed = 0;              // requests run and not yet answered
    std::optional<qint64> m_continued; // the head start of the request told 100 Continue
    QTimer m_idle; // armed for when the connection may have been idle for m_idleTimeout
    std::chrono::milliseconds m_idleTimeout;
    std::chrono::steady_clock::time_point m_idleSince; // the last answer (or the start)
    std::optional<RequestFraming::Refusal> m_pending; // found, to be answered after the whole requests before it
    bool m_refused = false;
    QByteArray m_refusal; // written once nothing is owed
};

// The listening socket of the HTTP front (QTcpServer, or QSslServer over TLS): each connection
// gets its guard before QHttpServer takes it.
template <typename Server>
class GuardedServer final : public Server
{
public:
    GuardedServer(qint64 maxBodyBytes, std::chrono::milliseconds idleTimeout, QObject *parent = nullptr)
        : Server(parent)
        , m_maxBodyBytes(maxBodyBytes)
        , m_idleTimeout(idleTimeout)
    {
    }

    QTcpSocket *nextPendingConnection() override
    {
        QTcpSocket *socket = Server::nextPendingConnection();
        RequestGuard::install(socket, m_maxBodyBytes, m_idleTimeout);
        return socket;
    }

private:
    qint64 m_maxBodyBytes;
    std::chrono::milliseconds m_idleTimeout;
};

using GuardedTcpServer = GuardedServer<QTcpServer>;
#if QT_CONFIG(ssl)
using GuardedSslServer = GuardedServer<QSslServer>;
#endif

} // namespace OpsDeck
