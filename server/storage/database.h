// The control plane's storage connection: SQLite or PostgreSQL behind one API, with migrations.
#pragma once

#include "core/problem.h"

#include <QHash>
#include <QSqlError>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QString>

#include <chrono>
#include <functional>
#include <memory>

struct sqlite3;
struct sqlite3_stmt;

namespace OpsDeck {

// One connection, used only from the thread that opened it. Repository code writes SQL that both
// backends accept; the few differences (auto-increment ids) are spelled {{id}} in migrations.
class Database final
{
public:
    enum class Backend { Sqlite, Postgres };

    explicit Database(QString url);
    ~Database();
    Database(const Database &) = delete;
    Database &operator=(const Database &) = delete;

    // sqlite:///abs/path.db under the XDG data directory.
    static QString defaultUrl();

    // SQLite's write-ahead log keeps the size it once reached: a log that grew while a checkpoint
    // waited on a slow disk would keep its tens of megabytes for good. The first commit after the
    // log starts over cuts the file back to this size.
    static constexpr qint64 SqliteLogSizeLimit = 32 * 1024 * 1024;

    bool open(Problem *error = nullptr);
    // Applies every migration not yet in schema_migrations, each in its own transaction.
    bool migrate(Problem *error = nullptr);
    void close();
    bool isOpen() const;

    const QString &url() const { return m_url; }
    Backend backend() const { return m_backend; }
    QString backendName() const;
    QSqlDatabase connection() const;
    int schemaVersion();

    // A prepared statement cached by its text: callers bind, exec and finish() it. Never nest two
    // uses of the same text.
    QSqlQuery &query(const QString &sql);
    // SQLite only, for Statement: this text prepared on this connection through SQLite's own API,
    // cached like query()'s and finalized by close(); nullptr (and *error) when it does not
    // prepare. Never nest two uses of the same text.
    sqlite3_stmt *sqliteStatement(const QString &sql, QString *error);
    // Runs one statement without parameters; false (and the problem) on failure.
    bool exec(const QString &sql, Problem *error = nullptr);

    // After a failure: true when the connection answers, reconnecting when it does not (a
    // restarted PostgreSQL). Every cached statement is dropped on reconnect, so callers must not
    // hold a query() reference across it.
    bool recover();

    bool begin();
    bool commit();
    void rollback();

    // How long one statement of this connection waits for SQLite's write lock, or a transaction
    // for PostgreSQL's write turn (takeWriteTurn()), which another connection holds, before it
    // fails with storage-busy: by default SqliteBusyTimeoutMs. The HTTP thread's connection waits
    // briefly and sets its request aside (HttpServer), so a lock held long elsewhere holds up only
    // the writes, not every request.
    void setLockWait(std::chrono::milliseconds wait) { m_lockWaitMs = wait.count(); }
    std::chrono::milliseconds lockWait() const { return std::chrono::milliseconds(m_lockWaitMs); }
    // Whether a statement gave up waiting for the lock since the last clearLockMissed(): nothing
    // it would have written was written.
    bool lockMissed() const { return m_lockMissed; }
    void clearLockMissed() { m_lockMissed = false; }
    // PostgreSQL: the first statement of every write transaction, so that writers (of this
    // process and of other replicas) commit one at a time, in the order of the feed sequence numbers
    // they take. Without it a transaction holding seq 8 could commit after one holding seq 9, and a
    // reader that had seen 9 would never read 8. SQLite's write lock already does this.
    // It waits for the turn at most lockWait() (then storage-busy, lockMissed()), unless set to
    // queue for it as long as it takes: what the delivery store's connection does, which has
    // nothing else to do meanwhile.
    bool takeWriteTurn(Problem *error = nullptr);
    void setQueuesForWriteTurn(bool queues) { m_queuesForWriteTurn = queues; }
    // The advisory lock takeWriteTurn() takes: "OpsDeck" in ASCII.
    static constexpr qint64 WriteTurnLock = 22360163531187051LL;

    // Runs inside the next transaction this connection commits, just before its COMMIT (both
    // commit() and a COMMIT statement through WriteTransaction), once: what must be committed
    // with whatever that transaction writes. A failing hook fails the commit. Cleared by
    // setBeforeCommit({}) and once it has run.
    void setBeforeCommit(std::function<bool(Problem *)> hook) { m_beforeCommit = std::move(hook); }
    bool runBeforeCommit(Problem *error);

    // Never NULL: a null QString binds as SQL NULL, which NOT NULL text columns refuse.
    static QString text(const QString &value) { return value.isNull() ? QString(QLatin1String("")) : value; }

    // A 500 "internal" problem naming the failed statement, for the log and the client; a 503
    // "storage-conflict" one (ConflictCode) when PostgreSQL gave up the transaction to a deadlock
    // or a serialization failure, which callers run again from the start a bounded number of times.
    static Problem sqlProblem(const QSqlQuery &query);
    static constexpr const char *ConflictCode = "storage-conflict";
    // A 503 "storage-busy" one (BusyCode): the write lock (or turn) was held elsewhere for all of
    // the wait, and nothing was written.
    static Problem busyProblem(const QString &detail);
    static constexpr const char *BusyCode = "storage-busy";
    static bool isConflict(const QSqlError &error);
    static bool isConflict(const Problem &problem);
    // SQLite could not get its lock within the busy timeout: sqlProblem() answers 503 storage-busy.
    static bool isBusy(const QSqlError &error);
    // A UNIQUE or PRIMARY KEY constraint refused the row (PostgreSQL 23505, SQLite's constraint code).
    static bool isUniqueViolation(const QSqlError &error);

    // How long a SQLite statement waits for another connection's write lock before it fails
    // with "database is locked" (storage-busy).
    static constexpr int SqliteBusyTimeoutMs = 5000;

private:
    sqlite3 *sqliteHandle() const;
    // sqlite3_busy_handler(): waits 50 µs, then twice as long each try up to 800 µs, for
    // SqliteBusyTimeoutMs in all.
    static int waitForLock(void *database, int tries);

    QString m_url;
    QString m_connectionName;
    Backend m_backend = Backend::Sqlite;
    QHash<QString, std::shared_ptr<QSqlQuery>> m_queries;
    QHash<QString, sqlite3_stmt *> m_statements;
    std::function<bool(Problem *)> m_beforeCommit;
    qint64 m_busySinceNs = 0; // when the current wait for the SQLite write lock began (steady clock)
    qint64 m_lockWaitMs = SqliteBusyTimeoutMs;
    bool m_lockMissed = false;
    bool m_queuesForWriteTurn = false;
};

// Sets a connection's lock wait (Database::setLockWait()) for a scope, and puts the one before
// back at its end.
class ScopedLockWait final
{
public:
    ScopedLockWait(Database &db, std::chrono::milliseconds wait)
        : m_db(db)
        , m_before(db.lockWait())
    {
        db.setLockWait(wait);
    }
    ~ScopedLockWait() { m_db.setLockWait(m_before); }
    ScopedLockWait(const ScopedLockWait &) = delete;
    ScopedLockWait &operator=(const ScopedLockWait &) = delete;

private:
    Database &m_db;
    std::chrono::milliseconds m_before;
};

} // namespace OpsDeck
