// One keep-alive HTTP/1.1 connection (plain TCP or TLS) to a vetted callback address.
#pragma once

#include "httpresponseparser.h"

#include <QAbstractSocket>
#include <QElapsedTimer>
#include <QHostAddress>
#include <QObject>

class QTcpSocket;

namespace OpsDeck {

// Carries one request at a time. It connects to the address itself (never a name, never through
// a proxy); over TLS the certificate must be valid for peerVerifyName (the URL's host), and any
// certificate error fails the handshake: nothing is ignored.
class CallbackConnection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CallbackConnection)

public:
    struct Target
    {
        QHostAddress address;
        quint16 port = 0;
        bool tls = false;
        QString peerVerifyName;
    };

    CallbackConnection(const Target &target, qsizetype keepBodyBytes, QObject *parent = nullptr);
    ~CallbackConnection() override;

    // Writes one complete request (connecting first on the next event-loop turn when not yet
    // connected). Exactly one of responded() or failed() follows, never from inside send().
    void send(const QByteArray &request);
    // Connected, or not yet, and carrying no request: send() may be called.
    bool isIdle() const { return m_state == State::Fresh || m_state == State::Idle; }
    // Its request was handed to the socket (or may have been): it can have reached the receiver.
    bool hasWritten() const { return m_state == State::Busy; }
    // Has carried a complete response before: a failure may be a stale keep-alive connection.
    bool isReused() const { return m_served > 0; }
    qint64 idleMs() const { return m_idle.elapsed(); }
    // The response being read, once its status line has arrived and until it is complete; null
    // otherwise (what a timeout can say the receiver got as far as).
    const HttpResponse *responseSoFar() const
    {
        return m_state == State::Busy && m_parser.state() == HttpResponseParser::State::Incomplete
                       && m_parser.response().status > 0
                   ? &m_parser.response()
                   : nullptr;
    }
    // Hangs up at once; no signal follows.
    void close();

signals:
    // `reusable`: the connection is idle again and may carry the next request.
    void responded(const OpsDeck::HttpResponse &response, bool reusable);
    // `retryable`: a reused connection failed before any byte of a response arrived, the way a
    // keep-alive connection the server had already closed fails.
    void failed(const QString &errorClass, const QString &message, bool retryable);
    // The peer hung up (or spoke unasked) while the connection was idle; it is closed now.
    void closedWhileIdle();

private:
    enum class State { Fresh, Connecting, Idle, Busy, Closed };

    void open();
    void onConnected();
    void onReadyRead();
    void onSocketError(QAbstractSocket::SocketError error);
    void onDisconnected();
    void finishResponse();
    void failRequest(const QString &errorClass, const QString &message, bool retryable);
    void drain();
    void writeNow(const QByteArray &request);

    Target m_target;
    qsizetype m_keepBodyBytes;
    QTcpSocket *m_socket = nullptr; // child; a QSslSocket for TLS
    State m_state = State::Fresh;
    QByteArray m_pending;     // the request, until the connection is up
    HttpResponseParser m_parser;
    QString m_tlsErrors;
    int m_served = 0;
    bool m_writing = false; // inside writeNow()
    QElapsedTimer m_idle;
};

} // namespace OpsDeck
