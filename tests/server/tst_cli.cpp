// The opsdeck-server command line: migrate, token create/list/revoke, seed, usage and failure exits.
#include "serverprocess.h"
#include "testserver.h"

#include "server/storage/database.h"

#include <QRegularExpression>
#include <QSqlQuery>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Cli : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void migrateIsIdempotent();
    void tokenLifecycle();
    void seedDemo();
    void serveFromConfigFile();
    void usageErrors_data();
    void usageErrors();
    void failures_data();
    void failures();
};

void tst_Cli::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(ServerProcess::binary()), qPrintable(ServerProcess::binary()));
}

void tst_Cli::migrateIsIdempotent()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    for (int i = 0; i < 2; ++i) {
        const CommandResult r = ServerProcess::run({QStringLiteral("migrate"), QStringLiteral("--database"), db.url()});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(r.out.startsWith("schema at version "));
    }
}

void tst_Cli::tokenLifecycle()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const CommandResult created = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"), db.url(),
                                                      QStringLiteral("--role"), QStringLiteral("owner"), QStringLiteral("--subject"),
                                                      QStringLiteral("alice"), QStringLiteral("--name"), QStringLiteral("alice laptop")});
    QVERIFY2(created.exitCode == 0, created.err.constData());
    // The token alone on stdout, so that scripts can capture it.
    QVERIFY2(QRegularExpression(QStringLiteral("^odk_[A-Za-z0-9_-]{40,}\\n$")).match(QString::fromUtf8(created.out)).hasMatch(),
             created.out.constData());
    const QByteArray bearer = created.out.trimmed();

    const CommandResult listed = ServerProcess::run({QStringLiteral("token"), QStringLiteral("list"), QStringLiteral("--database"), db.url()});
    QCOMPARE(listed.exitCode, 0);
    QVERIFY(listed.out.contains("owner\talice\talice laptop"));
    QVERIFY(!listed.out.contains(bearer));

    ServerProcess server;
    QVERIFY2(server.start(db.url()), qPrintable(server.error()));
    QCOMPARE(TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/instances"), {}, QString::fromUtf8(bearer)).status, 200);

    const CommandResult revoked = ServerProcess::run({QStringLiteral("token"), QStringLiteral("revoke"), QStringLiteral("1"),
                                                      QStringLiteral("--database"), db.url()});
    QVERIFY2(revoked.exitCode == 0, revoked.err.constData());
    // Revocation by another process reaches the running server within its token cache's lifetime.
    QTRY_COMPARE_WITH_TIMEOUT(TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/instances"), {},
                                               QString::fromUtf8(bearer)).status, 401, 10000);
    const CommandResult after = ServerProcess::run({QStringLiteral("token"), QStringLiteral("list"), QStringLiteral("--database"), db.url()});
    QVERIFY(!after.out.contains("\t-\n"));
}

void tst_Cli::seedDemo()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const CommandResult r = ServerProcess::run({QStringLiteral("seed"), QStringLiteral("--database"), db.url(), QStringLiteral("--demo"),
                                                QStringLiteral("--instances"), QStringLiteral("1500")});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    Database check(db.url());
    QVERIFY(check.open());
    QSqlQuery q(check.connection());
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*), COUNT(DISTINCT status) FROM instances")));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toInt(), 1500);
    QCOMPARE(q.value(1).toInt(), 4); // every state
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*) FROM organizations")));
    QVERIFY(q.next());
    QVERIFY(q.value(0).toInt() >= 10);
}

void tst_Cli::serveFromConfigFile()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const CommandResult token = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                    db.url(), QStringLiteral("--role"), QStringLiteral("operator")});
    QCOMPARE(token.exitCode, 0);
    const QString bearer = QString::fromUtf8(token.out.trimmed());
    QFile config(db.dir() + QStringLiteral("/opsdeck.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(QJsonDocument(QJsonObject{{QStringLiteral("listen"), QStringLiteral("127.0.0.1:0")},
                                           {QStringLiteral("database"), db.url()},
                                           {QStringLiteral("feed_retention"), 3}})
                     .toJson());
    config.close();
    ServerProcess server;
    QVERIFY2(server.start(QString(), {QStringLiteral("--config"), config.fileName()}), qPrintable(server.error()));
    QCOMPARE(server.baseUrl().host(), QStringLiteral("127.0.0.1"));
    for (int i = 0; i < 8; ++i)
        QCOMPARE(TestServer::send(server.baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                  QStringLiteral(R"({"name": "O%1"})").arg(i).toUtf8(), bearer).status, 201);
    // The retention of the file applies: the oldest cursors are gone.
    QTRY_COMPARE(TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=1"), {}, bearer).status, 410);
    QCOMPARE(server.terminate(), 0);
}

void tst_Cli::usageErrors_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("no command") << QStringList();
    QTest::newRow("unknown command") << QStringList{QStringLiteral("explode")};
    QTest::newRow("unknown option") << QStringList{QStringLiteral("serve"), QStringLiteral("--colour")};
    QTest::newRow("bad listen") << QStringList{QStringLiteral("serve"), QStringLiteral("--listen"), QStringLiteral("nowhere")};
    QTest::newRow("tls cert without key") << QStringList{QStringLiteral("serve"), QStringLiteral("--tls-cert"), QStringLiteral("c.pem")};
    QTest::newRow("token without verb") << QStringList{QStringLiteral("token")};
    QTest::newRow("token bad role") << QStringList{QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--role"), QStringLiteral("admin")};
    QTest::newRow("provider token without subject") << QStringList{QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--role"), QStringLiteral("provider")};
    QTest::newRow("revoke without id") << QStringList{QStringLiteral("token"), QStringLiteral("revoke")};
    QTest::newRow("seed without demo") << QStringList{QStringLiteral("seed")};
    QTest::newRow("migrate without database") << QStringList{QStringLiteral("migrate")};
}

void tst_Cli::usageErrors()
{
    QFETCH(QStringList, args);
    const CommandResult r = ServerProcess::run(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.err.startsWith("opsdeck-server: "));
    QVERIFY(r.out.isEmpty());
}

void tst_Cli::failures_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("unsupported scheme") << QStringList{QStringLiteral("migrate"), QStringLiteral("--database"), QStringLiteral("mysql://x/y")};
    QTest::newRow("relative sqlite path") << QStringList{QStringLiteral("migrate"), QStringLiteral("--database"), QStringLiteral("sqlite://relative.db")};
    QTest::newRow("unreachable postgres") << QStringList{QStringLiteral("migrate"), QStringLiteral("--database"),
                                                         QStringLiteral("postgresql://nobody@127.0.0.1:1/none")};
    QTest::newRow("missing config") << QStringList{QStringLiteral("serve"), QStringLiteral("--config"), QStringLiteral("/nonexistent/opsdeck.json")};
}

void tst_Cli::failures()
{
    QFETCH(QStringList, args);
    const CommandResult r = ServerProcess::run(args);
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.err.startsWith("opsdeck-server: "));
}

QTEST_GUILESS_MAIN(tst_Cli)
#include "tst_cli.moc"
