// Restart persistence: opsdeck-server as a child process, killed with SIGKILL and restarted.
#include "serverprocess.h"
#include "testserver.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Persistence : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void survivesKillAndRestart();
    void cleanShutdownOnSigterm();

private:
    QString m_token;
};

void tst_Persistence::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(ServerProcess::binary()), qPrintable(ServerProcess::binary()));
}

void tst_Persistence::survivesKillAndRestart()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const CommandResult token = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                    db.url(), QStringLiteral("--role"), QStringLiteral("operator")});
    QCOMPARE(token.exitCode, 0);
    const QString bearer = QString::fromUtf8(token.out.trimmed());

    ServerProcess server;
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));
    const Reply created = TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                           R"({"name": "Durable", "reason": "persistence test"})", bearer);
    QCOMPARE(created.status, 201);
    const qint64 id = created.json().value(QStringLiteral("id")).toInteger();
    QCOMPARE(TestServer::send(server.baseUrl(), "DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), {}, bearer).status, 200);
    const Reply feed = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=0"), {}, bearer);
    const qint64 lastSeq = feed.json().value(QStringLiteral("last_seq")).toInteger();
    QCOMPARE(lastSeq, 2);

    server.kill();
    QVERIFY(!server.isRunning());
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));

    const Reply got = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/organizations/%1").arg(id), {}, bearer);
    QCOMPARE(got.status, 200);
    QCOMPARE(got.json().value(QStringLiteral("status")).toString(), QStringLiteral("DELETED"));
    QCOMPARE(got.json().value(QStringLiteral("version")).toInteger(), 2);
    // The feed resumes where it was; the next change continues the sequence.
    const Reply resumed = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=1"), {}, bearer);
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

QTEST_GUILESS_MAIN(tst_Persistence)
#include "tst_persistence.moc"
