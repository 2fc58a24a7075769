// Over a hundred bad requests, each answered with the right status and problem code, never a 500.
#include "testserver.h"

#include <QRegularExpression>
#include <QTcpSocket>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_BadInput : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void badRequest_data();
    void badRequest();
    void oversizedBody_data();
    void oversizedBody();
    void hugeBodyIsRefusedWhileItArrives();
    void unsureFramingIsRefused_data();
    void unsureFramingIsRefused();
    void pipelinedRequestsAcrossReads_data();
    void pipelinedRequestsAcrossReads();
    void headAnswersWithoutABody();
    void connectionCloseIsHonoured();
    void http10EndsUnlessKeptAlive();
    void hostIsRequired();
    void continueIsSentWhenAwaited();
    void idleConnectionsEnd();
    void upgradeAfterALongPoll();
    void stillHealthyAndUnchanged();

private:
    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_instance = 0;
    qint64 m_token = 0;
    // A registered instance's notification and endpoint, which no refused request may touch.
    qint64 m_registered = 0;
    qint64 m_delivery = 0;
    qint64 m_endpoint = 0;
    int m_organizationsBefore = 0;
    // Writes `segments` on a connection of its own, each after the server has had 300 ms for the
    // last, and reads until the server closes it: its answers.
    QByteArray exchange(const QByteArrayList &segments);
    QByteArray exchange(const QByteArray &bytes) { return exchange(QByteArrayList{bytes}); }
};

namespace {

// The test server's idle timeout: longer than exchange()'s pauses between segments.
constexpr int kIdleMs = 2000;

} // namespace

void tst_BadInput::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    ServerOptions options;
    options.deliveryWorker = false; // the delivery keeps its version unless a request changes it
    options.idleTimeout = std::chrono::milliseconds(kIdleMs);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_org = m_server->createOrganization(QStringLiteral("Customer"));
    const qint64 provider = m_server->createProvider(QStringLiteral("P"), m_org, {QStringLiteral("app")});
    m_instance = m_server->createInstance(QStringLiteral("i"), m_org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    const Reply token = m_server->post(QStringLiteral("/api/v1/tokens"), {{QStringLiteral("role"), QStringLiteral("owner")},
                                                                         {QStringLiteral("subject"), QStringLiteral("zoe")}},
                                       m_server->operatorToken());
    m_token = token.json().value(QStringLiteral("id")).toInteger();
    QVERIFY(m_org && m_instance && m_token);
    m_registered = m_server->createInstance(QStringLiteral("r"), m_org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(m_registered),
                            {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hook")}}, m_server->operatorToken())
                 .status,
             200);
    const QJsonObject d = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(m_registered), m_server->operatorToken())
                              .items()
                              .first()
                              .toObject();
    m_delivery = d.value(QStringLiteral("id")).toInteger();
    m_endpoint = d.value(QStringLiteral("endpoint_id")).toInteger();
    QVERIFY(m_delivery && m_endpoint);
    m_organizationsBefore = int(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size());
}

void tst_BadInput::cleanupTestCase()
{
    m_server.reset();
}

void tst_BadInput::badRequest_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("authorization"); // "op" = the operator token
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("errorPath"); // first errors[].path, when the answer has errors

    const QList<QPair<QByteArray, QString>> mutations = {
        {"POST", "/api/v1/organizations"}, {"POST", "/api/v1/providers"}, {"POST", "/api/v1/instances"},
        {"POST", "/api/v1/instances/{inst}/register"}, {"POST", "/api/v1/instances/{inst}/stop"},
        {"POST", "/api/v1/instances/{inst}/start"}, {"POST", "/api/v1/tokens"}, {"DELETE", "/api/v1/organizations/{org}"},
        {"POST", "/api/v1/organizations/{org}/restore"}, {"DELETE", "/api/v1/tokens/{tok}"},
        {"POST", "/api/v1/deliveries/retry"}, {"POST", "/api/v1/deliveries/{del}/retry"},
        {"POST", "/api/v1/deliveries/{del}/cancel"}, {"POST", "/api/v1/endpoints/{ep}/pause"},
        {"POST", "/api/v1/endpoints/{ep}/resume"}, {"POST", "/api/v1/endpoints/{ep}/test"},
        {"POST", "/api/v1/instances/{reg}/rotate-secret"},
    };
    const QList<QPair<const char *, QByteArray>> malformed = {
        {"truncated", "{"}, {"missing value", R"({"name":})"}, {"not json", "name=x"},
        {"trailing comma", R"({"name": "x",})"}, {"single quotes", "{'name': 'x'}"},
    };
    // Qt's parser accepts only an object or an array at the top: a scalar is malformed JSON to it.
    const QList<QPair<const char *, QByteArray>> notObjects = {{"array", "[1, 2]"}, {"empty array", "[]"}};
    const QList<QPair<const char *, QByteArray>> scalars = {{"string", "\"x\""}, {"number", "42"}};
    for (const auto &m : mutations) {
        for (const auto &b : malformed)
            QTest::addRow("%s %s: %s", m.first.constData(), qPrintable(m.second), b.first)
                << m.first << m.second << b.second << QByteArray("op") << 400 << "malformed-json" << "/";
        for (const auto &b : scalars)
            QTest::addRow("%s %s: %s body", m.first.constData(), qPrintable(m.second), b.first)
                << m.first << m.second << b.second << QByteArray("op") << 400 << "malformed-json" << "/";
        for (const auto &b : notObjects)
            QTest::addRow("%s %s: %s body", m.first.constData(), qPrintable(m.second), b.first)
                << m.first << m.second << b.second << QByteArray("op") << 400 << "invalid-request" << "/";
    }

    struct Row
    {
        const char *name;
        const char *method;
        const char *path;
        QByteArray body;
        int status;
        const char *code;
        const char *errorPath;
    };
    const QByteArray longName = "{\"name\": \"" + QByteArray(201, 'x') + "\"}";
    const QByteArray longReason = "{\"reason\": \"" + QByteArray(1001, 'r') + "\"}";
    const QList<Row> rows = {
        // Fields: wrong types, missing, unknown, out of range.
        {"org: name is a number", "POST", "/api/v1/organizations", R"({"name": 1})", 400, "invalid-request", "/name"},
        {"org: name missing", "POST", "/api/v1/organizations", "{}", 400, "invalid-request", "/name"},
        {"org: name null", "POST", "/api/v1/organizations", R"({"name": null})", 400, "invalid-request", "/name"},
        {"org: name too long", "POST", "/api/v1/organizations", longName, 400, "invalid-request", "/name"},
        {"org: unknown field", "POST", "/api/v1/organizations", R"({"name": "x", "extra": 1})", 400, "invalid-request", "/extra"},
        {"org: reason is a number", "POST", "/api/v1/organizations", R"({"name": "x", "reason": 5})", 400, "invalid-request", "/reason"},
        {"org: empty body", "POST", "/api/v1/organizations", "", 400, "invalid-request", "/name"},
        {"provider: organization missing", "POST", "/api/v1/providers", R"({"name": "p"})", 400, "invalid-request", "/organization_id"},
        {"provider: organization as string", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": "1"})", 400, "invalid-request", "/organization_id"},
        {"provider: organization negative", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": -1})", 400, "invalid-request", "/organization_id"},
        {"provider: organization fractional", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1.5})", 400, "invalid-request", "/organization_id"},
        {"provider: applications not a list", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": "x"})", 400, "invalid-request", "/applications"},
        {"provider: application not a string", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": [1]})", 400, "invalid-request", "/applications/0"},
        {"provider: unknown organization", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 9999})", 400, "invalid-request", "/organization_id"},
        {"organization: name twice", "POST", "/api/v1/organizations", R"({"name": "Acme", "name": "Other"})", 400, "invalid-request", "/name"},
        {"provider: blank application", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": ["crm", " "]})", 400, "invalid-request", "/applications/1"},
        {"provider: padded application", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": ["crm "]})", 400, "invalid-request", "/applications/0"},
        {"provider: application twice", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": ["crm", "wiki", "crm"]})", 400, "invalid-request", "/applications/2"},
        {"instance: everything missing", "POST", "/api/v1/instances", "{}", 400, "invalid-request", "/name"},
        {"instance: provider as string", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": "1", "application": "app", "owner": "a"})", 400, "invalid-request", "/provider_id"},
        {"instance: owner as number", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "app", "owner": 7})", 400, "invalid-request", "/owner"},
        {"instance: unknown field", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "app", "owner": "a", "size": "XL"})", 400, "invalid-request", "/size"},
        {"instance: unknown application", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "nope", "owner": "a"})", 400, "invalid-request", "/application"},
        {"register: url missing", "POST", "/api/v1/instances/{inst}/register", "{}", 400, "invalid-request", "/callback_url"},
        {"register: url not http", "POST", "/api/v1/instances/{inst}/register", R"({"callback_url": "ftp://example.com/x"})", 400, "invalid-request", "/callback_url"},
        {"register: url relative", "POST", "/api/v1/instances/{inst}/register", R"({"callback_url": "/hooks"})", 400, "invalid-request", "/callback_url"},
        {"register: url a number", "POST", "/api/v1/instances/{inst}/register", R"({"callback_url": 5})", 400, "invalid-request", "/callback_url"},
        {"register: unknown signing", "POST", "/api/v1/instances/{inst}/register", R"({"callback_url": "http://127.0.0.1/x", "signing": "md5"})", 400, "invalid-request", "/signing"},
        {"register: bad status", "POST", "/api/v1/instances/{inst}/register", R"({"callback_url": "http://127.0.0.1/x", "status": "DESTROYED"})", 400, "invalid-request", "/status"},
        {"stop: reason a number", "POST", "/api/v1/instances/{inst}/stop", R"({"reason": 5})", 400, "invalid-request", "/reason"},
        {"stop: reason too long", "POST", "/api/v1/instances/{inst}/stop", longReason, 400, "invalid-request", "/reason"},
        {"stop: unknown field", "POST", "/api/v1/instances/{inst}/stop", R"({"force": true})", 400, "invalid-request", "/force"},
        {"start: not allowed from PENDING", "POST", "/api/v1/instances/{inst}/start", "", 409, "invalid-transition", ""},
        {"restore: not deleted", "POST", "/api/v1/organizations/{org}/restore", "", 409, "invalid-transition", ""},
        {"delete org: has instances", "DELETE", "/api/v1/organizations/{org}", "", 409, "organization-has-instances", ""},
        {"token: unknown role", "POST", "/api/v1/tokens", R"({"role": "admin"})", 400, "invalid-request", "/role"},
        {"token: role missing", "POST", "/api/v1/tokens", "{}", 400, "invalid-request", "/role"},
        {"token: owner without subject", "POST", "/api/v1/tokens", R"({"role": "owner"})", 400, "invalid-request", "/subject"},
        {"token: unknown provider", "POST", "/api/v1/tokens", R"({"role": "provider", "subject": "999"})", 400, "invalid-request", "/subject"},
        {"token: unknown field", "POST", "/api/v1/tokens", R"({"role": "operator", "admin": true})", 400, "invalid-request", "/admin"},
        {"revoke: unknown token", "DELETE", "/api/v1/tokens/99999", "", 404, "not-found", ""},
        // Query parameters.
        {"instances: bad status", "GET", "/api/v1/instances?status=BROKEN", "", 400, "invalid-request", "?status"},
        // Empty, it would read as no filter: every instance where some owner's were asked for.
        {"instances: empty owner", "GET", "/api/v1/instances?owner=", "", 400, "invalid-request", "?owner"},
        // No entry has it: an empty list would read as "nothing happened".
        {"audit: unknown kind", "GET", "/api/v1/audit?kind=bogus", "", 400, "invalid-request", "?kind"},
        {"instances: organization not a number", "GET", "/api/v1/instances?organization=abc", "", 400, "invalid-request", "?organization"},
        {"instances: provider zero", "GET", "/api/v1/instances?provider=0", "", 400, "invalid-request", "?provider"},
        {"instances: updated_after not a time", "GET", "/api/v1/instances?updated_after=yesterday", "", 400, "invalid-request", "?updated_after"},
        {"instances: negative limit", "GET", "/api/v1/instances?limit=-1", "", 400, "invalid-request", "?limit"},
        {"instances: forged cursor", "GET", "/api/v1/instances?cursor=zzz", "", 400, "invalid-request", "?cursor"},
        {"instances: unknown parameter", "GET", "/api/v1/instances?sort=name", "", 400, "invalid-request", "?sort"},
        {"audit: object_id not a number", "GET", "/api/v1/audit?object_id=x", "", 400, "invalid-request", "?object_id"},
        {"events: after not a number", "GET", "/api/v1/events?after=x", "", 400, "invalid-request", "?after"},
        {"events: wait too long", "GET", "/api/v1/events?wait=3600", "", 400, "invalid-request", "?wait"},
        {"organizations: bad status", "GET", "/api/v1/organizations?status=x", "", 400, "invalid-request", "?status"},
        {"providers: negative organization", "GET", "/api/v1/providers?organization=-2", "", 400, "invalid-request", "?organization"},
        {"tokens: limit too large", "GET", "/api/v1/tokens?limit=100000", "", 400, "invalid-request", "?limit"},
        {"deliveries: bad state", "GET", "/api/v1/deliveries?state=bogus", "", 400, "invalid-request", "?state"},
        {"deliveries: status class 7xx", "GET", "/api/v1/deliveries?status=7xx", "", 400, "invalid-request", "?status"},
        {"deliveries: instance not a number", "GET", "/api/v1/deliveries?instance=abc", "", 400, "invalid-request", "?instance"},
        {"deliveries: instance with a sign", "GET", "/api/v1/deliveries?instance=%2B1", "", 400, "invalid-request", "?instance"},
        {"deliveries: instance with a space", "GET", "/api/v1/deliveries?instance=%201", "", 400, "invalid-request", "?instance"},
        {"instances: provider with a leading zero", "GET", "/api/v1/instances?provider=01", "", 400, "invalid-request", "?provider"},
        {"bulk retry: endpoint with a sign", "POST", "/api/v1/deliveries/retry", R"({"endpoint": "+1", "dry_run": true})", 400, "invalid-request", "/endpoint"},
        {"deliveries: repeated state", "GET", "/api/v1/deliveries?state=FAILED&state=PENDING", "", 400, "invalid-request", "?state"},
        {"deliveries: limit too large", "GET", "/api/v1/deliveries?limit=100000", "", 400, "invalid-request", "?limit"},
        {"deliveries: forged cursor", "GET", "/api/v1/deliveries?cursor=zzz", "", 400, "invalid-request", "?cursor"},
        {"endpoints: bad provider", "GET", "/api/v1/endpoints?provider=x", "", 400, "invalid-request", "?provider"},
        {"bulk retry: states an empty list", "POST", "/api/v1/deliveries/retry", R"({"state": [], "dry_run": true})", 400, "invalid-request", "/state"},
        {"bulk retry: unknown state in a list", "POST", "/api/v1/deliveries/retry", R"({"state": ["FAILED", "LOST"], "dry_run": true})", 400, "invalid-request", "/state/1"},
        {"bulk retry: a state retry never leaves", "POST", "/api/v1/deliveries/retry", R"({"state": ["DELIVERED", "FAILED"], "dry_run": true})", 400, "invalid-request", "/state/0"},
        {"bulk retry: a state listed twice", "POST", "/api/v1/deliveries/retry", R"({"state": ["FAILED", "PENDING", "failed"], "dry_run": true})", 400, "invalid-request", "/state/2"},
        {"bulk retry: a state in a list as a number", "POST", "/api/v1/deliveries/retry", R"({"state": ["FAILED", 1], "dry_run": true})", 400, "invalid-request", "/state/1"},
        {"bulk retry: a state in a list as null", "POST", "/api/v1/deliveries/retry", R"({"state": [null], "dry_run": true})", 400, "invalid-request", "/state/0"},
        {"bulk retry: a list of lists", "POST", "/api/v1/deliveries/retry", R"({"state": [["FAILED"]], "dry_run": true})", 400, "invalid-request", "/state/0"},
        {"bulk retry: state an object", "POST", "/api/v1/deliveries/retry", R"({"state": {"FAILED": true}, "dry_run": true})", 400, "invalid-request", "/state"},
        {"bulk retry: state a boolean", "POST", "/api/v1/deliveries/retry", R"({"state": true, "dry_run": true})", 400, "invalid-request", "/state"},
        {"bulk retry: dry_run a string", "POST", "/api/v1/deliveries/retry", R"({"dry_run": "yes"})", 400, "invalid-request", "/dry_run"},
        {"bulk retry: dry_run null", "POST", "/api/v1/deliveries/retry", R"({"instance": 999, "dry_run": null})", 400, "invalid-request", "/dry_run"},
        {"bulk retry: unknown field", "POST", "/api/v1/deliveries/retry", R"({"colour": "red"})", 400, "invalid-request", "/colour"},
        {"retry: unknown field", "POST", "/api/v1/deliveries/{del}/retry", R"({"force": true})", 400, "invalid-request", "/force"},
        {"cancel: reason a number", "POST", "/api/v1/deliveries/{del}/cancel", R"({"reason": 5})", 400, "invalid-request", "/reason"},
        {"rotate: secret chosen by the client", "POST", "/api/v1/instances/{reg}/rotate-secret", R"({"secret": "whsec_mine"})", 400, "invalid-request", "/secret"},
        {"rotate: no callback", "POST", "/api/v1/instances/{inst}/rotate-secret", "", 409, "no-callback", ""},
        {"resume: endpoint active", "POST", "/api/v1/endpoints/{ep}/resume", "", 409, "invalid-transition", ""},
        {"missing delivery", "POST", "/api/v1/deliveries/99999/retry", "", 404, "not-found", ""},
        {"missing endpoint", "POST", "/api/v1/endpoints/99999/test", "", 404, "not-found", ""},
        // Routing.
        {"unknown version", "GET", "/api/v2/instances", "", 404, "not-found", ""},
        {"non-numeric id", "GET", "/api/v1/instances/abc", "", 404, "not-found", ""},
        {"negative id", "GET", "/api/v1/instances/-1", "", 404, "not-found", ""},
        {"fractional id", "GET", "/api/v1/instances/1.5", "", 404, "not-found", ""},
        {"padded id", "GET", "/api/v1/instances/007", "", 404, "not-found", ""},
        {"huge id", "GET", "/api/v1/instances/99999999999999999999999", "", 404, "not-found", ""},
        {"missing instance", "GET", "/api/v1/instances/99999", "", 404, "not-found", ""},
        {"unknown action", "POST", "/api/v1/organizations/{org}/explode", "", 404, "not-found", ""},
        {"root", "GET", "/", "", 404, "not-found", ""},
        {"PUT on a collection", "PUT", "/api/v1/instances", "{}", 405, "method-not-allowed", ""},
        {"PATCH an organization", "PATCH", "/api/v1/organizations/{org}", "{}", 405, "method-not-allowed", ""},
        {"DELETE a collection", "DELETE", "/api/v1/instances", "", 405, "method-not-allowed", ""},
        {"POST health", "POST", "/healthz", "{}", 405, "method-not-allowed", ""},
        {"DELETE the feed", "DELETE", "/api/v1/events", "", 405, "method-not-allowed", ""},
        {"GET an action", "GET", "/api/v1/instances/{inst}/stop", "", 405, "method-not-allowed", ""},
        // Headers.
        {"stale If-Match", "POST", "/api/v1/instances/{inst}/stop", "", 412, "precondition-failed", ""},
        {"idempotency key too long", "POST", "/api/v1/organizations", R"({"name": "x"})", 400, "invalid-request", ""},
        {"test: stale If-Match", "POST", "/api/v1/endpoints/{ep}/test", "", 412, "precondition-failed", ""},
        // The reason header is refused as the body's reason would be, not mended (badReasonHeaders).
        {"reason header: bad escape", "POST", "/api/v1/endpoints/{ep}/pause", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: not UTF-8", "POST", "/api/v1/endpoints/{ep}/pause", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: too long", "POST", "/api/v1/deliveries/{del}/cancel", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: bulk retry", "POST", "/api/v1/deliveries/retry", R"({"dry_run": false})", 400, "invalid-request", "X-OpsDeck-Reason"},
    };
    for (const Row &r : rows)
        QTest::newRow(r.name) << QByteArray(r.method) << QString::fromLatin1(r.path) << r.body << QByteArray("op") << r.status
                              << QString::fromLatin1(r.code) << QString::fromLatin1(r.errorPath);

    // Authentication.
    QTest::newRow("no token") << QByteArray("POST") << "/api/v1/organizations" << QByteArray(R"({"name": "x"})") << QByteArray() << 401 << "unauthenticated" << "";
    QTest::newRow("empty bearer") << QByteArray("GET") << "/api/v1/instances" << QByteArray() << QByteArray("Bearer ") << 401 << "unauthenticated" << "";
    QTest::newRow("basic auth") << QByteArray("GET") << "/api/v1/instances" << QByteArray() << QByteArray("Basic YTpi") << 401 << "unauthenticated" << "";
    QTest::newRow("unknown bearer") << QByteArray("GET") << "/api/v1/instances" << QByteArray() << QByteArray("Bearer odk_nope") << 401 << "unauthenticated" << "";
    QTest::newRow("huge bearer") << QByteArray("GET") << "/api/v1/instances" << QByteArray() << "Bearer " + QByteArray(4000, 'a') << 401 << "unauthenticated" << "";
}

void tst_BadInput::badRequest()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, authorization);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, errorPath);
    path.replace(QLatin1String("{org}"), QString::number(m_org))
        .replace(QLatin1String("{inst}"), QString::number(m_instance))
        .replace(QLatin1String("{tok}"), QString::number(m_token))
        .replace(QLatin1String("{reg}"), QString::number(m_registered))
        .replace(QLatin1String("{del}"), QString::number(m_delivery))
        .replace(QLatin1String("{ep}"), QString::number(m_endpoint));
    HeaderList headers;
    if (authorization == "op")
        headers.append({"Authorization", "Bearer " + m_server->operatorToken().toUtf8()});
    else if (!authorization.isEmpty())
        headers.append({QByteArray("Authorization"), authorization});
    const QByteArray tag = QTest::currentDataTag();
    if (tag == "stale If-Match" || tag == "test: stale If-Match")
        headers.append({QByteArray("If-Match"), QByteArray("\"42\"")});
    static const QHash<QByteArray, QByteArray> badReasonHeaders{{"reason header: bad escape", "%ZZbad"},
                                                                {"reason header: not UTF-8", "%C3%28"},
                                                                {"reason header: too long", QByteArray(1001, 'a')},
                                                                {"reason header: bulk retry", "50%"}};
    if (badReasonHeaders.contains(tag))
        headers.append({QByteArray("X-OpsDeck-Reason"), badReasonHeaders.value(tag)});
    if (QByteArray(QTest::currentDataTag()) == "idempotency key too long")
        headers.append({QByteArray("Idempotency-Key"), QByteArray(300, 'k')});
    const Reply r = m_server->request(method, path, body, QString(), headers);
    QVERIFY2(r.status == status, qPrintable(QStringLiteral("got %1: %2").arg(r.status).arg(QString::fromUtf8(r.body))));
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), code);
    QCOMPARE(r.json().value(QStringLiteral("status")).toInt(), status);
    QCOMPARE(r.json().value(QStringLiteral("type")).toString(), QStringLiteral("urn:opsdeck:problem:") + code);
    if (!errorPath.isEmpty()) {
        const QJsonArray errors = r.json().value(QStringLiteral("errors")).toArray();
        QVERIFY2(!errors.isEmpty(), r.body.constData());
        QCOMPARE(errors.first().toObject().value(QStringLiteral("path")).toString(), errorPath);
    }
    if (status == 405)
        QVERIFY(!r.header("Allow").isEmpty());
}

void tst_BadInput::oversizedBody_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("field");
    QTest::newRow("organization") << "/api/v1/organizations" << QByteArray("name");
    QTest::newRow("bulk retry") << "/api/v1/deliveries/retry" << QByteArray("reason");
    QTest::newRow("retry") << "/api/v1/deliveries/{del}/retry" << QByteArray("reason");
    QTest::newRow("pause") << "/api/v1/endpoints/{ep}/pause" << QByteArray("reason");
}

void tst_BadInput::oversizedBody()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, field);
    path.replace(QLatin1String("{del}"), QString::number(m_delivery)).replace(QLatin1String("{ep}"), QString::number(m_endpoint));
    const QByteArray body = "{\"" + field + "\": \"" + QByteArray(1024 * 1024, 'x') + "\"}";
    const Reply r = m_server->request("POST", path, body, m_server->operatorToken());
    QCOMPARE(r.status, 413);
    QCOMPARE(r.code(), QStringLiteral("payload-too-large"));
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
}

void tst_BadInput::hugeBodyIsRefusedWhileItArrives()
{
    // A client announcing 64 MiB and sending as fast as the server takes it. The server answers
    // 413 once a little over the limit has arrived and closes the connection: it neither waits
    // for (nor holds) the rest.
    constexpr qint64 kAnnounced = 64 * 1024 * 1024;
    const QUrl base = m_server->baseUrl();
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    QVERIFY(socket.waitForConnected(10000));
    socket.write("POST /api/v1/organizations HTTP/1.1\r\nHost: " + base.host().toUtf8() + "\r\nAuthorization: Bearer "
                 + m_server->operatorToken().toUtf8() + "\r\nContent-Type: application/json\r\nContent-Length: "
                 + QByteArray::number(kAnnounced) + "\r\n\r\n{\"name\": \"");
    const QByteArray chunk(256 * 1024, 'x');
    qint64 sent = 0;
    QByteArray answer;
    bool closed = false;
    const auto feed = [&] {
        while (answer.isEmpty() && !closed && sent < kAnnounced && socket.bytesToWrite() < 1024 * 1024) {
            socket.write(chunk);
            sent += chunk.size();
        }
    };
    connect(&socket, &QTcpSocket::bytesWritten, this, feed);
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    connect(&socket, &QTcpSocket::disconnected, this, [&] { closed = true; });
    connect(&socket, &QTcpSocket::errorOccurred, this, [&] { closed = true; });
    feed();
    QTRY_VERIFY_WITH_TIMEOUT(closed || (answer.contains("\r\n\r\n") && answer.contains("}")), 60000);
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.left(200).constData());
    QVERIFY(answer.contains("application/problem+json"));
    QVERIFY(answer.contains("payload-too-large"));
    // Far less than announced went out before the answer came.
    QVERIFY2(sent < 16 * 1024 * 1024, qPrintable(QStringLiteral("%1 bytes sent").arg(sent)));
    // And the connection ends, the server's side first.
    QTRY_VERIFY_WITH_TIMEOUT(closed, 10000);
}

QByteArray tst_BadInput::exchange(const QByteArrayList &segments)
{
    const QUrl base = m_server->baseUrl();
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    if (!socket.waitForConnected(10000))
        return "not connected";
    QByteArray answer;
    bool closed = false;
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    connect(&socket, &QTcpSocket::disconnected, this, [&] { closed = true; });
    connect(&socket, &QTcpSocket::errorOccurred, this, [&] { closed = true; });
    for (qsizetype i = 0; i < segments.size() && !closed; ++i) {
        if (i > 0)
            QTest::qWait(300);
        socket.write(segments.at(i));
        socket.flush();
    }
    // Within the refusal's grace period of 2 s, or the server's idle timeout: it must close.
    if (!QTest::qWaitFor([&] { return closed; }, 20000))
        return "still open after: " + answer;
    return answer + socket.readAll();
}

void tst_BadInput::unsureFramingIsRefused_data()
{
    QTest::addColumn<QByteArray>("headers");
    QTest::addColumn<int>("status");
    // A GET whose body QHttpServer 6.4 would read as empty, taking it for a request: a pause of
    // the endpoint, which stillHealthyAndUnchanged() finds ACTIVE at version 1.
    QTest::newRow("length abc") << QByteArray("Content-Length: abc\r\n") << 400;
    QTest::newRow("length -5") << QByteArray("Content-Length: -5\r\n") << 400;
    QTest::newRow("two lengths") << QByteArray("Content-Length: 0\r\nContent-Length: 12\r\n") << 400;
    QTest::newRow("gzip") << QByteArray("Transfer-Encoding: gzip\r\n") << 501;
    QTest::newRow("two Idempotency-Keys") << QByteArray("Idempotency-Key: a\r\nIdempotency-Key: b\r\n") << 400;
    QTest::newRow("header of 200 KB") << "X-Big: " + QByteArray(200 * 1024, 'a') + "\r\n" << 431;
}

void tst_BadInput::unsureFramingIsRefused()
{
    QFETCH(QByteArray, headers);
    QFETCH(int, status);
    const QByteArray token = m_server->operatorToken().toUtf8();
    const QByteArray pause = "POST /api/v1/endpoints/" + QByteArray::number(m_endpoint) + "/pause HTTP/1.1\r\nHost: x\r\n"
                             "Authorization: Bearer " + token + "\r\nContent-Length: 0\r\n\r\n";
    const QByteArray answer = exchange("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n"
                                       + headers + "\r\n" + pause);
    QVERIFY2(answer.startsWith("HTTP/1.1 " + QByteArray::number(status) + ' '), answer.left(300).constData());
    QVERIFY(answer.contains("application/problem+json"));
    QVERIFY(answer.contains("Connection: close"));
    QCOMPARE(answer.count("HTTP/1.1 "), 1); // one answer: the hidden request was not run
}

void tst_BadInput::headAnswersWithoutABody()
{
    // HEAD is GET without the body: the same status and Content-Length, and the next answer on
    // the connection starts right after the head (a body there would be read as the next answer).
    const QByteArray token = m_server->operatorToken().toUtf8();
    const QByteArray answer = exchange("HEAD /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                                       + "\r\n\r\nGET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                                       + "\r\nConnection: close\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
    const qsizetype headEnd = answer.indexOf("\r\n\r\n");
    QVERIFY(headEnd > 0);
    const QByteArray rest = answer.mid(headEnd + 4);
    QVERIFY2(rest.startsWith("HTTP/1.1 200"), answer.constData());
    // The GET's body has the length the HEAD announced.
    static const QRegularExpression length(QStringLiteral("Content-Length: (\\d+)"), QRegularExpression::CaseInsensitiveOption);
    const auto announced = length.match(QString::fromLatin1(answer.left(headEnd)));
    QVERIFY(announced.hasMatch());
    const qsizetype getHeadEnd = rest.indexOf("\r\n\r\n");
    QCOMPARE(rest.mid(getHeadEnd + 4).size(), announced.captured(1).toLongLong());
    // And a path with no GET says so in Allow; one with GET allows HEAD too.
    const Reply notAllowed = m_server->request("PUT", QStringLiteral("/api/v1/whoami"), QByteArray(), m_server->operatorToken());
    QCOMPARE(notAllowed.status, 405);
    QVERIFY2(notAllowed.header("Allow").contains("HEAD"), notAllowed.header("Allow").constData());
}

void tst_BadInput::pipelinedRequestsAcrossReads_data()
{
    QTest::addColumn<QByteArrayList>("segments");
    QTest::addColumn<QByteArrayList>("statuses"); // of the answers, in order
    const QByteArray health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    // QHttpServer parses one request a pass and leaves the rest of what arrived for the next: the
    // guard must not take those bytes for new ones.
    QTest::newRow("a request line cut in two") << QByteArrayList{health + "GET /healthz HT", "TP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}
                                               << QByteArrayList{"200", "200"};
    // The refusal ends the connection, after the answers to the whole requests before it: the
    // POST whose body ends in the same read as the refused request is run (401: no token) first.
    QTest::newRow("a body cut in two, then a bad request")
        << QByteArrayList{health + "POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + QByteArray(60, 'x'),
                          QByteArray(140, 'y') + "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n"}
        << QByteArrayList{"200", "401", "501"};
    QTest::newRow("good requests and a bad one in one read")
        << QByteArrayList{health + health + "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n" + health}
        << QByteArrayList{"200", "200", "400"};
    // A request that closes the connection ends it: what follows is neither run nor refused.
    QTest::newRow("a closing request, then a bad one in the same read")
        << QByteArrayList{"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/2.0\r\n\r\n"}
        << QByteArrayList{"200"};
    QTest::newRow("a body cut in two, then a good request")
        << QByteArrayList{health + "POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + QByteArray(60, 'x'),
                          QByteArray(140, 'y') + "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}
        << QByteArrayList{"200", "401", "200"};
    QTest::newRow("a bare LF after a chunk")
        << QByteArrayList{"POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nAAAAA\n30\r\n"
                          "\r\nGET /healthz HTTP/1.1\r\nContent-Length: 7\r\nX:\r\n\r\n\r\n0\r\n\r\n"}
        << QByteArrayList{"400"};
    QTest::newRow("chunked in HTTP/1.0")
        << QByteArrayList{"POST /api/v1/organizations HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"} << QByteArrayList{"400"};
    // An Upgrade header without Connection: upgrade is no upgrade: answered, and still guarded.
    QTest::newRow("upgrade header alone")
        << QByteArrayList{"GET /healthz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n",
                          "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"}
        << QByteArrayList{"200", "400"};
}

void tst_BadInput::pipelinedRequestsAcrossReads()
{
    QFETCH(QByteArrayList, segments);
    QFETCH(QByteArrayList, statuses);
    const QByteArray answer = exchange(segments);
    QByteArrayList got;
    for (qsizetype at = answer.indexOf("HTTP/1.1 "); at >= 0; at = answer.indexOf("HTTP/1.1 ", at + 1))
        got.append(answer.mid(at + 9, 3));
    QVERIFY2(got == statuses, answer.left(600).constData());
}

void tst_BadInput::connectionCloseIsHonoured()
{
    // Answered, then closed by the server; a request after it on the same connection is not run.
    const QByteArray answer = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                       "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.left(300).constData());
    QVERIFY(answer.contains("Connection: close"));
    QCOMPARE(answer.count("HTTP/1.1 "), 1);

    // The same for an answer written later: a long poll of the feed that times out after a second.
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray later = exchange("GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "Connection: close\r\n\r\n"
                                      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    QVERIFY2(later.startsWith("HTTP/1.1 200"), later.left(300).constData());
    QVERIFY2(later.contains("Connection: close"), later.constData());
    QVERIFY(later.contains("\"events\""));
    QCOMPARE(later.count("HTTP/1.1 "), 1);

    // What the client sends while that answer is still to come is neither run nor refused: the
    // answer it waits for comes, not a refusal of bytes it should not have sent.
    const QByteArray after = exchange({"GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "Connection: close\r\n\r\n",
                                       "GET / HTTP/2.0\r\n\r\n"});
    QVERIFY2(after.startsWith("HTTP/1.1 200"), after.left(300).constData());
    QVERIFY(after.contains("\"events\""));
    QCOMPARE(after.count("HTTP/1.1 "), 1);

    // A request after a long poll on the same connection: the poll is answered first (now, with
    // what there is), then the request; answers come in the order of the requests.
    const QByteArray inOrder = exchange("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n"
                                        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QCOMPARE(inOrder.count("HTTP/1.1 200"), 2);
    const qsizetype second = inOrder.indexOf("HTTP/1.1 200", 1);
    QVERIFY2(inOrder.indexOf("\"events\"") < second, inOrder.constData());
    QVERIFY2(inOrder.indexOf("delivery_worker", second) > second, inOrder.constData());
}

void tst_BadInput::http10EndsUnlessKeptAlive()
{
    // An HTTP/1.0 request ends its connection with the answer (RFC 9112, 9.3): the request after
    // it is not run.
    const QByteArray get = "GET /healthz HTTP/1.0\r\n\r\n";
    const QByteArray closed = exchange(get + get);
    QVERIFY2(closed.startsWith("HTTP/1.1 200"), closed.left(300).constData());
    QVERIFY2(closed.contains("Connection: close"), closed.constData());
    QCOMPARE(closed.count("HTTP/1.1 "), 1);

    // Unless it asks to keep it: then the next one is run, and the answer says it is kept.
    const QByteArray kept = exchange("GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" + get + get);
    QCOMPARE(kept.count("HTTP/1.1 200"), 2);
    QVERIFY2(kept.indexOf("Connection: keep-alive") < kept.indexOf("HTTP/1.1 200", 1), kept.constData());
    QVERIFY2(kept.indexOf("Connection: close") > kept.indexOf("HTTP/1.1 200", 1), kept.constData());
    // A long poll's answer, written later, says so too.
    const QByteArray polled = exchange("GET /api/v1/events?wait=1 HTTP/1.0\r\nConnection: keep-alive\r\nAuthorization: Bearer "
                                       + m_server->operatorToken().toUtf8() + "\r\n\r\n");
    QVERIFY2(polled.startsWith("HTTP/1.1 200") && polled.contains("Connection: keep-alive"), polled.constData());
}

void tst_BadInput::hostIsRequired()
{
    // Refused behind a long poll still owed: the poll's answer comes first, then the refusal (the
    // client would take a refusal that came first for the poll's answer).
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray behind = exchange({"GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n",
                                        "GET /healthz HTTP/1.1\r\n\r\n"});
    QVERIFY2(behind.startsWith("HTTP/1.1 200"), behind.left(300).constData());
    QVERIFY2(behind.indexOf("HTTP/1.1 400") > behind.indexOf("\"events\""), behind.constData());

    // RFC 9112, 3.2: an HTTP/1.1 request without Host, or with two, is answered 400.
    for (const QByteArray &head : {QByteArray("GET /healthz HTTP/1.1\r\n\r\n"),
                                   QByteArray("GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n")}) {
        const QByteArray answer = exchange(head);
        QVERIFY2(answer.startsWith("HTTP/1.1 400"), answer.left(300).constData());
        QVERIFY2(answer.contains("Host"), answer.constData());
        QVERIFY(answer.contains("application/problem+json"));
    }
}

void tst_BadInput::continueIsSentWhenAwaited()
{
    // A client that waits for 100 Continue before sending its body (curl does for bodies over
    // 1 MiB) gets it as soon as its head arrives; ahead of it, the answers to what it sent before.
    const QUrl base = m_server->baseUrl();
    const QByteArray body = R"({"role": "owner", "subject": "continued"})";
    const QByteArray head = "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + m_server->operatorToken().toUtf8() + "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                            "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n";
    for (const QByteArray &before : {QByteArray(), QByteArray("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")}) {
        QTcpSocket socket;
        socket.connectToHost(base.host(), quint16(base.port()));
        QVERIFY(socket.waitForConnected(10000));
        QByteArray answer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
        socket.write(before + head);
        // The client sends nothing more until it hears 100 Continue.
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 100 Continue\r\n\r\n"), kIdleMs);
        QVERIFY2(answer.endsWith("HTTP/1.1 100 Continue\r\n\r\n"), answer.constData());
        if (!before.isEmpty())
            QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
        socket.write(body);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 201") && answer.endsWith("}"), 10000);
        QCOMPARE(answer.count("100 Continue"), 1);
    }

    // Behind a long poll still owed, the 100 Continue waits for the poll's answer and for the
    // answers of what came after it.
    {
        QTcpSocket socket;
        socket.connectToHost(base.host(), quint16(base.port()));
        QVERIFY(socket.waitForConnected(10000));
        QByteArray answer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
        socket.write("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + m_server->operatorToken().toUtf8()
                     + "\r\n\r\n");
        QTest::qWait(300); // the poll waits
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + head);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("100 Continue"), kIdleMs);
        const qsizetype poll = answer.indexOf("\"events\"");
        const qsizetype health = answer.indexOf("delivery_worker");
        QVERIFY2(poll > 0 && health > poll && answer.endsWith("HTTP/1.1 100 Continue\r\n\r\n"), answer.constData());
        socket.write(body);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 201") && answer.endsWith("}"), 10000);
    }

    // Nor after an answer that ended the connection: the request waiting for it is never run.
    const QByteArray afterClose = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + head);
    QVERIFY2(afterClose.startsWith("HTTP/1.1 200"), afterClose.constData());
    QVERIFY2(!afterClose.contains("100 Continue"), afterClose.constData());

    // A body announced over the limit is refused at once, before the client sends it.
    const QByteArray tooLarge = exchange("POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: "
                                         + QByteArray::number(64 * 1024 * 1024) + "\r\n\r\n");
    QVERIFY2(tooLarge.startsWith("HTTP/1.1 413"), tooLarge.left(300).constData());
    QVERIFY(!tooLarge.contains("100 Continue"));

    // An expectation the server cannot meet (RFC 9110, 10.1.1).
    const QByteArray unmet = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: the-moon\r\n\r\n");
    QVERIFY2(unmet.startsWith("HTTP/1.1 417"), unmet.left(300).constData());
}

void tst_BadInput::idleConnectionsEnd()
{
    // A connection that sends nothing is closed after the idle timeout, without an answer.
    QCOMPARE(exchange(QByteArrayList{}), QByteArray());
    // One that sent part of a request hears 408 (RFC 9110, 15.5.9) and is closed.
    const QByteArray partial = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    QVERIFY2(partial.startsWith("HTTP/1.1 408"), partial.left(300).constData());
    QVERIFY(partial.contains("request-timeout"));
    // The timeout counts from the last answer: a long poll longer than it is answered in full,
    // and its connection is closed only after the same idle time again.
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray polled = exchange("GET /api/v1/events?wait=" + QByteArray::number(2 * kIdleMs / 1000) + " HTTP/1.1\r\nHost: x\r\n"
                                       + token + "\r\n");
    QVERIFY2(polled.startsWith("HTTP/1.1 200"), polled.left(300).constData());
    QVERIFY(polled.contains("\"events\""));
    QCOMPARE(polled.count("HTTP/1.1 "), 1);
}

void tst_BadInput::upgradeAfterALongPoll()
{
    // A WebSocket handshake behind a long poll still owed: the poll is answered first, then the
    // 101; after it the connection speaks WebSocket frames, where an HTTP answer has no place.
    const QUrl base = m_server->baseUrl();
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    QVERIFY(socket.waitForConnected(10000));
    QByteArray answer;
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    socket.write("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n");
    QTest::qWait(300); // the poll waits
    socket.write("GET /api/v1/watch HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + token + "\r\n");
    QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 101"), kIdleMs);
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
    QVERIFY2(answer.indexOf("\"events\"") < answer.indexOf("HTTP/1.1 101"), answer.constData());
}

void tst_BadInput::stillHealthyAndUnchanged()
{
    QCOMPARE(m_server->get(QStringLiteral("/healthz"), {}).status, 200);
    QCOMPARE(int(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size()), m_organizationsBefore);
    const Reply instance = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(m_instance), m_server->operatorToken());
    QCOMPARE(instance.json().value(QStringLiteral("status")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(instance.json().value(QStringLiteral("version")).toInteger(), 1);
    const QJsonObject delivery = m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(m_delivery), m_server->operatorToken()).json();
    QCOMPARE(delivery.value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(delivery.value(QStringLiteral("version")).toInteger(), 1);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(m_registered), m_server->operatorToken()).items().size(), 1);
    const QJsonObject endpoint = m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(m_endpoint), m_server->operatorToken()).json();
    QCOMPARE(endpoint.value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    QCOMPARE(endpoint.value(QStringLiteral("version")).toInteger(), 1);
    const QJsonObject registered = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(m_registered), m_server->operatorToken()).json();
    QCOMPARE(registered.value(QStringLiteral("version")).toInteger(), 2); // created, registered
    const QByteArray metrics = m_server->get(QStringLiteral("/metrics"), {}).body;
    QVERIFY(!metrics.contains("status=\"500\""));
}

QTEST_GUILESS_MAIN(tst_BadInput)
#include "tst_badinput.moc"
