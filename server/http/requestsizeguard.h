// Refuses a request body far over the limit while it arrives, instead of after it is all in memory.
#pragma once

#include <QObject>
#include <QTcpServer>

#if QT_CONFIG(ssl)
#include <QSslServer>
#endif

class QTcpSocket;

namespace OpsDeck {

// QHttpServer 6.4 hands a request over only once all of it has been read: a client announcing
// a 1 GB body would have the server hold 1 GB (and a few copies) before the route could answer
// 413. The guard watches one connection's bytes before QHttpServer reads them: once more than the
// body limit plus room for the headers has arrived since the server last wrote an answer, it
// answers 413 itself (problem+json, Connection: close), stops passing bytes on, and closes the
// connection after the client has had the time to read the answer. Bodies just over the limit
// still reach the route's own 413.
class RequestSizeGuard final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RequestSizeGuard)

public:
    static constexpr qint64 HeaderRoom = 64 * 1024;

    // Guards `socket` (and is its child). Install it before anything else connects to the
    // socket's readyRead: it must see the bytes first.
    static void install(QTcpSocket *socket, qint64 maxBodyBytes);
    // A connection upgraded to a WebSocket is no longer HTTP requests: stop guarding it.
    static void remove(QTcpSocket *socket);

private:
    RequestSizeGuard(QTcpSocket *socket, qint64 limit);
    void onReadyRead();
    void refuse();

    QTcpSocket *m_socket;
    qint64 m_limit;
    qint64 m_unanswered = 0;
    bool m_refused = false;
};

// The listening socket of the HTTP front (QTcpServer, or QSslServer over TLS): each connection
// gets its guard before QHttpServer takes it.
template <typename Server>
class GuardedServer final : public Server
{
public:
    explicit GuardedServer(qint64 maxBodyBytes, QObject *parent = nullptr)
        : Server(parent)
        , m_maxBodyBytes(maxBodyBytes)
    {
    }

    QTcpSocket *nextPendingConnection() override
    {
        QTcpSocket *socket = Server::nextPendingConnection();
        RequestSizeGuard::install(socket, m_maxBodyBytes);
        return socket;
    }

private:
    qint64 m_maxBodyBytes;
};

using GuardedTcpServer = GuardedServer<QTcpServer>;
#if QT_CONFIG(ssl)
using GuardedSslServer = GuardedServer<QSslServer>;
#endif

} // namespace OpsDeck
