// The cache's SQLite work, done on the cache's own thread with its own connection.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>

namespace OpsDeck {

// Lives on Cache's worker thread; every slot runs there, and the QSqlDatabase connection is
// created, used and closed only there.
class CacheWorker final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CacheWorker)

public:
    static constexpr int kSchemaVersion = 1;
    static constexpr int kLoadChunk = 5000;
    // The first chunk of a load is small so the table can paint before the rest is parsed.
    static constexpr int kFirstLoadChunk = 500;

    explicit CacheWorker(QObject *parent = nullptr);
    ~CacheWorker() override;

    void open(const QString &filePath);
    void close();
    void load(const QString &kind);
    void store(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts);
    void remove(const QString &kind, const QList<qint64> &ids);
    void replaceKind(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts);
    void clearAll();
    void saveCursor(qint64 seq);
    void saveTailCursor(const QString &kind, const QString &cursor);
    void loadCursor();
    // The full integrity check (PRAGMA quick_check) of a file adopted at open; runs once.
    void verify();

signals:
    void opened(bool ok, const QString &error);
    void rowsLoaded(const QString &kind, const QList<QJsonObject> &rows, bool last);
    // Before cursorLoaded(): the list cursor each kind without feed events was last read after.
    void tailCursorsLoaded(const QHash<QString, QString> &cursors);
    void cursorLoaded(qint64 seq);
    void rebuilt(const QString &reason);
    void failed(const QString &error);

private:
    void saveMeta(const QString &key, const QString &value);
    bool openFile(QString *error);
    QString checkFile();
    bool createSchema(QString *error);
    void moveAside(const QString &reason);
    bool writeRows(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts);
    bool exec(const QString &sql, QString *error = nullptr);

    QString m_path;
    QString m_connection; // QSqlDatabase connection name, unique per worker
    bool m_open = false;
    bool m_verifyPending = false; // an existing file was adopted and not yet fully checked
};

} // namespace OpsDeck
