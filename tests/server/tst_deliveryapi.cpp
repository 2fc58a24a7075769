// The delivery and endpoint actions as a hostile client calls them: what they refuse, and that a refusal changes nothing.
#include "deliveryapifixture.h"

#include <QSqlQuery>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_DeliveryApi : public QObject, private DeliveryApiFixture
{
    Q_OBJECT

private slots:
    void initTestCase();
    void retryOfAnOlderNotification_data();
    void retryOfAnOlderNotification();
    void retryOfAnOlderTestEvent();
    void bulkRetryRefusesBadFilters_data();
    void bulkRetryRefusesBadFilters();
    void bulkRetryNamesWhatItRetries();
    void bulkRetryOfSeveralStates_data();
    void bulkRetryOfSeveralStates();
    void testEventNeedsAnActiveEndpoint_data();
    void testEventNeedsAnActiveEndpoint();
    void disabledEndpointOffersResume();
    void rotateSecretGrace_data();
    void rotateSecretGrace();
    void newestSupersedesTheOlderAtOnce_data();
    void newestSupersedesTheOlderAtOnce();
    void bulkRetryOfTooManyChangesNothing_data();
    void bulkRetryOfTooManyChangesNothing();
};

void tst_DeliveryApi::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    startServer();
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
    QTest::addColumn<QString>("says"); // in the error's message, when not empty
    // Body fields are named by their JSON pointer, query parameters by "?name".
    QTest::newRow("fractional instance") << QString() << QByteArray(R"({"instance": 1.5})") << "/instance" << QString();
    QTest::newRow("huge instance") << QString() << QByteArray(R"({"instance": 1e300})") << "/instance" << QString();
    QTest::newRow("instance as text") << QString() << QByteArray(R"({"instance": "seven"})") << "/instance" << QString();
    QTest::newRow("null instance would match all") << QString() << QByteArray(R"({"instance": null})") << "/instance" << QString();
    QTest::newRow("null state would match all") << QString() << QByteArray(R"({"state": null, "provider": 1})") << "/state" << QString();
    QTest::newRow("unknown state") << QString() << QByteArray(R"({"state": "LOST"})") << "/state" << QString();
    QTest::newRow("empty list of states") << QString() << QByteArray(R"({"state": []})") << "/state" << QStringLiteral("expected at least one of");
    QTest::newRow("unknown state in a list") << QString() << QByteArray(R"({"state": ["CANCELLED", "LOST"]})") << "/state/1" << QStringLiteral("unknown state");
    // A state alone reads as a list of one: refused where the list would be, not matching nothing.
    QTest::newRow("delivered alone") << QString() << QByteArray(R"({"state": "DELIVERED"})") << "/state" << QStringLiteral("DELIVERED cannot be retried");
    QTest::newRow("superseded in a list") << QString() << QByteArray(R"({"state": ["CANCELLED", "SUPERSEDED"]})") << "/state/1" << QStringLiteral("SUPERSEDED cannot be retried");
    QTest::newRow("state listed twice") << QString() << QByteArray(R"({"state": ["CANCELLED", "cancelled"]})") << "/state/1" << QStringLiteral("CANCELLED is already listed at /state/0");
    QTest::newRow("state in a list as a number") << QString() << QByteArray(R"({"state": ["CANCELLED", 3]})") << "/state/1" << QStringLiteral("expected a string");
    QTest::newRow("state an object") << QString() << QByteArray(R"({"state": {"in": ["CANCELLED"]}})") << "/state" << QStringLiteral("expected a state or a list of states");
    QTest::newRow("fractional status") << QString() << QByteArray(R"({"status": 500.5})") << "/status" << QString();
    QTest::newRow("status class 7xx") << QString() << QByteArray(R"({"status": "7xx"})") << "/status" << QString();
    QTest::newRow("not a time") << QString() << QByteArray(R"({"created_after": "yesterday"})") << "/created_after" << QString();
    QTest::newRow("inverted time range")
        << QString() << QByteArray(R"({"created_after": "2030-01-01T00:00:00Z", "created_before": "2020-01-01T00:00:00Z"})")
        << "/created_before" << QString();
    QTest::newRow("empty time range")
        << QString() << QByteArray(R"({"created_after": "2030-01-01T00:00:00Z", "created_before": "2030-01-01T00:00:00Z"})")
        << "/created_before" << QString();
    // A bulk action is not a page: a limit it would ignore must not look like one it keeps.
    QTest::newRow("limit") << QStringLiteral("?limit=1") << QByteArray("{}") << "?limit" << QString();
    QTest::newRow("cursor") << QStringLiteral("?cursor=YTow") << QByteArray("{}") << "?cursor" << QString();
    QTest::newRow("filter in the query") << QStringLiteral("?state=FAILED") << QByteArray("{}") << "?state" << QString();
}

void tst_DeliveryApi::bulkRetryRefusesBadFilters()
{
    QFETCH(QString, query);
    QFETCH(QByteArray, body);
    QFETCH(QString, errorPath);
    QFETCH(QString, says);
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
    const QString message = errors.first().toObject().value(QStringLiteral("message")).toString();
    QVERIFY2(message.contains(says), qPrintable(message));
    // Nothing was retried.
    const QJsonObject after = delivery(id);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(after.value(QStringLiteral("version")), before.value(QStringLiteral("version")));
}

void tst_DeliveryApi::bulkRetryNamesWhatItRetries()
{
    // An empty body would retry everything retryable the caller sees: refused, nothing retried,
    // while a dry run may still count it all.
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 id = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id)).status, 200);
    const QJsonObject before = delivery(id);
    const qint64 seq = lastSeq();
    for (const QByteArray &body : {QByteArray("{}"), QByteArray(R"({"reason": "resend everything"})"),
                                   QByteArray(R"({"dry_run": false})")}) {
        const Reply r = post(QStringLiteral("/api/v1/deliveries/retry"), body);
        QVERIFY2(r.status == 422, r.body.constData());
        QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
        QCOMPARE(r.code(), QStringLiteral("filter-required"));
        QVERIFY2(r.json().value(QStringLiteral("detail")).toString().contains(QLatin1String("dry_run")), r.body.constData());
    }
    QCOMPARE(delivery(id).value(QStringLiteral("version")), before.value(QStringLiteral("version")));
    QCOMPARE(lastSeq(), seq);

    const Reply counted = post(QStringLiteral("/api/v1/deliveries/retry?dry_run=true"), "{}");
    QVERIFY2(counted.status == 200, counted.body.constData());
    QVERIFY(counted.json().value(QStringLiteral("count")).toInteger() >= 1);
    const Reply named = post(QStringLiteral("/api/v1/deliveries/retry"),
                             QStringLiteral(R"({"instance": %1, "reason": "resend"})").arg(instance).toUtf8());
    QVERIFY2(named.status == 200, named.body.constData());
    QCOMPARE(named.json().value(QStringLiteral("retried")).toInteger(), 1);
    QCOMPARE(delivery(id).value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
}

void tst_DeliveryApi::bulkRetryOfSeveralStates_data()
{
    QTest::addColumn<QByteArray>("state"); // the body's "state" as JSON; empty: left out
    QTest::addColumn<QStringList>("retried");
    QTest::addColumn<QJsonObject>("byState");
    const QStringList failed = {QStringLiteral("failed1"), QStringLiteral("failed2")};
    QTest::newRow("failed and cancelled") << QByteArray(R"(["FAILED", "CANCELLED"])") << failed + QStringList{"cancelled"}
                                          << QJsonObject{{"FAILED", 2}, {"CANCELLED", 1}};
    QTest::newRow("every retryable state, any case")
        << QByteArray(R"(["pending", "Cancelled", "FAILED"])") << failed + QStringList{"cancelled", "pending"}
        << QJsonObject{{"FAILED", 2}, {"CANCELLED", 1}, {"PENDING", 1}};
    QTest::newRow("one state in a list") << QByteArray(R"(["CANCELLED"])") << QStringList{"cancelled"}
                                         << QJsonObject{{"CANCELLED", 1}};
    // As before lists were taken: one state alone, and no state at all.
    QTest::newRow("one state alone") << QByteArray(R"("failed")") << failed << QJsonObject{{"FAILED", 2}};
    QTest::newRow("no state") << QByteArray() << failed + QStringList{"cancelled", "pending"}
                              << QJsonObject{{"FAILED", 2}, {"CANCELLED", 1}, {"PENDING", 1}};
}

void tst_DeliveryApi::bulkRetryOfSeveralStates()
{
    // One call retries the union of the listed states in one transaction: each matching delivery
    // once, with one audit row and one feed event, and nothing else.
    QFETCH(QByteArray, state);
    QFETCH(QStringList, retried);
    QFETCH(QJsonObject, byState);
    qint64 provider = 0;
    const QHash<QString, qint64> ids = oneProviderInEveryState(&provider);
    QVERIFY(!ids.isEmpty());
    QHash<QString, QJsonObject> before;
    for (auto it = ids.cbegin(); it != ids.cend(); ++it)
        before.insert(it.key(), delivery(it.value()));
    QByteArray filter = "{\"provider\": " + QByteArray::number(provider);
    if (!state.isEmpty())
        filter += ", \"state\": " + state;
    const QString reason = QStringLiteral("bulk %1").arg(QString::fromLatin1(QTest::currentDataTag()));
    const qint64 seq = lastSeq();

    const Reply preview = post(QStringLiteral("/api/v1/deliveries/retry"), filter + R"(, "dry_run": true})");
    QVERIFY2(preview.status == 200, preview.body.constData());
    QCOMPARE(preview.json().value(QStringLiteral("dry_run")).toBool(), true);
    QCOMPARE(preview.json().value(QStringLiteral("count")).toInteger(), qint64(retried.size()));
    QCOMPARE(preview.json().value(QStringLiteral("states")).toObject(), byState);
    QVERIFY(!preview.json().contains(QStringLiteral("retried")));
    for (auto it = ids.cbegin(); it != ids.cend(); ++it)
        QCOMPARE(delivery(it.value()).value(QStringLiteral("version")), before.value(it.key()).value(QStringLiteral("version")));
    QCOMPARE(lastSeq(), seq);

    const Reply bulk = post(QStringLiteral("/api/v1/deliveries/retry"),
                            filter + ", \"reason\": \"" + reason.toUtf8() + "\"}");
    QVERIFY2(bulk.status == 200, bulk.body.constData());
    QCOMPARE(bulk.json().value(QStringLiteral("dry_run")).toBool(), false);
    QCOMPARE(bulk.json().value(QStringLiteral("count")).toInteger(), qint64(retried.size()));
    QCOMPARE(bulk.json().value(QStringLiteral("retried")).toInteger(), qint64(retried.size()));
    QCOMPARE(bulk.json().value(QStringLiteral("states")).toObject(), byState);

    QSet<qint64> expectedEvents;
    for (auto it = ids.cbegin(); it != ids.cend(); ++it) {
        const QJsonObject was = before.value(it.key());
        const QJsonObject now = delivery(it.value());
        QList<QJsonObject> retries;
        for (const QJsonValue &entry : auditOf(it.value())) {
            if (entry.toObject().value(QStringLiteral("action")).toString() == QLatin1String("retry"))
                retries.append(entry.toObject());
        }
        if (!retried.contains(it.key())) {
            QVERIFY2(now.value(QStringLiteral("version")) == was.value(QStringLiteral("version")), qPrintable(it.key()));
            QVERIFY2(retries.isEmpty(), qPrintable(it.key()));
            continue;
        }
        expectedEvents.insert(it.value());
        QCOMPARE(now.value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
        QCOMPARE(now.value(QStringLiteral("version")).toInteger(), was.value(QStringLiteral("version")).toInteger() + 1);
        QCOMPARE(now.value(QStringLiteral("attempts")).toInteger(), qint64(0));
        QCOMPARE(retries.size(), 1);
        QCOMPARE(retries.first().value(QStringLiteral("from")).toString(), was.value(QStringLiteral("state")).toString());
        QCOMPARE(retries.first().value(QStringLiteral("to")).toString(), QStringLiteral("PENDING"));
        QCOMPARE(retries.first().value(QStringLiteral("reason")).toString(), reason);
    }
    const Reply feed = m_server->get(QStringLiteral("/api/v1/events?after=%1&limit=1000").arg(seq), m_server->operatorToken());
    QCOMPARE(feed.status, 200);
    QList<qint64> updated;
    for (const QJsonValue &e : feed.json().value(QStringLiteral("events")).toArray()) {
        const QJsonObject event = e.toObject();
        QCOMPARE(event.value(QStringLiteral("kind")).toString(), QStringLiteral("delivery"));
        QCOMPARE(event.value(QStringLiteral("op")).toString(), QStringLiteral("updated"));
        updated.append(event.value(QStringLiteral("id")).toInteger());
    }
    QCOMPARE(updated.size(), retried.size());
    QCOMPARE(QSet<qint64>(updated.cbegin(), updated.cend()), expectedEvents);
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
    // The way out in the words of the console's buttons: "Resume" a paused one, "Enable" a disabled one.
    const QString detail = r.json().value(QStringLiteral("detail")).toString();
    QVERIFY2(detail.contains(state == QLatin1String("PAUSED") ? QStringLiteral("resume it") : QStringLiteral("enable it")),
             qPrintable(detail));
    QCOMPARE(deliveries(instance).size(), queued);

    // A bulk retry takes its deliveries, and says they wait for the endpoint.
    const Reply bulk = post(QStringLiteral("/api/v1/deliveries/retry"),
                            "{\"endpoint\": " + QByteArray::number(endpoint) + ", \"dry_run\": true}");
    QVERIFY2(bulk.status == 200, bulk.body.constData());
    QVERIFY(bulk.json().value(QStringLiteral("count")).toInteger() >= 1);
    QCOMPARE(bulk.json().value(QStringLiteral("held")).toInteger(), bulk.json().value(QStringLiteral("count")).toInteger());

    // Resumed (a disabled one is enabled by the same action), the test goes out.
    QCOMPARE(post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint)).status, 200);
    const Reply sent = post(QStringLiteral("/api/v1/endpoints/%1/test").arg(endpoint));
    const Reply unheld = post(QStringLiteral("/api/v1/deliveries/retry"),
                              "{\"endpoint\": " + QByteArray::number(endpoint) + ", \"dry_run\": true}");
    QCOMPARE(unheld.json().value(QStringLiteral("held")).toInteger(), 0);
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

void tst_DeliveryApi::newestSupersedesTheOlderAtOnce_data()
{
    QTest::addColumn<QString>("how");
    QTest::addColumn<QString>("olderState");
    QTest::addColumn<bool>("inFlight");
    for (const QString &how : {QStringLiteral("stop"), QStringLiteral("retry")}) {
        for (const QString &state : {QStringLiteral("PENDING"), QStringLiteral("FAILED")}) {
            for (const bool inFlight : {false, true}) {
                const QString name = QStringLiteral("%1 over %2%3").arg(how, state, inFlight ? QStringLiteral(", in flight") : QString());
                QTest::newRow(qPrintable(name)) << how << state << inFlight;
            }
        }
    }
}

void tst_DeliveryApi::newestSupersedesTheOlderAtOnce()
{
    // Whatever makes a notification the instance's newest due one supersedes the older undelivered
    // ones in the same transaction: a status change's new notification, and a retry of the newest
    // one (after it was cancelled, older ones may have been left undelivered by an earlier
    // version or a replica's race). No worker runs here, so nothing else could have done it.
    QFETCH(QString, how);
    QFETCH(QString, olderState);
    QFETCH(bool, inFlight);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 older = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    qint64 newer = 0;
    if (how == QLatin1String("retry")) {
        QCOMPARE(post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance)).status, 200);
        newer = deliveries(instance).last().toObject().value(QStringLiteral("id")).toInteger();
        QVERIFY(newer > older);
        QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(newer)).status, 200);
    }
    const QString until = QStringLiteral("2999-01-01T00:00:00.000Z");
    QVERIFY(store(QStringLiteral("UPDATE deliveries SET state = '%1', next_attempt_at = %2, lease_owner = %3, lease_until = %4"
                                 " WHERE id = %5")
                      .arg(olderState,
                           olderState == QLatin1String("PENDING") ? QStringLiteral("'2000-01-01T00:00:00.000Z'") : QStringLiteral("NULL"),
                           inFlight ? QStringLiteral("'w-elsewhere'") : QStringLiteral("NULL"),
                           inFlight ? QLatin1Char('\'') + until + QLatin1Char('\'') : QStringLiteral("NULL"))
                      .arg(older)));
    const qint64 seq = lastSeq();

    if (how == QLatin1String("retry"))
        QCOMPARE(post(QStringLiteral("/api/v1/deliveries/%1/retry").arg(newer)).status, 200);
    else
        QCOMPARE(post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance)).status, 200);

    const QJsonObject after = delivery(older);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("SUPERSEDED"));
    // Settled: nothing is scheduled for it any more, as for a delivered, failed or cancelled one.
    QVERIFY(after.value(QStringLiteral("next_attempt_at")).isNull());
    QVERIFY(after.value(QStringLiteral("give_up_at")).isNull());
    // An attempt on the wire keeps its lease: the newer one waits for it.
    QCOMPARE(leaseOf(older), inFlight ? until : QStringLiteral("NULL"));
    const QJsonArray events =
        m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(seq), m_server->operatorToken()).json().value(QStringLiteral("events")).toArray();
    bool seen = false;
    for (const QJsonValue &v : events) {
        const QJsonObject e = v.toObject();
        seen = seen
               || (e.value(QStringLiteral("kind")).toString() == QLatin1String("delivery") && e.value(QStringLiteral("id")).toInteger() == older
                   && e.value(QStringLiteral("object")).toObject().value(QStringLiteral("state")).toString() == QLatin1String("SUPERSEDED"));
    }
    QVERIFY2(seen, QJsonDocument(events).toJson().constData());
    const QJsonArray all = deliveries(instance);
    QCOMPARE(all.last().toObject().value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    if (how == QLatin1String("retry"))
        QCOMPARE(all.last().toObject().value(QStringLiteral("id")).toInteger(), newer);
}

void tst_DeliveryApi::bulkRetryOfTooManyChangesNothing_data()
{
    QTest::addColumn<bool>("dryRun");
    QTest::newRow("retry") << false;
    QTest::newRow("dry run") << true;
}

void tst_DeliveryApi::bulkRetryOfTooManyChangesNothing()
{
    // One more than a bulk retry takes (10 000): failed test events of one instance, which no
    // newer notification replaces. The retry is refused whole, never cut to a part.
    QFETCH(bool, dryRun);
    const qint64 instance = registeredInstance();
    QVERIFY(instance > 0);
    const qint64 first = deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger();
    QVERIFY(store(QStringLiteral(
        "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 10001)"
        " INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " created_at, updated_at, version) SELECT 'msg_many_%1_' || k, 'opsdeck.test', instance_id, provider_id, endpoint_id,"
        " 'FAILED', '{}', 3, created_at, updated_at, 1 FROM n, deliveries WHERE id = %2").arg(instance).arg(first)));
    const QString failed = QStringLiteral(
        "SELECT COUNT(*) FROM deliveries WHERE instance_id = %1 AND state = 'FAILED'").arg(instance);
    const auto count = [&] {
        Database admin(m_server->databaseUrl());
        QSqlQuery q(admin.open() ? admin.connection() : QSqlDatabase());
        return q.exec(failed) && q.next() ? q.value(0).toInt() : -1;
    };
    QCOMPARE(count(), 10001);
    const qint64 seq = lastSeq();

    const Reply r = post(QStringLiteral("/api/v1/deliveries/retry"),
                         QStringLiteral(R"({"instance": %1, "state": "FAILED", "dry_run": %2})")
                             .arg(instance)
                             .arg(dryRun ? QStringLiteral("true") : QStringLiteral("false"))
                             .toUtf8());
    QVERIFY2(r.status == 422, r.body.constData());
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), QStringLiteral("too-many-matches"));
    QCOMPARE(count(), 10001);
    QCOMPARE(lastSeq(), seq);

    // One fewer and it goes through.
    QVERIFY(store(QStringLiteral("DELETE FROM deliveries WHERE webhook_id = 'msg_many_%1_1'").arg(instance)));
    const Reply ok = post(QStringLiteral("/api/v1/deliveries/retry"),
                          QStringLiteral(R"({"instance": %1, "state": "FAILED", "dry_run": %2})")
                              .arg(instance)
                              .arg(dryRun ? QStringLiteral("true") : QStringLiteral("false"))
                              .toUtf8());
    QVERIFY2(ok.status == 200, ok.body.left(400).constData());
    QCOMPARE(ok.json().value(QStringLiteral("count")).toInt(), 10000);
    QCOMPARE(count(), dryRun ? 10000 : 0);
}

QTEST_GUILESS_MAIN(tst_DeliveryApi)
#include "tst_deliveryapi.moc"
