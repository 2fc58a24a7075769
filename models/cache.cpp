// The cache facade: hands every operation to the worker thread that owns the SQLite connection.
#include "cache.h"

#include "cacheworker.h"

#include <QCryptographicHash>
#include <QMetaObject>
#include <QRegularExpression>
#include <QStandardPaths>

namespace OpsDeck {

Cache::Cache(const QString &filePath, QObject *parent)
    : QObject(parent)
    , m_path(filePath.isEmpty() ? defaultPath(QString(), QString()) : filePath)
    , m_worker(new CacheWorker)
{
    m_thread.setObjectName(QStringLiteral("opsdeck-cache"));
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &CacheWorker::opened, this, [this](bool ok, const QString &error) {
        m_open = ok;
        emit opened(ok, error);
    });
    connect(m_worker, &CacheWorker::rowsLoaded, this, &Cache::rowsLoaded);
    connect(m_worker, &CacheWorker::tailCursorsLoaded, this, &Cache::tailCursorsLoaded);
    connect(m_worker, &CacheWorker::cursorLoaded, this, &Cache::cursorLoaded);
    connect(m_worker, &CacheWorker::rebuilt, this, &Cache::cacheRebuilt);
    connect(m_worker, &CacheWorker::failed, this, &Cache::failed);
    m_thread.start();
}

Cache::~Cache()
{
    // Queued work first, then close on the worker's thread (the connection's owner); only then
    // may the loop end.
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker] { worker->close(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

QString Cache::defaultPath(const QString &profile, const QString &token)
{
    QString name = profile.isEmpty() ? QStringLiteral("default") : profile;
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9._-]"));
    name.replace(unsafe, QStringLiteral("_"));
    if (!token.isEmpty()) {
        // 64 bits of SHA-256: enough to tell a user's tokens apart, and nothing to recover one from.
        const QByteArray hash = QCryptographicHash::hash("opsdeck-cache:" + token.toUtf8(), QCryptographicHash::Sha256);
        name += QLatin1Char('-') + QString::fromLatin1(hash.left(8).toHex());
    }
    return QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/") + name
        + QStringLiteral(".sqlite");
}

void Cache::open()
{
    CacheWorker *worker = m_worker;
    const QString path = m_path;
    QMetaObject::invokeMethod(worker, [worker, path] { worker->open(path); }, Qt::QueuedConnection);
}

void Cache::load(const QString &kind)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker, kind] { worker->load(kind); }, Qt::QueuedConnection);
}

void Cache::store(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(
        worker, [worker, kind, rows, texts] { worker->store(kind, rows, texts); }, Qt::QueuedConnection);
}

void Cache::remove(const QString &kind, const QList<qint64> &ids)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker, kind, ids] { worker->remove(kind, ids); }, Qt::QueuedConnection);
}

void Cache::replaceKind(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(
        worker, [worker, kind, rows, texts] { worker->replaceKind(kind, rows, texts); }, Qt::QueuedConnection);
}

void Cache::clearAll()
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker] { worker->clearAll(); }, Qt::QueuedConnection);
}

void Cache::saveCursor(qint64 seq)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker, seq] { worker->saveCursor(seq); }, Qt::QueuedConnection);
}

void Cache::saveTailCursor(const QString &kind, const QString &cursor)
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker, kind, cursor] { worker->saveTailCursor(kind, cursor); }, Qt::QueuedConnection);
}

void Cache::loadCursor()
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker] { worker->loadCursor(); }, Qt::QueuedConnection);
}

void Cache::verify()
{
    CacheWorker *worker = m_worker;
    QMetaObject::invokeMethod(worker, [worker] { worker->verify(); }, Qt::QueuedConnection);
}

} // namespace OpsDeck
