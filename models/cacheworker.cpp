// SQLite work of the offline cache: schema check, move-aside rebuild, rows per kind, the feed cursor.
#include "cacheworker.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>
#include <QVariant>

namespace OpsDeck {

namespace {

const QString kCursorKey = QStringLiteral("feed_cursor");
const QString kTailCursorPrefix = QStringLiteral("tail_cursor:");

} // namespace

CacheWorker::CacheWorker(QObject *parent)
    : QObject(parent)
    , m_connection(QStringLiteral("opsdeck-cache-") + QUuid::createUuid().toString(QUuid::WithoutBraces))
{
}

CacheWorker::~CacheWorker()
{
    close();
}

bool CacheWorker::exec(const QString &sql, QString *error)
{
    QSqlQuery query(QSqlDatabase::database(m_connection, false));
    if (query.exec(sql))
        return true;
    if (error)
        *error = query.lastError().text();
    return false;
}

void CacheWorker::open(const QString &filePath)
{
    // Opening twice (the window and the sync engine both ask) keeps the open file.
    if (m_open && filePath == m_path) {
        emit opened(true, {});
        return;
    }
    close();
    m_path = filePath;
    QDir().mkpath(QFileInfo(filePath).absolutePath());
    QString error;
    if (!openFile(&error)) {
        emit opened(false, error);
        return;
    }
    const QString problem = checkFile();
    if (!problem.isEmpty()) {
        moveAside(problem);
        if (!openFile(&error)) {
            emit opened(false, error);
            return;
        }
        emit rebuilt(problem);
    }
    if (!createSchema(&error)) {
        emit opened(false, error);
        return;
    }
    m_open = true;
    emit opened(true, {});
}

void CacheWorker::verify()
{
    if (!m_open || !m_verifyPending)
        return;
    m_verifyPending = false;
    QString problem;
    {
        QSqlQuery query(QSqlDatabase::database(m_connection, false));
        if (!query.exec(QStringLiteral("PRAGMA quick_check")) || !query.next())
            problem = tr("the cache file could not be checked (%1)").arg(query.lastError().text());
        else if (const QString check = query.value(0).toString(); check != QLatin1String("ok"))
            problem = tr("the cache file is damaged (%1)").arg(check);
    }
    if (problem.isEmpty())
        return;
    moveAside(problem);
    QString error;
    if (!openFile(&error) || !createSchema(&error)) {
        emit failed(error);
        return;
    }
    m_open = true;
    emit rebuilt(problem);
}

bool CacheWorker::openFile(QString *error)
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
        db.setDatabaseName(m_path);
        if (!db.open()) {
            *error = db.lastError().text();
            db = QSqlDatabase();
            QSqlDatabase::removeDatabase(m_connection);
            return false;
        }
    }
    return true;
}

// Empty when the file can be used as it is; otherwise why it cannot.
QString CacheWorker::checkFile()
{
    QSqlQuery query(QSqlDatabase::database(m_connection, false));
    if (!query.exec(QStringLiteral("PRAGMA user_version")) || !query.next())
        return tr("the cache file could not be read (%1)").arg(query.lastError().text());
    const int version = query.value(0).toInt();
    if (version == 0) {
        // Fresh (or foreign) file: it must hold no tables to be adopted.
        QSqlQuery tables(QSqlDatabase::database(m_connection, false));
        if (!tables.exec(QStringLiteral("SELECT count(*) FROM sqlite_master")) || !tables.next())
            return tr("the cache file could not be read (%1)").arg(tables.lastError().text());
        if (tables.value(0).toInt() != 0)
            return tr("the cache file has no schema version");
        return {};
    }
    if (version != kSchemaVersion)
        return tr("the cache file has schema version %1, this console uses %2").arg(version).arg(kSchemaVersion);
    // quick_check reads the whole file (a fifth of a second for 100 MB): it runs in verify(),
    // after the rows were handed out, instead of holding back the first paint.
    m_verifyPending = true;
    return {};
}

void CacheWorker::moveAside(const QString &reason)
{
    Q_UNUSED(reason)
    close();
    const QString stamp = QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    const QString aside = m_path + QStringLiteral(".corrupt-") + stamp;
    if (!QFile::rename(m_path, aside))
        QFile::remove(m_path); // cannot keep it for inspection; a fresh file still beats a crash
    QFile::remove(m_path + QStringLiteral("-wal"));
    QFile::remove(m_path + QStringLiteral("-shm"));
    QFile::remove(m_path + QStringLiteral("-journal"));
}

bool CacheWorker::createSchema(QString *error)
{
    // WAL keeps readers (none today, the benchmark tomorrow) off the writer's back; NORMAL sync
    // is enough for a cache that is rebuilt from the server anyway.
    exec(QStringLiteral("PRAGMA journal_mode=WAL"));
    exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
    return exec(QStringLiteral("CREATE TABLE IF NOT EXISTS rows (kind TEXT NOT NULL, id INTEGER NOT NULL, "
                               "version INTEGER NOT NULL, body BLOB NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID"),
                error)
        && exec(QStringLiteral("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"), error)
        && exec(QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion), error);
}

void CacheWorker::close()
{
    if (!QSqlDatabase::contains(m_connection))
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    QSqlDatabase::removeDatabase(m_connection);
    m_open = false;
    m_verifyPending = false;
}

void CacheWorker::load(const QString &kind)
{
    if (!m_open) {
        emit rowsLoaded(kind, {}, true);
        return;
    }
    QSqlQuery query(QSqlDatabase::database(m_connection, false));
    query.setForwardOnly(true);
    query.prepare(QStringLiteral("SELECT body FROM rows WHERE kind = ? ORDER BY id"));
    query.addBindValue(kind);
    if (!query.exec()) {
        emit failed(query.lastError().text());
        emit rowsLoaded(kind, {}, true);
        return;
    }
    QList<QJsonObject> chunk;
    int chunkSize = kFirstLoadChunk;
    chunk.reserve(chunkSize);
    while (query.next()) {
        const QJsonDocument doc = QJsonDocument::fromJson(query.value(0).toByteArray());
        if (!doc.isObject())
            continue; // a row we cannot read is a row the next relist brings back
        chunk.append(doc.object());
        if (chunk.size() == chunkSize) {
            emit rowsLoaded(kind, chunk, false);
            chunk.clear();
            chunkSize = kLoadChunk;
            chunk.reserve(chunkSize);
        }
    }
    emit rowsLoaded(kind, chunk, true);
}

bool CacheWorker::writeRows(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts)
{
    QSqlQuery query(QSqlDatabase::database(m_connection, false));
    // Newer version wins: a late, older event never overwrites what a newer one wrote.
    query.prepare(QStringLiteral("INSERT INTO rows (kind, id, version, body) VALUES (?, ?, ?, ?) "
                                 "ON CONFLICT (kind, id) DO UPDATE SET version = excluded.version, body = excluded.body "
                                 "WHERE excluded.version >= rows.version"));
    // The server's own text of a row is as good as ours and saves writing it again.
    const bool useTexts = texts.size() == rows.size();
    for (qsizetype i = 0; i < rows.size(); ++i) {
        const QJsonObject &row = rows.at(i);
        const QJsonValue id = row.value(QLatin1String("id"));
        if (!id.isDouble())
            continue;
        query.addBindValue(kind);
        query.addBindValue(id.toInteger());
        query.addBindValue(row.value(QLatin1String("version")).toInteger(0));
        query.addBindValue(useTexts ? texts.at(i) : QJsonDocument(row).toJson(QJsonDocument::Compact));
        if (!query.exec()) {
            emit failed(query.lastError().text());
            return false;
        }
    }
    return true;
}

void CacheWorker::store(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts)
{
    if (!m_open || rows.isEmpty())
        return;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    db.transaction();
    if (writeRows(kind, rows, texts))
        db.commit();
    else
        db.rollback();
}

void CacheWorker::replaceKind(const QString &kind, const QList<QJsonObject> &rows, const QList<QByteArray> &texts)
{
    if (!m_open)
        return;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    db.transaction();
    QSqlQuery clear(db);
    clear.prepare(QStringLiteral("DELETE FROM rows WHERE kind = ?"));
    clear.addBindValue(kind);
    if (clear.exec() && writeRows(kind, rows, texts)) {
        db.commit();
        return;
    }
    if (clear.lastError().isValid())
        emit failed(clear.lastError().text());
    db.rollback();
}

void CacheWorker::remove(const QString &kind, const QList<qint64> &ids)
{
    if (!m_open || ids.isEmpty())
        return;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    db.transaction();
    QSqlQuery query(db);
    query.prepare(QStringLiteral("DELETE FROM rows WHERE kind = ? AND id = ?"));
    for (qint64 id : ids) {
        query.addBindValue(kind);
        query.addBindValue(id);
        if (!query.exec()) {
            emit failed(query.lastError().text());
            db.rollback();
            return;
        }
    }
    db.commit();
}

void CacheWorker::clearAll()
{
    if (!m_open)
        return;
    QString error;
    if (!exec(QStringLiteral("DELETE FROM rows"), &error) || !exec(QStringLiteral("DELETE FROM meta"), &error))
        emit failed(error);
}

void CacheWorker::saveMeta(const QString &key, const QString &value)
{
    if (!m_open)
        return;
    QSqlQuery query(QSqlDatabase::database(m_connection, false));
    query.prepare(QStringLiteral("INSERT INTO meta (key, value) VALUES (?, ?) "
                                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value"));
    query.addBindValue(key);
    query.addBindValue(value.isNull() ? QStringLiteral("") : value); // a kind's first page has the empty cursor
    if (!query.exec())
        emit failed(query.lastError().text());
}

void CacheWorker::saveCursor(qint64 seq)
{
    saveMeta(kCursorKey, QString::number(seq));
}

void CacheWorker::saveTailCursor(const QString &kind, const QString &cursor)
{
    saveMeta(kTailCursorPrefix + kind, cursor);
}

void CacheWorker::loadCursor()
{
    qint64 seq = -1;
    QHash<QString, QString> tails;
    if (m_open) {
        QSqlQuery query(QSqlDatabase::database(m_connection, false));
        query.setForwardOnly(true);
        if (query.exec(QStringLiteral("SELECT key, value FROM meta"))) {
            while (query.next()) {
                const QString key = query.value(0).toString();
                if (key == kCursorKey) {
                    bool ok = false;
                    const qint64 value = query.value(1).toString().toLongLong(&ok);
                    if (ok)
                        seq = value;
                } else if (key.startsWith(kTailCursorPrefix)) {
                    tails.insert(key.mid(kTailCursorPrefix.size()), query.value(1).toString());
                }
            }
        }
    }
    emit tailCursorsLoaded(tails);
    emit cursorLoaded(seq);
    // The cursor is the last thing a start reads: the rows are out, now the file is checked.
    verify();
}

} // namespace OpsDeck
