// The control plane run in-process for a console without a remote server: a worker thread
// hosting a ControlPlane on loopback, reached over the same REST path as a remote server.
#pragma once

#include "server/serveroptions.h"

#include <QObject>
#include <QUrl>

class QThread;

namespace OpsDeck {

class ServerHost;

class EmbeddedServer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EmbeddedServer)

public:
    explicit EmbeddedServer(QObject *parent = nullptr);
    ~EmbeddedServer() override;

    // Where the embedded database lives: under the data location; the demo gets its own file,
    // recreated on every start so the demo always opens on the same story.
    static QString databasePath(bool demo);

    // Returns at once; started or failed follows from the worker thread.
    void start(bool demo);
    void stop();
    bool isRunning() const { return m_baseUrl.isValid(); }
    QUrl baseUrl() const { return m_baseUrl; }

signals:
    void started(const QUrl &baseUrl, const QString &operatorToken);
    void failed(const QString &message);

private:
    QThread *m_thread = nullptr;    // child
    ServerHost *m_host = nullptr;   // lives in m_thread, deleted there when it finishes
    QUrl m_baseUrl;
};

} // namespace OpsDeck
