// One client connection of the demo provider: keep-alive HTTP/1.1 parsing and in-order answers.
#pragma once

#include "httprequest.h"

#include <QObject>

class QTcpSocket;

namespace OpsDeck::DemoProvider {

// Requests on one connection are answered in order: the next pipelined request is only parsed
// once the current one is answered, so a hanging answer stalls only its own connection.
class HttpConnection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HttpConnection)

public:
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    static constexpr qsizetype MaxHeaderBytes = 64 * 1024;
    static constexpr qsizetype MaxBodyBytes = 16 * 1024 * 1024;

    // Takes ownership of the socket.
    explicit HttpConnection(QTcpSocket *socket, QObject *parent = nullptr);

    // Answers the current request; Content-Length and Connection are added here.
    void respond(int status, const QByteArray &body, const Headers &headers = {});

signals:
    void requestReceived(const OpsDeck::DemoProvider::HttpRequest &request);
    // The peer sent something that is not HTTP; it has been answered and the connection closes.
    void malformedRequest(int status, const QString &reason);

private:
    enum class Parse { Incomplete, Complete, Malformed };

    void onReadyRead();
    void processBuffer();
    Parse parseOne(HttpRequest *request, int *errorStatus, QString *errorReason);
    Parse parseChunked(qsizetype from, QByteArray *body, qsizetype *consumedTo, int *errorStatus,
                       QString *errorReason) const;
    void fail(int status, const QString &reason);

    QTcpSocket *m_socket; // owned, child of this
    QByteArray m_buffer;
    bool m_awaitingAnswer = false;
    bool m_keepAlive = true;
    bool m_processing = false;
    bool m_closing = false;
};

} // namespace OpsDeck::DemoProvider
