// A webhook receiver for the console's tests: one status and body for every request.
#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QObject>
#include <QRegularExpression>
#include <QString>
#include <QTcpServer>
#include <QTcpSocket>

#include <utility>

namespace OpsDeck::Test {

// A webhook receiver that answers every request with one status and body, then closes.
class Receiver final : public QObject
{
public:
    Receiver(int status, QByteArray body)
        : m_status(status)
        , m_body(std::move(body))
    {
        m_server.listen(QHostAddress::LocalHost, 0);
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                serve(socket);
        });
    }

    QString url() const { return QStringLiteral("http://127.0.0.1:%1/hook").arg(m_server.serverPort()); }
    void setStatus(int status) { m_status = status; }

private:
    void serve(QTcpSocket *socket)
    {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
            QByteArray request = socket->property("request").toByteArray() + socket->readAll();
            socket->setProperty("request", request);
            const qsizetype end = request.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            static const QRegularExpression length(QStringLiteral("content-length:\\s*(\\d+)"),
                                                   QRegularExpression::CaseInsensitiveOption);
            const auto match = length.match(QString::fromLatin1(request.left(end)));
            if (match.hasMatch() && request.size() - end - 4 < match.captured(1).toLongLong())
                return;
            socket->write(QStringLiteral("HTTP/1.1 %1 Status\r\nContent-Type: application/json\r\n"
                                         "Content-Length: %2\r\nConnection: close\r\n\r\n")
                              .arg(m_status)
                              .arg(m_body.size())
                              .toLatin1()
                          + m_body);
            socket->disconnectFromHost();
        });
    }

    QTcpServer m_server;
    int m_status;
    QByteArray m_body;
};

} // namespace OpsDeck::Test
