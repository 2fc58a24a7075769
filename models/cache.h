// The offline cache: one SQLite file per connection profile, worked on by one worker thread.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QThread>

namespace OpsDeck {

class CacheWorker;

// Every call returns at once and is carried out in order on the worker thread; answers come
// back as queued signals. A damaged or foreign file is moved aside (<file>.corrupt-<time>),
// a fresh one is made, and cacheRebuilt() says why: the rows come back by relisting.
class Cache final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Cache)

public:
    // filePath empty = defaultPath() of no profile and no token.
    explicit Cache(const QString &filePath, QObject *parent = nullptr);
    ~Cache() override; // finishes queued work, closes the file, stops the thread

    // <CacheLocation>/<profile>-<token's fingerprint>.sqlite, the profile name made safe for a file
    // name. The rows a server lists depend on who asks: each token has a cache of its own, so a
    // console started with another token never shows (nor resumes the feed from) the rows the
    // last one could see. The fingerprint is a hash: the token itself is never in the name.
    static QString defaultPath(const QString &profile, const QString &token);
    QString filePath() const { return m_path; }
    QThread *workerThread() const { return const_cast<QThread *>(&m_thread); }
    bool isOpen() const { return m_open; }

    void open();
    void load(const QString &kind);            // -> rowsLoaded(kind, chunk, last), in chunks
    // texts, when given, are the rows' JSON as the server wrote it (one per row, same order): it
    // is stored as it is instead of being written again from the objects.
    void store(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts = {});
    void remove(const QString &kind, const QList<qint64> &ids);
    // After a relist; texts as for store().
    void replaceKind(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts = {});
    void clearAll();
    void saveCursor(qint64 seq);
    // The list cursor a kind without feed events (the audit) was last read after: where reading
    // its new rows goes on after a start that resumes the feed.
    void saveTailCursor(const QString &kind, const QString &cursor);
    // -> tailCursorsLoaded(cursors), then cursorLoaded(seq), -1 when none; then verify()
    void loadCursor();
    // The full integrity check of a file that open() adopted (open() only checks its header and
    // schema version, so the first rows show at once). Damage found here is handled as at open:
    // moved aside, a fresh file, cacheRebuilt(); whatever was loaded from it must be relisted.
    void verify();

signals:
    void opened(bool ok, const QString &error);
    void rowsLoaded(const QString &kind, const QList<QJsonObject> &rows, bool last);
    void tailCursorsLoaded(const QHash<QString, QString> &cursors);
    void cursorLoaded(qint64 seq);
    void cacheRebuilt(const QString &reason);
    void failed(const QString &error);

private:
    QString m_path;
    QThread m_thread;
    CacheWorker *m_worker = nullptr; // lives on m_thread; deleted there when it finishes
    bool m_open = false;
};

} // namespace OpsDeck
