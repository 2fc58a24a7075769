// Callback endpoints: health, pause and resume keep deliveries, auto-pause after the failure window, and
// what the endpoint and secret actions do while another writer holds their rows.
#include "lockwait.h"
#include "testserver.h"
#include "testsupport.h"

#include "server/storage/database.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlQuery>
#include <QTcpServer>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString ProviderPath = QStringLiteral(OPSDECK_BINARY_DIR "/tools/opsdeck-demo-provider/opsdeck-demo-provider");
constexpr int Patience = 20000;

// A demo provider process on a port chosen before registration, started with the secret the
// registration returns.
struct DemoProvider
{
    ~DemoProvider()
    {
        if (process && process->state() == QProcess::Running) {
            process->kill();
            process->waitForFinished(5000);
        }
    }

    std::unique_ptr<QProcess> process;
    quint16 port = 0;

    QString url(const QString &path) const { return QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path); }
};

quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

QString stateOf(const QJsonArray &list, int index)
{
    return list.at(index).toObject().value(QStringLiteral("state")).toString();
}

} // namespace

class tst_Endpoints : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void pauseAndResumeKeepDeliveries();
    void healthIsReported();
    void healthShowsOnTheFeed();
    void autoPauseAfterWindow();
    void invalidRequests_data();
    void invalidRequests();
    void timeBoundsFinerThanAMillisecond();
    void resumeSurvivesDeadlock();
    void rotateSecretWaitsForAConcurrentWriter();
    void spellingsOfOneUrlAreOneEndpoint();
    void storedSpellingsAreRespelledAtStart();

private:
    qint64 registerInstance(TestServer &server, DemoProvider *provider, const QString &path, QString *secret);
    void startProvider(DemoProvider *provider, const QString &secret);
    QJsonArray deliveries(TestServer &server, qint64 instance);
    // An instance registered on `path` of `provider`, which then starts: the instance and its
    // endpoint (a test failure when not).
    std::pair<qint64, qint64> registerAndStart(TestServer &server, DemoProvider *provider, const QString &path);

    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<TestServer> m_quiet; // no delivery worker: only the test touches the rows
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

void tst_Endpoints::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(ProviderPath), qPrintable(ProviderPath));
    ServerOptions options;
    options.retrySchedule = QStringLiteral("200ms,300ms,500ms,1s,2s");
    options.deliveryTimeout = std::chrono::milliseconds(1500);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    ServerOptions quiet;
    quiet.deliveryWorker = false;
    m_quiet = std::make_unique<TestServer>(quiet);
    QVERIFY2(m_quiet->isRunning(), qPrintable(m_quiet->error()));
    QVERIFY(m_server->createAcmeAndCrm(&m_org, &m_provider));
}

qint64 tst_Endpoints::registerInstance(TestServer &server, DemoProvider *provider, const QString &path, QString *secret)
{
    const qint64 org = server.createOrganization(QStringLiteral("org%1").arg(++m_counter));
    const qint64 prov = server.createProvider(QStringLiteral("p%1").arg(m_counter), org, {QStringLiteral("app")});
    const qint64 instance = server.createInstance(QStringLiteral("i%1").arg(m_counter), org, prov, QStringLiteral("app"),
                                                  QStringLiteral("alice"));
    provider->port = freePort();
    const Reply r = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                {{QStringLiteral("callback_url"), provider->url(path)}}, server.operatorToken());
    *secret = r.json().value(QStringLiteral("secret")).toString();
    return r.status == 200 ? instance : 0;
}

void tst_Endpoints::startProvider(DemoProvider *provider, const QString &secret)
{
    provider->process = std::make_unique<QProcess>();
    provider->process->setProgram(ProviderPath);
    provider->process->setArguments({QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(provider->port),
                                     QStringLiteral("--secret"), secret});
    provider->process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    provider->process->start();
    QVERIFY(provider->process->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(provider->process->canReadLine(), 10000);
}

QJsonArray tst_Endpoints::deliveries(TestServer &server, qint64 instance)
{
    return server.get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), server.operatorToken()).items();
}

std::pair<qint64, qint64> tst_Endpoints::registerAndStart(TestServer &server, DemoProvider *provider, const QString &path)
{
    QString secret;
    const qint64 instance = registerInstance(server, provider, path, &secret);
    if (instance <= 0) {
        QTest::qFail("registration refused", __FILE__, __LINE__);
        return {};
    }
    startProvider(provider, secret);
    const QJsonArray list = deliveries(server, instance);
    return {instance, list.isEmpty() ? 0 : list.at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger()};
}

void tst_Endpoints::pauseAndResumeKeepDeliveries()
{
    DemoProvider paused;
    DemoProvider control;
    QString pausedSecret;
    QString controlSecret;
    const qint64 instance = registerInstance(*m_server, &paused, QStringLiteral("/ok/p"), &pausedSecret);
    const qint64 other = registerInstance(*m_server, &control, QStringLiteral("/ok/c"), &controlSecret);
    QVERIFY(instance > 0 && other > 0);
    const qint64 endpointId = deliveries(*m_server, instance).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();

    const Reply pause = m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpointId),
                                       {{QStringLiteral("reason"), QStringLiteral("provider maintenance")}}, m_server->operatorToken());
    QCOMPARE(pause.status, 200);
    QCOMPARE(pause.json().value(QStringLiteral("state")).toString(), QStringLiteral("PAUSED"));
    QVERIFY(!pause.json().value(QStringLiteral("paused_at")).isNull());
    const Reply again = m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpointId), {}, m_server->operatorToken());
    QCOMPARE(again.status, 409);
    QCOMPARE(again.code(), QStringLiteral("invalid-transition"));

    startProvider(&paused, pausedSecret);
    startProvider(&control, controlSecret);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status, 200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(other), {}, m_server->operatorToken()).status, 200);
    // The worker is busy and healthy: the control endpoint gets its notification...
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(*m_server, other), deliveries(*m_server, other).size() - 1),
                              QStringLiteral("DELIVERED"), Patience);
    // ...while the paused endpoint's newest one waits, unsent and not dropped.
    const QJsonArray waiting = deliveries(*m_server, instance);
    const QJsonObject newest = waiting.last().toObject();
    QCOMPARE(newest.value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(newest.value(QStringLiteral("attempts")).toInt(), 0);
    // "Retry now" would promise an attempt the paused endpoint does not get: refused, naming the
    // way out, and the delivery is left as it was.
    const QString retryPath = QStringLiteral("/api/v1/deliveries/%1/retry").arg(newest.value(QStringLiteral("id")).toInteger());
    const Reply retry = m_server->post(retryPath, {}, m_server->operatorToken());
    QCOMPARE(retry.status, 409);
    QCOMPARE(retry.code(), QStringLiteral("endpoint-not-active"));
    QCOMPARE(retry.json().value(QStringLiteral("state")).toString(), QStringLiteral("PAUSED"));
    QCOMPARE(retry.json().value(QStringLiteral("allowed")).toArray(), QJsonArray{QStringLiteral("resume")});
    QCOMPARE(deliveries(*m_server, instance).last().toObject().value(QStringLiteral("version")),
             newest.value(QStringLiteral("version")));

    const Reply resume = m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpointId),
                                        {{QStringLiteral("reason"), QStringLiteral("back")}}, m_server->operatorToken());
    QCOMPARE(resume.status, 200);
    QCOMPARE(resume.json().value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(*m_server, instance), waiting.size() - 1), QStringLiteral("DELIVERED"), Patience);

    // Both actions are audited with their reasons.
    const Reply audit = m_server->get(QStringLiteral("/api/v1/audit?kind=endpoint&object_id=%1").arg(endpointId),
                                      m_server->operatorToken());
    QCOMPARE(audit.status, 200);
    QVERIFY2(audit.body.contains("provider maintenance"), audit.body.constData());
    QVERIFY(audit.body.contains("\"resume\""));
}

void tst_Endpoints::healthIsReported()
{
    DemoProvider failing;
    const auto [instance, endpointId] = registerAndStart(*m_server, &failing, QStringLiteral("/fail/h"));
    QVERIFY(endpointId > 0);
    QTRY_VERIFY_WITH_TIMEOUT(m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(endpointId), m_server->operatorToken())
                                     .json()
                                     .value(QStringLiteral("consecutive_failures"))
                                     .toInt()
                                 >= 2,
                             Patience);
    const QJsonObject e = m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(endpointId), m_server->operatorToken()).json();
    QCOMPARE(e.value(QStringLiteral("failure_rate")).toDouble(), 1.0);
    QVERIFY(e.value(QStringLiteral("last_success_at")).isNull());
    QVERIFY(!e.value(QStringLiteral("failing_since")).isNull());
    QCOMPARE(e.value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    // The list carries the same health.
    bool listed = false;
    for (const QJsonValue &v : m_server->get(QStringLiteral("/api/v1/endpoints?state=ACTIVE"), m_server->operatorToken()).items())
        listed = listed || v.toObject().value(QStringLiteral("id")).toInteger() == endpointId;
    QVERIFY(listed);
}

void tst_Endpoints::healthShowsOnTheFeed()
{
    // Every attempt moves its endpoint's counters; the feed (what the console follows) shows them
    // within about a second, each time as a new version, not only when the failure streak starts.
    DemoProvider failing;
    const auto [instance, endpointId] = registerAndStart(*m_server, &failing, QStringLiteral("/fail/feed"));
    QVERIFY(endpointId > 0);
    // The schedule (200 ms … 2 s) runs out: six failed attempts in a row.
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(*m_server, instance), 0), QStringLiteral("FAILED"), Patience);
    const QString path = QStringLiteral("/api/v1/endpoints/%1").arg(endpointId);
    const QJsonObject current = m_server->get(path, m_server->operatorToken()).json();
    QCOMPARE(current.value(QStringLiteral("consecutive_failures")).toInt(), 6);
    const auto lastEvent = [this, endpointId] {
        QJsonObject last;
        const QJsonArray events = m_server->get(QStringLiteral("/api/v1/events?after=0&limit=1000"), m_server->operatorToken())
                                      .json()
                                      .value(QStringLiteral("events"))
                                      .toArray();
        for (const QJsonValue &v : events) {
            const QJsonObject o = v.toObject();
            if (o.value(QStringLiteral("kind")).toString() == QLatin1String("endpoint")
                && o.value(QStringLiteral("id")).toInteger() == endpointId)
                last = o.value(QStringLiteral("object")).toObject();
        }
        return last;
    };
    QTRY_COMPARE_WITH_TIMEOUT(lastEvent(), current, Patience);
    // Its first event was its creation, at version 1, with the registration's commit.
    const QJsonArray all = m_server->get(QStringLiteral("/api/v1/events?after=0&limit=1000"), m_server->operatorToken())
                               .json().value(QStringLiteral("events")).toArray();
    QJsonObject first;
    for (const QJsonValue &v : all) {
        if (v.toObject().value(QStringLiteral("kind")).toString() == QLatin1String("endpoint")
            && v.toObject().value(QStringLiteral("id")).toInteger() == endpointId) {
            first = v.toObject();
            break;
        }
    }
    QCOMPARE(first.value(QStringLiteral("op")).toString(), QStringLiteral("created"));
    QCOMPARE(first.value(QStringLiteral("version")).toInteger(), 1);
    QCOMPARE(m_server->get(path, m_server->operatorToken()).header("ETag"),
             '"' + QByteArray::number(current.value(QStringLiteral("version")).toInteger()) + '"');
}

void tst_Endpoints::autoPauseAfterWindow()
{
    ServerOptions options;
    options.retrySchedule = QStringList(40, QStringLiteral("100ms")).join(QLatin1Char(','));
    options.deliveryTimeout = std::chrono::milliseconds(1000);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    options.autoPauseWindow = std::chrono::milliseconds(600);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    DemoProvider failing;
    const auto [instance, endpointId] = registerAndStart(server, &failing, QStringLiteral("/fail/a"));
    QVERIFY(endpointId > 0);
    const QString path = QStringLiteral("/api/v1/endpoints/%1").arg(endpointId);
    QTRY_COMPARE_WITH_TIMEOUT(server.get(path, server.operatorToken()).json().value(QStringLiteral("state")).toString(),
                              QStringLiteral("PAUSED"), Patience);
    // The delivery is kept, not failed: it waits for the endpoint.
    QCOMPARE(stateOf(deliveries(server, instance), 0), QStringLiteral("PENDING"));
    const QJsonArray events = server.get(QStringLiteral("/api/v1/events?after=0&limit=1000"), server.operatorToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    bool alerted = false;
    qint64 pausedVersion = -1;
    for (const QJsonValue &v : events) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("kind")).toString() == QLatin1String("endpoint") && o.value(QStringLiteral("id")).toInteger() == endpointId
            && o.value(QStringLiteral("object")).toObject().value(QStringLiteral("state")).toString() == QLatin1String("PAUSED"))
            pausedVersion = o.value(QStringLiteral("version")).toInteger();
        if (o.value(QStringLiteral("kind")).toString() == QLatin1String("alert")
            && o.value(QStringLiteral("object")).toObject().value(QStringLiteral("type")).toString() == QLatin1String("endpoint-paused")) {
            alerted = true;
            // About the endpoint as the pause left it: its id and PAUSED version.
            QCOMPARE(o.value(QStringLiteral("id")).toInteger(), endpointId);
            QCOMPARE(o.value(QStringLiteral("version")).toInteger(), pausedVersion);
        }
    }
    QVERIFY(alerted);
    // Resumed, its failure streak starts over: the count with it, not only the window.
    const QJsonObject resumed = server.post(path + QStringLiteral("/resume"), {}, server.operatorToken()).json();
    QCOMPARE(resumed.value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    QCOMPARE(resumed.value(QStringLiteral("consecutive_failures")).toInt(), 0);
    QVERIFY(resumed.value(QStringLiteral("failing_since")).isNull());
}

void tst_Endpoints::invalidRequests_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("unknown state") << QByteArray("GET") << "/api/v1/endpoints?state=BROKEN" << 400 << "invalid-request";
    QTest::newRow("unknown filter") << QByteArray("GET") << "/api/v1/endpoints?colour=red" << 400 << "invalid-request";
    QTest::newRow("missing endpoint") << QByteArray("GET") << "/api/v1/endpoints/999999" << 404 << "not-found";
    QTest::newRow("pause missing") << QByteArray("POST") << "/api/v1/endpoints/999999/pause" << 404 << "not-found";
    QTest::newRow("bad status class") << QByteArray("GET") << "/api/v1/deliveries?status=9xx" << 400 << "invalid-request";
    QTest::newRow("bad time") << QByteArray("GET") << "/api/v1/deliveries?created_after=yesterday" << 400 << "invalid-request";
    QTest::newRow("inverted time range") << QByteArray("GET")
                                         << "/api/v1/deliveries?created_after=2030-01-01T00:00:00Z&created_before=2020-01-01T00:00:00Z"
                                         << 400 << "invalid-request";
    QTest::newRow("empty time range") << QByteArray("GET")
                                      << "/api/v1/deliveries?created_after=2030-01-01T00:00:00Z&created_before=2030-01-01T00:00:00Z"
                                      << 400 << "invalid-request";
    QTest::newRow("missing delivery") << QByteArray("GET") << "/api/v1/deliveries/999999" << 404 << "not-found";
    QTest::newRow("time range inverted within a millisecond")
        << QByteArray("GET") << "/api/v1/deliveries?created_after=2030-01-01T00:00:00.0016Z&created_before=2030-01-01T00:00:00.0015Z"
        << 400 << "invalid-request";
}

void tst_Endpoints::timeBoundsFinerThanAMillisecond()
{
    // Stored times have milliseconds; a bound may have more digits, and stays exclusive on the
    // instant it names: a delivery created at .502 is after .5015 and before .5024 (QDateTime alone
    // reads both as .502).
    TestServer &server = *m_quiet;
    DemoProvider provider;
    QString secret;
    const qint64 instance = registerInstance(server, &provider, QStringLiteral("/hook"), &secret);
    QVERIFY(instance > 0);
    const QJsonObject d = deliveries(server, instance).first().toObject();
    const QString created = d.value(QStringLiteral("created_at")).toString();
    const QDateTime at = QDateTime::fromString(created, Qt::ISODateWithMs);
    QVERIFY2(at.isValid() && created.endsWith(QLatin1Char('Z')), qPrintable(created));
    const auto bound = [](const QDateTime &t, char digit) {
        QString text = t.toUTC().toString(Qt::ISODateWithMs);
        return text.insert(text.size() - 1, QLatin1Char(digit));
    };
    const QString after = bound(at.addMSecs(-1), '5'); // half a millisecond before
    const QString before = bound(at, '4');              // 0.4 ms after
    const auto ids = [&server, instance](const QString &query) {
        QList<qint64> found;
        const Reply r = server.get(QStringLiteral("/api/v1/deliveries?instance=%1&%2").arg(instance).arg(query), server.operatorToken());
        for (const QJsonValue &v : r.items())
            found.append(v.toObject().value(QStringLiteral("id")).toInteger());
        return r.status == 200 ? found : QList<qint64>{-1};
    };
    const qint64 id = d.value(QStringLiteral("id")).toInteger();
    QCOMPARE(ids(QStringLiteral("created_after=%1&created_before=%2").arg(after, before)), QList<qint64>{id});
    // And outside: after 0.4 ms past it, before half a millisecond ahead of it.
    QCOMPARE(ids(QStringLiteral("created_after=%1").arg(before)), QList<qint64>{});
    QCOMPARE(ids(QStringLiteral("created_before=%1").arg(bound(at.addMSecs(-1), '5'))), QList<qint64>{});
}

void tst_Endpoints::invalidRequests()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(int, status);
    QFETCH(QString, code);
    const Reply r = m_server->request(method, path, QByteArray(), m_server->operatorToken());
    QCOMPARE(r.status, status);
    QCOMPARE(r.code(), code);
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
}

void tst_Endpoints::resumeSurvivesDeadlock()
{
    if (!m_server->testDatabase().isPostgres())
        QSKIP("row locks and deadlocks are PostgreSQL's; SQLite has one writer at a time");
    TestServer &server = *m_quiet;
    DemoProvider nobody;
    QString secret;
    const qint64 instance = registerInstance(server, &nobody, QStringLiteral("/ok/d"), &secret);
    QVERIFY(instance > 0);
    const QJsonObject d = deliveries(server, instance).at(0).toObject();
    const qint64 deliveryId = d.value(QStringLiteral("id")).toInteger();
    const qint64 endpointId = d.value(QStringLiteral("endpoint_id")).toInteger();
    QCOMPARE(server.post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpointId), {}, server.operatorToken()).status, 200);
    {
        // Parked far ahead, so that the resume must bring it forward (and lock it to do so).
        Database admin(server.databaseUrl());
        QVERIFY(admin.open());
        QVERIFY(admin.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2999-01-01T00:00:00.000Z' WHERE id = %1")
                               .arg(deliveryId)));
    }

    // Another transaction (as the delivery worker's group commit used to) holds the delivery and
    // then wants the endpoint the resume holds: PostgreSQL breaks the cycle by failing the
    // transaction that waited first, the resume's.
    LockHolder other(
        server.databaseUrl(),
        [&](QSqlQuery &q) {
            // The backend whose deadlock_timeout runs out first checks for the cycle and is the
            // victim. On a loaded machine this one could be checked first; with a long timeout of
            // its own the resume's transaction is always the one PostgreSQL fails (the test runs as
            // the cluster's owner, who may set it).
            return q.exec(QStringLiteral("SET deadlock_timeout = '60s'"))
                   && q.exec(QStringLiteral("SELECT id FROM deliveries WHERE id = %1 FOR UPDATE").arg(deliveryId));
        },
        [&](QSqlQuery &q) { return q.exec(QStringLiteral("SELECT id FROM endpoints WHERE id = %1 FOR UPDATE").arg(endpointId)); });
    QVERIFY(other.start());

    const Reply resumed = server.post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpointId),
                                      {{QStringLiteral("reason"), QStringLiteral("back")}}, server.operatorToken());
    // The resume waited for the delivery, and the other transaction then took the endpoint.
    QVERIFY(other.finish());
    // The deadlock victim was run again: no 500 for the client, and the resume took effect.
    QVERIFY2(resumed.status == 200, resumed.body.constData());
    QCOMPARE(resumed.json().value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    const QJsonObject after = server.get(QStringLiteral("/api/v1/deliveries/%1").arg(deliveryId), server.operatorToken()).json();
    QVERIFY2(after.value(QStringLiteral("next_attempt_at")).toString() < QLatin1String("2999"),
             qPrintable(QJsonDocument(after).toJson()));
}

void tst_Endpoints::rotateSecretWaitsForAConcurrentWriter()
{
    if (!m_server->testDatabase().isPostgres())
        QSKIP("row locks are PostgreSQL's; SQLite has one writer at a time");
    TestServer &server = *m_quiet;
    DemoProvider nobody;
    QString secret;
    const qint64 instance = registerInstance(server, &nobody, QStringLiteral("/ok/r"), &secret);
    QVERIFY(instance > 0);
    const qint64 version = server.get(QStringLiteral("/api/v1/instances/%1").arg(instance), server.operatorToken())
                               .json()
                               .value(QStringLiteral("version"))
                               .toInteger();
    QVERIFY(version > 0);

    // Another writer (a stop on another replica) holds the instance's row while the rotation
    // starts, and commits once the rotation waits for it.
    LockHolder other(server.databaseUrl(), [&](QSqlQuery &q) {
        return q.exec(QStringLiteral("UPDATE instances SET version = version + 1 WHERE id = %1").arg(instance));
    });
    QVERIFY(other.start());

    const Reply rotated = server.post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(instance), {}, server.operatorToken());
    QVERIFY(other.finish());
    // Not a 500: the rotation read the instance after the other writer committed.
    QVERIFY2(rotated.status == 200, rotated.body.constData());
    QVERIFY(rotated.json().value(QStringLiteral("secret")).toString().startsWith(QLatin1String("whsec_")));
    QCOMPARE(rotated.json().value(QStringLiteral("version")).toInteger(), version + 2);
}

void tst_Endpoints::spellingsOfOneUrlAreOneEndpoint()
{
    // A provider's receiver is one endpoint however its URL is spelled: pausing it must hold every
    // instance that calls it, and its health counts every attempt.
    TestServer &server = *m_quiet;
    const qint64 org = server.createOrganization(QStringLiteral("spellings"));
    const qint64 prov = server.createProvider(QStringLiteral("spellings"), org, {QStringLiteral("app")});
    const QStringList spellings = {QStringLiteral("http://127.0.0.1:8099/hook"), QStringLiteral("HTTP://127.1:8099/hook"),
                                   QStringLiteral("http://0x7f000001:8099/a/../hook"),
                                   QStringLiteral("http://127.0.0.1:8099/./hook#top")};
    QSet<qint64> endpoints;
    for (const QString &url : spellings) {
        const qint64 instance = server.createInstance(QStringLiteral("spelled-%1").arg(++m_counter), org, prov,
                                                      QStringLiteral("app"), QStringLiteral("alice"));
        const Reply r = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                    {{QStringLiteral("callback_url"), url}}, server.operatorToken());
        QCOMPARE(r.status, 200);
        QCOMPARE(r.json().value(QStringLiteral("callback")).toObject().value(QStringLiteral("url")).toString(),
                 spellings.first());
        const QJsonArray list = deliveries(server, instance);
        QCOMPARE(list.size(), 1);
        endpoints.insert(list.at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger());
    }
    QCOMPARE(endpoints.size(), 1);
    const Reply listed = server.get(QStringLiteral("/api/v1/endpoints?provider=%1").arg(prov), server.operatorToken());
    QCOMPARE(listed.status, 200);
    QCOMPARE(listed.items().size(), 1);
    QCOMPARE(listed.items().at(0).toObject().value(QStringLiteral("url")).toString(), spellings.first());

    // At the length limit with an empty path, its one spelling ("/" added) is one past it: refused
    // now, rather than stored and refused by every later check of the URL.
    QString atLimit = QStringLiteral("http://127.0.0.1:8099?q=");
    atLimit += QString(2048 - atLimit.size(), QLatin1Char('x'));
    const qint64 longer = server.createInstance(QStringLiteral("spelled-long"), org, prov, QStringLiteral("app"),
                                                QStringLiteral("alice"));
    const Reply refused = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(longer),
                                      {{QStringLiteral("callback_url"), atLimit}}, server.operatorToken());
    QCOMPARE(refused.status, 400);
    QCOMPARE(refused.json().value(QStringLiteral("errors")).toArray().at(0).toObject().value(QStringLiteral("path")).toString(),
             QStringLiteral("/callback_url"));
}

void tst_Endpoints::storedSpellingsAreRespelledAtStart()
{
    // URLs stored before they were stored in one spelling: the next start brings them to it, so a
    // registration spelled canonically finds the endpoint instead of making a second one. One
    // whose canonical spelling its provider has already as another endpoint is left alone.
    TestServer &server = *m_quiet;
    const qint64 org = server.createOrganization(QStringLiteral("respelled"));
    const qint64 prov = server.createProvider(QStringLiteral("respelled"), org, {QStringLiteral("app")});
    const auto registered = [&](const QString &url) {
        const qint64 instance = server.createInstance(QStringLiteral("respelled-%1").arg(++m_counter), org, prov,
                                                      QStringLiteral("app"), QStringLiteral("alice"));
        const Reply r = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                    {{QStringLiteral("callback_url"), url}}, server.operatorToken());
        return r.status == 200 ? instance : 0;
    };
    const qint64 old = registered(QStringLiteral("http://127.0.0.1:8097/hook"));
    const qint64 twin = registered(QStringLiteral("http://127.0.0.1:8096/hook"));
    const qint64 other = registered(QStringLiteral("http://127.0.0.1:8096/other"));
    QVERIFY(old && twin && other);
    const auto endpointOf = [&](qint64 instance) {
        return deliveries(server, instance).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    };
    // As an older server stored them: the first one's spelling; and the third made a second
    // endpoint for the second one's receiver.
    {
        QSqlQuery q(server.controlPlane().database().connection());
        QVERIFY(q.exec(QStringLiteral("UPDATE endpoints SET url = 'HTTP://127.1:8097/./hook' WHERE id = %1").arg(endpointOf(old))));
        QVERIFY(q.exec(QStringLiteral("UPDATE instances SET callback_url = 'HTTP://127.1:8097/./hook' WHERE id = %1").arg(old)));
        QVERIFY(q.exec(QStringLiteral("UPDATE endpoints SET url = 'http://127.0.0.1:8096/a/../hook' WHERE id = %1")
                           .arg(endpointOf(other))));
    }
    ServerOptions options;
    options.host = QStringLiteral("127.0.0.1");
    options.port = 0;
    options.databaseUrl = server.databaseUrl();
    options.deliveryWorker = false;
    ControlPlane restarted(options);
    Problem problem;
    QVERIFY2(restarted.start(&problem), qPrintable(problem.detail));

    const auto urlOf = [&](qint64 endpoint) {
        return server.get(QStringLiteral("/api/v1/endpoints/%1").arg(endpoint), server.operatorToken())
            .json()
            .value(QStringLiteral("url"))
            .toString();
    };
    QCOMPARE(urlOf(endpointOf(old)), QStringLiteral("http://127.0.0.1:8097/hook"));
    QCOMPARE(server.get(QStringLiteral("/api/v1/instances/%1").arg(old), server.operatorToken())
                 .json()
                 .value(QStringLiteral("callback"))
                 .toObject()
                 .value(QStringLiteral("url"))
                 .toString(),
             QStringLiteral("http://127.0.0.1:8097/hook"));
    QCOMPARE(urlOf(endpointOf(other)), QStringLiteral("http://127.0.0.1:8096/a/../hook"));
    // A new instance on the first receiver, spelled canonically, shares its endpoint.
    const qint64 fresh = registered(QStringLiteral("http://127.0.0.1:8097/hook"));
    QVERIFY(fresh);
    QCOMPARE(endpointOf(fresh), endpointOf(old));
}

QTEST_MAIN(tst_Endpoints)
#include "tst_endpoints.moc"
