// One keep-alive HTTP/1.1 connection (plain TCP or TLS) to a vetted callback address.
#include "callbackconnection.h"

#include "attemptresult.h"

#include <QNetworkProxy>
#include <QSslSocket>
#include <QStringList>

namespace OpsDeck {

namespace {

bool isTlsError(QAbstractSocket::SocketError error)
{
    return error == QAbstractSocket::SslHandshakeFailedError || error == QAbstractSocket::SslInternalError
           || error == QAbstractSocket::SslInvalidUserDataError;
}

} // namespace

CallbackConnection::CallbackConnection(const Target &target, qsizetype keepBodyBytes, QObject *parent)
    : QObject(parent)
    , m_target(target)
    , m_keepBodyBytes(keepBodyBytes)
    , m_parser(keepBodyBytes)
{
    m_idle.start();
    if (m_target.tls) {
        auto *ssl = new QSslSocket(this);
        ssl->setPeerVerifyMode(QSslSocket::VerifyPeer);
        connect(ssl, &QSslSocket::encrypted, this, &CallbackConnection::onConnected);
        connect(ssl, &QSslSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
            QStringList texts;
            for (const QSslError &error : errors)
                texts.append(error.errorString());
            m_tlsErrors = texts.join(QLatin1String("; "));
        });
        m_socket = ssl;
    } else {
        m_socket = new QTcpSocket(this);
        connect(m_socket, &QTcpSocket::connected, this, &CallbackConnection::onConnected);
    }
    // A proxy would resolve the host itself and defeat the address check.
    m_socket->setProxy(QNetworkProxy::NoProxy);
    connect(m_socket, &QTcpSocket::readyRead, this, &CallbackConnection::onReadyRead);
    connect(m_socket, &QTcpSocket::errorOccurred, this, &CallbackConnection::onSocketError);
    connect(m_socket, &QTcpSocket::disconnected, this, &CallbackConnection::onDisconnected);
}

CallbackConnection::~CallbackConnection()
{
    m_state = State::Closed;
    m_socket->disconnect(this);
    m_socket->abort();
}

void CallbackConnection::send(const QByteArray &request)
{
    Q_ASSERT(isIdle());
    m_parser = HttpResponseParser(m_keepBodyBytes);
    if (m_state == State::Fresh) {
        m_pending = request;
        m_state = State::Connecting;
        QMetaObject::invokeMethod(this, &CallbackConnection::open, Qt::QueuedConnection);
        return;
    }
    m_state = State::Busy;
    if (m_socket->state() != QAbstractSocket::ConnectedState) {
        // Closed under us without our having seen it yet: nothing was written.
        QMetaObject::invokeMethod(
            this,
            [this] {
                if (m_state == State::Busy)
                    failRequest(AttemptResult::Connect, QStringLiteral("the kept-alive connection was closed"), true);
            },
            Qt::QueuedConnection);
        return;
    }
    writeNow(request);
}

void CallbackConnection::writeNow(const QByteArray &request)
{
    m_socket->write(request);
    // Written now rather than when the event loop next polls for writability: a request is
    // small, the socket's send buffer takes it whole, and that spares a turn of the loop
    // (a poll over every socket) per attempt. A failing write reports its error from inside
    // flush(); onSocketError() puts that off to the next turn, as send() promises.
    m_writing = true;
    m_socket->flush();
    m_writing = false;
}

void CallbackConnection::open()
{
    if (m_state != State::Connecting)
        return;
    if (m_target.tls)
        static_cast<QSslSocket *>(m_socket)->connectToHostEncrypted(m_target.address.toString(), m_target.port,
                                                                    m_target.peerVerifyName);
    else
        m_socket->connectToHost(m_target.address, m_target.port);
}

void CallbackConnection::onConnected()
{
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    if (m_state != State::Connecting)
        return;
    m_state = State::Busy;
    writeNow(m_pending);
    m_pending.clear();
}

void CallbackConnection::drain()
{
    char buffer[16 * 1024];
    while (m_parser.state() == HttpResponseParser::State::Incomplete) {
        const qint64 read = m_socket->read(buffer, sizeof buffer);
        if (read <= 0)
            break;
        m_parser.feed(buffer, qsizetype(read));
    }
}

void CallbackConnection::onReadyRead()
{
    if (m_state == State::Idle) {
        // Unasked-for bytes (a 408 before hanging up, say): this connection is done.
        close();
        emit closedWhileIdle();
        return;
    }
    if (m_state != State::Busy)
        return;
    drain();
    if (m_parser.state() == HttpResponseParser::State::Complete)
        finishResponse();
    else if (m_parser.state() == HttpResponseParser::State::Failed)
        failRequest(AttemptResult::Http, QStringLiteral("invalid HTTP response: %1").arg(m_parser.error()), false);
}

void CallbackConnection::finishResponse()
{
    // A server may answer before reading all of the request (a 413, say): the unsent rest would
    // then precede the next request on this connection, so it is not reused.
    const bool reusable = m_parser.response().keepAlive && !m_parser.hasExcess() && m_socket->bytesAvailable() == 0
                          && m_socket->bytesToWrite() == 0 && m_socket->state() == QAbstractSocket::ConnectedState;
    ++m_served;
    const HttpResponse response = m_parser.response();
    if (reusable) {
        m_state = State::Idle;
        m_idle.restart();
    } else {
        close();
    }
    emit responded(response, reusable);
}

void CallbackConnection::onSocketError(QAbstractSocket::SocketError error)
{
    if (m_writing) {
        QMetaObject::invokeMethod(this, [this, error] { onSocketError(error); }, Qt::QueuedConnection);
        return;
    }
    switch (m_state) {
    case State::Fresh:
    case State::Closed:
        return;
    case State::Idle:
        close();
        emit closedWhileIdle();
        return;
    case State::Connecting: {
        if (m_target.tls && (isTlsError(error) || !m_tlsErrors.isEmpty() || m_socket->state() == QAbstractSocket::ConnectedState
                             || error == QAbstractSocket::RemoteHostClosedError)) {
            QString message = QStringLiteral("TLS handshake with %1 failed: %2").arg(m_target.peerVerifyName, m_socket->errorString());
            if (!m_tlsErrors.isEmpty() && !message.contains(m_tlsErrors))
                message += QStringLiteral(" (%1)").arg(m_tlsErrors);
            failRequest(AttemptResult::Tls, message, false);
            return;
        }
        failRequest(AttemptResult::Connect, m_socket->errorString(), false);
        return;
    }
    case State::Busy:
        break;
    }

    drain();
    if (error == QAbstractSocket::RemoteHostClosedError)
        m_parser.finish();
    if (m_parser.state() == HttpResponseParser::State::Complete) {
        finishResponse();
        return;
    }
    const bool retryable = isReused() && !m_parser.sawBytes() && error == QAbstractSocket::RemoteHostClosedError;
    if (m_parser.state() == HttpResponseParser::State::Failed && m_parser.sawBytes()) {
        const QString errorClass =
            error == QAbstractSocket::RemoteHostClosedError ? AttemptResult::Connect : AttemptResult::Http;
        failRequest(errorClass, QStringLiteral("invalid HTTP response: %1").arg(m_parser.error()), false);
        return;
    }
    const QString message = error == QAbstractSocket::RemoteHostClosedError
                                ? QStringLiteral("the connection was closed before any response")
                                : m_socket->errorString();
    failRequest(isTlsError(error) ? AttemptResult::Tls : AttemptResult::Connect, message, retryable);
}

void CallbackConnection::onDisconnected()
{
    if (m_state == State::Connecting || m_state == State::Busy || m_state == State::Idle)
        onSocketError(QAbstractSocket::RemoteHostClosedError);
}

void CallbackConnection::failRequest(const QString &errorClass, const QString &message, bool retryable)
{
    close();
    emit failed(errorClass, message, retryable);
}

void CallbackConnection::close()
{
    m_state = State::Closed;
    m_pending.clear();
    m_socket->abort();
}

} // namespace OpsDeck
