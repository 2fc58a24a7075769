// Instance destruction after retention: only once the provider acknowledged STOPPED and the destruction callback.
#include "lockwait.h"
#include "testserver.h"
#include "testsupport.h"

#include "core/delivery.h"
#include "core/instance.h"
#include "server/api/instancesapi.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/destructionsweep.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlResult>
#include <QTcpServer>
#include <QtTest>

#include <sqlite3.h>

#include <atomic>

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

// The sweep alone on a database of its own, one pass at a time, with a page of a few instances so
// that a few more than a page of them stand for the hundreds a provider can leave unacknowledged.
class SweepRig final
{
public:
    static constexpr int PageSize = 3;
    static inline const QString CallbackUrl = QStringLiteral("https://provider.example/hook");

    SweepRig()
        : m_db(m_scratch.url())
        , m_journal(m_db)
        , m_repository(m_db, m_journal)
        , m_sweep(m_db, m_journal, m_repository, m_options, PageSize)
    {
    }

    // The schema, an organization, a provider and its endpoint; empty or why not.
    QString open()
    {
        if (!m_scratch.isValid())
            return m_scratch.error();
        Problem problem;
        if (!m_db.open(&problem) || !m_db.migrate(&problem))
            return problem.detail;
        const QString now = nowTimestamp();
        m_organization = insert(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                               " VALUES ('acme', 'ACTIVE', 1, ?, ?) RETURNING id"),
                                {now, now});
        m_provider = insert(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at,"
                                           " updated_at) VALUES ('crm', ?, '[\"crm\"]', 1, ?, ?) RETURNING id"),
                            {m_organization, now, now});
        m_endpoint = insert(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                           " VALUES (?, ?, 'ACTIVE', 1, ?, ?) RETURNING id"),
                            {m_provider, CallbackUrl, now, now});
        return m_endpoint > 0 ? QString() : m_error;
    }

    // A STOPPED instance whose retention ends at destroyAfter; 0 on failure (see error()).
    qint64 stoppedInstance(const QString &destroyAfter, bool withCallback)
    {
        const QString now = nowTimestamp();
        return insert(QStringLiteral("INSERT INTO instances (name, organization_id, provider_id, application, owner, status,"
                                     " version, created_at, updated_at, status_changed_at, callback_url, destroy_after)"
                                     " VALUES (?, ?, ?, 'crm', 'alice', 'STOPPED', 1, ?, ?, ?, ?, ?) RETURNING id"),
                      {QStringLiteral("i%1").arg(++m_serial), m_organization, m_provider, now, now, now,
                       withCallback ? QVariant(CallbackUrl) : QVariant(), destroyAfter});
    }

    // A notification of the instance in that state, as the outbox left it; 0 on failure.
    qint64 notification(qint64 instance, const QString &eventType, const QString &state)
    {
        const QString now = nowTimestamp();
        return insert(QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                     " state, body, attempts, created_at, updated_at, version)"
                                     " VALUES (?, ?, ?, ?, ?, ?, '{}', 1, ?, ?, 1) RETURNING id"),
                      {QStringLiteral("msg_rig%1").arg(++m_serial), eventType, instance, m_provider, m_endpoint, state, now,
                       now});
    }

    // The provider answered (or gave up on) a delivery.
    bool settle(qint64 delivery, const QString &state)
    {
        return insert(QStringLiteral("UPDATE deliveries SET state = ? WHERE id = ? RETURNING id"), {state, delivery})
               == delivery;
    }

    // The instance's notifications of that kind, oldest first.
    QList<qint64> notifications(qint64 instance, const QString &eventType)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT id FROM deliveries WHERE instance_id = ? AND event_type = ? ORDER BY id"));
        q.addBindValue(instance);
        q.addBindValue(eventType);
        QList<qint64> ids;
        if (q.exec())
            while (q.next())
                ids.append(q.value(0).toLongLong());
        return ids;
    }

    QString eventType(qint64 delivery)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT event_type FROM deliveries WHERE id = ?"));
        q.addBindValue(delivery);
        return q.exec() && q.next() ? q.value(0).toString() : QString();
    }

    // The instance as the API shows it.
    QJsonObject instance(qint64 id)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT ") + InstancesApi::columns() + QStringLiteral(" FROM instances WHERE id = ?"));
        q.addBindValue(id);
        return q.exec() && q.next() ? InstancesApi::instanceJson(q) : QJsonObject();
    }

    // One pass: how many instances changed, or -1 (see error()).
    int pass()
    {
        Problem problem;
        const int changed = m_sweep.run(&problem);
        if (changed < 0)
            m_error = problem.detail;
        return changed;
    }

    QString error() const { return m_error; }
    QString url() const { return m_scratch.url(); }

    // SQLite's virtual machine steps spent reading the page of due instances in one pass; -1 when
    // the pass failed or the statement is not at hand.
    qint64 pageReadSteps()
    {
        QSqlQuery &q = m_db.query(DestructionSweep::dueSql(false));
        const QVariant handle = q.result()->handle();
        if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3_stmt*") != 0)
            return -1;
        sqlite3_stmt *statement = *static_cast<sqlite3_stmt *const *>(handle.constData());
        if (!statement)
            return -1;
        sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 1);
        if (pass() < 0)
            return -1;
        return sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0);
    }

private:
    qint64 insert(const QString &sql, const QVariantList &values)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(sql);
        for (const QVariant &v : values)
            q.addBindValue(v);
        if (q.exec() && q.next())
            return q.value(0).toLongLong();
        m_error = q.lastError().text();
        return 0;
    }

    TestDatabase m_scratch;
    Database m_db;
    Journal m_journal;
    DeliveryRepository m_repository;
    ServerOptions m_options;
    DestructionSweep m_sweep;
    qint64 m_organization = 0;
    qint64 m_provider = 0;
    qint64 m_endpoint = 0;
    int m_serial = 0;
    QString m_error;
};

// Passes that visit every one of `due` instances once, wherever the previous pass stopped: the
// pages up to the newest, then from the oldest again.
int round(int due)
{
    return (due + SweepRig::PageSize - 1) / SweepRig::PageSize + 1;
}

QString awaitingReason(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("reason")).toString();
}

qint64 awaitingDelivery(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("delivery_id")).toInteger();
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
    void sweepReachesPastStuckPages_data();
    void sweepReachesPastStuckPages();
    void sweepStartsOverFromTheOldest_data();
    void sweepStartsOverFromTheOldest();
    void pageAfterTheCursorSeeksPastWhatWasRead();
    void concurrentSweepsQueueOneCallback();

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

void tst_Destruction::sweepReachesPastStuckPages_data()
{
    QTest::addColumn<int>("stuck");
    QTest::addColumn<bool>("sameDeadline");
    QTest::addColumn<bool>("readyHasCallback");
    QTest::newRow("no callback, after 7 stuck") << 7 << false << false;
    QTest::newRow("no callback, same deadline as 7 stuck") << 7 << true << false;
    QTest::newRow("STOPPED acknowledged, after 7 stuck") << 7 << false << true;
    QTest::newRow("STOPPED acknowledged, same deadline, whole pages") << 5 << true << true;
}

// Instances whose STOPPED notification waits for the provider stay due; however many fill the
// oldest pages, one that can be destroyed is reached within a round of passes.
void tst_Destruction::sweepReachesPastStuckPages()
{
    QFETCH(int, stuck);
    QFETCH(bool, sameDeadline);
    QFETCH(bool, readyHasCallback);
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString oldest = timestamp(now.addSecs(-7200));
    QList<qint64> stuckIds;
    QList<qint64> blocking;
    for (int i = 0; i < stuck; ++i) {
        stuckIds.append(rig.stoppedInstance(oldest, true));
        blocking.append(rig.notification(stuckIds.last(), Instance::StatusChangedEvent, i % 2 ? Delivery::Failed : Delivery::Pending));
        QVERIFY2(blocking.last() > 0, qPrintable(rig.error()));
    }
    const qint64 ready = rig.stoppedInstance(sameDeadline ? oldest : timestamp(now.addSecs(-3600)), readyHasCallback);
    QVERIFY2(ready > 0, qPrintable(rig.error()));
    const int passes = round(stuck + 1);
    if (readyHasCallback) {
        QVERIFY2(rig.notification(ready, Instance::StatusChangedEvent, Delivery::Delivered) > 0, qPrintable(rig.error()));
        for (int pass = 0; pass < passes && awaitingDelivery(rig.instance(ready)) == 0; ++pass)
            QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
        const QJsonObject waiting = rig.instance(ready);
        QVERIFY2(awaitingReason(waiting).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(waiting)));
        QCOMPARE(rig.eventType(awaitingDelivery(waiting)), Instance::DestroyedEvent);
        QVERIFY(rig.settle(awaitingDelivery(waiting), Delivery::Delivered));
    }
    for (int pass = 0; pass < passes && rig.instance(ready).value(QStringLiteral("status")) != Instance::Destroyed; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    QCOMPARE(rig.instance(ready).value(QStringLiteral("status")).toString(), Instance::Destroyed);

    // Every stuck instance was visited on the way and shows what blocks it; further rounds change
    // none of them again (no new version, no feed event).
    QList<qint64> versions;
    for (int i = 0; i < stuck; ++i) {
        const QJsonObject o = rig.instance(stuckIds.at(i));
        QCOMPARE(o.value(QStringLiteral("status")).toString(), Instance::Stopped);
        QVERIFY2(awaitingReason(o).contains(QLatin1String("STOPPED")), qPrintable(awaitingReason(o)));
        QCOMPARE(awaitingDelivery(o), blocking.at(i));
        versions.append(o.value(QStringLiteral("version")).toInteger());
    }
    for (int pass = 0; pass < 2 * passes; ++pass)
        QCOMPARE(rig.pass(), 0);
    for (int i = 0; i < stuck; ++i) {
        const QJsonObject o = rig.instance(stuckIds.at(i));
        QCOMPARE(awaitingDelivery(o), blocking.at(i));
        QCOMPARE(o.value(QStringLiteral("version")).toInteger(), versions.at(i));
    }
}

// Many instances whose retention ends at one instant (a bulk stop), all stuck: a pass reads its
// page of them, not every one before the cursor again, or a round costs the square of them.
void tst_Destruction::pageAfterTheCursorSeeksPastWhatWasRead()
{
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    if (TestDatabase::wantsPostgres())
        QSKIP("PostgreSQL seeks the cursor's row comparison in the index; tst_queryplans checks the plan");
    const QString deadline = timestamp(QDateTime::currentDateTimeUtc().addSecs(-3600));
    const int stuck = 150;
    for (int i = 0; i < stuck; ++i) {
        const qint64 instance = rig.stoppedInstance(deadline, true);
        QVERIFY2(instance > 0 && rig.notification(instance, Instance::StatusChangedEvent, Delivery::Pending) > 0,
                 qPrintable(rig.error()));
    }
    QVERIFY2(rig.pass() >= 0, qPrintable(rig.error())); // the statement prepared, the cursor a page in
    const qint64 early = rig.pageReadSteps();
    QVERIFY2(early > 0, qPrintable(rig.error()));
    for (int pass = 0; pass < 40; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    const qint64 late = rig.pageReadSteps(); // the cursor ~130 instances in
    QVERIFY2(late > 0, qPrintable(rig.error()));
    QVERIFY2(late < 2 * early, qPrintable(QStringLiteral("%1 steps a page in, %2 steps 40 pages in").arg(early).arg(late)));
}

void tst_Destruction::sweepStartsOverFromTheOldest_data()
{
    QTest::addColumn<int>("acknowledged");
    QTest::newRow("the oldest") << 0;
    QTest::newRow("one in the middle page") << 4;
    QTest::newRow("the newest") << 7;
}

// A stuck instance whose STOPPED notification the provider acknowledges later, wherever the last
// pass stopped, gets its destruction callback within a round.
void tst_Destruction::sweepStartsOverFromTheOldest()
{
    QFETCH(int, acknowledged);
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const int stuck = 8;
    QList<qint64> stuckIds;
    QList<qint64> blocking;
    for (int i = 0; i < stuck; ++i) {
        stuckIds.append(rig.stoppedInstance(timestamp(now.addSecs(-7200 + i)), true));
        blocking.append(rig.notification(stuckIds.last(), Instance::StatusChangedEvent, Delivery::Pending));
        QVERIFY2(blocking.last() > 0, qPrintable(rig.error()));
    }
    // A round and then some, so the next pass starts in the middle.
    for (int pass = 0; pass < round(stuck) + 1; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    for (int i = 0; i < stuck; ++i)
        QCOMPARE(awaitingDelivery(rig.instance(stuckIds.at(i))), blocking.at(i));

    QVERIFY(rig.settle(blocking.at(acknowledged), Delivery::Delivered));
    const qint64 id = stuckIds.at(acknowledged);
    for (int pass = 0; pass < round(stuck) && awaitingDelivery(rig.instance(id)) == blocking.at(acknowledged); ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    const QJsonObject o = rig.instance(id);
    QVERIFY2(awaitingReason(o).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(o)));
    QCOMPARE(rig.eventType(awaitingDelivery(o)), Instance::DestroyedEvent);
}

// Two replicas sweep one instance at the same moment (PostgreSQL): the other replica's sweep has
// queued the destruction callback and not committed yet. This sweep must wait for it and then
// await that callback; otherwise neither sees the other's and the provider is told twice.
void tst_Destruction::concurrentSweepsQueueOneCallback()
{
    if (!TestDatabase::wantsPostgres())
        QSKIP("replicas race on PostgreSQL only; SQLite's write transaction (BEGIN IMMEDIATE) lets one writer in at a time");
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const qint64 id = rig.stoppedInstance(timestamp(QDateTime::currentDateTimeUtc().addSecs(-3600)), true);
    QVERIFY2(id > 0, qPrintable(rig.error()));
    const qint64 stopped = rig.notification(id, Instance::StatusChangedEvent, Delivery::Delivered);
    QVERIFY2(stopped > 0, qPrintable(rig.error()));

    std::atomic<qint64> theirs{0};
    LockHolder replica(rig.url(), [&](QSqlQuery &q) {
        // What the other sweep's enqueue writes; its foreign key share-locks the instance row, the
        // one lock the holder has that the sweep could want.
        if (!execWith(q,
                      QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                     " state, body, attempts, next_attempt_at, created_at, updated_at, version)"
                                     " SELECT 'msg_other_replica', ?, instance_id, provider_id, endpoint_id, 'PENDING', '{}', 0,"
                                     " updated_at, updated_at, updated_at, 1 FROM deliveries WHERE id = ? RETURNING id"),
                      {Instance::DestroyedEvent, stopped})
            || !q.next())
            return false;
        theirs = q.value(0).toLongLong();
        return true;
    });
    QVERIFY(replica.start());

    const int changed = rig.pass(); // waits on this thread until the other replica commits
    const bool sweepWaited = replica.finish();
    QVERIFY2(changed >= 0, qPrintable(rig.error()));

    // The other replica's callback is the only one, and the instance awaits it.
    QCOMPARE(rig.notifications(id, Instance::DestroyedEvent), QList<qint64>{theirs.load()});
    const QJsonObject o = rig.instance(id);
    QCOMPARE(o.value(QStringLiteral("status")).toString(), Instance::Stopped);
    QCOMPARE(awaitingDelivery(o), theirs.load());
    QVERIFY2(awaitingReason(o).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(o)));
    // The sweep reached the instance's lock while the other replica held it (not after its commit).
    QVERIFY(sweepWaited);
}

QTEST_MAIN(tst_Destruction)
#include "tst_destruction.moc"
