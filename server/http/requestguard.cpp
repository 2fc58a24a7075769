// Refuses what QHttpServer would take wrongly: bodies far over the limit, requests of unsure framing.
#include "requestguard.h"

#include "response.h"

#include "core/problem.h"

#include <QHash>
#include <QTcpSocket>
#include <QTimer>

#include <sys/socket.h>

namespace OpsDeck {

namespace {

// How long a refused client has to read the answer before the connection is dropped.
constexpr int kLingerMs = 2000;

} // namespace

void RequestGuard::install(QTcpSocket *socket, qint64 maxBodyBytes)
{
    if (socket)
        new RequestGuard(socket, maxBodyBytes + HeaderRoom);
}

void RequestGuard::remove(QTcpSocket *socket)
{
    if (RequestGuard *guard = socket ? socket->findChild<RequestGuard *>(QString(), Qt::FindDirectChildrenOnly) : nullptr) {
        if (!guard->m_refused)
            delete guard;
    }
}

RequestGuard::RequestGuard(QTcpSocket *socket, qint64 limit)
    : QObject(socket)
    , m_socket(socket)
    , m_limit(limit)
{
    connect(socket, &QIODevice::readyRead, this, &RequestGuard::onReadyRead);
    // An answer written: what the client sends from now on is its next request.
    connect(socket, &QIODevice::bytesWritten, this, [this] {
        if (!m_refused)
            m_unanswered = 0;
    });
}

void RequestGuard::onReadyRead()
{
    if (m_refused) {
        // Nothing more reaches QHttpServer: it would only buffer it.
        m_socket->readAll();
        return;
    }
    // QHttpServer reads everything available each time (it is connected after the guard), so
    // what is available now arrived since the last look.
    const qint64 available = m_socket->bytesAvailable();
    if (m_framing.skips(available)) {
        m_framing.skip(available);
    } else if (const auto refusal = m_framing.feed(m_socket->peek(available))) {
        static const QHash<int, std::pair<QString, QString>> names{
            {400, {QStringLiteral("malformed-request"), QStringLiteral("Malformed request")}},
            {431, {QStringLiteral("headers-too-large"), QStringLiteral("Request header fields too large")}},
            {501, {QStringLiteral("not-implemented"), QStringLiteral("Not implemented")}},
            {505, {QStringLiteral("http-version-not-supported"), QStringLiteral("HTTP version not supported")}}};
        const auto name = names.value(refusal->status, names.value(400));
        refuse(refusal->status, name.first, name.second, refusal->detail);
        return;
    }
    m_unanswered += available;
    if (m_unanswered > m_limit)
        refuse(413, QStringLiteral("payload-too-large"), QStringLiteral("Payload too large"),
               QStringLiteral("more than %1 bytes arrived for one request; the body limit is %2")
                   .arg(m_limit)
                   .arg(m_limit - HeaderRoom));
}

void RequestGuard::refuse(int status, const QString &code, const QString &title, const QString &detail)
{
    m_refused = true;
    m_socket->readAll();
    const Response r = Response::problem(Problem::make(status, code, title, detail));
    m_socket->write("HTTP/1.1 " + QByteArray::number(status) + ' ' + title.toLatin1() + "\r\nContent-Type: "
                    + r.contentType + "\r\nContent-Length: " + QByteArray::number(r.body.size())
                    + "\r\nConnection: close\r\n\r\n" + r.body);
    // Closing with the client's bytes still coming would reset the connection and could lose the
    // answer: send it, stop writing, drop what still arrives, and close after a grace period.
    QTimer::singleShot(kLingerMs, m_socket, [socket = m_socket] { socket->abort(); });
    connect(m_socket, &QIODevice::bytesWritten, this, [this] {
        if (m_socket->bytesToWrite() == 0 && m_socket->socketDescriptor() != -1)
            ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    });
}

} // namespace OpsDeck
