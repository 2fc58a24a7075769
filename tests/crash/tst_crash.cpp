// kill -9 the server while callbacks are in flight: after a restart every notification arrives, duplicates only from leases held at the kill.
#include "serverprocess.h"
#include "testdatabase.h"
#include "testserver.h"
#include "testsupport.h"

#include "core/webhooksignature.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <algorithm>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString ProviderPath = QStringLiteral(OPSDECK_BINARY_DIR "/tools/opsdeck-demo-provider/opsdeck-demo-provider");
constexpr int Instances = 10000;
constexpr int Endpoints = 10;
constexpr int Patience = 150000;
// Each answer takes a second: the ten endpoints' 16 attempts in flight each carry at most ~160
// deliveries a second per server, fewer than the stops make even under the sanitizers (~365 a
// second), so a backlog builds and attempts are in flight whenever a server is killed. The killed
// server's leases expire after 2 x 10 s + 5 s; the timeout is still ten answers long, so no
// attempt times out and is sent again beside the kill's duplicates.
const QString AnswerPath = QStringLiteral("/slow/1000/endpoint-%1");
const QStringList ServerArguments = {QStringLiteral("--allow-private-callbacks"), QStringLiteral("--delivery-timeout"),
                                     QStringLiteral("10")};

} // namespace

class tst_Crash : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void killedServerLosesNothing();
    void twoReplicasOnPostgres();

private:
    void startProvider();
    // Organization, provider, Endpoints endpoints and `count` RUNNING instances registered on them.
    QList<qint64> seed(Database &db, int count);
    QString operatorToken(const QString &databaseUrl);
    // POST /instances/{id}/stop for each id, a few at a time; how many answered 200.
    int stopAll(const QUrl &base, const QString &token, const QList<qint64> &ids);
    qint64 count(Database &db, const QString &sql);
    void checkProviderLog(Database &db, qint64 inFlightAtKill);

    std::unique_ptr<QProcess> m_provider;
    QString m_providerUrl;
    QString m_logPath;
    QString m_secret;
};

void tst_Crash::initTestCase()
{
    QVERIFY2(QFileInfo::exists(ProviderPath), qPrintable(ProviderPath));
    QVERIFY2(QFileInfo::exists(ServerProcess::binary()), qPrintable(ServerProcess::binary()));
    m_secret = WebhookSignature::generateSecret();
}

void tst_Crash::cleanup()
{
    if (m_provider && m_provider->state() == QProcess::Running) {
        m_provider->kill();
        m_provider->waitForFinished(5000);
    }
    m_provider.reset();
}

void tst_Crash::startProvider()
{
    m_logPath = scratchDir() + QStringLiteral("/received-%1.jsonl").arg(QDateTime::currentMSecsSinceEpoch());
    m_provider = std::make_unique<QProcess>();
    m_provider->setProgram(ProviderPath);
    m_provider->setArguments({QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--secret"), m_secret,
                              QStringLiteral("--log"), m_logPath, QStringLiteral("--flush-ms"), QStringLiteral("50"),
                              QStringLiteral("--delay-ms"), QStringLiteral("3")});
    m_provider->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_provider->start();
    QVERIFY(m_provider->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(m_provider->canReadLine(), 10000);
    const QString line = QString::fromUtf8(m_provider->readLine()).trimmed();
    QVERIFY2(line.startsWith(QLatin1String("listening on ")), qPrintable(line));
    m_providerUrl = line.mid(int(qstrlen("listening on ")));
}

QList<qint64> tst_Crash::seed(Database &db, int n)
{
    QList<qint64> ids;
    Problem problem;
    if (!db.open(&problem) || !db.migrate(&problem)) {
        qWarning() << problem.detail;
        return ids;
    }
    const QString now = nowTimestamp();
    db.begin();
    QSqlQuery q(db.connection());
    q.exec(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at) VALUES ('crash', 'AVAILABLE', 1, '%1', '%1')")
               .arg(now));
    q.exec(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                          " VALUES ('receiver', (SELECT MAX(id) FROM organizations), '[\"app\"]', 1, '%1', '%1')")
               .arg(now));
    QStringList urls;
    for (int e = 0; e < Endpoints; ++e) {
        urls.append(m_providerUrl + AnswerPath.arg(e));
        QSqlQuery ins(db.connection());
        ins.prepare(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                   " VALUES ((SELECT MAX(id) FROM providers), ?, 'ACTIVE', 1, ?, ?)"));
        ins.addBindValue(urls.last());
        ins.addBindValue(now);
        ins.addBindValue(now);
        ins.exec();
    }
    QSqlQuery ins(db.connection());
    ins.prepare(QStringLiteral(
        "INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at, updated_at,"
        " status_changed_at, callback_url, callback_signing, secret) VALUES (?, (SELECT MAX(id) FROM organizations),"
        " (SELECT MAX(id) FROM providers), 'app', 'owner', 'RUNNING', 1, ?, ?, ?, ?, 'standard-webhooks', ?) RETURNING id"));
    for (int i = 0; i < n; ++i) {
        ins.addBindValue(QStringLiteral("instance-%1").arg(i));
        ins.addBindValue(now);
        ins.addBindValue(now);
        ins.addBindValue(now);
        ins.addBindValue(urls.at(i % Endpoints));
        ins.addBindValue(m_secret);
        if (!ins.exec() || !ins.next())
            break;
        ids.append(ins.value(0).toLongLong());
        ins.finish();
    }
    db.commit();
    return ids;
}

QString tst_Crash::operatorToken(const QString &databaseUrl)
{
    const CommandResult r = ServerProcess::run({QStringLiteral("token"), QStringLiteral("create"), QStringLiteral("--database"),
                                                databaseUrl, QStringLiteral("--role"), QStringLiteral("operator")});
    return r.exitCode == 0 ? QString::fromUtf8(r.out).trimmed() : QString();
}

int tst_Crash::stopAll(const QUrl &base, const QString &token, const QList<qint64> &ids)
{
    QNetworkAccessManager nam;
    int next = 0;
    int inFlight = 0;
    int ok = 0;
    QEventLoop loop;
    std::function<void()> launch = [&] {
        while (inFlight < 6 && next < ids.size()) {
            QNetworkRequest req(QUrl(base.toString() + QStringLiteral("/api/v1/instances/%1/stop").arg(ids.at(next++))));
            req.setRawHeader("Authorization", "Bearer " + token.toUtf8());
            req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
            QNetworkReply *reply = nam.post(req, QByteArray("{}"));
            ++inFlight;
            QObject::connect(reply, &QNetworkReply::finished, &loop, [&, reply] {
                if (reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200)
                    ++ok;
                reply->deleteLater();
                --inFlight;
                if (next >= ids.size() && inFlight == 0)
                    loop.quit();
                else
                    launch();
            });
        }
    };
    launch();
    if (inFlight > 0)
        loop.exec();
    return ok;
}

qint64 tst_Crash::count(Database &db, const QString &sql)
{
    QSqlQuery q(db.connection());
    return q.exec(sql) && q.next() ? q.value(0).toLongLong() : -1;
}

void tst_Crash::checkProviderLog(Database &db, qint64 inFlightAtKill)
{
    // SIGTERM flushes the provider's log buffer.
    m_provider->terminate();
    QVERIFY(m_provider->waitForFinished(10000));
    QSet<QString> expected;
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("SELECT webhook_id FROM deliveries")));
    while (q.next())
        expected.insert(q.value(0).toString());
    QCOMPARE(expected.size(), Instances);

    QFile file(m_logPath);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QSet<QString> received;
    QHash<QString, qint64> requests;
    qint64 lines = 0;
    qint64 invalid = 0;
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (line.trimmed().isEmpty())
            continue;
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        ++lines;
        const QString webhookId = o.value(QStringLiteral("webhook_id")).toString();
        received.insert(webhookId);
        ++requests[webhookId];
        if (!o.value(QStringLiteral("signature_valid")).toBool())
            ++invalid;
    }
    // Every request the provider received is in its delivery's attempt log: one cut short by the
    // kill as an interrupted attempt, logged by the server that took its lease over.
    QVERIFY(q.exec(QStringLiteral("SELECT d.webhook_id, COUNT(a.id) FROM deliveries d"
                                  " LEFT JOIN delivery_attempts a ON a.delivery_id = d.id GROUP BY d.webhook_id")));
    qint64 unlogged = 0;
    while (q.next())
        unlogged += std::max<qint64>(0, requests.value(q.value(0).toString()) - q.value(1).toLongLong());
    const qint64 interrupted =
        count(db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE error_class = 'interrupted'"));
    qInfo("%lld attempts logged as interrupted", interrupted);
    QVERIFY2(unlogged == 0, qPrintable(QStringLiteral("%1 requests the provider received are not in the attempt log").arg(unlogged)));
    QVERIFY2(interrupted <= inFlightAtKill,
             qPrintable(QStringLiteral("%1 interrupted attempts but only %2 leases held at the kill").arg(interrupted).arg(inFlightAtKill)));
    QVERIFY2(interrupted > 0, "no attempt was logged as interrupted, as if no lease was held at the kill");
    const QSet<QString> missing = expected - received;
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 notifications never arrived").arg(missing.size())));
    const qint64 duplicates = lines - received.size();
    qInfo("received %lld requests for %lld notifications: %lld duplicates, %lld leases held at the kill",
          lines, qint64(received.size()), duplicates, inFlightAtKill);
    QVERIFY2(duplicates <= inFlightAtKill,
             qPrintable(QStringLiteral("%1 duplicates but only %2 in flight").arg(duplicates).arg(inFlightAtKill)));
    QCOMPARE(invalid, 0);
}

void tst_Crash::killedServerLosesNothing()
{
    OPSDECK_REQUIRE_BACKEND();
    startProvider();
    TestDatabase testDb;
    QVERIFY2(testDb.isValid(), qPrintable(testDb.error()));
    Database db(testDb.url());
    const QList<qint64> ids = seed(db, Instances);
    QCOMPARE(ids.size(), Instances);
    const QString token = operatorToken(testDb.url());
    QVERIFY(!token.isEmpty());

    QElapsedTimer clock;
    clock.start();
    ServerProcess server;
    QVERIFY2(server.start(testDb.url(), ServerArguments), qPrintable(server.error()));
    const int half = Instances / 2;
    QCOMPARE(stopAll(server.baseUrl(), token, ids.mid(0, half)), half);
    qInfo("%d stops answered after %lld ms", half, clock.elapsed());
    QTRY_VERIFY_WITH_TIMEOUT(count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) > 500, Patience);
    server.kill();
    const qint64 leased = count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND lease_owner IS NOT NULL"));
    qInfo("killed with %lld of %d notifications delivered, %lld leased",
          count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")), half, leased);
    QVERIFY2(leased > 0, "the server was killed with no delivery in flight");

    ServerProcess restarted;
    QVERIFY2(restarted.start(testDb.url(), ServerArguments), qPrintable(restarted.error()));
    QCOMPARE(stopAll(restarted.baseUrl(), token, ids.mid(half)), Instances - half);
    qInfo("all stops answered after %lld ms", clock.elapsed());
    QTRY_COMPARE_WITH_TIMEOUT(count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state <> 'DELIVERED'")), qint64(0),
                              Patience);
    qInfo("all delivered after %lld ms", clock.elapsed());
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries")), qint64(Instances));
    // The API shows an interrupted attempt as the server logged it: no latency, no answer.
    const qint64 cut =
        count(db, QStringLiteral("SELECT MIN(delivery_id) FROM delivery_attempts WHERE error_class = 'interrupted'"));
    QVERIFY(cut > 0);
    const Reply shown = TestServer::send(restarted.baseUrl(), "GET", QStringLiteral("/api/v1/deliveries/%1").arg(cut), {}, token);
    QCOMPARE(shown.status, 200);
    const QJsonObject first = shown.json().value(QStringLiteral("attempt_log")).toArray().at(0).toObject();
    QCOMPARE(first.value(QStringLiteral("error_class")).toString(), QStringLiteral("interrupted"));
    QVERIFY(first.value(QStringLiteral("latency_ms")).isNull());
    QVERIFY(first.value(QStringLiteral("response_status")).isNull());
    QCOMPARE(shown.json().value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"));
    restarted.terminate();
    checkProviderLog(db, leased);
}

void tst_Crash::twoReplicasOnPostgres()
{
    if (qEnvironmentVariableIsEmpty("OPSDECK_TEST_POSTGRES_URL"))
        QSKIP("OPSDECK_TEST_POSTGRES_URL is not set (scripts/check sets it)");
    const QByteArray backend = qgetenv("OPSDECK_TEST_BACKEND");
    qputenv("OPSDECK_TEST_BACKEND", "postgresql");
    TestDatabase testDb;
    qputenv("OPSDECK_TEST_BACKEND", backend);
    QVERIFY2(testDb.isValid() && testDb.isPostgres(), qPrintable(testDb.error()));
    startProvider();
    Database db(testDb.url());
    const QList<qint64> ids = seed(db, Instances);
    QCOMPARE(ids.size(), Instances);
    const QString token = operatorToken(testDb.url());
    QVERIFY(!token.isEmpty());

    ServerProcess first;
    ServerProcess second;
    QVERIFY2(first.start(testDb.url(), ServerArguments), qPrintable(first.error()));
    QVERIFY2(second.start(testDb.url(), ServerArguments), qPrintable(second.error()));
    const int half = Instances / 2;
    // Both replicas take requests and both deliver from the one outbox.
    QCOMPARE(stopAll(first.baseUrl(), token, ids.mid(0, half / 2)), half / 2);
    QCOMPARE(stopAll(second.baseUrl(), token, ids.mid(half / 2, half - half / 2)), half - half / 2);
    QTRY_VERIFY_WITH_TIMEOUT(count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) > 500, Patience);
    // The replica killed has attempts on the wire (the leases counted below are both replicas').
    QTRY_VERIFY_WITH_TIMEOUT(TestServer::metric(first.baseUrl(), "opsdeck_delivery_attempts_in_flight", "endpoints=\"answering\"") > 0,
                             Patience);
    first.kill();
    const qint64 leased = count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND lease_owner IS NOT NULL"));
    QVERIFY2(leased > 0, "the replica was killed with no delivery in flight");
    QCOMPARE(stopAll(second.baseUrl(), token, ids.mid(half)), Instances - half);
    QTRY_COMPARE_WITH_TIMEOUT(count(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state <> 'DELIVERED'")), qint64(0),
                              Patience);
    second.terminate();
    checkProviderLog(db, leased);
}

QTEST_MAIN(tst_Crash)
#include "tst_crash.moc"
