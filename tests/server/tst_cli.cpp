// The opsdeck-server command line: migrate, token create/list/revoke, seed, usage and failure exits.
#include "serverprocess.h"
#include "testserver.h"

#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QRegularExpression>
#include <QSqlQuery>
#include <QTcpSocket>
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
    void serveWithDeliveryFlags();
    void badConfigValues_data();
    void badConfigValues();
    void configMustBeAnObject_data();
    void configMustBeAnObject();
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

    // Both are in the audit trail and on the feed, as through the API, by "command line".
    const CommandResult admin = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                    db.url(), QStringLiteral("--role"), QStringLiteral("operator")});
    QVERIFY2(admin.exitCode == 0, admin.err.constData());
    const QString op = QString::fromUtf8(admin.out.trimmed());
    const QJsonArray audit =
        TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/audit?kind=token&object_id=1"), {}, op).items();
    QStringList actions;
    for (const QJsonValue &e : audit) {
        actions << e.toObject().value(QStringLiteral("action")).toString();
        QCOMPARE(e.toObject().value(QStringLiteral("actor")).toObject().value(QStringLiteral("subject")).toString(),
                 QStringLiteral("command line"));
    }
    QCOMPARE(actions, (QStringList{QStringLiteral("create"), QStringLiteral("revoke")}));
    const QJsonArray events = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=0"), {}, op)
                                  .json().value(QStringLiteral("events")).toArray();
    QStringList tokenOps;
    for (const QJsonValue &e : events) {
        if (e.toObject().value(QStringLiteral("kind")) == QStringLiteral("token") && e.toObject().value(QStringLiteral("id")).toInteger() == 1)
            tokenOps << e.toObject().value(QStringLiteral("op")).toString();
    }
    QCOMPARE(tokenOps, (QStringList{QStringLiteral("created"), QStringLiteral("updated")}));
    // A provider token needs a provider that exists.
    const CommandResult nobody = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                     db.url(), QStringLiteral("--role"), QStringLiteral("provider"),
                                                     QStringLiteral("--subject"), QStringLiteral("999")});
    QVERIFY(nobody.exitCode != 0);
    QVERIFY2(nobody.err.contains("no provider with this id"), nobody.err.constData());
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
    // Every instance that left PENDING was registered: it has a callback, a secret and its
    // provider's endpoint, so starting a seeded STOPPED instance tells its provider.
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*) FROM instances i WHERE (i.status = 'PENDING') <> (i.callback_url IS NULL"
                                  " AND i.secret IS NULL) OR (i.callback_url IS NOT NULL AND NOT EXISTS (SELECT 1 FROM"
                                  " endpoints e WHERE e.provider_id = i.provider_id AND e.url = i.callback_url))")));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toInt(), 0);
    // Every STOPPED instance is still within its retention: none awaits a destruction at start.
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*) FROM instances WHERE status = 'STOPPED' AND destroy_after <= '%1'")
                       .arg(timestamp(QDateTime::currentDateTimeUtc()))));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toInt(), 0);
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(DISTINCT secret), COUNT(*) FROM instances WHERE secret IS NOT NULL")));
    QVERIFY(q.next());
    QVERIFY(q.value(1).toInt() > 0);
    QCOMPARE(q.value(0).toInt(), q.value(1).toInt());

    // A second run adds nothing beside the first: demo data goes into an empty database only.
    const CommandResult again = ServerProcess::run({QStringLiteral("seed"), QStringLiteral("--database"), db.url(), QStringLiteral("--demo")});
    QCOMPARE(again.exitCode, 1);
    QVERIFY2(again.err.contains("empty database"), again.err.constData());
    QVERIFY(q.exec(QStringLiteral("SELECT COUNT(*) FROM instances")));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toInt(), 1500);
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
                                           {QStringLiteral("feed_retention"), 3},
                                           {QStringLiteral("idle_timeout"), QStringLiteral("1s")}})
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
    // So does its idle timeout (of 1 s, where the default is 75 s): a silent connection is closed.
    QTcpSocket idle;
    idle.connectToHost(server.baseUrl().host(), quint16(server.baseUrl().port()));
    QVERIFY(idle.waitForConnected(10000));
    QTRY_COMPARE_WITH_TIMEOUT(idle.state(), QAbstractSocket::UnconnectedState, 30000);
    QCOMPARE(server.terminate(), 0);
}

void tst_Cli::serveWithDeliveryFlags()
{
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    const CommandResult token = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                    db.url(), QStringLiteral("--role"), QStringLiteral("operator")});
    QCOMPARE(token.exitCode, 0);
    const QString bearer = QString::fromUtf8(token.out.trimmed());
    ServerProcess server;
    QVERIFY2(server.start(db.url(), {QStringLiteral("--allow-private-callbacks"), QStringLiteral("--retry-schedule"),
                                     QStringLiteral("2s, 7s"), QStringLiteral("--delivery-timeout"), QStringLiteral("1.5"),
                                     QStringLiteral("--instance-retention"), QStringLiteral("36h"),
                                     QStringLiteral("--auto-pause-window"), QStringLiteral("90s"),
                                     QStringLiteral("--delivery-concurrency"), QStringLiteral("8"),
                                     QStringLiteral("--endpoint-concurrency"), QStringLiteral("2"),
                                     QStringLiteral("--endpoint-stall-after"), QStringLiteral("750ms"),
                                     QStringLiteral("--feed-retention"), QStringLiteral("50")}),
             qPrintable(server.error()));
    const auto post = [&](const QString &path, const QByteArray &body, const QString &as) {
        return TestServer::send(server.baseUrl(), "POST", path, body, as);
    };
    const qint64 org = post(QStringLiteral("/api/v1/organizations"), R"({"name": "Acme"})", bearer).json().value(QStringLiteral("id")).toInteger();
    QVERIFY(org > 0);
    const qint64 provider = post(QStringLiteral("/api/v1/providers"),
                                 QStringLiteral(R"({"name": "crm", "organization_id": %1, "applications": ["crm"]})").arg(org).toUtf8(), bearer)
                                .json()
                                .value(QStringLiteral("id"))
                                .toInteger();
    QVERIFY(provider > 0);
    const qint64 instance = post(QStringLiteral("/api/v1/instances"),
                                 QStringLiteral(R"({"name": "i", "organization_id": %1, "provider_id": %2, "application": "crm", "owner": "alice"})")
                                     .arg(org)
                                     .arg(provider)
                                     .toUtf8(),
                                 bearer)
                                .json()
                                .value(QStringLiteral("id"))
                                .toInteger();
    QVERIFY(instance > 0);
    const CommandResult providerToken = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                            db.url(), QStringLiteral("--role"), QStringLiteral("provider"),
                                                            QStringLiteral("--subject"), QString::number(provider)});
    QCOMPARE(providerToken.exitCode, 0);
    const Reply registered = post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                  R"({"callback_url": "http://127.0.0.1:9/hook"})", QString::fromUtf8(providerToken.out.trimmed()));
    QVERIFY2(registered.status == 200, registered.body.constData());
    // As created (the feed keeps that version): the worker may have tried it meanwhile.
    const Reply feed = TestServer::send(server.baseUrl(), "GET", QStringLiteral("/api/v1/events?after=0"), {}, bearer);
    QJsonObject d;
    for (const QJsonValue &v : feed.json().value(QStringLiteral("events")).toArray())
        if (v.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("delivery")
            && v.toObject().value(QStringLiteral("op")).toString() == QLatin1String("created"))
            d = v.toObject().value(QStringLiteral("object")).toObject();
    const auto created = QDateTime::fromString(d.value(QStringLiteral("created_at")).toString(), Qt::ISODateWithMs);
    const auto giveUp = QDateTime::fromString(d.value(QStringLiteral("give_up_at")).toString(), Qt::ISODateWithMs);
    QVERIFY2(created.isValid() && giveUp.isValid(), feed.body.constData());
    // The flag's schedule, not the default: (2 s + 7 s) at their 10% jitter maximum.
    QCOMPARE(created.msecsTo(giveUp), qint64(9900));
    QCOMPARE(server.terminate(), 0);
}

void tst_Cli::badConfigValues_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<QJsonValue>("value");
    QTest::newRow("retry schedule") << QStringLiteral("retry_schedule") << QJsonValue(QStringLiteral("5s,,whenever"));
    QTest::newRow("delivery timeout") << QStringLiteral("delivery_timeout") << QJsonValue(-3);
    QTest::newRow("instance retention") << QStringLiteral("instance_retention") << QJsonValue(QStringLiteral("a week"));
    QTest::newRow("auto-pause window") << QStringLiteral("auto_pause_window") << QJsonValue(true);
    QTest::newRow("delivery concurrency") << QStringLiteral("delivery_concurrency") << QJsonValue(2.5);
    QTest::newRow("endpoint concurrency") << QStringLiteral("endpoint_concurrency") << QJsonValue(0);
    QTest::newRow("endpoint stall") << QStringLiteral("endpoint_stall_after") << QJsonValue(QStringLiteral("soon"));
    QTest::newRow("feed retention") << QStringLiteral("feed_retention") << QJsonValue(QStringLiteral("all"));
    QTest::newRow("idle timeout") << QStringLiteral("idle_timeout") << QJsonValue(QStringLiteral("500ms"));
    // The keys outside the table: a wrong type or an unusable value is refused the same way.
    QTest::newRow("retention in seconds, negative") << QStringLiteral("instance_retention_seconds") << QJsonValue(-100);
    QTest::newRow("retention in seconds, zero") << QStringLiteral("instance_retention_seconds") << QJsonValue(0);
    QTest::newRow("retention in seconds, text") << QStringLiteral("instance_retention_seconds") << QJsonValue(QStringLiteral("abc"));
    QTest::newRow("retention in seconds, null") << QStringLiteral("instance_retention_seconds") << QJsonValue(QJsonValue::Null);
    QTest::newRow("database not a string") << QStringLiteral("database") << QJsonValue(5);
    QTest::newRow("private callbacks not a boolean") << QStringLiteral("allow_private_callbacks") << QJsonValue(QStringLiteral("yes"));
    QTest::newRow("tls key empty") << QStringLiteral("tls_key") << QJsonValue(QString());
    // A misspelt key would leave its option at the default unseen.
    QTest::newRow("unknown key") << QStringLiteral("retry_shedule") << QJsonValue(QStringLiteral("5s"));
}

void tst_Cli::badConfigValues()
{
    QFETCH(QString, key);
    QFETCH(QJsonValue, value);
    TestDatabase db;
    QVERIFY2(db.isValid(), qPrintable(db.error()));
    QFile config(db.dir() + QStringLiteral("/bad.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    QJsonObject options{{QStringLiteral("listen"), QStringLiteral("127.0.0.1:0")}, {QStringLiteral("database"), db.url()}};
    options.insert(key, value);
    config.write(QJsonDocument(options).toJson());
    config.close();
    // Refused before it listens: a bad value never becomes a silent default.
    const CommandResult r = ServerProcess::run({QStringLiteral("serve"), QStringLiteral("--config"), config.fileName()}, 20000);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.startsWith("opsdeck-server: ") && r.err.contains(key.toUtf8()), r.err.constData());
    QVERIFY(!r.out.contains("listening on"));
}

void tst_Cli::configMustBeAnObject_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::newRow("an array") << QByteArray("[1]");
    QTest::newRow("a number") << QByteArray("7");
    QTest::newRow("not JSON") << QByteArray("{listen: 8080}");
}

void tst_Cli::configMustBeAnObject()
{
    // Anything but an object of options would start the server on every default.
    QFETCH(QByteArray, text);
    QTemporaryDir dir;
    QFile config(dir.filePath(QStringLiteral("opsdeck.json")));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(text);
    config.close();
    const CommandResult r = ServerProcess::run({QStringLiteral("serve"), QStringLiteral("--config"), config.fileName()}, 20000);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.startsWith("opsdeck-server: ") && r.err.contains("opsdeck.json"), r.err.constData());
    QVERIFY(!r.out.contains("listening on"));
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
    QTest::newRow("token name with a line break") << QStringList{QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--role"),
                                                                 QStringLiteral("operator"), QStringLiteral("--name"), QStringLiteral("ops\nroot")};
    QTest::newRow("token name blank") << QStringList{QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--role"),
                                                     QStringLiteral("operator"), QStringLiteral("--name"), QStringLiteral("  ")};
    QTest::newRow("revoke without id") << QStringList{QStringLiteral("token"), QStringLiteral("revoke")};
    QTest::newRow("seed without demo") << QStringList{QStringLiteral("seed")};
    QTest::newRow("migrate without database") << QStringList{QStringLiteral("migrate")};
    const auto serve = [](const char *flag, const char *value) {
        return QStringList{QStringLiteral("serve"), QString::fromLatin1(flag), QString::fromLatin1(value)};
    };
    QTest::newRow("retry schedule not delays") << serve("--retry-schedule", "5s,soon");
    QTest::newRow("retry schedule empty") << serve("--retry-schedule", "");
    QTest::newRow("retry schedule over a week") << serve("--retry-schedule", "5s,8d");
    QTest::newRow("delivery timeout zero") << serve("--delivery-timeout", "0");
    QTest::newRow("delivery timeout text") << serve("--delivery-timeout", "fast");
    QTest::newRow("instance retention no number") << serve("--instance-retention", "forever");
    QTest::newRow("instance retention under a second") << serve("--instance-retention", "10ms");
    QTest::newRow("auto-pause window negative") << serve("--auto-pause-window", "-5m");
    QTest::newRow("auto-pause window bad unit") << serve("--auto-pause-window", "5y");
    QTest::newRow("delivery concurrency zero") << serve("--delivery-concurrency", "0");
    QTest::newRow("endpoint concurrency text") << serve("--endpoint-concurrency", "many");
    QTest::newRow("endpoint stall zero") << serve("--endpoint-stall-after", "0s");
    QTest::newRow("endpoint stall under the floor") << serve("--endpoint-stall-after", "100ms");
    QTest::newRow("feed retention negative") << serve("--feed-retention", "-1");
    QTest::newRow("idle timeout under a second") << serve("--idle-timeout", "200ms");
    QTest::newRow("idle timeout over a day") << serve("--idle-timeout", "30d");
}

void tst_Cli::usageErrors()
{
    QFETCH(QStringList, args);
    const CommandResult r = ServerProcess::run(args);
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.startsWith("opsdeck-server: "), r.err.constData());
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
