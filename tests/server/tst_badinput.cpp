// Over a hundred bad requests, each answered with the right status and problem code, never a 500.
// (What the HTTP front does with the bytes of a connection before the routes: tst_httpfront.)
#include "testserver.h"

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
    void mediaTypes_data();
    void mediaTypes();
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
};

void tst_BadInput::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    ServerOptions options;
    options.deliveryWorker = false; // the delivery keeps its version unless a request changes it
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
        {"org: NUL in the name", "POST", "/api/v1/organizations", R"({"name": "Acme\u0000Evil"})", 400, "invalid-request", "/name"},
        // JSON has control characters escaped in strings; Qt's parser lets them through as they are.
        {"token: operator subject with a NUL", "POST", "/api/v1/tokens", R"({"role": "operator", "subject": "a\u0000b"})", 400, "invalid-request", "/subject"},
        {"token: operator subject blank", "POST", "/api/v1/tokens", R"({"role": "operator", "subject": " "})", 400, "invalid-request", "/subject"},
        {"org: a raw tab in a string", "POST", "/api/v1/organizations", "{\"name\": \"a\tb\"}", 400, "malformed-json", "/"},
        {"org: a raw line break in the reason", "POST", "/api/v1/organizations", "{\"name\": \"x\", \"reason\": \"a\nb\"}", 400, "malformed-json", "/"},
        {"org: line break in the name", "POST", "/api/v1/organizations", R"({"name": "Acme\nINFO forged log line"})", 400, "invalid-request", "/name"},
        {"org: line separator in the name", "POST", "/api/v1/organizations", R"({"name": "Acme\u2028Two"})", 400, "invalid-request", "/name"},
        {"org: half a surrogate pair in the name", "POST", "/api/v1/organizations", R"({"name": "Acme \ud800"})", 400, "malformed-json", "/"},
        {"org: right-to-left override in the name", "POST", "/api/v1/organizations", R"({"name": "Acme \u202Egnp.exe"})", 400, "invalid-request", "/name"},
        {"instance: zero-width space in the owner", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "app", "owner": "al\u200bice"})", 400, "invalid-request", "/owner"},
        {"provider: tab in the name", "POST", "/api/v1/providers", R"({"name": "p\tq", "organization_id": 1})", 400, "invalid-request", "/name"},
        {"provider: escape in an application", "POST", "/api/v1/providers", R"({"name": "p", "organization_id": 1, "applications": ["crm\u001b[31m"]})", 400, "invalid-request", "/applications/0"},
        {"instance: line break in the owner", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "app", "owner": "alice\nbob"})", 400, "invalid-request", "/owner"},
        {"instance: blank owner", "POST", "/api/v1/instances", R"({"name": "i", "organization_id": 1, "provider_id": 1, "application": "app", "owner": " "})", 400, "invalid-request", "/owner"},
        {"token: padded owner", "POST", "/api/v1/tokens", R"({"role": "owner", "subject": " alice"})", 400, "invalid-request", "/subject"},
        {"token: owner with a line break", "POST", "/api/v1/tokens", R"({"role": "owner", "subject": "alice\nbob"})", 400, "invalid-request", "/subject"},
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
        {"token: name with a line break", "POST", "/api/v1/tokens", R"({"role": "operator", "name": "ops\nroot"})", 400, "invalid-request", "/name"},
        {"token: blank name", "POST", "/api/v1/tokens", R"({"role": "operator", "name": " "})", 400, "invalid-request", "/name"},
        {"token: name not text", "POST", "/api/v1/tokens", R"({"role": "operator", "name": 7})", 400, "invalid-request", "/name"},
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
        // Read as a number or a cursor would be, these are not what was sent.
        {"instances: limit with a plus", "GET", "/api/v1/instances?limit=%2B2", "", 400, "invalid-request", "?limit"},
        {"instances: limit with a space", "GET", "/api/v1/instances?limit=%202", "", 400, "invalid-request", "?limit"},
        {"instances: limit with a NUL", "GET", "/api/v1/instances?limit=2%00", "", 400, "invalid-request", "?limit"},
        {"instances: a cursor with junk after it", "GET", "/api/v1/instances?cursor=YToz!!!", "", 400, "invalid-request", "?cursor"},
        {"instances: a cursor padded out", "GET", "/api/v1/instances?cursor=YTozAAAA", "", 400, "invalid-request", "?cursor"},
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
        {"TRACE the organizations", "TRACE", "/api/v1/organizations", "", 501, "not-implemented", ""},
        {"PROPFIND an organization", "PROPFIND", "/api/v1/organizations/{org}", "", 501, "not-implemented", ""},
        {"DELETE a collection", "DELETE", "/api/v1/instances", "", 405, "method-not-allowed", ""},
        {"POST health", "POST", "/healthz", "{}", 405, "method-not-allowed", ""},
        {"DELETE the feed", "DELETE", "/api/v1/events", "", 405, "method-not-allowed", ""},
        {"GET an action", "GET", "/api/v1/instances/{inst}/stop", "", 405, "method-not-allowed", ""},
        // Headers.
        {"stale If-Match", "POST", "/api/v1/instances/{inst}/stop", "", 412, "precondition-failed", ""},
        {"idempotency key too long", "POST", "/api/v1/organizations", R"({"name": "x"})", 400, "invalid-request", ""},
        {"idempotency key not ASCII", "POST", "/api/v1/organizations", R"({"name": "x"})", 400, "invalid-request", ""},
        {"idempotency key with a control character", "POST", "/api/v1/organizations", R"({"name": "x"})", 400, "invalid-request", ""},
        {"test: stale If-Match", "POST", "/api/v1/endpoints/{ep}/test", "", 412, "precondition-failed", ""},
        // The reason header is refused as the body's reason would be, not mended (badReasonHeaders).
        {"reason header: bad escape", "POST", "/api/v1/endpoints/{ep}/pause", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: not UTF-8", "POST", "/api/v1/endpoints/{ep}/pause", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: too long", "POST", "/api/v1/deliveries/{del}/cancel", "", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: bulk retry", "POST", "/api/v1/deliveries/retry", R"({"dry_run": false})", 400, "invalid-request", "X-OpsDeck-Reason"},
        {"reason header: another than the body's", "POST", "/api/v1/organizations", R"({"name": "x", "reason": "mine"})", 400, "invalid-request", "X-OpsDeck-Reason"},
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
                                                                {"reason header: bulk retry", "50%"},
                                                                {"reason header: another than the body's", "theirs"}};
    if (badReasonHeaders.contains(tag))
        headers.append({QByteArray("X-OpsDeck-Reason"), badReasonHeaders.value(tag)});
    // Two keys that differ only in bytes that are not printable ASCII would read as one.
    static const QHash<QByteArray, QByteArray> badIdempotencyKeys{{"idempotency key too long", QByteArray(300, 'k')},
                                                                  {"idempotency key not ASCII", "\xff\xfeZ9"},
                                                                  {"idempotency key with a control character", "a\x01b"}};
    if (badIdempotencyKeys.contains(tag))
        headers.append({QByteArray("Idempotency-Key"), badIdempotencyKeys.value(tag)});
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

void tst_BadInput::mediaTypes_data()
{
    QTest::addColumn<QByteArray>("contentType"); // a null one sends no Content-Type at all
    QTest::addColumn<int>("status");
    QTest::newRow("JSON") << QByteArray("application/json") << 200;
    QTest::newRow("JSON in capitals") << QByteArray("Application/JSON") << 200;
    QTest::newRow("JSON, UTF-8") << QByteArray("application/json; charset=UTF-8") << 200;
    QTest::newRow("JSON, quoted UTF-8") << QByteArray("application/json;charset=\"utf-8\"") << 200;
    QTest::newRow("a +json type") << QByteArray("application/merge-patch+json") << 200;
    QTest::newRow("none said") << QByteArray() << 200;
    QTest::newRow("plain text") << QByteArray("text/plain") << 415;
    QTest::newRow("a form (curl -d)") << QByteArray("application/x-www-form-urlencoded") << 415;
    QTest::newRow("bytes") << QByteArray("application/octet-stream") << 415;
    QTest::newRow("JSON in Latin-1") << QByteArray("application/json; charset=ISO-8859-1") << 415;
    QTest::newRow("JSON in UTF-16") << QByteArray("application/json; charset=utf-16") << 415;
    QTest::newRow("text/json") << QByteArray("text/json") << 415;
    QTest::newRow("JSON and an empty parameter") << QByteArray("application/json;") << 200;
    QTest::newRow("no type, a charset") << QByteArray(";charset=utf-8") << 415;
    QTest::newRow("a longer name") << QByteArray("application/jsonx") << 415;
    QTest::newRow("+json alone") << QByteArray("application/+json") << 415;
    QTest::newRow("a wildcard") << QByteArray("application/*+json") << 415;
    QTest::newRow("charset without a value") << QByteArray("application/json; charset") << 415;
    // Nothing sent says nothing of its type: the organization's missing name is what is wrong.
    QTest::newRow("no body, as plain text") << QByteArray("text/plain") << 400;
}

void tst_BadInput::mediaTypes()
{
    QFETCH(QByteArray, contentType);
    QFETCH(int, status);
    // What would be refused would also have created an organization (stillHealthyAndUnchanged()
    // counts them); what is accepted is a dry run that changes nothing; the 400 sends nothing.
    const bool refused = status == 415;
    const QString path = status == 200 ? QStringLiteral("/api/v1/deliveries/retry") : QStringLiteral("/api/v1/organizations");
    const QByteArray body = refused ? QByteArray(R"({"name": "typed"})") : status == 200 ? QByteArray(R"({"dry_run": true})") : QByteArray();
    const Reply r = m_server->request("POST", path, body, m_server->operatorToken(), {{"Content-Type", contentType}});
    QVERIFY2(r.status == status, qPrintable(QStringLiteral("got %1: %2").arg(r.status).arg(QString::fromUtf8(r.body))));
    if (status == 400)
        QCOMPARE(r.code(), QStringLiteral("invalid-request"));
    if (!refused)
        return;
    QCOMPARE(r.header("Content-Type"), QByteArray("application/problem+json"));
    QCOMPARE(r.code(), QStringLiteral("unsupported-media-type"));
    const QString detail = r.json().value(QStringLiteral("detail")).toString();
    QVERIFY2(detail.contains(QString::fromLatin1(contentType.split(';').first().toLower())), qPrintable(detail));
    QVERIFY2(detail.contains(QStringLiteral("application/json")) || detail.contains(QStringLiteral("UTF-8")), qPrintable(detail));
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
