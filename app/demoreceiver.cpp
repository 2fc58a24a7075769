// The demo's webhook receiver on loopback.
#include "demoreceiver.h"

#include <QTcpSocket>

namespace OpsDeck {

DemoReceiver::DemoReceiver(QObject *parent)
    : QObject(parent)
    , m_server(new QTcpServer(this))
{
    connect(m_server, &QTcpServer::newConnection, this, &DemoReceiver::onConnection);
}

bool DemoReceiver::listen()
{
    return m_server->listen(QHostAddress::LocalHost, 0);
}

QUrl DemoReceiver::url(const QString &path) const
{
    return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(m_server->serverPort()).arg(path));
}

void DemoReceiver::onConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        // Wait for the whole head and body (Content-Length) before answering.
        connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
            QByteArray buffer = socket->property("buffer").toByteArray() + socket->readAll();
            socket->setProperty("buffer", buffer);
            const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
            if (headEnd < 0)
                return;
            qsizetype length = 0;
            for (const QByteArray &line : buffer.left(headEnd).split('\n')) {
                if (line.toLower().startsWith("content-length:"))
                    length = line.mid(15).trimmed().toLongLong();
            }
            if (buffer.size() < headEnd + 4 + length)
                return;
            answer(socket, buffer.left(buffer.indexOf("\r\n")));
        });
    }
}

void DemoReceiver::answer(QTcpSocket *socket, const QByteArray &requestLine)
{
    ++m_count;
    QByteArray status = "204 No Content";
    if (requestLine.contains("/flaky") && m_count % 3 != 0)
        status = (m_count % 2) ? "503 Service Unavailable" : "500 Internal Server Error";
    socket->write("HTTP/1.1 " + status + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    socket->disconnectFromHost();
}

} // namespace OpsDeck
