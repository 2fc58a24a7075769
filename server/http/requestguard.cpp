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

#include <utility>

namespace OpsDeck {

namespace {

// How long a refused client has to read the answer before the connection is dropped.
constexpr int kLingerMs = 2000;

} // namespace

void RequestGuard::install(QTcpSocket *socket, qint64 maxBodyBytes, std::chrono::milliseconds idleTimeout)
{
    if (socket)
        new RequestGuard(socket, maxBodyBytes, idleTimeout);
}

RequestGuard *RequestGuard::of(QTcpSocket *socket)
{
    return socket ? socket->findChild<RequestGuard *>(QString(), Qt::FindDirectChildrenOnly) : nullptr;
}

void RequestGuard::remove(QTcpSocket *socket)
{
    if (RequestGuard *guard = of(socket)) {
        if (!guard->m_refused)
            delete guard;
    }
}

bool RequestGuard::runs(QTcpSocket *socket)
{
    RequestGuard *guard = of(socket);
    if (!guard)
        return false;
    ++guard->m_owed;
    return guard->m_parsedHttp10;
}

void RequestGuard::answered(QTcpSocket *socket)
{
    RequestGuard *guard = of(socket);
    if (!guard || guard->m_owed == 0)
        return;
    if (--guard->m_owed > 0)
        return;
    if (guard->m_refused) {
        guard->writeRefusal(); // held back for this answer
        return;
    }
    // Answered while QHttpServer runs the request: every request up to m_parsed has run.
    guard->continueIfWaited(guard->m_parsed);
    // The idle time counts from here; the timer, armed once, checks it when it fires (restarting
    // a timer for every request would cost more than the request's own routing).
    guard->m_idleSince = std::chrono::steady_clock::now();
}

RequestGuard::RequestGuard(QTcpSocket *socket, qint64 maxBodyBytes, std::chrono::milliseconds idleTimeout)
    : QObject(socket)
    , m_socket(socket)
    , m_maxBodyBytes(maxBodyBytes)
    , m_idleTimeout(idleTimeout)
    , m_idleSince(std::chrono::steady_clock::now())
{
    connect(socket, &QIODevice::readyRead, this, &RequestGuard::onReadyRead);
    // An answer written: what the client sends from now on is its next request.
    connect(socket, &QIODevice::bytesWritten, this, [this] {
        if (!m_refused)
            m_unanswered = 0;
    });
    m_idle.setSingleShot(true);
    connect(&m_idle, &QTimer::timeout, this, &RequestGuard::onIdle);
    m_idle.start(idleTimeout);
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
    if (const auto &wanted = m_framing.continueWanted(); wanted && wanted->contentLength.value_or(0) > m_maxBodyBytes) {
        // Refused before the client sends the body it was going to wait to send.
        m_pending = RequestFraming::Refusal{413, QStringLiteral("the body announced has %1 bytes; the limit is %2")
                                                     .arg(*wanted->contentLength)
                                                     .arg(m_maxBodyBytes)};
        refuseOrRunTheNextWhole();
        return;
    }
    const qint64 parsedBefore = m_parsed;
    // Where QHttpServer's pass now stops (the requests it ends at agree with the guard's, or the
    // guard would have refused them).
    const std::optional<RequestFraming::End> end = m_framing.nextEnd(m_parsed);
    if (end && end->position <= m_parsed + available)
        parsesTo(end->position, end->http10);
    else
        parsesTo(m_parsed + available);
    continueIfWaited(parsedBefore);
    m_unanswered += fresh;
    // The body limit plus room for the head: a body just over the limit still reaches the route's 413.
    const qint64 limit = m_maxBodyBytes + HeaderRoom;
    if (m_unanswered > limit)
        refuse(413, QStringLiteral("payload-too-large"), QStringLiteral("Payload too large"),
               QStringLiteral("more than %1 bytes arrived for one request; the body limit is %2")
                   .arg(limit)
                   .arg(m_maxBodyBytes));
}

void RequestGuard::parsesTo(qint64 end, bool http10)
{
    m_parsed = end;
    m_parsedHttp10 = http10;
}

void RequestGuard::refuseOrRunTheNextWhole()
{
    // Whole requests that arrived before the one refused are run and answered first, in order, as
    // they would have been had the refused bytes come later: QHttpServer's pass parses the next
    // one (and leaves the rest for a pass of its own), whose answer is written before the
    // refusal. A request among them that asks to close the connection ends it without a refusal
    // (the check at the top of onReadyRead()).
    if (const std::optional<RequestFraming::End> end = m_framing.nextEnd(m_parsed)) {
        parsesTo(end->position, end->http10);
        return;
    }
    static const QHash<int, std::pair<QString, QString>> names{
        {400, {QStringLiteral("malformed-request"), QStringLiteral("Malformed request")}},
        {413, {QStringLiteral("payload-too-large"), QStringLiteral("Payload too large")}},
        {417, {QStringLiteral("expectation-failed"), QStringLiteral("Expectation failed")}},
        {431, {QStringLiteral("headers-too-large"), QStringLiteral("Request header fields too large")}},
        {501, {QStringLiteral("not-implemented"), QStringLiteral("Not implemented")}},
        {505, {QStringLiteral("http-version-not-supported"), QStringLiteral("HTTP version not supported")}}};
    const auto name = names.value(m_pending->status, names.value(400));
    refuse(m_pending->status, name.first, name.second, m_pending->detail);
}

void RequestGuard::continueIfWaited(qint64 parsed)
{
    const auto &wanted = m_framing.continueWanted();
    // Not for a request after one that ended the connection: it is never run.
    if (!wanted || m_owed > 0 || m_refused || m_pending || wanted->headStart > parsed || m_continued == wanted->headStart
        || m_socket->property(ClosingProperty).toBool())
        return;
    m_continued = wanted->headStart;
    m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
}

void RequestGuard::onIdle()
{
    if (m_refused)
        return;
    // An answer owed (a long poll) is not idle time: look again a whole timeout later, by when it
    // has been written or the time since it counts.
    if (m_owed > 0) {
        m_idle.start(m_idleTimeout);
        return;
    }
    const auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - m_idleSince);
    if (idle < m_idleTimeout) {
        m_idle.start(m_idleTimeout - idle);
        return;
    }
    if (m_framing.betweenRequests() && m_framing.position() == m_parsed) {
        // Nothing owed and nothing begun: a kept-alive connection nobody uses.
        m_socket->disconnectFromHost();
        return;
    }
    refuse(408, QStringLiteral("request-timeout"), QStringLiteral("Request timeout"),
           QStringLiteral("no whole request arrived within %1 ms").arg(m_idleTimeout.count()));
}

void RequestGuard::refuse(int status, const QString &code, const QString &title, const QString &detail)
{
    m_refused = true;
    m_idle.stop();
    m_socket->readAll();
    const Response r = Response::problem(Problem::make(status, code, title, detail));
    m_refusal = "HTTP/1.1 " + QByteArray::number(status) + ' ' + title.toLatin1() + "\r\nContent-Type: " + r.contentType
                + "\r\nContent-Length: " + QByteArray::number(r.body.size()) + "\r\nConnection: close\r\n\r\n" + r.body;
    // An answer still owed to an earlier request (a long poll) goes first: the client would take
    // the refusal for it. What arrives meanwhile is dropped.
    if (m_owed == 0)
        writeRefusal();
}

void RequestGuard::writeRefusal()
{
    const QByteArray answer = std::exchange(m_refusal, QByteArray());
    if (answer.isEmpty() || m_socket->state() != QAbstractSocket::ConnectedState)
        return;
    m_socket->write(answer);
    // Closing with the client's bytes still coming would reset the connection and could lose the
    // answer: send it, stop writing, drop what still arrives, and close after a grace period.
    QTimer::singleShot(kLingerMs, m_socket, [socket = m_socket] { socket->abort(); });
#if QT_CONFIG(ssl)
    // Over TLS the answer is on the wire once it is encrypted and written to the connection, which
    // encryptedBytesWritten says; bytesWritten comes before that, and a shutdown then loses it.
    if (auto *tls = qobject_cast<QSslSocket *>(m_socket)) {
        connect(tls, &QSslSocket::encryptedBytesWritten, this, [tls] {
            if (tls->bytesToWrite() == 0 && tls->encryptedBytesToWrite() == 0 && tls->socketDescriptor() != -1)
                ::shutdown(int(tls->socketDescriptor()), SHUT_WR);
        });
        return;
    }
#endif
    connect(m_socket, &QIODevice::bytesWritten, this, [this] {
        if (m_socket->bytesToWrite() == 0 && m_socket->socketDescriptor() != -1)
            ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    });
}

} // namespace OpsDeck
