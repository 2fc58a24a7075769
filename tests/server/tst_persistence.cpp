// Restart persistence: opsdeck-server as a child process, killed with SIGKILL and restarted, and
// a database another program holds locked.
#include "serverprocess.h"
#include "testdatabase.h"
#include "testserver.h"

#include <QtTest>

#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Persistence : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void survivesKillAndRestart();
    void cleanShutdownOnSigterm();
    void busyDatabaseAnswersRetryLater();

private:
    // An operator's token made with the CLI on the database, empty if that failed.
    static QString operatorToken(const TestDatabase &db);
};

QString tst_Persistence::operatorToken(const TestDatabase &db)
{
    const CommandResult token = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                    db.url(), QStringLiteral("--role"), QStringLiteral("operator")});
    return token.exitCode == 0 ? QString::fromUtf8(token.out.trimmed()) : QString();
}

void tst_Persistence::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(ServerProcess::binary()), qPrintable(ServerProcess::binary()));
}

void tst_Persistence::survivesKillAndRestart()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const QString bearer = operatorToken(db);
    QVERIFY(!bearer.isEmpty());

    ServerProcess server;
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));
    // The feed so far (the token's creation).
    const qint64 before = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=0"), {}, bearer)
                              .json().value(QStringLiteral("last_seq")).toInteger();
    const Reply created = TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                           R"({"name": "Durable", "reason": "persistence test"})", bearer);
    QCOMPARE(created.status, 201);
    const qint64 id = created.json().value(QStringLiteral("id")).toInteger();
    QCOMPARE(TestServer::send(server.baseUrl(), "DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), {}, bearer).status, 200);
    const Reply feed = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=0"), {}, bearer);
    const qint64 lastSeq = feed.json().value(QStringLiteral("last_seq")).toInteger();
    QCOMPARE(lastSeq, before + 2);

    server.kill();
    QVERIFY(!server.isRunning());
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));

    const Reply got = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/organizations/%1").arg(id), {}, bearer);
    QCOMPARE(got.status, 200);
    QCOMPARE(got.json().value(QStringLiteral("status")).toString(), QStringLiteral("DELETED"));
    QCOMPARE(got.json().value(QStringLiteral("version")).toInteger(), 2);
    // The feed resumes where it was; the next change continues the sequence.
    const Reply resumed = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=%1").arg(before + 1), {}, bearer);
    QCOMPARE(resumed.status, 200);
    QCOMPARE(resumed.json().value(QStringLiteral("events")).toArray().size(), 1);
    QCOMPARE(TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations/%1/restore").arg(id), {}, bearer).status, 200);
    const Reply next = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=%1").arg(lastSeq), {}, bearer);
    QCOMPARE(next.json().value(QStringLiteral("events")).toArray().first().toObject().value(QStringLiteral("seq")).toInteger(), lastSeq + 1);
    const Reply audit = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/audit?kind=organization"), {}, bearer);
    QCOMPARE(audit.json().value(QStringLiteral("items")).toArray().size(), 3);
    QCOMPARE(server.terminate(), 0);
}

void tst_Persistence::cleanShutdownOnSigterm()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    ServerProcess server;
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));
    QCOMPARE(TestServer::send(server.baseUrl(), "GET", QStringLiteral("/healthz")).status, 200);
    QCOMPARE(server.terminate(), 0);
    QCOMPARE(TestServer::send(server.baseUrl(), "GET", QStringLiteral("/healthz")).status, 0);
}

void tst_Persistence::busyDatabaseAnswersRetryLater()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    if (db.isPostgres())
        QSKIP("SQLite's write lock; PostgreSQL's rows are locked one by one");
    const QString bearer = operatorToken(db);
    QVERIFY(!bearer.isEmpty());
    ServerProcess server;
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));

    // Another program holds the database's write lock past the server's busy timeout.
    const QString connection = QStringLiteral("tst_persistence_lock");
    {
        QSqlDatabase lock = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
        lock.setDatabaseName(QUrl(db.url()).path());
        QVERIFY(lock.open());
        QSqlQuery begin(lock);
        QVERIFY2(begin.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(begin.lastError().text()));

        const Reply busy = TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                            R"({"name": "Waits", "reason": "busy test"})", bearer);
        QCOMPARE(busy.status, 503);
        QCOMPARE(busy.code(), QStringLiteral("storage-busy"));
        QCOMPARE(busy.header("Retry-After"), QByteArray("1"));
        // With an Idempotency-Key (the console sends one with every change), recording the key is
        // the first write: it says the same, not that some earlier request holds the key.
        const Reply keyed = TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                             R"({"name": "Waits", "reason": "busy test"})", bearer,
                                             {{QByteArrayLiteral("Idempotency-Key"), QByteArrayLiteral("busy-1")}});
        QCOMPARE(keyed.status, 503);
        QCOMPARE(keyed.code(), QStringLiteral("storage-busy"));
        QCOMPARE(keyed.header("Retry-After"), QByteArray("1"));
        // Readers are not held up, and nothing was written.
        const Reply list = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/organizations"), {}, bearer);
        QCOMPARE(list.status, 200);
        QCOMPARE(list.items().size(), 0);
        QVERIFY(begin.exec(QStringLiteral("ROLLBACK")));
    }
    QSqlDatabase::removeDatabase(connection);

    // The same request, tried again as told, goes through, and its key was never taken.
    const Reply created = TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                           R"({"name": "Waits", "reason": "busy test"})", bearer,
                                           {{QByteArrayLiteral("Idempotency-Key"), QByteArrayLiteral("busy-1")}});
    QCOMPARE(created.status, 201);
    QVERIFY(created.header("Idempotency-Replayed").isEmpty());
    QCOMPARE(server.terminate(), 0);
}

QTEST_GUILESS_MAIN(tst_Persistence)
#include "tst_persistence.moc"
