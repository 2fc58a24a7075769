// Callback delivery under server options of its own, against the real demo provider process:
// hanging endpoints within a small concurrency budget, a short retry schedule running out, and
// the pass for stale notifications run often.
#include "callbackfixture.h"
#include "testserver.h"

#include "server/storage/database.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

constexpr int Patience = 20000;

// An instance registered on a receiver whose every answer is a failure (500, or a refused
// connection until it listens); 0 when it could not be set up.
qint64 instanceOnFailingReceiver(TestServer &server, DemoProvider *receiver)
{
    const qint64 org = server.createOrganization(QStringLiteral("o"));
    const qint64 provider = server.createProvider(QStringLiteral("p"), org, {QStringLiteral("app")});
    const qint64 instance = server.createInstance(QStringLiteral("i"), org, provider, QStringLiteral("app"), QStringLiteral("bob"));
    receiver->port = freePort();
    const Reply reg = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                  {{QStringLiteral("callback_url"), receiver->url(QStringLiteral("/fail/x"))}}, server.operatorToken());
    if (reg.status != 200)
        return 0;
    startProvider(receiver, {reg.json().value(QStringLiteral("secret")).toString()});
    return instance;
}

} // namespace

class tst_DeliveryOptions : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void hangingEndpointsTakeNoHealthySlots();
    void provenEndpointsGoOnWhenHangingOnesFillTheProbingBudget();
    void aProvenEndpointThatStopsAnsweringGivesUpItsSlots();
    void theOtherEndpointsOfASilentHostStartOver();
    void idleEndpointsAreForgotten();
    void aSlowEndpointsBacklogHoldsNoOneElseBack();
    void exhaustedBecomesFailedWithAlert();
    void thePassSupersedesWhatNoPathSaw();
    void recordingIsPacedAndStopRecordsWhatWaits();
    void retriesGoWhenDueNotAtTheNextPoll();
};

void tst_DeliveryOptions::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(demoProviderPath()), qPrintable(demoProviderPath()));
}

static QString stateOf(const QJsonArray &list, int index)
{
    return list.at(index).toObject().value(QStringLiteral("state")).toString();
}

// A server with a small attempt budget, a provider on it, and what the budget tests read.
struct BudgetRig
{
    // `poll`: a long one leaves out the poll's claim for the endpoints that hold none of a full
    // budget, so only what a test is about can free it.
    explicit BudgetRig(int concurrency, std::chrono::milliseconds poll = std::chrono::milliseconds(50),
                       std::chrono::milliseconds forgetIdleAfter = ServerOptions().outboxForgetIdleAfter)
        : server([concurrency, poll, forgetIdleAfter] {
            ServerOptions options;
            options.deliveryConcurrency = concurrency;
            options.deliveryTimeout = std::chrono::seconds(60);
            options.outboxPollInterval = poll;
            options.outboxForgetIdleAfter = forgetIdleAfter;
            // A healthy endpoint is registered before its provider listens, so its first attempt
            // may find the port closed: its retry comes soon, not after the default 5 s.
            options.retrySchedule = QStringLiteral("200ms,1s,2s,5s");
            return options;
        }())
    {
        org = server.createOrganization(QStringLiteral("budget"));
        provider = server.createProvider(QStringLiteral("budget"), org, {QStringLiteral("crm")});
        token = server.token(QStringLiteral("provider"), QString::number(provider));
        hanging.port = freePort();
        healthy.port = freePort();
    }

    bool open(QString *error)
    {
        *error = server.error();
        return server.isRunning() && org > 0 && provider > 0 && peek.open();
    }

    // An instance registered on `url`: its id and its signing secret.
    std::pair<qint64, QString> registerAt(const QString &name, const QString &url)
    {
        const qint64 instance = server.createInstance(name, org, provider, QStringLiteral("crm"), QStringLiteral("alice"));
        const Reply r = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                    {{QStringLiteral("callback_url"), url}}, token);
        return std::pair(instance, r.json().value(QStringLiteral("secret")).toString());
    }

    // Two instances on endpoints of `hanging` that never answer, their attempts out (poll-driven
    // claims pick them up once the provider listens). A test failure when they are not.
    void hangTwo()
    {
        const auto a = registerAt(QStringLiteral("hang-a"), hanging.url(QStringLiteral("/hang/a")));
        const auto b = registerAt(QStringLiteral("hang-b"), hanging.url(QStringLiteral("/hang/b")));
        QVERIFY(a.first > 0 && b.first > 0);
        startProvider(&hanging, {a.second, b.second});
        QTRY_COMPARE_WITH_TIMEOUT(leased(), 2, Patience);
    }

    // An instance on an endpoint of `healthy`, which then starts: the instance's id, 0 on failure.
    qint64 registerHealthy()
    {
        const auto fine = registerAt(QStringLiteral("fine"), healthy.url(QStringLiteral("/ok/fine")));
        if (fine.first <= 0)
            return 0;
        startProvider(&healthy, {fine.second});
        return QTest::currentTestFailed() ? 0 : fine.first;
    }

    // Deliveries out on a lease: the attempts in flight.
    int leased()
    {
        QSqlQuery q(peek.connection());
        return q.exec(QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE lease_owner IS NOT NULL")) && q.next()
                   ? q.value(0).toInt()
                   : -1;
    }

    // The endpoint on `url` as the API shows it (empty when there is none).
    QJsonObject endpointAt(const QString &url)
    {
        const QJsonArray list = server.get(QStringLiteral("/api/v1/endpoints?provider=%1").arg(provider), token).items();
        for (const QJsonValue &e : list) {
            if (e.toObject().value(QStringLiteral("url")).toString() == url)
                return e.toObject();
        }
        return {};
    }

    // The feed's endpoint events for `id`, oldest first, as the provider sees them.
    QList<QJsonObject> endpointEvents(qint64 id)
    {
        QList<QJsonObject> events;
        const QJsonArray list =
            server.get(QStringLiteral("/api/v1/events?after=0&limit=1000"), token).json().value(QStringLiteral("events")).toArray();
        for (const QJsonValue &v : list) {
            const QJsonObject event = v.toObject();
            if (event.value(QStringLiteral("kind")).toString() == QLatin1String("endpoint")
                && event.value(QStringLiteral("id")).toInteger() == id)
                events.append(event);
        }
        return events;
    }

    // The states of an instance's deliveries, oldest first.
    QStringList states(qint64 instance)
    {
        QStringList states;
        const QJsonArray list =
            server.get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), server.operatorToken()).items();
        for (const QJsonValue &d : list)
            states.append(d.toObject().value(QStringLiteral("state")).toString());
        return states;
    }

    TestServer server;
    Database peek{server.databaseUrl()};
    DemoProvider hanging;
    DemoProvider healthy;
    qint64 org = 0;
    qint64 provider = 0;
    QString token;
};

void tst_DeliveryOptions::hangingEndpointsTakeNoHealthySlots()
{
    // Two attempts in flight per process, both taken by endpoints that hang: a new endpoint's
    // attempt still goes out at once (probing endpoints have a budget of their own), not after
    // their timeout.
    BudgetRig rig(2);
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    rig.hangTwo();
    QVERIFY(!QTest::currentTestFailed());
    const qint64 fine = rig.registerHealthy();
    QVERIFY(fine > 0);
    // Well inside the hanging attempts' 60 s timeout, whatever the machine's load.
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), QStringList{QStringLiteral("DELIVERED")}, Patience);
    QCOMPARE(rig.leased(), 2); // the hanging ones are still out
}

void tst_DeliveryOptions::provenEndpointsGoOnWhenHangingOnesFillTheProbingBudget()
{
    // One attempt in flight per process for endpoints that answer well, two for the others, and
    // both of those taken by endpoints that hang: an endpoint that has answered well still gets
    // its next notification at once, not after their timeout.
    BudgetRig rig(1);
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    const qint64 fine = rig.registerHealthy();
    QVERIFY(fine > 0);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), QStringList{QStringLiteral("DELIVERED")}, Patience);
    rig.hangTwo();
    QVERIFY(!QTest::currentTestFailed());

    QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(fine), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), (QStringList{QStringLiteral("DELIVERED"), QStringLiteral("DELIVERED")}),
                              Patience);
    QCOMPARE(rig.leased(), 2); // the hanging ones are still out
}

void tst_DeliveryOptions::aProvenEndpointThatStopsAnsweringGivesUpItsSlots()
{
    // Two attempts in flight per process for endpoints that answer well, both taken by one that
    // answered well until its provider stopped answering: once it has been silent for a while,
    // it gets one attempt at a time like any failing endpoint, and another endpoint's
    // notification goes long before the hanging attempts' 60 s timeout.
    BudgetRig rig(2, std::chrono::minutes(1));
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    // Two instances on one endpoint that answers two requests (their registrations), then none.
    // Its answers take 400 ms, so it is not taken for silent (8 × 400 ms) before both stops'
    // attempts are out, however slowly this machine gets them there.
    const QString url = rig.hanging.url(QStringLiteral("/hang-after/2/400/shared"));
    const auto a = rig.registerAt(QStringLiteral("shared-a"), url);
    const auto b = rig.registerAt(QStringLiteral("shared-b"), url);
    QVERIFY(a.first > 0 && b.first > 0);
    startProvider(&rig.hanging, {a.second, b.second});
    QVERIFY(!QTest::currentTestFailed());
    const QStringList delivered{QStringLiteral("DELIVERED")};
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(a.first), delivered, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(b.first), delivered, Patience);
    const qint64 fine = rig.registerHealthy();
    QVERIFY(fine > 0);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), delivered, Patience);
    const QJsonObject before = rig.endpointAt(url);
    QVERIFY(!before.isEmpty());
    QCOMPARE(before.value(QStringLiteral("silent_count")).toInteger(-1), 0);
    QVERIFY(before.value(QStringLiteral("last_silent_at")).isNull());

    for (const qint64 instance : {a.first, b.first})
        QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.leased(), 2, Patience);

    QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(fine), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), (QStringList{QStringLiteral("DELIVERED"), QStringLiteral("DELIVERED")}),
                              Patience);
    QCOMPARE(rig.leased(), 2); // the hanging ones are still out
    for (const qint64 instance : {a.first, b.first})
        QCOMPARE(rig.states(instance), (QStringList{QStringLiteral("DELIVERED"), QStringLiteral("PENDING")}));

    // The endpoint shows the silence, once, on the API and the feed, while its attempts are out
    // and before any failure is logged; the one that answers shows none. The other endpoint's
    // notification may have gone before the silence was counted, by the poll's claim for the
    // endpoints holding none of a full budget: the silence comes after 8 × 400 ms either way.
    QTRY_COMPARE_WITH_TIMEOUT(rig.endpointAt(url).value(QStringLiteral("silent_count")).toInteger(-1), 1, Patience);
    const QJsonObject silent = rig.endpointAt(url);
    QCOMPARE(silent.value(QStringLiteral("silent_count")).toInteger(-1), 1);
    QVERIFY(silent.value(QStringLiteral("last_silent_at")).toString() > before.value(QStringLiteral("updated_at")).toString());
    QCOMPARE(silent.value(QStringLiteral("failure_count")).toInteger(-1), before.value(QStringLiteral("failure_count")).toInteger());
    QVERIFY(silent.value(QStringLiteral("version")).toInteger() > before.value(QStringLiteral("version")).toInteger());
    const QList<QJsonObject> events = rig.endpointEvents(silent.value(QStringLiteral("id")).toInteger());
    QVERIFY(!events.isEmpty());
    QCOMPARE(events.last().value(QStringLiteral("object")).toObject(), silent);
    const QJsonObject answering = rig.endpointAt(rig.healthy.url(QStringLiteral("/ok/fine")));
    QVERIFY(!answering.isEmpty());
    QCOMPARE(answering.value(QStringLiteral("silent_count")).toInteger(-1), 0);
    QVERIFY(answering.value(QStringLiteral("last_silent_at")).isNull());
}

void tst_DeliveryOptions::idleEndpointsAreForgotten()
{
    // The worker keeps state (slow start, host, answer times) for the endpoints it sends to, not
    // for every one it ever sent to: after outboxForgetIdleAfter with nothing sent, it lets go,
    // and an endpoint that comes back is proven anew. Shown on /metrics at every poll.
    BudgetRig rig(2, std::chrono::milliseconds(50), std::chrono::seconds(5));
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    const QByteArray known = "opsdeck_delivery_endpoints_known";
    const QByteArray inFlight = "opsdeck_delivery_attempts_in_flight";
    QCOMPARE(rig.server.metric(known, "endpoints=\"answering\""), 0.0);
    QCOMPARE(rig.server.metric(inFlight, "endpoints=\"answering\""), 0.0);
    QCOMPARE(rig.server.metric(inFlight, "endpoints=\"probing\""), 0.0);
    rig.hangTwo(); // two endpoints that never answer: one attempt each, from the probing budget
    QVERIFY(!QTest::currentTestFailed());
    QTRY_COMPARE_WITH_TIMEOUT(rig.server.metric(inFlight, "endpoints=\"probing\""), 2.0, Patience);
    const qint64 fine = rig.registerHealthy();
    QVERIFY(fine > 0);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), QStringList{QStringLiteral("DELIVERED")}, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(rig.server.metric(known, "endpoints=\"answering\""), 1.0, Patience);

    // Idle for longer than that: the answering one is forgotten; the hanging ones, with their
    // attempts still out, are not.
    QTRY_COMPARE_WITH_TIMEOUT(rig.server.metric(known, "endpoints=\"answering\""), 0.0, Patience);
    QCOMPARE(rig.server.metric(known, "endpoints=\"probing\""), 2.0);
    QCOMPARE(rig.server.metric(inFlight, "endpoints=\"probing\""), 2.0);
    // /healthz says the same, for the console's dashboard.
    const QJsonObject worker = rig.server.get(QStringLiteral("/healthz"), {}).json().value(QStringLiteral("delivery_worker")).toObject();
    QCOMPARE(worker.value(QStringLiteral("attempts_in_flight")).toObject(),
             (QJsonObject{{QStringLiteral("answering"), 0}, {QStringLiteral("probing"), 2}}));
    QCOMPARE(worker.value(QStringLiteral("endpoints_known")).toObject(),
             (QJsonObject{{QStringLiteral("answering"), 0}, {QStringLiteral("probing"), 2}}));
    QCOMPARE(worker.value(QStringLiteral("attempts_waiting")).toObject(),
             (QJsonObject{{QStringLiteral("answering"), 0}, {QStringLiteral("probing"), 0}}));

    // It comes back: delivered as before, and known again.
    QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(fine), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), (QStringList{QStringLiteral("DELIVERED"), QStringLiteral("DELIVERED")}),
                              Patience);
    QTRY_COMPARE_WITH_TIMEOUT(rig.server.metric(known, "endpoints=\"answering\""), 1.0, Patience);
}

void tst_DeliveryOptions::theOtherEndpointsOfASilentHostStartOver()
{
    // Two endpoints of one provider host, both answering well until the host stops answering.
    // Once the first is taken for silent, the second gets one attempt at a time as well, rather
    // than the slots the first gave up, to hold them for as long again.
    BudgetRig rig(2, std::chrono::minutes(1));
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    const QString firstPath = QStringLiteral("/hang-after/2/400/first");
    const QString secondPath = QStringLiteral("/hang-after/2/400/second");
    QList<std::pair<qint64, QString>> first;
    QList<std::pair<qint64, QString>> second;
    QStringList secrets;
    for (int i = 0; i < 2; ++i) {
        first.append(rig.registerAt(QStringLiteral("first-%1").arg(i), rig.hanging.url(firstPath)));
        second.append(rig.registerAt(QStringLiteral("second-%1").arg(i), rig.hanging.url(secondPath)));
        QVERIFY(first.last().first > 0 && second.last().first > 0);
        secrets << first.last().second << second.last().second;
    }
    startProvider(&rig.hanging, secrets);
    QVERIFY(!QTest::currentTestFailed());
    for (const auto &instance : first + second)
        QTRY_COMPARE_WITH_TIMEOUT(rig.states(instance.first), QStringList{QStringLiteral("DELIVERED")}, Patience);

    const auto stop = [&rig](const QList<std::pair<qint64, QString>> &instances) {
        for (const auto &instance : instances) {
            if (rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance.first), {}, rig.server.operatorToken()).status != 200)
                return false;
        }
        return true;
    };
    QVERIFY(stop(first));
    QTRY_COMPARE_WITH_TIMEOUT(rig.leased(), 2, Patience); // both slots, silent
    QVERIFY(stop(second));
    // The first is taken for silent (8 × 400 ms); the second then gets one attempt, not both.
    // Counted where it shows, at the provider: requests it holds open.
    const auto held = [&rig](const QString &path) {
        int n = 0;
        for (const QJsonObject &line : logLines(rig.hanging))
            n += line.value(QStringLiteral("path")).toString() == path && line.value(QStringLiteral("answered")).isNull();
        return n;
    };
    QTRY_COMPARE_WITH_TIMEOUT(held(secondPath), 1, Patience);
    QTest::qWait(1000);
    QCOMPARE(held(secondPath), 1);
    QCOMPARE(held(firstPath), 2);
    // Only the endpoint seen silent counts it; its host's others started over without being so.
    QCOMPARE(rig.endpointAt(rig.hanging.url(firstPath)).value(QStringLiteral("silent_count")).toInteger(-1), 1);
}

void tst_DeliveryOptions::aSlowEndpointsBacklogHoldsNoOneElseBack()
{
    // Two attempts in flight per process for endpoints that answer well, both taken by one that
    // answers every request, but each after a second, and has eight notifications due: another
    // endpoint's notification, due after them, goes within a poll or two, not after their ~4 s.
    // (The rig's second provider is the slow one here.) Polls every 20 ms: that claim comes less
    // often while it finds nothing, at most every 32 polls.
    BudgetRig rig(2, std::chrono::milliseconds(20));
    QString error;
    QVERIFY2(rig.open(&error), qPrintable(error));
    const qint64 fine = rig.registerHealthy();
    QVERIFY(fine > 0);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), QStringList{QStringLiteral("DELIVERED")}, Patience);
    QList<std::pair<qint64, QString>> slow;
    QStringList secrets;
    for (int i = 0; i < 8; ++i) {
        slow.append(rig.registerAt(QStringLiteral("slow-%1").arg(i), rig.hanging.url(QStringLiteral("/slow/1000/backlog"))));
        QVERIFY(slow.last().first > 0);
        secrets << slow.last().second;
    }
    startProvider(&rig.hanging, secrets);
    QVERIFY(!QTest::currentTestFailed());
    for (const auto &instance : slow)
        QTRY_COMPARE_WITH_TIMEOUT(rig.states(instance.first), QStringList{QStringLiteral("DELIVERED")}, Patience);

    for (const auto &instance : slow)
        QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance.first), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.leased(), 2, Patience);
    QCOMPARE(rig.server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(fine), {}, rig.server.operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(rig.states(fine), (QStringList{QStringLiteral("DELIVERED"), QStringLiteral("DELIVERED")}),
                              Patience);
    // It did not wait behind the backlog: between its commit and its attempt, as the server's own
    // clock tells (this test's requests may be slow), at most the two slots' next turn went out
    // to the slow endpoint, not its eight.
    const auto newest = [&rig](qint64 instance) {
        const QJsonArray list =
            rig.server.get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), rig.server.operatorToken()).items();
        const qint64 id = list.isEmpty() ? 0 : list.last().toObject().value(QStringLiteral("id")).toInteger();
        return rig.server.get(QStringLiteral("/api/v1/deliveries/%1").arg(id), rig.server.operatorToken()).json();
    };
    const auto at = [](const QJsonValue &value) { return QDateTime::fromString(value.toString(), Qt::ISODateWithMs); };
    const QJsonObject fineDelivery = newest(fine);
    const QDateTime committed = at(fineDelivery.value(QStringLiteral("created_at")));
    const QDateTime sent = at(fineDelivery.value(QStringLiteral("attempt_log")).toArray().at(0).toObject().value(QStringLiteral("at")));
    QVERIFY(committed.isValid() && sent.isValid());
    int meanwhile = 0;
    for (const auto &instance : slow) {
        for (const QJsonValue &attempt : newest(instance.first).value(QStringLiteral("attempt_log")).toArray()) {
            const QDateTime slowSent = at(attempt.toObject().value(QStringLiteral("at")));
            meanwhile += slowSent >= committed && slowSent < sent;
        }
    }
    qInfo("%d slow attempts went out in the %lld ms it waited", meanwhile, committed.msecsTo(sent));
    QVERIFY(meanwhile <= 2);
}

void tst_DeliveryOptions::exhaustedBecomesFailedWithAlert()
{
    ServerOptions options;
    options.retrySchedule = QStringLiteral("100ms,100ms");
    options.deliveryTimeout = std::chrono::milliseconds(1000);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    DemoProvider receiver;
    const qint64 instance = instanceOnFailingReceiver(server, &receiver);
    QVERIFY(instance > 0);
    const QString path = QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(server.get(path, server.operatorToken()).items(), 0), QStringLiteral("FAILED"), Patience);
    const QJsonObject d = server.get(path, server.operatorToken()).items().at(0).toObject();
    QCOMPARE(d.value(QStringLiteral("attempts")).toInt(), 3);
    QVERIFY(d.value(QStringLiteral("next_attempt_at")).isNull());

    const QJsonArray events = server.get(QStringLiteral("/api/v1/events?after=0&limit=1000"), server.operatorToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    bool alerted = false;
    for (const QJsonValue &e : events) {
        const QJsonObject o = e.toObject();
        if (o.value(QStringLiteral("kind")).toString() == QLatin1String("alert")
            && o.value(QStringLiteral("object")).toObject().value(QStringLiteral("delivery_id")).toInteger()
                   == d.value(QStringLiteral("id")).toInteger()) {
            alerted = true;
            // The alert is about the delivery as its failure left it: its id and FAILED version.
            QCOMPARE(o.value(QStringLiteral("id")).toInteger(), d.value(QStringLiteral("id")).toInteger());
            QCOMPARE(o.value(QStringLiteral("version")).toInteger(), d.value(QStringLiteral("version")).toInteger());
        }
    }
    QVERIFY(alerted);

    // The bulk retry preview counts it without touching it, the real one starts a fresh schedule.
    const Reply preview = server.post(QStringLiteral("/api/v1/deliveries/retry"),
                                      {{QStringLiteral("state"), QStringLiteral("FAILED")}, {QStringLiteral("dry_run"), true}},
                                      server.operatorToken());
    QCOMPARE(preview.status, 200);
    QCOMPARE(preview.json().value(QStringLiteral("count")).toInt(), 1);
    QCOMPARE(preview.json().value(QStringLiteral("states")).toObject().value(QStringLiteral("FAILED")).toInt(), 1);
    QCOMPARE(stateOf(server.get(path, server.operatorToken()).items(), 0), QStringLiteral("FAILED"));
    const Reply bulk = server.post(QStringLiteral("/api/v1/deliveries/retry"),
                                   {{QStringLiteral("state"), QStringLiteral("FAILED")}, {QStringLiteral("reason"), QStringLiteral("fixed")}},
                                   server.operatorToken());
    QCOMPARE(bulk.status, 200);
    QCOMPARE(bulk.json().value(QStringLiteral("retried")).toInt(), 1);
    QTRY_VERIFY_WITH_TIMEOUT(server.get(QStringLiteral("/api/v1/deliveries/%1").arg(d.value(QStringLiteral("id")).toInteger()),
                                        server.operatorToken())
                                     .json()
                                     .value(QStringLiteral("attempt_log"))
                                     .toArray()
                                     .size()
                                 > 3,
                             Patience);
}

void tst_DeliveryOptions::thePassSupersedesWhatNoPathSaw()
{
    // A newer notification written behind the API's back (as an earlier version or a replica's
    // race could leave it) supersedes the older undelivered one through the poll's pass.
    ServerOptions options;
    options.outboxPollInterval = std::chrono::milliseconds(50);
    options.outboxSupersedeInterval = std::chrono::milliseconds(200);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const qint64 org = server.createOrganization(QStringLiteral("o"));
    const qint64 provider = server.createProvider(QStringLiteral("p"), org, {QStringLiteral("app")});
    const qint64 instance = server.createInstance(QStringLiteral("i"), org, provider, QStringLiteral("app"), QStringLiteral("bob"));
    // Nobody listens there: the first notification fails and waits for its retry.
    const Reply reg = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                  {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hook")}}, server.operatorToken());
    QCOMPARE(reg.status, 200);
    const QString path = QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance);
    const QJsonArray first = server.get(path, server.operatorToken()).items();
    QCOMPARE(first.size(), 1);
    const qint64 older = first.at(0).toObject().value(QStringLiteral("id")).toInteger();
    Database admin(server.databaseUrl());
    QVERIFY(admin.open());
    QVERIFY(admin.exec(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version) SELECT 'msg_behind', event_type, instance_id, provider_id,"
        " endpoint_id, 'PENDING', body, 0, created_at, created_at, created_at, 1 FROM deliveries WHERE id = %1").arg(older)));
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(server.get(path, server.operatorToken()).items(), 0), QStringLiteral("SUPERSEDED"), Patience);
    QCOMPARE(stateOf(server.get(path, server.operatorToken()).items(), 1), QStringLiteral("PENDING"));
    // Settled: nothing is scheduled for it any more.
    const QJsonObject superseded = server.get(path, server.operatorToken()).items().at(0).toObject();
    QVERIFY(superseded.value(QStringLiteral("next_attempt_at")).isNull());
    QVERIFY(superseded.value(QStringLiteral("give_up_at")).isNull());
}

void tst_DeliveryOptions::recordingIsPacedAndStopRecordsWhatWaits()
{
    // Finished attempts go to the store at most once per outboxRecordPacing, the first after a
    // quiet spell at once; what waits for its turn when the server stops is recorded then, not
    // sent again.
    ServerOptions options;
    options.outboxPollInterval = std::chrono::milliseconds(50);
    options.outboxRecordPacing = std::chrono::hours(1);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const qint64 org = server.createOrganization(QStringLiteral("o"));
    const qint64 provider = server.createProvider(QStringLiteral("p"), org, {QStringLiteral("app")});
    const qint64 instance = server.createInstance(QStringLiteral("i"), org, provider, QStringLiteral("app"), QStringLiteral("bob"));
    QVERIFY(instance > 0);
    // Listening before the first attempt (without the secret: the demo provider answers 2xx to
    // any signature unless told to reject invalid ones), so that attempt succeeds.
    DemoProvider receiver;
    receiver.port = freePort();
    startProvider(&receiver, {});
    const Reply reg = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                  {{QStringLiteral("callback_url"), receiver.url(QStringLiteral("/ok/paced"))}},
                                  server.operatorToken());
    QCOMPARE(reg.status, 200);
    Database peek(server.databaseUrl());
    QVERIFY(peek.open());
    const auto newest = [&peek, instance](const QString &column) {
        QSqlQuery q(peek.connection());
        q.prepare(QStringLiteral("SELECT %1 FROM deliveries WHERE instance_id = ? ORDER BY id DESC LIMIT 1").arg(column));
        q.addBindValue(instance);
        return q.exec() && q.next() ? q.value(0).toString() : QString();
    };
    // Nothing finished before: the first attempt to finish is recorded at once, not in an hour.
    QTRY_COMPARE_WITH_TIMEOUT(newest(QStringLiteral("state")), QStringLiteral("DELIVERED"), Patience);

    // The next one finishes within the hour: the provider has it, the store not yet.
    QCOMPARE(server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, server.operatorToken()).status, 200);
    const QByteArray waiting = newest(QStringLiteral("webhook_id")).toUtf8();
    QTRY_VERIFY_WITH_TIMEOUT(!logEntry(receiver, waiting).isEmpty(), Patience);
    QTest::qWait(300);
    QCOMPARE(newest(QStringLiteral("state")), QStringLiteral("PENDING"));
    QVERIFY(!newest(QStringLiteral("lease_owner")).isEmpty());

    // Stopping records it: delivered once, no lease left to expire into a second attempt.
    server.controlPlane().stop();
    QCOMPARE(newest(QStringLiteral("state")), QStringLiteral("DELIVERED"));
    QVERIFY(newest(QStringLiteral("lease_owner")).isEmpty());
    int received = 0;
    for (const QJsonObject &line : logLines(receiver))
        received += line.value(QStringLiteral("webhook_id")).toString().toUtf8() == waiting ? 1 : 0;
    QCOMPARE(received, 1);
}

void tst_DeliveryOptions::retriesGoWhenDueNotAtTheNextPoll()
{
    // A poll far beyond the test's patience: only the retries' own due times can bring the
    // attempts after the first one (which the new notification's wake-up sends).
    ServerOptions options;
    options.retrySchedule = QStringLiteral("300ms,300ms,300ms,300ms");
    options.deliveryTimeout = std::chrono::milliseconds(2000);
    options.outboxPollInterval = std::chrono::minutes(10);
    TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    DemoProvider receiver;
    const qint64 instance = instanceOnFailingReceiver(server, &receiver);
    QVERIFY(instance > 0);
    const QString list = QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance);
    QTRY_VERIFY_WITH_TIMEOUT(!server.get(list, server.operatorToken()).items().isEmpty(), Patience);
    const QString path = QStringLiteral("/api/v1/deliveries/%1")
                             .arg(server.get(list, server.operatorToken()).items().at(0).toObject().value(QStringLiteral("id")).toInteger());
    QTRY_VERIFY_WITH_TIMEOUT(server.get(path, server.operatorToken()).json().value(QStringLiteral("attempt_log")).toArray().size() >= 3,
                             Patience);
    // Never before their time either: each step is 300 ms less at most 10% of jitter.
    const QJsonArray log = server.get(path, server.operatorToken()).json().value(QStringLiteral("attempt_log")).toArray();
    for (qsizetype i = 1; i < log.size(); ++i) {
        const auto before = QDateTime::fromString(log.at(i - 1).toObject().value(QStringLiteral("at")).toString(), Qt::ISODateWithMs);
        const auto after = QDateTime::fromString(log.at(i).toObject().value(QStringLiteral("at")).toString(), Qt::ISODateWithMs);
        QVERIFY2(before.msecsTo(after) >= 270, qPrintable(QStringLiteral("attempt %1 came %2 ms after the one before")
                                                              .arg(i + 1)
                                                              .arg(before.msecsTo(after))));
    }
}

QTEST_MAIN(tst_DeliveryOptions)
#include "tst_deliveryoptions.moc"
