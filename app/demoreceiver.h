// The demo's webhook receiver on loopback: acknowledges callbacks, except on the "/flaky" path
// where it fails now and then, so the console's Callbacks view has both kinds to show.
#pragma once

#include <QTcpServer>
#include <QUrl>

namespace OpsDeck {

class DemoReceiver final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DemoReceiver)

public:
    explicit DemoReceiver(QObject *parent = nullptr);

    bool listen();
    // http://127.0.0.1:<port><path>
    QUrl url(const QString &path) const;

private:
    void onConnection();
    void answer(QTcpSocket *socket, const QByteArray &requestLine);

    QTcpServer *m_server = nullptr; // child
    quint64 m_count = 0;
};

} // namespace OpsDeck
