// The delivery and endpoint actions as a hostile client calls them: what they refuse, and that a refusal changes nothing.
#include "testserver.h"

#include "server/storage/database.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// Nobody listens there; with the worker off nothing is sent anyway.
const QString Nowhere = QStringLiteral("http://127.0.0.1:9/hook");

} // namespace

class tst_DeliveryApi : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void retryOfAnOlderNotification_data();
    void retryOfAnOlderNotification();
    void retryOfAnOlderTestEvent();
    void bulkRetryRefusesBadFilters_data();
    void bulkRetryRefusesBadFilters();
    void testEventNeedsAnActiveEndpoint_data();
    void testEventNeedsAnActiveEndpoint();
    void disabledEndpointOffersResume();
    void rotateSecretGrace_data();
    void rotateSecretGrace();

private:
    // A registered instance: its first notification is PENDING. Returns the instance id.
    qint64 registeredInstance();
    QJsonArray deliveries(qint64 instance);
    QJsonObject delivery(qint64 id);
    Reply post(const QString &path, const QByteArray &body = QByteArray("{}"));
    bool store(const QString &sql);

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

void tst_DeliveryApi::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    ServerOptions options;
    options.deliveryWorker = false; // the states are the test's to arrange
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_org = m_server->createOrganization(QStringLiteral("acme"));
    m_provider = m_server->createProvider(QStringLiteral("crm"), m_org, {QStringLiteral("crm")});
    QVERIFY(m_org > 0 && m_provider > 0);
}

qint64 tst_DeliveryApi::registeredInstance()
{
    const qint64 instance = m_server->createInstance(QStringLiteral("i%1").arg(++m_counter), m_org, m_provider,
                                                     QStringLiteral("crm"), QStringLiteral("alice"));
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                   {{QStringLiteral("callback_url"), Nowhere}}, m_server->operatorToken());
    return r.status == 200 ? instance : 0;
}

QJsonArray tst_DeliveryApi::deliveries(qint64 instance)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken()).items();
}

QJsonObject tst_DeliveryApi::delivery(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken()).json();
}

Reply tst_DeliveryApi::post(const QString &path, const QByteArray &body)
{
    return m_server->request("POST", path, body, m_server->operatorToken());
}

bool tst_DeliveryApi::store(const QString &sql)
{
    Database admin(m_server->databaseUrl());
    return admin.open() && admin.exec(sql);
}

void tst_DeliveryApi::retryOfAnOlderNotification_data()
{
    QTest::addColumn<QString>("newerState");
    QTest::addColumn<int>("bulkCount"); // what a bulk retry of the instance touches: the newer one at most
    QTest::newRow("newer one pending") << QStringLiteral("PENDING") << 1;
    QTest::newRow("newer one cancelled") << QStringLiteral("CANCELLED") << 1;
    QTest::newRow("newer one delivered") << QStringLiteral("DELIVERED") << 0;
}

void tst_DeliveryApi::retryOfAnOlderNotification()
{
    // STOPPED cancelled, then RUNNING: sending STOPPED again would tell the provider the instance
    // is stopped while it runs (each notification carries the full status).
    QFETCH(QString, newerState);
    QFETCH(int, bulkCount);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    QCOMPARE(post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance)).status, 200);
    const qint64 stopped = deliveries(instance).last().toObject().value(QStringLiteral("id")).toInteger();
    QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(stopped)).status, 200);
    QCOMPARE(post(QStringLiteral("/api/v1/instances/%1/start").arg(instance)).status, 200);
    const qint64 running = deliveries(instance).last().toObject().value(QStringLiteral("id")).toInteger();
    QVERIFY(running > stopped);
    if (newerState == QLatin1String("CANCELLED"))
        QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(running)).status, 200);
    else if (newerState == QLatin1String("DELIVERED"))
        QVERIFY(store(QStringLiteral("UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL WHERE id = %1").arg(running)));
    const QJsonObject before = delivery(stopped);

    const Reply r = post(QStringLiteral("/api/v1/deliveries/%1/retry").arg(stopped), R"({"reason": "resend"})");
    QVERIFY2(r.status == 409, r.body.constData());
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), QStringLiteral("delivery-superseded"));
    QCOMPARE(r.json().value(QStringLiteral("newer_delivery_id")).toInteger(), running);
    QVERIFY2(r.json().value(QStringLiteral("detail")).toString().contains(QString::number(running)), r.body.constData());
    const QJsonObject after = delivery(stopped);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(after.value(QStringLiteral("version")), before.value(QStringLiteral("version")));

    // The bulk preview counts what it would send again, and the bulk retry sends that only.
    const QByteArray filter = QStringLiteral(R"({"instance": %1)").arg(instance).toUtf8();
    const Reply preview = post(QStringLiteral("/api/v1/deliveries/retry?dry_run=true"), filter + "}");
    QCOMPARE(preview.status, 200);
    QCOMPARE(preview.json().value(QStringLiteral("count")).toInt(), bulkCount);
    const Reply bulk = post(QStringLiteral("/api/v1/deliveries/retry"), filter + R"(, "reason": "resend all"})");
    QCOMPARE(bulk.status, 200);
    QCOMPARE(bulk.json().value(QStringLiteral("retried")).toInt(), bulkCount);
    QCOMPARE(delivery(stopped).value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(delivery(stopped).value(QStringLiteral("version")), before.value(QStringLiteral("version")));
    if (newerState != QLatin1String("DELIVERED"))
        QCOMPARE(delivery(running).value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
}

void tst_DeliveryApi::retryOfAnOlderTestEvent()
{
    // Test events say nothing about the instance: a newer one never makes an older one stale.
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 endpoint = deliveries(instance).first().toObject().value(QStringLiteral("endpoint_id")).toInteger();
    const Reply first = post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint));
    QCOMPARE(first.status, 202);
    const qint64 older = first.json().value(QStringLiteral("id")).toInteger();
    QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(older)).status, 200);
    QCOMPARE(post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint)).status, 202);
    const Reply again = post(QStringLiteral("/api/v1/deliveries/%1/retry").arg(older));
    QVERIFY2(again.status == 200, again.body.constData());
    QCOMPARE(again.json().value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
}

void tst_DeliveryApi::bulkRetryRefusesBadFilters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("errorPath");
    // Body fields are named by their JSON pointer, query parameters by "?name".
    QTest::newRow("fractional instance") << QString() << QByteArray(R"({"instance": 1.5})") << "/instance";
    QTest::newRow("huge instance") << QString() << QByteArray(R"({"instance": 1e300})") << "/instance";
    QTest::newRow("instance as text") << QString() << QByteArray(R"({"instance": "seven"})") << "/instance";
    QTest::newRow("null instance would match all") << QString() << QByteArray(R"({"instance": null})") << "/instance";
    QTest::newRow("null state would match all") << QString() << QByteArray(R"({"state": null, "provider": 1})") << "/state";
    QTest::newRow("unknown state") << QString() << QByteArray(R"({"state": "LOST"})") << "/state";
    QTest::newRow("fractional status") << QString() << QByteArray(R"({"status": 500.5})") << "/status";
    QTest::newRow("status class 7xx") << QString() << QByteArray(R"({"status": "7xx"})") << "/status";
    QTest::newRow("not a time") << QString() << QByteArray(R"({"created_after": "yesterday"})") << "/created_after";
    QTest::newRow("inverted time range")
        << QString() << QByteArray(R"({"created_after": "2030-01-01T00:00:00Z", "created_before": "2020-01-01T00:00:00Z"})")
        << "/created_before";
    QTest::newRow("empty time range")
        << QString() << QByteArray(R"({"created_after": "2030-01-01T00:00:00Z", "created_before": "2030-01-01T00:00:00Z"})")
        << "/created_before";
    // A bulk action is not a page: a limit it would ignore must not look like one it keeps.
    QTest::newRow("limit") << QStringLiteral("?limit=1") << QByteArray("{}") << "?limit";
    QTest::newRow("cursor") << QStringLiteral("?cursor=YTow") << QByteArray("{}") << "?cursor";
    QTest::newRow("filter in the query") << QStringLiteral("?state=FAILED") << QByteArray("{}") << "?state";
}

void tst_DeliveryApi::bulkRetryRefusesBadFilters()
{
    QFETCH(QString, query);
    QFETCH(QByteArray, body);
    QFETCH(QString, errorPath);
    // Something a bulk retry would take: a cancelled notification.
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 id = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id)).status, 200);
    const QJsonObject before = delivery(id);

    const Reply r = post(QStringLiteral("/api/v1/deliveries/retry") + query, body);
    QVERIFY2(r.status == 400, r.body.constData());
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), QStringLiteral("invalid-request"));
    for (const char *field : {"type", "title", "status", "detail"})
        QVERIFY2(r.json().contains(QLatin1String(field)), field);
    const QJsonArray errors = r.json().value(QStringLiteral("errors")).toArray();
    QVERIFY2(!errors.isEmpty(), r.body.constData());
    QCOMPARE(errors.first().toObject().value(QStringLiteral("path")).toString(), errorPath);
    // Nothing was retried.
    const QJsonObject after = delivery(id);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(after.value(QStringLiteral("version")), before.value(QStringLiteral("version")));
}

void tst_DeliveryApi::testEventNeedsAnActiveEndpoint_data()
{
    QTest::addColumn<QString>("state");
    QTest::newRow("paused") << QStringLiteral("PAUSED");
    QTest::newRow("disabled (410 Gone)") << QStringLiteral("DISABLED");
}

void tst_DeliveryApi::testEventNeedsAnActiveEndpoint()
{
    // Nothing is sent to a paused or disabled endpoint: a 202 would promise a test that never goes out.
    QFETCH(QString, state);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 endpoint = deliveries(instance).first().toObject().value(QStringLiteral("endpoint_id")).toInteger();
    if (state == QLatin1String("PAUSED"))
        QCOMPARE(post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint)).status, 200);
    else
        QVERIFY(store(QStringLiteral("UPDATE endpoints SET state = 'DISABLED', version = version + 1 WHERE id = %1").arg(endpoint)));
    const qsizetype queued = deliveries(instance).size();

    const Reply r = post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint));
    QVERIFY2(r.status == 409, r.body.constData());
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), QStringLiteral("endpoint-not-active"));
    QCOMPARE(r.json().value(QStringLiteral("state")).toString(), state);
    QCOMPARE(r.json().value(QStringLiteral("allowed")).toArray(), QJsonArray{QStringLiteral("resume")});
    QCOMPARE(deliveries(instance).size(), queued);

    // Resumed (a disabled one is enabled by the same action), the test goes out.
    QCOMPARE(post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint)).status, 200);
    const Reply sent = post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint));
    QCOMPARE(sent.status, 202);
    QCOMPARE(deliveries(instance).size(), queued + 1);
}

void tst_DeliveryApi::disabledEndpointOffersResume()
{
    // A refusal names the actions a client can take, by the routes it has.
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 endpoint = deliveries(instance).first().toObject().value(QStringLiteral("endpoint_id")).toInteger();
    QVERIFY(store(QStringLiteral("UPDATE endpoints SET state = 'DISABLED', version = version + 1 WHERE id = %1").arg(endpoint)));
    const Reply r = post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint));
    QCOMPARE(r.status, 409);
    QCOMPARE(r.code(), QStringLiteral("invalid-transition"));
    QCOMPARE(r.json().value(QStringLiteral("allowed")).toArray(), QJsonArray{QStringLiteral("resume")});
    QVERIFY2(r.json().value(QStringLiteral("detail")).toString().endsWith(QLatin1String("allowed: resume")), r.body.constData());
    const Reply resumed = post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint));
    QCOMPARE(resumed.status, 200);
    QCOMPARE(resumed.json().value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
}

void tst_DeliveryApi::rotateSecretGrace_data()
{
    QTest::addColumn<QString>("signing");
    QTest::addColumn<bool>("grace");
    QTest::newRow("standard webhooks: both signatures") << QStringLiteral("standard-webhooks") << true;
    // X-Hub-Signature has room for one signature: the old secret stops at once.
    QTest::newRow("x-hub-signature: one signature") << QStringLiteral("x-hub-signature") << false;
}

void tst_DeliveryApi::rotateSecretGrace()
{
    QFETCH(QString, signing);
    QFETCH(bool, grace);
    const qint64 instance = m_server->createInstance(QStringLiteral("r%1").arg(++m_counter), m_org, m_provider,
                                                     QStringLiteral("crm"), QStringLiteral("alice"));
    const Reply registered = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                            {{QStringLiteral("callback_url"), Nowhere}, {QStringLiteral("signing"), signing}},
                                            m_server->operatorToken());
    QCOMPARE(registered.status, 200);
    const Reply rotated = post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(instance));
    QCOMPARE(rotated.status, 200);
    QVERIFY(rotated.json().value(QStringLiteral("secret")).toString() != registered.json().value(QStringLiteral("secret")).toString());
    const QJsonValue validUntil = rotated.json().value(QStringLiteral("previous_secret_valid_until"));
    QVERIFY2(rotated.json().contains(QStringLiteral("previous_secret_valid_until")), rotated.body.constData());
    QCOMPARE(!validUntil.isNull(), grace);
    if (grace)
        QVERIFY(validUntil.toString() > rotated.json().value(QStringLiteral("updated_at")).toString());
}

QTEST_GUILESS_MAIN(tst_DeliveryApi)
#include "tst_deliveryapi.moc"
