// Instance destruction after retention: only once the provider acknowledged STOPPED and the destruction callback.
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
    void restartedInstanceIsKept();

private:
    qint64 newInstance();
    QString registerOn(qint64 instance, DemoProvider *provider, const QString &path);
    void startProvider(DemoProvider *provider, const QString &secret);
    QJsonObject instance(qint64 id);
    QJsonArray deliveries(qint64 instance);
    QList<QJsonObject> logLines(const DemoProvider &provider) const;
    bool stop(qint64 id);

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
    m_org = m_server->createOrganization(QStringLiteral("acme"));
    m_provider = m_server->createProvider(QStringLiteral("crm"), m_org, {QStringLiteral("crm")});
    QVERIFY(m_org > 0 && m_provider > 0);
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

bool tst_Destruction::stop(qint64 id)
{
    return m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, m_server->operatorToken()).status == 200;
}

void tst_Destruction::withoutCallbackDestroyedAfterRetention()
{
    const qint64 id = newInstance();
    QVERIFY(stop(id)); // a pending instance can be stopped; it never registered a callback
    QVERIFY(!instance(id).value(QStringLiteral("destroy_after")).isNull());
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
}

void tst_Destruction::awaitsDestructionAcknowledgement()
{
    DemoProvider provider;
    const qint64 id = newInstance();
    startProvider(&provider, registerOn(id, &provider, QStringLiteral("/ok/w")));
    QVERIFY(stop(id));
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(id).last().toObject().value(QStringLiteral("state")).toString(),
                              QStringLiteral("DELIVERED"), Patience);
    // The provider goes away before the destruction callback: the instance waits for it.
    provider.process->kill();
    provider.process->waitForFinished(5000);
    QTRY_VERIFY_WITH_TIMEOUT(instance(id).value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("reason")).toString().contains(
                                 QLatin1String("destruction")),
                             Patience);
    const qint64 blocking = instance(id).value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("delivery_id")).toInteger();
    const QJsonObject d = m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(blocking), m_server->operatorToken()).json();
    QCOMPARE(d.value(QStringLiteral("event_type")).toString(), QStringLiteral("instance.destroyed"));
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
}

void tst_Destruction::restartedInstanceIsKept()
{
    const qint64 id = newInstance();
    QVERIFY(stop(id));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, m_server->operatorToken()).status, 200);
    QVERIFY(instance(id).value(QStringLiteral("destroy_after")).isNull());
    // Another instance stopped now is destroyed after retention; the restarted one is not.
    const qint64 witness = newInstance();
    QVERIFY(stop(witness));
    QTRY_COMPARE_WITH_TIMEOUT(instance(witness).value(QStringLiteral("status")).toString(), QStringLiteral("DESTROYED"), Patience);
    QCOMPARE(instance(id).value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
}

QTEST_MAIN(tst_Destruction)
#include "tst_destruction.moc"
