// Leases of a server of its own whose endpoints answer slowly or not at all: what a clean stop
// gives back, a backlog that waits longer than a lease for its slot, sent once and never taken
// over, a failing endpoint's backlog leased one attempt at a time, and a notification
// superseded on the wire, its lease kept and its late 2xx counted.
#include "callbackfixture.h"
#include "testserver.h"
#include "testsupport.h"

#include "server/feed/changefeed.h"
#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QSet>
#include <QSqlQuery>
#include <QtTest>

#include <algorithm>
#include <functional>
#include <memory>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

constexpr int Patience = 20000;
const QString Interrupted = QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE error_class = 'interrupted'");
const QString Leased = QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND lease_owner IS NOT NULL");

// A loopback port that completes the handshake of one connection and of no other: it listens
// with no backlog and never accepts, so further connections stay in SYN_SENT. (With a backlog of
// none, Linux completes even the first only through a SYN cookie: tcp_syncookies must be on, as
// it is by default.)
class FullBacklog
{
public:
    FullBacklog()
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr *>(&address), length) != 0 || ::listen(m_fd, 0) != 0
            || ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&address), &length) != 0)
            return;
        m_port = ntohs(address.sin_port);
    }
    ~FullBacklog()
    {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    FullBacklog(const FullBacklog &) = delete;
    FullBacklog &operator=(const FullBacklog &) = delete;

    quint16 port() const { return m_port; } // 0 when it could not listen
    // Connections completed and waiting to be accepted (-1 when that cannot be read).
    int completed() const
    {
        tcp_info info{};
        socklen_t length = sizeof info;
        return ::getsockopt(m_fd, IPPROTO_TCP, TCP_INFO, &info, &length) == 0 ? int(info.tcpi_unacked) : -1;
    }

private:
    int m_fd = -1;
    quint16 m_port = 0;
};

} // namespace

class tst_DeliveryLeases : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanup();
    void shutdownGivesBackWhatItNeverSent();
    void shutdownGivesBackAttemptsStillConnecting();
    void slowBacklogIsSentOnceAndNeverInterrupted();
    void failingEndpointIsLeasedOneAttemptAtATime_data();
    void failingEndpointIsLeasedOneAttemptAtATime();
    void failureGivesBackWhatWaited();
    void supersedeKeepsInFlightLease();
    void supersededInFlightAcknowledgedIsDelivered();

private:
    // A server with `options` and `instances` instances, the i-th registered with its callback at
    // callbackUrl(i) (the demo provider runs), each with its first notification queued; their
    // ids, or empty when something failed.
    QList<qint64> startInstances(const ServerOptions &options, int instances, const std::function<QString(int)> &callbackUrl,
                                 const QStringList &providerArgs = {});
    // The same with every callback at `path` of the demo provider, the notifications all due at
    // once: the endpoint is paused while the instances after the first register, then resumed.
    // The instances, or empty when something failed.
    QList<qint64> startBacklog(const ServerOptions &options, int instances, const QString &path,
                               const QStringList &providerArgs = {});
    // The same with every callback at `path` of the demo provider: one endpoint.
    QList<qint64> startSlowEndpoint(const ServerOptions &options, int instances, const QString &path)
    {
        return startInstances(options, instances, [this, path](int) { return m_provider->url(path); });
    }
    // One instance at `path` of the demo provider, on a server with a timeout long enough for
    // every step of a test to happen while its first notification is on the wire; 0 on failure.
    qint64 startOneInstance(const QString &path)
    {
        ServerOptions options;
        options.deliveryTimeout = std::chrono::seconds(30);
        options.endpointStallAfter = std::chrono::minutes(1);
        return startSlowEndpoint(options, 1, path).value(0);
    }
    // Expires every lease held and claims all that is due, as the next holder would: how many.
    qsizetype claimAfterTheLeasesExpired();
    int count(const QString &sql);
    // The first column of the first row of `sql`, as text ("<none>" when there is none).
    QString text(const QString &sql);
    qint64 firstDelivery(qint64 instance) { return count(QStringLiteral("SELECT MIN(id) FROM deliveries WHERE instance_id = %1").arg(instance)); }
    qint64 newestDelivery(qint64 instance) { return count(QStringLiteral("SELECT MAX(id) FROM deliveries WHERE instance_id = %1").arg(instance)); }
    QString leaseOwner(qint64 delivery) { return text(QStringLiteral("SELECT lease_owner FROM deliveries WHERE id = %1").arg(delivery)); }
    QJsonObject delivery(qint64 id)
    {
        return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken()).json();
    }
    // Stops the instance through the API; its answer's status.
    int stop(qint64 instance)
    {
        return m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status;
    }

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

QList<qint64> tst_DeliveryLeases::startBacklog(const ServerOptions &options, int instances, const QString &path,
                                               const QStringList &providerArgs)
{
    qint64 endpoint = 0;
    const QList<qint64> started = startInstances(
        options, instances,
        [&](int i) {
            if (i == 1) {
                const QJsonArray endpoints = m_server->get(QStringLiteral("/api/v1/endpoints"), m_server->operatorToken()).items();
                endpoint = endpoints.isEmpty() ? 0 : endpoints.first().toObject().value(QStringLiteral("id")).toInteger();
                m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint), {}, m_server->operatorToken());
            }
            return m_provider->url(path);
        },
        providerArgs);
    if (started.size() != instances
        || text(QStringLiteral("SELECT state FROM endpoints WHERE id = %1").arg(endpoint)) != QLatin1String("PAUSED")
        || m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint), {}, m_server->operatorToken()).status != 200)
        return {};
    return started;
}

QList<qint64> tst_DeliveryLeases::startInstances(const ServerOptions &options, int instances,
                                                 const std::function<QString(int)> &callbackUrl, const QStringList &providerArgs)
{
    m_server = std::make_unique<TestServer>(options);
    if (!m_server->isRunning())
        return {};
    const qint64 org = m_server->createOrganization(QStringLiteral("leases"));
    const qint64 provider = m_server->createProvider(QStringLiteral("slow"), org, {QStringLiteral("crm")});
    m_provider = std::make_unique<DemoProvider>();
    startProvider(m_provider.get(), {}, providerArgs);
    const QString token = m_server->token(QStringLiteral("provider"), QString::number(provider));
    QList<qint64> ids;
    for (int i = 0; i < instances; ++i) {
        const qint64 instance = m_server->createInstance(QStringLiteral("slow%1").arg(i), org, provider, QStringLiteral("crm"),
                                                         QStringLiteral("alice"));
        if (m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                           {{QStringLiteral("callback_url"), callbackUrl(i)}}, token)
                .status
            != 200)
            return {};
        ids.append(instance);
    }
    m_db = std::make_unique<Database>(m_server->databaseUrl());
    return m_db->open() ? ids : QList<qint64>();
}

qsizetype tst_DeliveryLeases::claimAfterTheLeasesExpired()
{
    QSqlQuery expire(m_db->connection());
    if (!expire.exec(QStringLiteral("UPDATE deliveries SET lease_until = '2000-01-01T00:00:00.000Z' WHERE lease_owner IS NOT NULL")))
        return -1;
    Journal journal(*m_db);
    DeliveryRepository repository(*m_db, journal);
    Problem problem;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const qsizetype claimed = repository.claim(QStringLiteral("w-next"), now, now.addSecs(60), 100, {}, &problem).size();
    return problem.isNull() ? claimed : -1;
}

int tst_DeliveryLeases::count(const QString &sql)
{
    QSqlQuery q(m_db->connection());
    return q.exec(sql) && q.next() ? q.value(0).toInt() : -1;
}

QString tst_DeliveryLeases::text(const QString &sql)
{
    QSqlQuery q(m_db->connection());
    return q.exec(sql) && q.next() ? q.value(0).toString() : QStringLiteral("<none>");
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
    // The first answer came: 4 of the other 11 are on the wire for the next 2 s, the rest claimed.
    // The worker's own figures say when it has the claim: the claim's rows are committed a moment
    // before its answer reaches the worker, and a server stopped in between sends none of them.
    QTRY_VERIFY_WITH_TIMEOUT(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) >= 1, Patience);
    QTRY_VERIFY_WITH_TIMEOUT(m_server->metric("opsdeck_delivery_attempts_waiting", "endpoints=\"answering\"") > 0, Patience);
    m_server->controlPlane().stop();
    const int onTheWire = count(Leased);
    QVERIFY2(onTheWire >= 1 && onTheWire <= 4, qPrintable(QString::number(onTheWire)));
    // The next holder, once the leases expired, logs exactly those attempts as interrupted.
    const int pending = count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING'"));
    QCOMPARE(claimAfterTheLeasesExpired(), pending);
    QCOMPARE(count(Interrupted), onTheWire);
}

void tst_DeliveryLeases::shutdownGivesBackAttemptsStillConnecting()
{
    // Three endpoints on a host that completes one connection's handshake and no other's: one
    // attempt is written and never answered, two are still connecting when the server stops.
    // Those two cannot have reached their endpoints: they go back, and no attempt of theirs is
    // logged; the one written keeps its lease for the next holder to log as interrupted.
    QFile syncookies(QStringLiteral("/proc/sys/net/ipv4/tcp_syncookies"));
    if (!syncookies.open(QIODevice::ReadOnly) || syncookies.readAll().trimmed() == "0")
        QSKIP("TCP SYN cookies are off here: a listener with no backlog completes no connection at all");
    FullBacklog host;
    QVERIFY(host.port() != 0);
    ServerOptions options;
    options.deliveryTimeout = std::chrono::minutes(1);
    options.endpointStallAfter = std::chrono::minutes(1);
    const auto url = [&host](int i) { return QStringLiteral("http://127.0.0.1:%1/hook/%2").arg(host.port()).arg(i); };
    QCOMPARE(startInstances(options, 3, url).size(), 3);
    QTRY_COMPARE_WITH_TIMEOUT(m_server->metric("opsdeck_delivery_attempts_in_flight", "endpoints=\"probing\""), 3.0, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(host.completed(), 1, Patience);
    QCOMPARE(count(Leased), 3);
    m_server->controlPlane().stop();
    QCOMPARE(count(Leased), 1);
    QCOMPARE(claimAfterTheLeasesExpired(), 3);
    QCOMPARE(count(Interrupted), 1);
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

void tst_DeliveryLeases::failingEndpointIsLeasedOneAttemptAtATime_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("timeoutMs");
    QTest::addColumn<bool>("inFlightSeen"); // whether an attempt lasts long enough to be seen leased
    QTest::newRow("answers 500") << QStringLiteral("/fail/x") << 15000 << false;
    QTest::newRow("hangs") << QStringLiteral("/hang/x") << 300 << true;
}

void tst_DeliveryLeases::failingEndpointIsLeasedOneAttemptAtATime()
{
    // An endpoint that has not answered well gets one attempt at a time. Its backlog must not be
    // leased to this worker meanwhile, waiting behind that attempt: another replica could not
    // send it, and a lease outlived by the wait goes back unsent. Every delivery still gets its
    // attempt, one after the other.
    QFETCH(QString, path);
    QFETCH(int, timeoutMs);
    QFETCH(bool, inFlightSeen);
    constexpr int instances = 12;
    ServerOptions options;
    options.deliveryTimeout = std::chrono::milliseconds(timeoutMs);
    options.endpointStallAfter = std::chrono::minutes(1);
    QCOMPARE(startBacklog(options, instances, path).size(), instances);
    int mostLeased = 0;
    const auto attempted = [&] {
        mostLeased = std::max(mostLeased, count(Leased));
        return count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE attempts > 0"));
    };
    QTRY_COMPARE_WITH_TIMEOUT(attempted(), instances, Patience);
    QVERIFY2(mostLeased <= 1, qPrintable(QStringLiteral("%1 leased at once").arg(mostLeased)));
    if (inFlightSeen)
        QCOMPARE(mostLeased, 1);
    QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")), 0);
}

void tst_DeliveryLeases::failureGivesBackWhatWaited()
{
    // An endpoint answers well, with claimed attempts waiting beside those in flight, then hangs
    // (the provider answers its first 10 requests): its attempts time out, and each failure
    // keeps it sent one attempt at a time (failures demote it here, not silence: the stall time
    // is long, and each timeout counts as an answer). What waited for it goes back to the store
    // at once instead of waiting here, leased, behind one timeout after another: at no poll
    // after that does the worker hold an attempt waiting for an endpoint that does not answer
    // well.
    ServerOptions options;
    options.endpointConcurrency = 2;
    options.deliveryTimeout = std::chrono::milliseconds(300);
    options.endpointStallAfter = std::chrono::minutes(1);
    options.outboxPollInterval = std::chrono::milliseconds(20);
    constexpr int instances = 40;
    QCOMPARE(startBacklog(options, instances, QStringLiteral("/hang-after/10/100/x")).size(), instances);
    const QByteArray waiting = "opsdeck_delivery_attempts_waiting";
    QTRY_VERIFY_WITH_TIMEOUT(m_server->metric(waiting, "endpoints=\"answering\"") > 0, Patience);
    double mostWaitingProbing = 0;
    const auto failed = [&] {
        mostWaitingProbing = std::max(mostWaitingProbing, m_server->metric(waiting, "endpoints=\"probing\""));
        return count(QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE error_class = 'timeout'"));
    };
    // Past the first timeouts, while the rest is tried one at a time.
    QTRY_VERIFY_WITH_TIMEOUT(failed() >= 3, Patience);
    QCOMPARE(count(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")), 10);
    QCOMPARE(mostWaitingProbing, 0.0);
}

void tst_DeliveryLeases::supersedeKeepsInFlightLease()
{
    // A newer notification supersedes the one in the provider's hands (it hangs, well inside the
    // timeout): the lease stays, so no replica sends the newer one before that attempt is over.
    const qint64 instance = startOneInstance(QStringLiteral("/hang/i"));
    QVERIFY(instance > 0);
    const qint64 first = firstDelivery(instance);
    QTRY_VERIFY_WITH_TIMEOUT(!logLines(*m_provider).isEmpty() && !leaseOwner(first).isEmpty(), Patience);
    const QString owner = leaseOwner(first);
    const qint64 seq = m_server->controlPlane().feed().lastSeq();

    QCOMPARE(stop(instance), 200);
    QCOMPARE(delivery(first).value(QStringLiteral("state")).toString(), QStringLiteral("SUPERSEDED"));
    QCOMPARE(leaseOwner(first), owner);
    const qint64 newest = newestDelivery(instance);
    QVERIFY(newest > first);
    QVERIFY(leaseOwner(newest).isEmpty());

    // The console sees the supersede live.
    const Reply r = m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(seq), m_server->operatorToken());
    QCOMPARE(r.status, 200);
    bool seen = false;
    for (const QJsonValue &v : r.json().value(QStringLiteral("events")).toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("kind")).toString() == QLatin1String("delivery")
            && e.value(QStringLiteral("id")).toInteger() == first
            && e.value(QStringLiteral("object")).toObject().value(QStringLiteral("state")).toString() == QLatin1String("SUPERSEDED"))
            seen = true;
    }
    QVERIFY2(seen, r.body.constData());
}

void tst_DeliveryLeases::supersededInFlightAcknowledgedIsDelivered()
{
    // The provider answers 2xx after a newer notification superseded the one on the wire: it has
    // that one, which is DELIVERED, not SUPERSEDED; the newer one follows it.
    const qint64 instance = startOneInstance(QStringLiteral("/slow/3000/s"));
    QVERIFY(instance > 0);
    const qint64 first = firstDelivery(instance);
    QTRY_VERIFY_WITH_TIMEOUT(!leaseOwner(first).isEmpty(), Patience);
    QCOMPARE(stop(instance), 200);
    QCOMPARE(delivery(first).value(QStringLiteral("state")).toString(), QStringLiteral("SUPERSEDED"));

    QTRY_COMPARE_WITH_TIMEOUT(delivery(first).value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"), Patience);
    QCOMPARE(delivery(first).value(QStringLiteral("last_status")).toInt(), 200);
    const QJsonArray audit =
        m_server->get(QStringLiteral("/api/v1/audit?kind=delivery&object_id=%1").arg(first), m_server->operatorToken()).items();
    QVERIFY2(!audit.isEmpty(), "no audit entry");
    const QJsonObject entry = audit.first().toObject();
    QCOMPARE(entry.value(QStringLiteral("action")).toString(), QStringLiteral("deliver"));
    QCOMPARE(entry.value(QStringLiteral("from")).toString(), QStringLiteral("SUPERSEDED"));
    const qint64 newest = newestDelivery(instance);
    QTRY_COMPARE_WITH_TIMEOUT(delivery(newest).value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"), Patience);
    const QList<QJsonObject> lines = logLines(*m_provider);
    QCOMPARE(lines.last().value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
}

QTEST_MAIN(tst_DeliveryLeases)
#include "tst_deliveryleases.moc"
