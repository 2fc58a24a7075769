// Callback delivery end to end: the outbox worker against the real demo provider process, on one
// shared server: outcomes, retries, superseding, operator actions, rotation and test events.
#include "callbackfixture.h"
#include "testserver.h"
#include "testsupport.h"

#include "server/feed/changefeed.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QJsonDocument>
#include <QProcess>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

constexpr int Patience = 20000;

} // namespace

class tst_Delivery : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void deliveredWithValidSignature();
    void retryAfterServerErrorThenSuccess();
    void goneDisablesEndpoint();
    void retryAfterHonoured();
    void hangingEndpointDoesNotSlowHealthyOne();
    void redirectIsFailure();
    void supersededWhilePaused();
    void giveUpAtSetAtCreation();
    void cancelPending();
    void retryNow();
    void bulkRetryDryRun();
    void providerSeesOnlyItsOwn();
    void rotationSendsBothSignatures();
    void testEvent();
    void hubSignature();
    void upkeepLetsGoOfASettledRowsExpiredLease();

private:
    qint64 newInstance(const QString &name);
    // Registers the instance's callback on `path` of a fresh port; returns the secret.
    QString registerOn(qint64 instance, DemoProvider *provider, const QString &path);
    QJsonArray deliveries(qint64 instance);
    QJsonObject delivery(qint64 id);
    QJsonObject endpoint(qint64 id);
    // The delivery's lease holder as storage has it: what the API never shows.
    QString leaseOwner(qint64 delivery);
    QString providerToken() { return m_server->token(QStringLiteral("provider"), QString::number(m_provider)); }

    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<Database> m_peek;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    qint64 m_otherProvider = 0;
    int m_counter = 0;
};

void tst_Delivery::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    QVERIFY2(QFileInfo::exists(demoProviderPath()), qPrintable(demoProviderPath()));
    ServerOptions options;
    options.retrySchedule = QStringLiteral("300ms,300ms,500ms,1s,2s,3s,5s");
    options.deliveryTimeout = std::chrono::milliseconds(1500);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_org = m_server->createOrganization(QStringLiteral("acme"));
    QVERIFY(m_org > 0);
    m_provider = m_server->createProvider(QStringLiteral("crm"), m_org, {QStringLiteral("crm")});
    m_otherProvider = m_server->createProvider(QStringLiteral("wiki"), m_org, {QStringLiteral("wiki")});
    QVERIFY(m_provider > 0 && m_otherProvider > 0);
}

qint64 tst_Delivery::newInstance(const QString &name)
{
    return m_server->createInstance(name + QString::number(++m_counter), m_org, m_provider, QStringLiteral("crm"),
                                    QStringLiteral("alice"));
}

QString tst_Delivery::registerOn(qint64 instance, DemoProvider *provider, const QString &path)
{
    if (provider->port == 0)
        provider->port = freePort();
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                   {{QStringLiteral("callback_url"), provider->url(path)}}, providerToken());
    if (r.status != 200)
        qWarning() << r.status << r.body;
    return r.json().value(QStringLiteral("secret")).toString();
}

QJsonArray tst_Delivery::deliveries(qint64 instance)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken()).items();
}

QJsonObject tst_Delivery::delivery(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken()).json();
}

QJsonObject tst_Delivery::endpoint(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(id), m_server->operatorToken()).json();
}

QString tst_Delivery::leaseOwner(qint64 delivery)
{
    if (!m_peek) {
        m_peek = std::make_unique<Database>(m_server->databaseUrl());
        if (!m_peek->open())
            return QStringLiteral("<cannot open>");
    }
    QSqlQuery q(m_peek->connection());
    q.prepare(QStringLiteral("SELECT lease_owner FROM deliveries WHERE id = ?"));
    q.addBindValue(delivery);
    if (!q.exec() || !q.next())
        return QStringLiteral("<no row>");
    return q.value(0).toString();
}

static QString stateOf(const QJsonArray &list, int index)
{
    return list.at(index).toObject().value(QStringLiteral("state")).toString();
}

void tst_Delivery::deliveredWithValidSignature()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("ok"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/ok/a"));
    QVERIFY(secret.startsWith(QLatin1String("whsec_")));
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 0), QStringLiteral("DELIVERED"), Patience);

    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).size(), 2, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 1), QStringLiteral("DELIVERED"), Patience);
    const QJsonObject stopped = deliveries(instance).at(1).toObject();

    QJsonObject line;
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 for (const QJsonObject &l : logLines(provider))
                                     if (l.value(QStringLiteral("webhook_id")) == stopped.value(QStringLiteral("webhook_id")))
                                         line = l;
                                 return !line.isEmpty();
                             }()),
                             Patience);
    QCOMPARE(line.value(QStringLiteral("signature_valid")).toBool(), true);
    QCOMPARE(line.value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QCOMPARE(line.value(QStringLiteral("type")).toString(), QStringLiteral("instance.status_changed"));

    // The attempt log keeps the request with its signature redacted and the provider's answer.
    const QJsonObject detail = delivery(stopped.value(QStringLiteral("id")).toInteger());
    const QJsonArray log = detail.value(QStringLiteral("attempt_log")).toArray();
    QVERIFY(!log.isEmpty());
    const QJsonObject last = log.last().toObject();
    QCOMPARE(last.value(QStringLiteral("response_status")).toInt(), 200);
    QVERIFY(last.value(QStringLiteral("error_class")).isNull());
    const QByteArray headers = QJsonDocument(last.value(QStringLiteral("request_headers")).toArray()).toJson();
    QVERIFY2(headers.contains("[redacted]"), headers.constData());
    QVERIFY(!headers.contains(secret.toUtf8()));
    QVERIFY(last.value(QStringLiteral("request_body")).toString().contains(QLatin1String("\"STOPPED\"")));
}

void tst_Delivery::retryAfterServerErrorThenSuccess()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("retry"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/hook"));
    startProvider(&provider, {secret}, {QStringLiteral("--mode"), QStringLiteral("fail")});
    QTRY_VERIFY_WITH_TIMEOUT(deliveries(instance).at(0).toObject().value(QStringLiteral("last_status")).toInt() == 500, Patience);
    QCOMPARE(stateOf(deliveries(instance), 0), QStringLiteral("PENDING"));
    provider.process->kill();
    provider.process->waitForFinished(5000);
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 0), QStringLiteral("DELIVERED"), Patience);
    const QJsonObject d = delivery(deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger());
    const QJsonArray log = d.value(QStringLiteral("attempt_log")).toArray();
    QVERIFY(log.size() >= 2);
    bool saw500 = false;
    for (const QJsonValue &a : log)
        saw500 = saw500 || a.toObject().value(QStringLiteral("response_status")).toInt() == 500;
    QVERIFY(saw500);
    QCOMPARE(log.last().toObject().value(QStringLiteral("response_status")).toInt(), 200);
}

void tst_Delivery::goneDisablesEndpoint()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("gone"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/gone/x"));
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).at(0).toObject().value(QStringLiteral("last_status")).toInt(), 410, Patience);
    const QJsonObject d = deliveries(instance).at(0).toObject();
    const QJsonObject e = endpoint(d.value(QStringLiteral("endpoint_id")).toInteger());
    QCOMPARE(e.value(QStringLiteral("state")).toString(), QStringLiteral("DISABLED"));
    // Nothing is dropped: the delivery waits for the endpoint to come back.
    QCOMPARE(d.value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    // The provider fixed its URL: resuming enables the endpoint again.
    const Reply resumed = m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(d.value(QStringLiteral("endpoint_id")).toInteger()),
                                         {{QStringLiteral("reason"), QStringLiteral("URL restored")}}, providerToken());
    QCOMPARE(resumed.status, 200);
    QCOMPARE(resumed.json().value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
}

void tst_Delivery::retryAfterHonoured()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("throttle"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/throttle/3/x"));
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).at(0).toObject().value(QStringLiteral("last_status")).toInt(), 429, Patience);
    const QJsonObject d = delivery(deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger());
    const QJsonArray log = d.value(QStringLiteral("attempt_log")).toArray();
    const QJsonObject first429 = [&] {
        for (const QJsonValue &a : log)
            if (a.toObject().value(QStringLiteral("response_status")).toInt() == 429)
                return a.toObject();
        return QJsonObject();
    }();
    QVERIFY(!first429.isEmpty());
    if (log.last().toObject().value(QStringLiteral("response_status")).toInt() == 429) {
        const QDateTime at = QDateTime::fromString(log.last().toObject().value(QStringLiteral("at")).toString(), Qt::ISODateWithMs);
        const QDateTime next = QDateTime::fromString(d.value(QStringLiteral("next_attempt_at")).toString(), Qt::ISODateWithMs);
        // The schedule says 300 ms; the provider asked for 3 s.
        QVERIFY2(at.msecsTo(next) >= 2500, qPrintable(QStringLiteral("%1 -> %2").arg(at.toString(Qt::ISODateWithMs),
                                                                                        next.toString(Qt::ISODateWithMs))));
    }
}

void tst_Delivery::hangingEndpointDoesNotSlowHealthyOne()
{
    DemoProvider hanging;
    DemoProvider healthy;
    const qint64 slow = newInstance(QStringLiteral("hang"));
    const qint64 fast = newInstance(QStringLiteral("fast"));
    const QString slowSecret = registerOn(slow, &hanging, QStringLiteral("/hang/x"));
    startProvider(&hanging, {slowSecret});
    const QString fastSecret = registerOn(fast, &healthy, QStringLiteral("/ok/x"));
    startProvider(&healthy, {fastSecret});
    QElapsedTimer timer;
    timer.start();
    for (int i = 0; i < 3; ++i) {
        const QString action = i % 2 == 0 ? QStringLiteral("stop") : QStringLiteral("start");
        QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/%2").arg(fast).arg(action), {}, m_server->operatorToken()).status,
                 200);
        QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/%2").arg(slow).arg(action), {}, m_server->operatorToken()).status,
                 200);
    }
    // The healthy endpoint's newest notification arrives while the other endpoint hangs.
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(fast), deliveries(fast).size() - 1), QStringLiteral("DELIVERED"), Patience);
    const QJsonArray slowOnes = deliveries(slow);
    QVERIFY(stateOf(slowOnes, slowOnes.size() - 1) != QLatin1String("DELIVERED"));
    // The hanging attempt ends as a timeout, not as a stuck worker.
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 for (const QJsonValue &d : deliveries(slow))
                                     if (d.toObject().value(QStringLiteral("last_error")).toString().startsWith(QLatin1String("timeout")))
                                         return true;
                                 return false;
                             }()),
                             Patience);
}

void tst_Delivery::redirectIsFailure()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("redirect"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/redirect/x"));
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).at(0).toObject().value(QStringLiteral("last_status")).toInt(), 302, Patience);
    const QJsonObject d = deliveries(instance).at(0).toObject();
    QCOMPARE(d.value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    QVERIFY(d.value(QStringLiteral("last_error")).toString().startsWith(QLatin1String("http")));
    // The redirect target was never called.
    for (const QJsonObject &l : logLines(provider))
        QVERIFY(!l.value(QStringLiteral("path")).toString().contains(QLatin1String("redirected")));
}

void tst_Delivery::supersededWhilePaused()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("super"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/ok/s"));
    const qint64 endpointId = deliveries(instance).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    const Reply paused = m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpointId),
                                        {{QStringLiteral("reason"), QStringLiteral("maintenance")}}, providerToken());
    QCOMPARE(paused.status, 200);
    QCOMPARE(paused.json().value(QStringLiteral("state")).toString(), QStringLiteral("PAUSED"));
    startProvider(&provider, {secret});
    for (const QString &action : {QStringLiteral("stop"), QStringLiteral("start"), QStringLiteral("stop")})
        QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/%2").arg(instance).arg(action), {}, m_server->operatorToken()).status,
                 200);
    QTRY_VERIFY_WITH_TIMEOUT(([&] {
                                 const QJsonArray list = deliveries(instance);
                                 for (int i = 0; i + 1 < list.size(); ++i)
                                     if (stateOf(list, i) != QLatin1String("SUPERSEDED") && stateOf(list, i) != QLatin1String("DELIVERED"))
                                         return false;
                                 return stateOf(list, list.size() - 1) == QLatin1String("PENDING");
                             }()),
                             Patience);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpointId), {}, providerToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), deliveries(instance).size() - 1), QStringLiteral("DELIVERED"), Patience);
    // Only the newest notification reached the provider: it says everything.
    QTRY_VERIFY_WITH_TIMEOUT(!logLines(provider).isEmpty(), Patience);
    const QList<QJsonObject> lines = logLines(provider);
    QCOMPARE(lines.size(), 1);
    QCOMPARE(lines.first().value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
}

void tst_Delivery::giveUpAtSetAtCreation()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("giveup"));
    registerOn(instance, &provider, QStringLiteral("/ok/g"));
    const qint64 endpointId = deliveries(instance).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpointId),
                            {{QStringLiteral("reason"), QStringLiteral("hold")}}, providerToken())
                 .status,
             200);
    const qint64 seq = m_server->controlPlane().feed().lastSeq();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status, 200);
    const QJsonArray list = deliveries(instance);
    const QJsonObject d = list.at(list.size() - 1).toObject();
    QCOMPARE(d.value(QStringLiteral("attempts")).toInt(), 0);
    const auto created = parseTimestamp(d.value(QStringLiteral("created_at")).toString());
    const auto giveUp = parseTimestamp(d.value(QStringLiteral("give_up_at")).toString());
    QVERIFY2(created && giveUp, qPrintable(QJsonDocument(d).toJson()));
    // 300ms,300ms,500ms,1s,2s,3s,5s = 12.1 s, each delay at its 10% jitter maximum.
    QCOMPARE(created->msecsTo(*giveUp), qint64(13310));
    // The feed's "created" event carries it too, for the console's "gives up at" column.
    QJsonValue fromFeed;
    for (const QJsonValue &v : m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(seq), m_server->operatorToken())
                                   .json()
                                   .value(QStringLiteral("events"))
                                   .toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("kind")).toString() == QLatin1String("delivery")
            && e.value(QStringLiteral("id")).toInteger() == d.value(QStringLiteral("id")).toInteger())
            fromFeed = e.value(QStringLiteral("object")).toObject().value(QStringLiteral("give_up_at"));
    }
    QCOMPARE(fromFeed, d.value(QStringLiteral("give_up_at")));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpointId), {}, providerToken()).status, 200);
}

void tst_Delivery::cancelPending()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("cancel"));
    registerOn(instance, &provider, QStringLiteral("/ok/c")); // nobody listens: it keeps failing
    const qint64 id = deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger();
    const Reply r = m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id),
                                   {{QStringLiteral("reason"), QStringLiteral("provider retired")}}, providerToken());
    QCOMPARE(r.status, 200);
    QCOMPARE(r.json().value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    // The change is on the feed, for the provider too.
    const QJsonArray events = m_server->get(QStringLiteral("/api/v1/events?after=0&limit=1000"), providerToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    bool onFeed = false;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        onFeed = onFeed
                 || (e.value(QStringLiteral("kind")).toString() == QLatin1String("delivery") && e.value(QStringLiteral("id")).toInteger() == id
                     && e.value(QStringLiteral("object")).toObject().value(QStringLiteral("state")).toString() == QLatin1String("CANCELLED"));
    }
    QVERIFY(onFeed);
    const Reply again = m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id), {}, providerToken());
    QCOMPARE(again.status, 409);
    QCOMPARE(again.code(), QStringLiteral("invalid-transition"));
    QCOMPARE(again.header("Content-Type"), QByteArray("application/problem+json"));
    // A stale If-Match is refused.
    const Reply stale = m_server->request("POST", QStringLiteral("/api/v1/deliveries/%1/retry").arg(id), QByteArray(),
                                          providerToken(), {{"If-Match", "\"1\""}});
    QCOMPARE(stale.status, 412);
}

void tst_Delivery::retryNow()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("now"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/ok/n"));
    const qint64 id = deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id), {}, providerToken()).status, 200);
    startProvider(&provider, {secret});
    const Reply r = m_server->post(QStringLiteral("/api/v1/deliveries/%1/retry").arg(id), {}, providerToken());
    QCOMPARE(r.status, 200);
    QCOMPARE(r.json().value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(r.json().value(QStringLiteral("attempts")).toInt(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(delivery(id).value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"), Patience);
}

void tst_Delivery::bulkRetryDryRun()
{
    const Reply bad = m_server->post(QStringLiteral("/api/v1/deliveries/retry"),
                                     {{QStringLiteral("state"), QStringLiteral("LOST")}, {QStringLiteral("dry_run"), true}},
                                     m_server->operatorToken());
    QCOMPARE(bad.status, 400);
    const Reply preview = m_server->request("POST", QStringLiteral("/api/v1/deliveries/retry?dry_run=true"),
                                            QByteArray("{\"status\": \"5xx\"}"), m_server->operatorToken());
    QCOMPARE(preview.status, 200);
    QCOMPARE(preview.json().value(QStringLiteral("dry_run")).toBool(), true);
    QVERIFY(preview.json().contains(QStringLiteral("count")));
    QVERIFY(!preview.json().contains(QStringLiteral("retried")));
}

void tst_Delivery::providerSeesOnlyItsOwn()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("own"));
    registerOn(instance, &provider, QStringLiteral("/ok/own"));
    const qint64 id = deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger();
    const QString other = m_server->token(QStringLiteral("provider"), QString::number(m_otherProvider));
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), other).status, 404);
    const Reply list = m_server->get(QStringLiteral("/api/v1/deliveries"), other);
    QCOMPARE(list.status, 200);
    QVERIFY(list.items().isEmpty());
    const Reply mine = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), providerToken());
    QCOMPARE(mine.items().size(), 1);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/endpoints"), other).items().size(), 0);
    QVERIFY(!m_server->get(QStringLiteral("/api/v1/endpoints"), providerToken()).items().isEmpty());
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id), {}, other).status, 404);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/deliveries"), m_server->token(QStringLiteral("owner"), QStringLiteral("alice"))).status,
             403);
}

void tst_Delivery::rotationSendsBothSignatures()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("rotate"));
    const QString oldSecret = registerOn(instance, &provider, QStringLiteral("/ok/r"));
    startProvider(&provider, {oldSecret}); // the provider still only knows the old secret
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 0), QStringLiteral("DELIVERED"), Patience);
    const Reply rotated = m_server->post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(instance), {}, providerToken());
    QCOMPARE(rotated.status, 200);
    const QString newSecret = rotated.json().value(QStringLiteral("secret")).toString();
    QVERIFY(newSecret.startsWith(QLatin1String("whsec_")));
    QVERIFY(newSecret != oldSecret);
    QVERIFY(!rotated.json().value(QStringLiteral("previous_secret_valid_until")).toString().isEmpty());
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances/%1").arg(instance), providerToken()).json().value(QStringLiteral("secret")),
             QJsonValue(QJsonValue::Undefined));

    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, m_server->operatorToken()).status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).size(), 2, Patience);
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 1), QStringLiteral("DELIVERED"), Patience);
    const QJsonObject d = delivery(deliveries(instance).at(1).toObject().value(QStringLiteral("id")).toInteger());
    const QJsonArray headers = d.value(QStringLiteral("attempt_log")).toArray().last().toObject().value(QStringLiteral("request_headers")).toArray();
    QString signature;
    for (const QJsonValue &h : headers)
        if (h.toArray().at(0).toString().compare(QLatin1String("webhook-signature"), Qt::CaseInsensitive) == 0)
            signature = h.toArray().at(1).toString();
    QCOMPARE(signature.split(QLatin1Char(' ')).size(), 2);
    // Signed with both: the provider that only knows the old secret still verifies it.
    QTRY_VERIFY_WITH_TIMEOUT(logLines(provider).size() >= 2, Patience);
    QCOMPARE(logLines(provider).last().value(QStringLiteral("signature_valid")).toBool(), true);
}

void tst_Delivery::testEvent()
{
    DemoProvider provider;
    const qint64 instance = newInstance(QStringLiteral("test"));
    const QString secret = registerOn(instance, &provider, QStringLiteral("/ok/t"));
    startProvider(&provider, {secret});
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 0), QStringLiteral("DELIVERED"), Patience);
    const qint64 endpointId = deliveries(instance).at(0).toObject().value(QStringLiteral("endpoint_id")).toInteger();
    const Reply r = m_server->post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpointId), {}, providerToken());
    QCOMPARE(r.status, 202);
    const qint64 id = r.json().value(QStringLiteral("id")).toInteger();
    QTRY_COMPARE_WITH_TIMEOUT(delivery(id).value(QStringLiteral("state")).toString(), QStringLiteral("DELIVERED"), Patience);
    QTRY_VERIFY_WITH_TIMEOUT(logLines(provider).size() >= 2, Patience);
    QCOMPARE(logLines(provider).last().value(QStringLiteral("type")).toString(), QStringLiteral("opsdeck.test"));
    QCOMPARE(logLines(provider).last().value(QStringLiteral("signature_valid")).toBool(), true);
}

void tst_Delivery::hubSignature()
{
    DemoProvider provider;
    provider.port = freePort();
    const qint64 instance = newInstance(QStringLiteral("hub"));
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                   {{QStringLiteral("callback_url"), provider.url(QStringLiteral("/ok/hub"))},
                                    {QStringLiteral("signing"), QStringLiteral("x-hub-signature")}},
                                   providerToken());
    QCOMPARE(r.status, 200);
    startProvider(&provider, {r.json().value(QStringLiteral("secret")).toString()});
    QTRY_COMPARE_WITH_TIMEOUT(stateOf(deliveries(instance), 0), QStringLiteral("DELIVERED"), Patience);
    QTRY_VERIFY_WITH_TIMEOUT(!logLines(provider).isEmpty(), Patience);
    QCOMPARE(logLines(provider).last().value(QStringLiteral("signature_valid")).toBool(), true);
    const QJsonObject d = delivery(deliveries(instance).at(0).toObject().value(QStringLiteral("id")).toInteger());
    const QByteArray headers = QJsonDocument(d.value(QStringLiteral("attempt_log")).toArray().last().toObject()
                                                 .value(QStringLiteral("request_headers")).toArray())
                                   .toJson();
    QVERIFY2(headers.toLower().contains("x-hub-signature"), headers.constData());
    QVERIFY(!headers.toLower().contains("webhook-signature"));
}

void tst_Delivery::upkeepLetsGoOfASettledRowsExpiredLease()
{
    // Cancelled while its attempt was out on a worker that is gone: no claim takes it, so the
    // running worker's upkeep lets go of its expired lease and logs that attempt.
    DemoProvider provider; // never started: whatever this worker attempts is refused
    const qint64 instance = newInstance(QStringLiteral("gone"));
    registerOn(instance, &provider, QStringLiteral("/ok/x"));
    QTRY_COMPARE_WITH_TIMEOUT(deliveries(instance).size(), 1, Patience);
    const qint64 id = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    QVERIFY(leaseOwner(id) != QLatin1String("<cannot open>")); // opens m_peek
    QSqlQuery q(m_peek->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET state = 'CANCELLED', next_attempt_at = NULL, lease_owner = 'w-gone',"
                                  " lease_until = '2000-01-01T00:00:00.000Z', version = version + 1 WHERE id = %1")
                       .arg(id)));
    q.finish();
    const auto interrupted = [&] {
        for (const QJsonValue &a : delivery(id).value(QStringLiteral("attempt_log")).toArray()) {
            if (a.toObject().value(QStringLiteral("error_class")).toString() == QLatin1String("interrupted"))
                return a.toObject();
        }
        return QJsonObject();
    };
    QTRY_VERIFY_WITH_TIMEOUT(!interrupted().isEmpty(), Patience);
    QVERIFY(interrupted().value(QStringLiteral("error")).toString().contains(QLatin1String("w-gone")));
    QCOMPARE(delivery(id).value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(leaseOwner(id), QString());
}

QTEST_MAIN(tst_Delivery)
#include "tst_delivery.moc"
