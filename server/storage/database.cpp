// The control plane's storage connection: SQLite or PostgreSQL behind one API, with migrations.
#include "database.h"

#include "migrations.h"

#include <QDir>
#include <QFileInfo>
#include <QScopeGuard>
#include <QSqlDriver>
#include <QSqlError>
#include <QStandardPaths>
#include <QUrl>
#include <QUuid>

#include <sqlite3.h>

#include <chrono>
#include <thread>
#include <utility>

namespace OpsDeck {

namespace {

Problem storageProblem(const QString &detail)
{
    return Problem::make(500, QStringLiteral("storage-unavailable"), QStringLiteral("Storage unavailable"), detail);
}

} // namespace

Database::Database(QString url)
    : m_url(std::move(url))
    , m_connectionName(QStringLiteral("opsdeck-") + QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    if (m_url.isEmpty())
        m_url = defaultUrl();
}

Database::~Database()
{
    close();
}

QString Database::defaultUrl()
{
    const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    return QStringLiteral("sqlite://") + QDir(dir).absoluteFilePath(QStringLiteral("opsdeck-server.db"));
}

bool Database::open(Problem *error)
{
    const QUrl url(m_url);
    QSqlDatabase db;
    if (url.scheme() == QLatin1String("sqlite")) {
        m_backend = Backend::Sqlite;
        const QString path = url.path();
        if (path.isEmpty() || !QDir::isAbsolutePath(path) || !url.host().isEmpty()) {
            if (error)
                *error = storageProblem(QStringLiteral("expected sqlite:///absolute/path.db, got %1").arg(m_url));
            return false;
        }
        QDir().mkpath(QFileInfo(path).absolutePath());
        db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(SqliteBusyTimeoutMs));
    } else if (url.scheme() == QLatin1String("postgresql") || url.scheme() == QLatin1String("postgres")) {
        m_backend = Backend::Postgres;
        const QString name = url.path().mid(1);
        if (url.host().isEmpty() || name.isEmpty()) {
            if (error)
                *error = storageProblem(QStringLiteral("expected postgresql://user[:pass]@host[:port]/db, got %1")
                                            .arg(url.toString(QUrl::RemovePassword)));
            return false;
        }
        db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_connectionName);
        db.setHostName(url.host());
        db.setPort(url.port(5432));
        db.setDatabaseName(name);
        db.setUserName(url.userName());
        db.setPassword(url.password());
        db.setConnectOptions(QStringLiteral("connect_timeout=10"));
    } else {
        if (error)
            *error = storageProblem(QStringLiteral("unsupported database URL scheme in %1 (sqlite or postgresql)")
                                        .arg(url.toString(QUrl::RemovePassword)));
        return false;
    }
    if (!db.open()) {
        if (error)
            *error = storageProblem(QStringLiteral("cannot open %1: %2")
                                        .arg(url.toString(QUrl::RemovePassword), db.lastError().text()));
        db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connectionName);
        return false;
    }
    if (m_backend == Backend::Sqlite) {
        for (const char *pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
            if (!exec(QString::fromLatin1(pragma), error))
                return false;
        }
        // SQLite's own busy timeout sleeps 1, 2, 5, 10, ... ms between tries: a request whose
        // transaction meets the delivery store's commit (a few ms, many times a second) slept
        // past several of them while the single HTTP thread answered nobody. This handler tries
        // again after 50 µs, doubling to 800 µs, for the same 5 s in all (or setLockWait()'s).
        sqlite3 *handle = sqliteHandle();
        if (!handle || sqlite3_busy_handler(handle, &Database::waitForLock, this) != SQLITE_OK) {
            if (error)
                *error = storageProblem(QStringLiteral("cannot set the busy handler of %1").arg(url.toString(QUrl::RemovePassword)));
            return false;
        }
        if (!exec(QStringLiteral("PRAGMA journal_size_limit=%1").arg(SqliteLogSizeLimit), error))
            return false;
    } else {
        if (!exec(QStringLiteral("SET client_min_messages TO WARNING"), error))
            return false;
    }
    return true;
}

void Database::close()
{
    m_queries.clear();
    // Before the connection closes: SQLite refuses to close one with statements still prepared.
    for (sqlite3_stmt *statement : std::as_const(m_statements))
        sqlite3_finalize(statement);
    m_statements.clear();
    if (QSqlDatabase::contains(m_connectionName)) {
        {
            QSqlDatabase db = QSqlDatabase::database(m_connectionName, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(m_connectionName);
    }
}

bool Database::isOpen() const
{
    return QSqlDatabase::contains(m_connectionName) && connection().isOpen();
}

QString Database::backendName() const
{
    return m_backend == Backend::Sqlite ? QStringLiteral("sqlite") : QStringLiteral("postgresql");
}

QSqlDatabase Database::connection() const
{
    return QSqlDatabase::database(m_connectionName, false);
}

bool Database::exec(const QString &sql, Problem *error)
{
    QSqlQuery q(connection());
    if (!q.exec(sql)) {
        if (error)
            *error = sqlProblem(q);
        return false;
    }
    return true;
}

int Database::schemaVersion()
{
    QSqlQuery q(connection());
    if (!q.exec(QStringLiteral("SELECT MAX(version) FROM schema_migrations")) || !q.next())
        return 0;
    return q.value(0).toInt();
}

bool Database::migrate(Problem *error)
{
    if (!exec(QStringLiteral("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                             " applied_at TEXT NOT NULL)"),
              error))
        return false;
    const QString idType = m_backend == Backend::Sqlite ? QStringLiteral("INTEGER PRIMARY KEY AUTOINCREMENT")
                                                        : QStringLiteral("BIGSERIAL PRIMARY KEY");
    // Another replica starting together may hold the turn for as long as its migration takes
    // (an index built on a large table): waited for, not given up after the usual wait.
    const bool queued = std::exchange(m_queuesForWriteTurn, true);
    const auto restore = qScopeGuard([this, queued] { m_queuesForWriteTurn = queued; });
    for (const Migration &m : migrations()) {
        if (!begin()) {
            if (error)
                *error = storageProblem(connection().lastError().text());
            return false;
        }
        // Inside the transaction, so two replicas starting together apply each version once.
        const int current = schemaVersion();
        if (m.version <= current) {
            rollback();
            continue;
        }
        for (QString sql : m.statements) {
            sql.replace(QLatin1String("{{id}}"), idType);
            if (!exec(sql, error)) {
                rollback();
                return false;
            }
        }
        QSqlQuery q(connection());
        q.prepare(QStringLiteral("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"));
        q.addBindValue(m.version);
        q.addBindValue(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
        if (!q.exec() || !commit()) {
            if (error)
                *error = sqlProblem(q);
            rollback();
            return false;
        }
    }
    return true;
}

QSqlQuery &Database::query(const QString &sql)
{
    auto it = m_queries.find(sql);
    if (it != m_queries.end() && (*it)->lastError().isValid()) {
        // QPSQL leaves a statement whose preparation or last run failed (its table was gone, the
        // connection dropped) without a server-side name, so every later run fails with a syntax
        // error: prepare it afresh instead. Callers never hold two uses of one text, so no
        // reference to the dropped statement is still in use.
        m_queries.erase(it);
        it = m_queries.end();
    }
    if (it == m_queries.end()) {
        auto q = std::make_shared<QSqlQuery>(connection());
        q->setForwardOnly(true);
        q->prepare(sql);
        it = m_queries.insert(sql, q);
    }
    return **it;
}

sqlite3 *Database::sqliteHandle() const
{
    const QVariant handle = connection().driver()->handle();
    return m_backend == Backend::Sqlite && handle.isValid() && qstrcmp(handle.typeName(), "sqlite3*") == 0
               ? *static_cast<sqlite3 *const *>(handle.constData())
               : nullptr;
}

int Database::waitForLock(void *database, int tries)
{
    const qint64 now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    Database &db = *static_cast<Database *>(database);
    qint64 &since = db.m_busySinceNs;
    if (tries == 0)
        since = now;
    if (now - since >= db.m_lockWaitMs * 1000000) {
        db.m_lockMissed = true;
        return 0; // SQLITE_BUSY: "database is locked"
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50 << std::min(tries, 4)));
    return 1;
}

sqlite3_stmt *Database::sqliteStatement(const QString &sql, QString *error)
{
    if (sqlite3_stmt *cached = m_statements.value(sql))
        return cached;
    sqlite3 *connection = sqliteHandle();
    if (!connection) {
        *error = QStringLiteral("not an open SQLite connection");
        return nullptr;
    }
    const QByteArray text = sql.toUtf8();
    sqlite3_stmt *statement = nullptr;
    if (sqlite3_prepare_v3(connection, text.constData(), int(text.size()), SQLITE_PREPARE_PERSISTENT, &statement, nullptr)
        != SQLITE_OK) {
        *error = QString::fromUtf8(sqlite3_errmsg(connection));
        sqlite3_finalize(statement);
        return nullptr;
    }
    m_statements.insert(sql, statement);
    return statement;
}

bool Database::recover()
{
    {
        QSqlQuery probe(connection());
        if (probe.exec(QStringLiteral("SELECT 1")))
            return true;
    }
    close();
    return open();
}

bool Database::begin()
{
    // IMMEDIATE takes the write lock up front (waiting up to the busy timeout): a deferred
    // transaction that reads first and writes later fails at once with "database is locked"
    // when another connection (the delivery worker, another process) wrote meanwhile.
    const auto attempt = [this] {
        if (m_backend == Backend::Sqlite)
            return exec(QStringLiteral("BEGIN IMMEDIATE"));
        if (!connection().transaction())
            return false;
        if (takeWriteTurn())
            return true;
        connection().rollback();
        return false;
    };
    // A lock another connection held past the wait is not a lost connection: trying again would
    // only wait as long once more.
    const bool missedBefore = std::exchange(m_lockMissed, false);
    const bool begun = attempt() || (!m_lockMissed && recover() && attempt());
    m_lockMissed = m_lockMissed || missedBefore;
    return begun;
}

bool Database::commit()
{
    Problem ignored;
    return runBeforeCommit(&ignored) && connection().commit();
}

bool Database::takeWriteTurn(Problem *error)
{
    if (m_backend != Backend::Postgres)
        return true;
    const QString lock = QString::number(WriteTurnLock);
    // The delivery store's connection queues for the turn in PostgreSQL, which wakes it the
    // moment the turn is free, however long another replica keeps it.
    if (m_queuesForWriteTurn)
        return exec(QStringLiteral("SELECT pg_advisory_xact_lock(%1)").arg(lock), error);
    // Every other one waits at most its lock wait, as its statements wait for SQLite's lock: the
    // HTTP thread's request is then set aside while the thread answers others, where an unbounded
    // wait would hold up every request, reads and /healthz too, for as long as another replica
    // kept the turn. The turn is usually free: one try then, and only a miss queues (fairly,
    // behind the other waiters) under a lock_timeout, in the transaction alone.
    QSqlQuery &tryLock = query(QStringLiteral("SELECT pg_try_advisory_xact_lock(%1)").arg(lock));
    if (!tryLock.exec()) {
        if (error)
            *error = sqlProblem(tryLock);
        tryLock.finish();
        return false;
    }
    const bool taken = tryLock.next() && tryLock.value(0).toBool();
    tryLock.finish();
    if (taken)
        return true;
    if (m_lockWaitMs > 0) {
        if (!exec(QStringLiteral("SET LOCAL lock_timeout = %1").arg(m_lockWaitMs), error))
            return false;
        QSqlQuery q(connection());
        if (q.exec(QStringLiteral("SELECT pg_advisory_xact_lock(%1)").arg(lock)))
            return exec(QStringLiteral("SET LOCAL lock_timeout TO DEFAULT"), error);
        // lock_not_available: the wait ran out (the transaction is aborted; the caller rolls back).
        if (q.lastError().nativeErrorCode() != QLatin1String("55P03")) {
            if (error)
                *error = sqlProblem(q);
            return false;
        }
    }
    m_lockMissed = true;
    if (error)
        *error = busyProblem(QStringLiteral("storage: another writer held the write turn; nothing was written, retry later"));
    return false;
}

bool Database::runBeforeCommit(Problem *error)
{
    if (!m_beforeCommit)
        return true;
    const std::function<bool(Problem *)> hook = std::move(m_beforeCommit);
    m_beforeCommit = {};
    return hook(error);
}

void Database::rollback()
{
    connection().rollback();
}

Problem Database::sqlProblem(const QSqlQuery &query)
{
    const QSqlError error = query.lastError();
    if (isConflict(error))
        return Problem::make(503, QString(ConflictCode), QStringLiteral("Storage conflict"),
                             QStringLiteral("storage: %1; the transaction was rolled back, retry it").arg(error.text()))
            .with(QStringLiteral("sqlstate"), error.nativeErrorCode());
    // The lock was not had within the busy timeout: nothing was written (or the transaction's
    // owner rolls it back), and a later try may well get it. Not run again here: it has waited
    // the whole timeout already.
    if (isBusy(error))
        return busyProblem(QStringLiteral("storage: %1; nothing was written, retry later").arg(error.text()));
    return Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
                         QStringLiteral("storage: %1").arg(error.text()));
}

Problem Database::busyProblem(const QString &detail)
{
    return Problem::make(503, QString::fromLatin1(BusyCode), QStringLiteral("Storage busy"), detail);
}

bool Database::isConflict(const QSqlError &error)
{
    // PostgreSQL's deadlock_detected and serialization_failure: the server rolled the whole
    // transaction back, so running it again from the start is safe.
    const QString state = error.nativeErrorCode();
    return state == QLatin1String("40P01") || state == QLatin1String("40001");
}

bool Database::isBusy(const QSqlError &error)
{
    // SQLite's SQLITE_BUSY and SQLITE_LOCKED (and their extended codes). SQLSTATEs are five
    // characters; SQLite's codes are numbers.
    const QString state = error.nativeErrorCode();
    bool number = false;
    const int code = state.size() < 5 ? state.toInt(&number) : 0;
    return number && ((code & 0xff) == 5 || (code & 0xff) == 6);
}

bool Database::isUniqueViolation(const QSqlError &error)
{
    // QSQLITE reports SQLite's primary code, SQLITE_CONSTRAINT (19); an extended one keeps it in
    // its low byte.
    const QString state = error.nativeErrorCode();
    if (state == QLatin1String("23505"))
        return true;
    bool number = false;
    const int code = state.size() < 5 ? state.toInt(&number) : 0;
    return number && (code & 0xff) == 19;
}

bool Database::isConflict(const Problem &problem)
{
    return problem.code == QLatin1String(ConflictCode);
}

} // namespace OpsDeck
