// Instance destruction after retention, through the API with a real provider: only once the
// provider acknowledged STOPPED and the destruction callback (the sweep alone:
// tst_destructionsweep).
#include "testserver.h"
#include "testsupport.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
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
    QString logPath;

    QString url(const QString &path) const { return QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path); }
};

quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

} // namespace

class tst_Destruction : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void withoutCallbackDestroyedAfterRetention();
    void acknowledgedThenDestroyed();
    void awaitsStoppedAcknowledgement();
    void awaitsDestructionAcknowledgement();
    void awaitingNamesAPausedEndpoint();
    void destructionCallbackOnAPausedEndpoint();
    void restartedInstanceIsKept();
    void restartedInstanceAwaitsNothing();

private:
    qint64 newInstance();
    QString registerOn(qint64 instance, DemoProvider *provider, const QString &path);
    void startProvider(DemoProvider *provider, const QString &secret);
    QJsonObject instance(qint64 id);
    QJsonArray deliveries(qint64 instance);
    QList<QJsonObject> logLines(const DemoProvider &provider) const;
    // Stops the instance: the instance as the stop committed it, or {} when it was refused. (A
    // later GET may come after the retention has already run out.)
    QJsonObject stopped(qint64 id);
    bool stop(qint64 id) { return !stopped(id).isEmpty(); }

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

void tst_Destruction::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(ProviderPath), qPrintable(ProviderPath));
    ServerOptions options;
    options.instanceRetention = std::chrono::seconds(1);
    options.retrySchedule = QStringLiteral("200ms,300ms,500ms,1s,2s,5s,10s");
    options.deliveryTimeout = std::chrono::milliseconds(1500);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    QVERIFY(m_server->createAcmeAndCrm(&m_org, &m_provider));
}

qint64 tst_Destruction::newInstance()
{
    return m_server->createInstance(QStringLiteral("i%1").arg(++m_counter), m_org, m_provider, QStringLiteral("crm"),
                                    QStringLiteral("alice"));
}

QString tst_Destruction::registerOn(qint64 id, DemoProvider *provider, const QString &path)
{
    provider->port = freePort();
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                   {{QStringLiteral("callback_url"), provider->url(path)}}, m_server->operatorToken());
    return r.json().value(QStringLiteral("secret")).toString();
}

void tst_Destruction::startProvider(DemoProvider *provider, const QString &secret)
{
    provider->logPath = scratchDir() + QStringLiteral("/provider-%1.jsonl").arg(++m_counter);
    provider->process = std::make_unique<QProcess>();
    provider->process->setProgram(ProviderPath);
    provider->process->setArguments({QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(provider->port),
                                     QStringLiteral("--secret"), secret, QStringLiteral("--log"), provider->logPath,
                                     QStringLiteral("--flush-ms"), QStringLiteral("10")});
    provider->process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    provider->process->start();
    QVERIFY(provider->process->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(provider->process->canReadLine(), 10000);
}

QJsonObject tst_Destruction::instance(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken()).json();
}

QJsonArray tst_Destruction::deliveries(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(id), m_server->operatorToken()).items();
}

QList<QJsonObject> tst_Destruction::logLines(const DemoProvider &provider) const
{
    QList<QJsonObject> lines;
    QFile file(provider.logPath);
    if (file.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : file.readAll().split('\n'))
            if (!line.trimmed().isEmpty())
                lines.append(QJsonDocument::fromJson(line).object());
    }
    return lines;
}

QJsonObject tst_Destruction::stopped(qint64 id)
{
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, m_server->operatorToken());
    return r.status == 200 ? r.json() : QJsonObject();
}

void tst_Destruction::withoutCallbackDestroyedAfterRetention()
{
    const qint64 id = newInstance();
    const QJsonObject stoppedNow = stopped(id); // a pending instance can be stopped; it never registered a callback
    QVERIFY(!stoppedNow.isEmpty());
    QVERIFY(!stoppedNow.value(QStringLiteral("destroy_after")).isNull());
    QTRY_COMPARE_WITH_TIMEOUT(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("DESTROYED"), Patience);
    QVERIFY(instance(id).value(QStringLiteral("awaiting_ack")).isNull());
}

void tst_Destruction::acknowledgedThenDestroyed()
{
    DemoProvider provider;
    const qint64 id = newInstance();
    startProvider(&provider, registerOn(id, &provider, QStringLiteral("/ok/d")));
    QVERIFY(stop(id));
    QTRY_COMPARE_WITH_TIMEOUT(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("DESTROYED"), Patience);
    // The provider was told, with a valid signature, in order: stopped, then destroyed.
    QTRY_VERIFY_WITH_TIMEOUT(logLines(provider).size() >= 2, Patience); // RUNNING may have been superseded
    const QList<QJsonObject> lines = logLines(provider);
    QCOMPARE(lines.last().value(QStringLiteral("type")).toString(), QStringLiteral("instance.destroyed"));
    QCOMPARE(lines.last().value(QStringLiteral("signature_valid")).toBool(), true);
    QCOMPARE(lines.at(lines.size() - 2).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    // The destruction callback names the version the instance has as DESTROYED, after the one of
    // the STOPPED notification.
    QCOMPARE(lines.last().value(QStringLiteral("version")).toInteger(), instance(id).value(QStringLiteral("version")).toInteger());
    QVERIFY(lines.last().value(QStringLiteral("version")).toInteger() > lines.at(lines.size() - 2).value(QStringLiteral("version")).toInteger());
    // Nothing is signed for it any more: no new secret.
    const Reply rotated = m_server->post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(id), {}, m_server->operatorToken());
    QCOMPARE(rotated.status, 409);
    QCOMPARE(rotated.code(), QStringLiteral("instance-destroyed"));
    // Nor a test event signed with its secret: it was the only instance on that endpoint.
    const qint64 endpoint = deliveries(id).first().toObject().value(QStringLiteral("endpoint_id")).toInteger();
    const Reply test = m_server->post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint), {}, m_server->operatorToken());
    QCOMPARE(test.status, 409);
    QCOMPARE(test.code(), QStringLiteral("no-registered-instance"));
}

void tst_Destruction::awaitsStoppedAcknowledgement()
{
    DemoProvider provider;
    const qint64 id = newInstance();
    startProvider(&provider, registerOn(id, &provider, QStringLiteral("/fail/d")));
    QVERIFY(stop(id));
    QTRY_VERIFY_WITH_TIMEOUT(!instance(id).value(QStringLiteral("awaiting_ack")).isNull(), Patience);
    const QJsonObject i = instance(id);
    QCOMPARE(i.value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    const QJsonObject awaiting = i.value(QStringLiteral("awaiting_ack")).toObject();
    QVERIFY2(awaiting.value(QStringLiteral("reason")).toString().contains(QLatin1String("STOPPED")),
             qPrintable(awaiting.value(QStringLiteral("reason")).toString()));
    const QJsonArray list = deliveries(id);
    QCOMPARE(awaiting.value(QStringLiteral("delivery_id")).toInteger(),
             list.last().toObject().value(QStringLiteral("id")).toInteger());
    QCOMPARE(awaiting.value(QStringLiteral("event_type")).toString(), QStringLiteral("instance.status_changed"));
}

void tst_Destruction::awaitsDestructionAcknowledgement()
{
    DemoProvider provider;
    const qint64 id = newInstance();
    // The provider answers the RUNNING notification of the registration and the STOPPED one,
    // and nothing after them (however soon the retention ends): the instance waits for the
    // destruction callback's acknowledgement. RUNNING is delivered before the stop: its attempt
    // before the provider listened was refused and is retried, and a stop while that retry is
    // due would supersede it (then STOPPED were the provider's first request), or not if the
    // retry came first: which one the second answer went to would depend on timing.
    startProvider(&provider, registerOn(id, &provider, QStringLiteral("/hang-after/2/w")));
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(id).first().toObject().value(QStringLiteral("state")).toString(),
                              QStringLiteral("DELIVERED"), Patience);
    QVERIFY(stop(id));
    // On a failure, what it awaits instead and what its deliveries went through.
    const auto seen = [&] {
        return QJsonDocument(QJsonObject{{QStringLiteral("instance"), instance(id)}, {QStringLiteral("deliveries"), deliveries(id)}})
            .toJson(QJsonDocument::Compact);
    };
    QTRY_VERIFY2_WITH_TIMEOUT(instance(id).value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("reason")).toString().contains(
                                  QLatin1String("destruction")),
                              seen().constData(), Patience);
    const QJsonObject awaiting = instance(id).value(QStringLiteral("awaiting_ack")).toObject();
    const qint64 blocking = awaiting.value(QStringLiteral("delivery_id")).toInteger();
    const QJsonObject d = m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(blocking), m_server->operatorToken()).json();
    QCOMPARE(d.value(QStringLiteral("event_type")).toString(), QStringLiteral("instance.destroyed"));
    QCOMPARE(awaiting.value(QStringLiteral("event_type")).toString(), QStringLiteral("instance.destroyed"));
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));

    // The provider may have deleted it: it does not start again, for its owner nor an operator,
    // and a refusal of another action does not offer start either.
    const qint64 version = instance(id).value(QStringLiteral("version")).toInteger();
    const qsizetype queued = deliveries(id).size();
    for (const QString &token : {m_server->operatorToken(), m_server->token(QStringLiteral("owner"), QStringLiteral("alice"))}) {
        const Reply start = m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, token);
        QCOMPARE(start.status, 409);
        QCOMPARE(start.code(), QStringLiteral("instance-being-destroyed"));
        QVERIFY2(start.json().value(QStringLiteral("detail")).toString().contains(QStringLiteral("delivery %1").arg(blocking)),
                 start.body.constData());
    }
    const Reply stopAgain = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, m_server->operatorToken());
    QCOMPARE(stopAgain.status, 409);
    QCOMPARE(stopAgain.json().value(QStringLiteral("allowed")).toArray(), QJsonArray());
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QCOMPARE(instance(id).value(QStringLiteral("version")).toInteger(), version);
    QCOMPARE(deliveries(id).size(), queued); // no RUNNING notification after the destruction callback
}

void tst_Destruction::awaitingNamesAPausedEndpoint()
{
    // A paused endpoint sends nothing: "delivery 7 is PENDING" alone would read as a provider slow
    // to answer, when the wait is the operator's to end.
    DemoProvider provider; // never started: what is sent fails and is retried
    const qint64 id = newInstance();
    registerOn(id, &provider, QStringLiteral("/ok/paused"));
    const qint64 endpoint = deliveries(id).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    QVERIFY(endpoint > 0);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint), {}, m_server->operatorToken()).status,
             200);
    QVERIFY(stop(id));
    const auto reason = [&] {
        return instance(id).value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("reason")).toString();
    };
    const QString held = QStringLiteral("endpoint %1 is PAUSED").arg(endpoint);
    QTRY_VERIFY_WITH_TIMEOUT(reason().contains(held), Patience);
    QVERIFY2(reason().contains(QLatin1String("STOPPED notification")) && reason().contains(QLatin1String("resume the endpoint")),
             qPrintable(reason()));
    // Resumed, it is sent (and fails, with no provider there): the reason no longer blames the pause.
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint), {}, m_server->operatorToken()).status,
             200);
    QTRY_VERIFY_WITH_TIMEOUT(!reason().contains(held) && reason().contains(QLatin1String("STOPPED notification")), Patience);
}

void tst_Destruction::destructionCallbackOnAPausedEndpoint()
{
    // The STOPPED notification is acknowledged, then the endpoint paused before the retention
    // ends: the destruction callback is queued on a paused endpoint. The instance says so in the
    // change that queues it, one change, not a second one a pass later.
    ServerOptions options;
    options.instanceRetention = std::chrono::seconds(3);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    qint64 org = 0;
    qint64 prov = 0;
    QVERIFY(server.createAcmeAndCrm(&org, &prov));
    const qint64 id = server.createInstance(QStringLiteral("paused-destruction"), org, prov, QStringLiteral("crm"),
                                            QStringLiteral("alice"));
    DemoProvider provider;
    provider.port = freePort();
    const Reply registered = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                         {{QStringLiteral("callback_url"), provider.url(QStringLiteral("/ok/pd"))}},
                                         server.operatorToken());
    QCOMPARE(registered.status, 200);
    startProvider(&provider, registered.json().value(QStringLiteral("secret")).toString());
    const auto list = [&] {
        return server.get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(id), server.operatorToken()).items();
    };
    const qint64 endpoint = list().at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    QCOMPARE(server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(list().last().toObject().value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"),
                              Patience);
    const qint64 seq = server.get(QStringLiteral("/api/v1/events?limit=1"), server.operatorToken())
                           .json()
                           .value(QStringLiteral("last_seq"))
                           .toInteger();
    QCOMPARE(server.post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint), {}, server.operatorToken()).status, 200);
    const auto awaiting = [&] {
        return server.get(QStringLiteral("/api/v1/instances/%1").arg(id), server.operatorToken())
            .json()
            .value(QStringLiteral("awaiting_ack"))
            .toObject();
    };
    QTRY_COMPARE_WITH_TIMEOUT(awaiting().value(QStringLiteral("event_type")).toString(), QStringLiteral("instance.destroyed"),
                              Patience);
    const QString reason = awaiting().value(QStringLiteral("reason")).toString();
    QVERIFY2(reason.startsWith(QLatin1String("the destruction callback"))
                 && reason.contains(QStringLiteral("endpoint %1 is PAUSED").arg(endpoint)),
             qPrintable(reason));
    QTest::qWait(300); // several sweep passes
    int changes = 0;
    const QJsonArray events = server.get(QStringLiteral("/api/v1/events?after=%1&limit=1000").arg(seq), server.operatorToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    for (const QJsonValue &e : events) {
        const QJsonObject o = e.toObject();
        if (o.value(QStringLiteral("kind")).toString() == QLatin1String("instance") && o.value(QStringLiteral("id")).toInteger() == id)
            ++changes;
    }
    QCOMPARE(changes, 1);
}

void tst_Destruction::restartedInstanceIsKept()
{
    const qint64 id = newInstance();
    QVERIFY(!m_server->registerInstance(id).isEmpty());
    QVERIFY(stop(id));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, m_server->operatorToken()).status, 200);
    QVERIFY(instance(id).value(QStringLiteral("destroy_after")).isNull());
    // Another instance stopped now is destroyed after retention; the restarted one is not.
    const qint64 witness = newInstance();
    QVERIFY(stop(witness));
    QTRY_COMPARE_WITH_TIMEOUT(instance(witness).value(QStringLiteral("status")).toString(), QStringLiteral("DESTROYED"), Patience);
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
}

void tst_Destruction::restartedInstanceAwaitsNothing()
{
    DemoProvider provider;
    const qint64 id = newInstance();
    startProvider(&provider, registerOn(id, &provider, QStringLiteral("/fail/r")));
    QVERIFY(stop(id));
    QTRY_VERIFY_WITH_TIMEOUT(!instance(id).value(QStringLiteral("awaiting_ack")).isNull(), Patience);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, m_server->operatorToken()).status, 200);
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
    QVERIFY(instance(id).value(QStringLiteral("awaiting_ack")).isNull());
    // Nor once a later sweep has passed (a witness stopped now is destroyed by one).
    const qint64 witness = newInstance();
    QVERIFY(stop(witness));
    QTRY_COMPARE_WITH_TIMEOUT(instance(witness).value(QStringLiteral("status")).toString(), QStringLiteral("DESTROYED"), Patience);
    QVERIFY(instance(id).value(QStringLiteral("awaiting_ack")).isNull());
    // Stopped again, it awaits nothing before its new retention ends: the old reason named a
    // notification that the new one superseded.
    const QJsonObject stoppedAgain = stopped(id);
    QVERIFY(!stoppedAgain.isEmpty());
    QVERIFY(stoppedAgain.value(QStringLiteral("awaiting_ack")).isNull());
}

QTEST_MAIN(tst_Destruction)
#include "tst_destruction.moc"
