// Health, metrics, routing errors and authentication of the HTTP front.
#include "testserver.h"

#include "server/storage/database.h"

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QSslSocket>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_System : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void healthz();
    void whoami_data();
    void whoami();
    void metricsCountRequests();
    void routingErrors_data();
    void routingErrors();
    void servesTls();
    void survivesLostDatabaseConnection();
    void deliveryWorkerFailureVisible();

private:
    std::unique_ptr<TestServer> m_server;
};

void tst_System::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
}

void tst_System::healthz()
{
    const Reply r = m_server->get(QStringLiteral("/healthz"), {});
    QCOMPARE(r.status, 200);
    QCOMPARE(r.json().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(r.json().value(QStringLiteral("database")).toString(),
             m_server->testDatabase().isPostgres() ? QStringLiteral("postgresql") : QStringLiteral("sqlite"));
}

void tst_System::whoami_data()
{
    QTest::addColumn<QString>("role");
    QTest::addColumn<QString>("subject");
    QTest::newRow("operator") << "operator" << "";
    QTest::newRow("provider") << "provider" << "7";
    QTest::newRow("owner") << "owner" << "alice";
}

void tst_System::whoami()
{
    QFETCH(QString, role);
    QFETCH(QString, subject);
    const Reply r = m_server->get(QStringLiteral("/api/v1/whoami"), m_server->token(role, subject));
    QCOMPARE(r.status, 200);
    QCOMPARE(r.json().value(QStringLiteral("role")).toString(), role);
    QCOMPARE(r.json().value(QStringLiteral("subject")).toString(), subject);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/whoami"), QString()).status, 401);
}

void tst_System::metricsCountRequests()
{
    m_server->get(QStringLiteral("/healthz"), {});
    const Reply r = m_server->get(QStringLiteral("/metrics"), {});
    QCOMPARE(r.status, 200);
    QVERIFY(r.header("Content-Type").startsWith("text/plain"));
    QVERIFY(r.body.contains("opsdeck_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"}"));
    QVERIFY(r.body.contains("opsdeck_http_request_duration_seconds_bucket{route=\"/healthz\""));
    QVERIFY(r.body.contains("opsdeck_feed_last_seq "));
    QVERIFY(r.body.contains("opsdeck_feed_last_event_timestamp_seconds "));
}

void tst_System::routingErrors_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("withToken");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");

    QTest::newRow("unknown route") << QByteArray("GET") << "/api/v1/nothing" << true << 404 << "not-found";
    QTest::newRow("non-numeric id") << QByteArray("GET") << "/api/v1/instances/abc" << true << 404 << "not-found";
    QTest::newRow("zero id") << QByteArray("GET") << "/api/v1/instances/0" << true << 404 << "not-found";
    QTest::newRow("wrong method") << QByteArray("PUT") << "/api/v1/organizations" << true << 405 << "method-not-allowed";
    QTest::newRow("no token") << QByteArray("GET") << "/api/v1/organizations" << false << 401 << "unauthenticated";
    QTest::newRow("plain GET on watch") << QByteArray("GET") << "/api/v1/watch" << true << 426 << "upgrade-required";
    // The watch takes its token in the handshake, from Authorization or ?access_token=: a plain
    // GET is told to upgrade whichever way it came (it was a 401 with the query's token).
    QTest::newRow("plain GET on watch, token in the query") << QByteArray("GET") << "/api/v1/watch?access_token=x" << false
                                                            << 426 << "upgrade-required";
}

void tst_System::routingErrors()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(bool, withToken);
    QFETCH(int, status);
    QFETCH(QString, code);
    const Reply r = m_server->request(method, path, QByteArray(), withToken ? m_server->operatorToken() : QString());
    QCOMPARE(r.status, status);
    QCOMPARE(r.code(), code);
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    if (status == 405)
        QVERIFY(r.header("Allow").contains("GET"));
}

void tst_System::servesTls()
{
    QTemporaryDir dir;
    QProcess openssl;
    openssl.start(QStringLiteral("openssl"), {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                                              QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-days"),
                                              QStringLiteral("1"), QStringLiteral("-subj"), QStringLiteral("/CN=127.0.0.1"),
                                              QStringLiteral("-keyout"), dir.filePath(QStringLiteral("key.pem")),
                                              QStringLiteral("-out"), dir.filePath(QStringLiteral("cert.pem"))});
    if (!openssl.waitForFinished(60000) || openssl.exitCode() != 0)
        QSKIP("openssl cannot make a test certificate here");
    ServerOptions options;
    options.tlsCert = dir.filePath(QStringLiteral("cert.pem"));
    options.tlsKey = dir.filePath(QStringLiteral("key.pem"));
    options.idleTimeout = std::chrono::seconds(1);
    TestServer tls(options);
    QVERIFY2(tls.isRunning(), qPrintable(tls.error()));
    QCOMPARE(tls.baseUrl().scheme(), QStringLiteral("https"));
    const Reply r = tls.get(QStringLiteral("/healthz"), {});
    QVERIFY2(r.status == 200, qPrintable(r.networkError));
    QCOMPARE(tls.get(QStringLiteral("/api/v1/organizations"), tls.operatorToken()).status, 200);

    // The answers the HTTP front writes itself before it ends a connection reach a TLS client
    // whole: a refused head, and the 408 of a request that never ended.
    const QList<std::pair<QByteArray, QByteArray>> refusals{{"GET /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 400"},
                                                            {"GET /healthz HTTP/1.1\r\nHost: x\r\n", "HTTP/1.1 408"}};
    for (const auto &[sent, expected] : refusals) {
        QSslSocket client;
        client.setPeerVerifyMode(QSslSocket::VerifyNone);
        QByteArray answer;
        bool closed = false;
        connect(&client, &QSslSocket::readyRead, this, [&] { answer += client.readAll(); });
        connect(&client, &QSslSocket::disconnected, this, [&] { closed = true; });
        connect(&client, &QSslSocket::errorOccurred, this, [&] { closed = true; });
        client.connectToHostEncrypted(tls.baseUrl().host(), quint16(tls.baseUrl().port()));
        // The server runs in this thread: wait on the event loop, not in waitForEncrypted().
        QTRY_VERIFY2_WITH_TIMEOUT(client.isEncrypted(), qPrintable(client.errorString()), 10000);
        client.write(sent);
        QTRY_VERIFY_WITH_TIMEOUT(closed, 20000);
        answer += client.readAll();
        QVERIFY2(answer.startsWith(expected), answer.constData());
    }

    ServerOptions broken;
    broken.tlsCert = dir.filePath(QStringLiteral("missing.pem"));
    broken.tlsKey = dir.filePath(QStringLiteral("key.pem"));
    TestServer refused(broken);
    QVERIFY(!refused.isRunning());
    QVERIFY(refused.error().contains(QLatin1String("missing.pem")));
}

void tst_System::survivesLostDatabaseConnection()
{
    if (!m_server->testDatabase().isPostgres())
        QSKIP("a PostgreSQL server can drop connections; a SQLite file cannot");
    ServerOptions options;
    options.deliveryWorker = false;
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const QString token = server.operatorToken();
    QVERIFY(server.createOrganization(QStringLiteral("Before")));

    // What a PostgreSQL restart does to the server's connection.
    const QUrl url(server.databaseUrl());
    {
        QSqlDatabase admin = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), QStringLiteral("tst-admin"));
        admin.setHostName(url.host());
        admin.setPort(url.port(5432));
        admin.setDatabaseName(url.path().mid(1));
        admin.setUserName(url.userName());
        QVERIFY(admin.open());
        QSqlQuery kill(admin);
        QVERIFY(kill.exec(QStringLiteral("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                         " WHERE datname = current_database() AND pid <> pg_backend_pid()")));
        admin.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("tst-admin"));

    QTRY_COMPARE(server.get(QStringLiteral("/api/v1/organizations"), token).status, 200);
    QCOMPARE(server.get(QStringLiteral("/api/v1/organizations"), token).items().size(), 1);
    QVERIFY(server.createOrganization(QStringLiteral("After")));
    QCOMPARE(server.get(QStringLiteral("/healthz"), {}).status, 200);
}

void tst_System::deliveryWorkerFailureVisible()
{
    ServerOptions options;
    options.outboxPollInterval = std::chrono::milliseconds(50);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const auto worker = [&server] {
        return server.get(QStringLiteral("/healthz"), {}).json().value(QStringLiteral("delivery_worker")).toObject();
    };
    QTRY_COMPARE(worker().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(worker().value(QStringLiteral("since")), QJsonValue());
    QCOMPARE(server.metric("opsdeck_delivery_worker_failing"), 0.0);

    // The worker's storage breaks under it (the HTTP side does not need that table for /healthz).
    Database admin(server.databaseUrl());
    Problem problem;
    QVERIFY2(admin.open(&problem), qPrintable(problem.detail));
    QVERIFY2(admin.exec(QStringLiteral("ALTER TABLE deliveries RENAME TO deliveries_away"), &problem), qPrintable(problem.detail));
    QTRY_COMPARE(worker().value(QStringLiteral("status")).toString(), QStringLiteral("failing"));
    const QJsonObject failing = worker();
    QVERIFY2(failing.value(QStringLiteral("last_error")).toString().startsWith(QLatin1String("storage")),
             qPrintable(failing.value(QStringLiteral("last_error")).toString()));
    QVERIFY(failing.value(QStringLiteral("since")).isString());
    QVERIFY(failing.value(QStringLiteral("failures")).toInteger() >= 1);
    QCOMPARE(server.get(QStringLiteral("/healthz"), {}).status, 200);
    QCOMPARE(server.metric("opsdeck_delivery_worker_failing"), 1.0);
    QVERIFY(server.metric("opsdeck_delivery_worker_failures_total") >= 1.0);
    QVERIFY(server.metric("opsdeck_delivery_worker_failing_since_timestamp_seconds") > 0.0);

    QVERIFY2(admin.exec(QStringLiteral("ALTER TABLE deliveries_away RENAME TO deliveries"), &problem), qPrintable(problem.detail));
    QTRY_COMPARE(worker().value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
    QCOMPARE(worker().value(QStringLiteral("since")), QJsonValue());
    QVERIFY(worker().value(QStringLiteral("last_error")).isString());
    QCOMPARE(server.metric("opsdeck_delivery_worker_failing"), 0.0);
    QCOMPARE(server.metric("opsdeck_delivery_worker_failing_since_timestamp_seconds"), 0.0);
}

QTEST_GUILESS_MAIN(tst_System)
#include "tst_system.moc"
