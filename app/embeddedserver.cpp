// The in-process control plane in its worker thread.
#include "embeddedserver.h"

#include "serverhost.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>
#include <QThread>

namespace OpsDeck {

EmbeddedServer::EmbeddedServer(QObject *parent)
    : QObject(parent)
    , m_thread(new QThread(this))
{
    m_thread->setObjectName(QStringLiteral("embedded-server"));
}

EmbeddedServer::~EmbeddedServer()
{
    stop();
}

QString EmbeddedServer::databasePath(bool demo)
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    return dir + (demo ? QStringLiteral("/demo.sqlite") : QStringLiteral("/embedded.sqlite"));
}

void EmbeddedServer::start(bool demo)
{
    Q_ASSERT(!m_host);
    const QString path = databasePath(demo);
    QDir().mkpath(QFileInfo(path).absolutePath());
    if (demo) {
        for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
            QFile::remove(path + suffix);
    }
    ServerOptions options;
    options.host = QStringLiteral("127.0.0.1");
    options.port = 0;
    options.databaseUrl = QStringLiteral("sqlite://") + path;
    options.allowPrivateCallbacks = demo; // the demo provider listens on loopback

    m_host = new ServerHost; // no parent: it moves to the worker thread
    m_host->moveToThread(m_thread);
    connect(m_thread, &QThread::finished, m_host, &QObject::deleteLater);
    connect(m_host, &ServerHost::started, this, [this](const QUrl &url, const QString &token) {
        m_baseUrl = url;
        emit started(url, token);
    });
    connect(m_host, &ServerHost::failed, this, &EmbeddedServer::failed);
    m_thread->start();
    // The ControlPlane must be created in the thread that will run it.
    QMetaObject::invokeMethod(m_host, [host = m_host, options, demo] { host->start(options, demo); },
                              Qt::QueuedConnection);
}

void EmbeddedServer::stop()
{
    if (!m_host)
        return;
    // Close the listener and the database in their own thread, then let the thread end;
    // deleteLater on finished destroys the host there.
    QMetaObject::invokeMethod(m_host, [host = m_host] { host->stop(); }, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
    m_host = nullptr;
    m_baseUrl = QUrl();
}

} // namespace OpsDeck
