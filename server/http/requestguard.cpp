// Refuses what QHttpServer would take wrongly: bodies far over the limit, requests of unsure framing.
#include "requestguard.h"

#include "response.h"

#include "core/problem.h"

#include <QHash>
#include <QTcpSocket>
#if QT_CONFIG(ssl)
#include <QSslSocket>
#endif
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
    if (m_refused || m_socket->property(ClosingProperty).toBool()) {
        // Nothing more reaches QHttpServer: it would only buffer it.
        m_socket->readAll();
        return;
    }
    if (m_pending) {
        // QHttpServer ran one of the whole requests before the refused one and comes back for
        // what is left: the next of them, or the refusal.
        refuseOrRunTheNextWhole();
        return;
    }
    // QHttpServer 6.4 (connected after the guard) parses from the front of what is available up
    // to the end of the first whole request there, or all of it when none is whole, and leaves
    // the rest for its next pass (announced by readyRead again): what is available now is that
    // rest, which the guard has seen, and what arrived since.
    const qint64 available = m_socket->bytesAvailable();
    const qint64 seen = m_framing.position() - m_parsed;
    const qint64 fresh = available - seen;
    if (fresh < 0) {
        refuse(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
               QStringLiteral("the connection's bytes are not where they were expected"));
        return;
    }
    if (m_framing.skips(fresh)) {
        m_framing.skip(fresh);
    } else if (const auto refusal = m_framing.feed(m_socket->peek(available).sliced(seen))) {
        m_pending = refusal;
        refuseOrRunTheNextWhole();
        return;
    }
    // Where QHttpServer's pass now stops (the requests it ends at agree with the guard's, or the
    // guard would have refused them).
    const std::optional<qint64> end = m_framing.nextEnd(m_parsed);
    m_parsed = end && *end <= m_parsed + available ? *end : m_parsed + available;
    m_unanswered += fresh;
    if (m_unanswered > m_limit)
        refuse(413, QStringLiteral("payload-too-large"), QStringLiteral("Payload too large"),
               QStringLiteral("more than %1 bytes arrived for one request; the body limit is %2")
                   .arg(m_limit)
                   .arg(m_limit - HeaderRoom));
}

void RequestGuard::refuseOrRunTheNextWhole()
{
    // Whole requests that arrived before the one refused are run and answered first, in order, as
    // they would have been had the refused bytes come later: QHttpServer's pass parses the next
    // one (and leaves the rest for a pass of its own), whose answer is written before the
    // refusal. A request among them that asks to close the connection ends it without a refusal
    // (the check at the top of onReadyRead()).
    if (const std::optional<qint64> end = m_framing.nextEnd(m_parsed)) {
        m_parsed = *end;
        return;
    }
    static const QHash<int, std::pair<QString, QString>> names{
        {400, {QStringLiteral("malformed-request"), QStringLiteral("Malformed request")}},
        {431, {QStringLiteral("headers-too-large"), QStringLiteral("Request header fields too large")}},
        {501, {QStringLiteral("not-implemented"), QStringLiteral("Not implemented")}},
        {505, {QStringLiteral("http-version-not-supported"), QStringLiteral("HTTP version not supported")}}};
    const auto name = names.value(m_pending->status, names.value(400));
    refuse(m_pending->status, name.first, name.second, m_pending->detail);
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
#if QT_CONFIG(ssl)
        // Over TLS the answer is on the wire once it is encrypted and written, not before.
        if (const auto *tls = qobject_cast<QSslSocket *>(m_socket); tls && tls->encryptedBytesToWrite() > 0)
            return;
#endif
        if (m_socket->bytesToWrite() == 0 && m_socket->socketDescriptor() != -1)
            ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    });
#if QT_CONFIG(ssl)
    if (auto *tls = qobject_cast<QSslSocket *>(m_socket))
        connect(tls, &QSslSocket::encryptedBytesWritten, this, [tls] {
            if (tls->bytesToWrite() == 0 && tls->encryptedBytesToWrite() == 0 && tls->socketDescriptor() != -1)
                ::shutdown(int(tls->socketDescriptor()), SHUT_WR);
        });
#endif
}

} // namespace OpsDeck
