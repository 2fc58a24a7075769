// Lives in the embedded server's worker thread: creates the ControlPlane there, makes the
// session's operator token, seeds demo data and keeps it moving.
#pragma once

#include "server/serveroptions.h"

#include <QObject>
#include <QUrl>

class QTcpSocket;

namespace OpsDeck {

class ControlPlane;
class DemoActivity;
class DemoReceiver;

class ServerHost final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ServerHost)

public:
    explicit ServerHost(QObject *parent = nullptr);
    ~ServerHost() override;

    // Called in the worker thread (queued); answers with started or failed.
    void start(const OpsDeck::ServerOptions &options, bool demo);
    // Called in the worker thread before it quits: closes listeners and the database there.
    void stop();

    // The demo's callback URL that refuses every connection (empty without demo data). Its port
    // stays bound, never listening, while the demo runs: a port merely found free would be the
    // next one the system hands out, and another program listening there would get the demo's
    // callbacks.
    QUrl deadCallbackUrl() const;

signals:
    void started(const QUrl &baseUrl, const QString &operatorToken);
    void failed(const QString &message);

private:
    ControlPlane *m_server = nullptr; // child
    DemoActivity *m_demo = nullptr;   // child
    DemoReceiver *m_receiver = nullptr; // child
    QTcpSocket *m_deadPort = nullptr;   // child: bound, never listening
};

} // namespace OpsDeck
