// Leases of a server of its own whose one endpoint answers slowly: what a clean stop gives back,
// and a backlog that waits longer than a lease for its slot, sent once and never taken over.
#include "callbackfixture.h"
#include "testserver.h"
#include "testsupport.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

constexpr int Patience = 20000;
const QString Interrupted = QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE error_class = 'interrupted'");

} // namespace

class tst_DeliveryLeases : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void shutdownGivesBackWhatItNeverSent();
    void slowBacklogIsSentOnceAndNeverInterrupted();

private:
    // A server with `options` whose endpoint (the demo provider at `path`) has `instances`
    // registered instances, each with its first notification queued; empty when it failed.
    QList<qint64> startSlowEndpoint(const ServerOptions &options, int instances, const QString &path);
    int count(const QString &sql);

    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<DemoProvider> m_provider;
    std::unique_ptr<Database> m_db;
};

void tst_DeliveryLeases::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(demoProviderPath()), qPrintable(demoProviderPath()));
}

void tst_DeliveryLeases::cleanup()
{
    m_db.reset();
    m_server.reset();
    m_provider.reset();
}

QList<qint64> tst_DeliveryLeases::startSlowEndpoint(const ServerOptions &options, int instances, const QString &path)
{
    m_server = std::make_unique<TestServer>(options);
    if (!m_server->isRunning())
        return {};
    const qint64 org = m_server->createOrganization(QStringLiteral("leases"));
    const qint64 provider = m_server->createProvider(QStringLiteral("slow"), org, {QStringLiteral("crm")});
    m_provider = std::make_unique<DemoProvider>();
    startProvider(m_provider.get(), {});
    const QString token = m_server->token(QStringLiteral("provider"), QString::number(provider));
    QList<qint64> ids;
    for (int i = 0; i < instances; ++i) {
        const qint64 instance = m_server->createInstance(QStringLiteral("slow%1").arg(i), org, provider, QStringLiteral("crm"),
                                                         QStringLiteral("alice"));
        if (m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                           {{QStringLiteral("callback_url"), m_provider->url(path)}}, token)
                .status
            != 200)
            return {};
        ids.append(instance);
    }
    m_db = std::make_unique<Database>(m_server->databaseUrl());
    return m_db->open() ? ids : QList<qint64>();
}

int tst_DeliveryLeases::count(const QString &sql)
{
    QSqlQuery q(m_db->connection());
    return q.exec(sql) && q.next() ? q.value(0).toInt() : -1;
}

void tst_DeliveryLeases::shutdownGivesBackWhatItNeverSent()
{
    // An endpoint that answers in 2 s: once it has answered well, 4 attempts go out at a time and
    // more wait, claimed, for a slot. A server stopped then leaves the leases of those on the
    // wire to expire (the next holder logs their attempts as interrupted) and gives the waiting
    // ones back: they were never sent, and no attempt of theirs may be logged.
    ServerOptions options;
    options.endpointConcurrency = 4;
    options.endpointStallAfter = std::chrono::minutes(1);
    QCOMPARE(startSlowEndpoint(options, 12, QStringLiteral("/slow/2000/x")).size(), 12);
    const QString leased = QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND lease_owner IS NOT NULL");
    // The first answer came: 4 of the other 11 are on the wire for the next 2 s, the rest claimed.
    // The worker's own figures say when it has the claim: the claim's rows are committed a moment
    // before its answer reaches the worker, and a server stopped in between sends none of them.
    QTRY_VERIFY_WITH_TIMEOUT(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) >= 1, Patience);
    QTRY_VERIFY_WITH_TIMEOUT(m_server->metric("opsdeck_delivery_attempts_waiting", "endpoints=\"answering\"") > 0, Patience);
    m_server->controlPlane().stop();
    const int onTheWire = count(leased);
    QVERIFY2(onTheWire >= 1 && onTheWire <= 4, qPrintable(QString::number(onTheWire)));
    // The next holder, once the leases expired, logs exactly those attempts as interrupted.
    QSqlQuery expire(m_db->connection());
    QVERIFY(expire.exec(QStringLiteral("UPDATE deliveries SET lease_until = '2000-01-01T00:00:00.000Z' WHERE lease_owner IS NOT NULL")));
    Journal journal(*m_db);
    DeliveryRepository repository(*m_db, journal);
    Problem problem;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QCOMPARE(repository.claim(QStringLiteral("w-next"), now, now.addSecs(60), 100, {}, &problem).size(), 11);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(count(Interrupted), onTheWire);
}

void tst_DeliveryLeases::slowBacklogIsSentOnceAndNeverInterrupted()
{
    // One slot, answers in 1.5 s, a 2 s timeout (leases of 9 s): once the endpoint has answered
    // well, one claim takes its whole backlog, most of which waits longer than a lease for the
    // slot. What could no longer finish inside its lease goes back to be claimed again; none may
    // sit in the queue with its lease expired, for a newer notification superseding it to log an
    // attempt that never went out.
    ServerOptions options;
    options.endpointConcurrency = 1;
    options.deliveryTimeout = std::chrono::seconds(2);
    options.endpointStallAfter = std::chrono::minutes(1);
    const QList<qint64> instances = startSlowEndpoint(options, 9, QStringLiteral("/slow/1500/x"));
    QCOMPARE(instances.size(), 9);
    QTRY_VERIFY_WITH_TIMEOUT(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) >= 1, Patience);
    // Past the leases of the claim that took the backlog: the instances still waiting stop, and
    // their new notifications supersede the waiting ones.
    QTest::qWait(10000);
    int stopped = 0;
    for (const qint64 instance : instances) {
        if (count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE instance_id = %1 AND state = 'PENDING'").arg(instance)) > 0) {
            QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status,
                     200);
            ++stopped;
        }
    }
    qInfo("%d instances still waiting stopped", stopped);
    QTRY_COMPARE_WITH_TIMEOUT(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING'")), 0, 4 * Patience);
    QCOMPARE(count(Interrupted), 0);
    // Every notification sent went out once.
    QSet<QString> seen;
    for (const QJsonObject &line : logLines(*m_provider)) {
        const QString webhookId = line.value(QStringLiteral("webhook_id")).toString();
        QVERIFY2(!seen.contains(webhookId), qPrintable(webhookId));
        seen.insert(webhookId);
    }
    QVERIFY(!seen.isEmpty());
}

QTEST_MAIN(tst_DeliveryLeases)
#include "tst_deliveryleases.moc"
