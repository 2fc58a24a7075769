// Refuses a request body far over the limit while it arrives, instead of after it is all in memory.
#include "requestsizeguard.h"

#include "response.h"

#include "core/problem.h"

#include <QTcpSocket>
#include <QTimer>

#include <sys/socket.h>

namespace OpsDeck {

namespace {

// How long a refused client has to read the answer before the connection is dropped.
constexpr int kLingerMs = 2000;

} // namespace

void RequestSizeGuard::install(QTcpSocket *socket, qint64 maxBodyBytes)
{
    if (socket)
        new RequestSizeGuard(socket, maxBodyBytes + HeaderRoom);
}

void RequestSizeGuard::remove(QTcpSocket *socket)
{
    if (RequestSizeGuard *guard = socket ? socket->findChild<RequestSizeGuard *>(QString(), Qt::FindDirectChildrenOnly) : nullptr) {
        if (!guard->m_refused)
            delete guard;
    }
}

RequestSizeGuard::RequestSizeGuard(QTcpSocket *socket, qint64 limit)
    : QObject(socket)
    , m_socket(socket)
    , m_limit(limit)
{
    connect(socket, &QIODevice::readyRead, this, &RequestSizeGuard::onReadyRead);
    // An answer written: what the client sends from now on is its next request.
    connect(socket, &QIODevice::bytesWritten, this, [this] {
        if (!m_refused)
            m_unanswered = 0;
    });
}

void RequestSizeGuard::onReadyRead()
{
    if (m_refused) {
        // Nothing more reaches QHttpServer: it would only buffer it.
        m_socket->readAll();
        return;
    }
    // QHttpServer reads everything available each time (it is connected after the guard), so
    // what is available now arrived since the last look.
    m_unanswered += m_socket->bytesAvailable();
    if (m_unanswered > m_limit)
        refuse();
}

void RequestSizeGuard::refuse()
{
    m_refused = true;
    m_socket->readAll();
    const Response r = Response::problem(
        Problem::make(413, QStringLiteral("payload-too-large"), QStringLiteral("Payload too large"),
                      QStringLiteral("more than %1 bytes arrived for one request; the body limit is %2")
                          .arg(m_limit)
                          .arg(m_limit - HeaderRoom)));
    m_socket->write("HTTP/1.1 413 Payload Too Large\r\nContent-Type: " + r.contentType + "\r\nContent-Length: "
                    + QByteArray::number(r.body.size()) + "\r\nConnection: close\r\n\r\n" + r.body);
    // Closing with the client's bytes still coming would reset the connection and could lose the
    // answer: send it, stop writing, drop what still arrives, and close after a grace period.
    QTimer::singleShot(kLingerMs, m_socket, [socket = m_socket] { socket->abort(); });
    connect(m_socket, &QIODevice::bytesWritten, this, [this] {
        if (m_socket->bytesToWrite() == 0 && m_socket->socketDescriptor() != -1)
            ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    });
}

} // namespace OpsDeck
