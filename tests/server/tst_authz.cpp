// The route x role matrix: who may call what, and what each role may see (spec §1).
#include "testserver.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Authz : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void matrix_data();
    void matrix();
    void listsAreFilteredByRole_data();
    void listsAreFilteredByRole();
    void revokedTokenIsRejected();
    void bearerSchemeInAnyCase();
    void ownerNamedWithSpaceAroundIsTheOwner();

private:
    QString tokenFor(const QString &who);
    qint64 freshInstance();

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    qint64 m_otherProvider = 0;
};

void tst_Authz::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_org = m_server->createOrganization(QStringLiteral("Customer"));
    const qint64 home = m_server->createOrganization(QStringLiteral("Home"));
    m_provider = m_server->createProvider(QStringLiteral("Datagora"), home, {QStringLiteral("dataviz")});
    m_otherProvider = m_server->createProvider(QStringLiteral("Medisys"), home, {QStringLiteral("appointments")});
    QVERIFY(m_org && m_provider && m_otherProvider);
    // Something of the other provider's and the other owner's, so that filtering is observable.
    QVERIFY(m_server->createInstance(QStringLiteral("appt"), m_org, m_otherProvider, QStringLiteral("appointments"), QStringLiteral("bob")));
}

void tst_Authz::cleanupTestCase()
{
    m_server.reset();
}

QString tst_Authz::tokenFor(const QString &who)
{
    if (who == QLatin1String("operator"))
        return m_server->operatorToken();
    if (who == QLatin1String("provider"))
        return m_server->token(QStringLiteral("provider"), QString::number(m_provider));
    if (who == QLatin1String("other provider"))
        return m_server->token(QStringLiteral("provider"), QString::number(m_otherProvider));
    if (who == QLatin1String("owner"))
        return m_server->token(QStringLiteral("owner"), QStringLiteral("alice"));
    if (who == QLatin1String("other owner"))
        return m_server->token(QStringLiteral("owner"), QStringLiteral("mallory"));
    if (who == QLatin1String("bad token"))
        return QStringLiteral("odk_not-a-real-token");
    return {};
}

qint64 tst_Authz::freshInstance()
{
    return m_server->createInstance(QStringLiteral("viz"), m_org, m_provider, QStringLiteral("dataviz"), QStringLiteral("alice"));
}

void tst_Authz::matrix_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("path"); // {instance} = a fresh PENDING instance of provider/alice, {org} = an empty organization
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("who");
    QTest::addColumn<int>("status");

    struct Route
    {
        const char *method;
        const char *path;
        const char *body;
        // operator, provider, other provider, owner, other owner, no token, bad token
        std::array<int, 7> expected;
    };
    const QStringList roles = {QStringLiteral("operator"), QStringLiteral("provider"), QStringLiteral("other provider"),
                               QStringLiteral("owner"), QStringLiteral("other owner"), QStringLiteral("no token"),
                               QStringLiteral("bad token")};
    const QList<Route> routes = {
        {"GET", "/api/v1/organizations", "", {200, 200, 200, 200, 200, 401, 401}},
        {"POST", "/api/v1/organizations", R"({"name": "N"})", {201, 403, 403, 403, 403, 401, 401}},
        {"GET", "/api/v1/organizations/{org}", "", {200, 200, 200, 200, 200, 401, 401}},
        {"DELETE", "/api/v1/organizations/{org}", "", {200, 403, 403, 403, 403, 401, 401}},
        {"POST", "/api/v1/organizations/{org}/restore", "", {409, 403, 403, 403, 403, 401, 401}},
        {"GET", "/api/v1/providers", "", {200, 200, 200, 200, 200, 401, 401}},
        {"POST", "/api/v1/providers", R"({"name": "P", "organization_id": 1, "applications": []})", {201, 403, 403, 403, 403, 401, 401}},
        {"GET", "/api/v1/instances", "", {200, 200, 200, 200, 200, 401, 401}},
        {"GET", "/api/v1/instances/{instance}", "", {200, 200, 404, 200, 404, 401, 401}},
        {"POST", "/api/v1/instances/{instance}/register", R"({"callback_url": "http://127.0.0.1:9/h"})", {200, 200, 404, 403, 403, 401, 401}},
        {"POST", "/api/v1/instances/{instance}/stop", "", {200, 403, 403, 200, 404, 401, 401}},
        {"POST", "/api/v1/instances/{instance}/start", "", {409, 403, 403, 409, 404, 401, 401}},
        {"GET", "/api/v1/tokens", "", {200, 403, 403, 403, 403, 401, 401}},
        {"POST", "/api/v1/tokens", R"({"role": "owner", "subject": "zoe"})", {201, 403, 403, 403, 403, 401, 401}},
        {"GET", "/api/v1/audit", "", {200, 200, 200, 200, 200, 401, 401}},
        {"GET", "/api/v1/events", "", {200, 200, 200, 200, 200, 401, 401}},
        {"GET", "/healthz", "", {200, 200, 200, 200, 200, 200, 200}},
        {"GET", "/api/v1/openapi.json", "", {200, 200, 200, 200, 200, 200, 200}},
    };
    for (const Route &r : routes) {
        for (int i = 0; i < roles.size(); ++i) {
            QTest::addRow("%s %s as %s", r.method, r.path, qPrintable(roles.at(i)))
                << QByteArray(r.method) << QString::fromLatin1(r.path) << QByteArray(r.body) << roles.at(i) << r.expected[i];
        }
    }
}

void tst_Authz::matrix()
{
    QFETCH(QByteArray, method);
    QFETCH(QString, path);
    QFETCH(QByteArray, body);
    QFETCH(QString, who);
    QFETCH(int, status);
    if (path.contains(QLatin1String("{instance}")))
        path.replace(QLatin1String("{instance}"), QString::number(freshInstance()));
    if (path.contains(QLatin1String("{org}")))
        path.replace(QLatin1String("{org}"), QString::number(m_server->createOrganization(QStringLiteral("Empty"))));
    const Reply r = m_server->request(method, path, body, tokenFor(who));
    QVERIFY2(r.status == status, qPrintable(QStringLiteral("got %1: %2").arg(r.status).arg(QString::fromUtf8(r.body))));
    if (status == 401)
        QCOMPARE(r.code(), QStringLiteral("unauthenticated"));
    else if (status == 403)
        QCOMPARE(r.code(), QStringLiteral("forbidden"));
    else if (status == 404)
        QCOMPARE(r.code(), QStringLiteral("not-found"));
}

void tst_Authz::listsAreFilteredByRole_data()
{
    QTest::addColumn<QString>("who");
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("seesOthers");
    QTest::newRow("operator instances") << "operator" << "/api/v1/instances?limit=1000" << true;
    QTest::newRow("provider instances") << "provider" << "/api/v1/instances?limit=1000" << false;
    QTest::newRow("owner instances") << "owner" << "/api/v1/instances?limit=1000" << false;
    QTest::newRow("provider events") << "provider" << "/api/v1/events?after=0&limit=1000" << false;
    QTest::newRow("owner events") << "owner" << "/api/v1/events?after=0&limit=1000" << false;
    QTest::newRow("operator events") << "operator" << "/api/v1/events?after=0&limit=1000" << true;
}

void tst_Authz::listsAreFilteredByRole()
{
    QFETCH(QString, who);
    QFETCH(QString, path);
    QFETCH(bool, seesOthers);
    QVERIFY(freshInstance());
    const Reply r = m_server->get(path, tokenFor(who));
    QCOMPARE(r.status, 200);
    const bool events = path.contains(QLatin1String("events"));
    const QJsonArray list = r.json().value(events ? QStringLiteral("events") : QStringLiteral("items")).toArray();
    bool sawOwn = false;
    bool sawOther = false;
    for (const QJsonValue &v : list) {
        QJsonObject o = v.toObject();
        if (events) {
            if (o.value(QStringLiteral("kind")).toString() != QLatin1String("instance"))
                continue;
            o = o.value(QStringLiteral("object")).toObject();
        }
        const bool own = o.value(QStringLiteral("provider_id")).toInteger() == m_provider
                         && o.value(QStringLiteral("owner")).toString() == QLatin1String("alice");
        (own ? sawOwn : sawOther) = true;
    }
    QVERIFY(sawOwn);
    QCOMPARE(sawOther, seesOthers);
    if (events && who != QLatin1String("operator")) {
        for (const QJsonValue &v : list)
            QVERIFY(v.toObject().value(QStringLiteral("kind")).toString() != QLatin1String("token"));
    }
}

void tst_Authz::revokedTokenIsRejected()
{
    const Reply created = m_server->post(QStringLiteral("/api/v1/tokens"), {{QStringLiteral("role"), QStringLiteral("owner")},
                                                                            {QStringLiteral("subject"), QStringLiteral("zed")},
                                                                            {QStringLiteral("name"), QStringLiteral(" zed's laptop ")}},
                                         m_server->operatorToken());
    QCOMPARE(created.status, 201);
    QCOMPARE(created.json().value(QStringLiteral("name")).toString(), QStringLiteral("zed's laptop")); // a name, trimmed
    const QString token = created.json().value(QStringLiteral("token")).toString();
    QVERIFY(!token.isEmpty());
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances"), token).status, 200);
    const qint64 id = created.json().value(QStringLiteral("id")).toInteger();
    // A version and ETag as every object has, and If-Match on its one change.
    QCOMPARE(created.json().value(QStringLiteral("version")).toInteger(), 1);
    const Reply read = m_server->get(QStringLiteral("/api/v1/tokens/%1").arg(id), m_server->operatorToken());
    QCOMPARE(read.header("ETag"), QByteArray("\"1\""));
    const Reply stale = m_server->request("DELETE", QStringLiteral("/api/v1/tokens/%1").arg(id), QByteArray(),
                                          m_server->operatorToken(), {{"If-Match", "\"42\""}});
    QCOMPARE(stale.status, 412);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances"), token).status, 200); // not revoked
    const Reply revoked = m_server->request("DELETE", QStringLiteral("/api/v1/tokens/%1").arg(id), QByteArray(),
                                            m_server->operatorToken(), {{"If-Match", "\"1\""}});
    QCOMPARE(revoked.status, 200);
    QCOMPARE(revoked.json().value(QStringLiteral("version")).toInteger(), 2);
    QCOMPARE(revoked.header("ETag"), QByteArray("\"2\""));
    QVERIFY(!revoked.json().value(QStringLiteral("revoked_at")).isNull());
    QVERIFY(!revoked.json().contains(QStringLiteral("token")));
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances"), token).status, 401);

    // Revoking it again answers the same and records nothing more: one audit entry, one event.
    const Reply again = m_server->request("DELETE", QStringLiteral("/api/v1/tokens/%1").arg(id), QByteArray(), m_server->operatorToken());
    QCOMPARE(again.status, 200);
    QCOMPARE(again.json().value(QStringLiteral("revoked_at")), revoked.json().value(QStringLiteral("revoked_at")));
    const QJsonArray audit =
        m_server->get(QStringLiteral("/api/v1/audit?kind=token&object_id=%1").arg(id), m_server->operatorToken()).items();
    QCOMPARE(std::count_if(audit.cbegin(), audit.cend(),
                           [](const QJsonValue &e) { return e.toObject().value(QStringLiteral("action")) == QStringLiteral("revoke"); }),
             1);
}

void tst_Authz::bearerSchemeInAnyCase()
{
    // The scheme is case-insensitive (RFC 9110, 11.1); the token is not.
    const QByteArray token = m_server->operatorToken().toUtf8();
    for (const QByteArray &scheme : {QByteArrayLiteral("Bearer"), QByteArrayLiteral("bearer"), QByteArrayLiteral("BEARER")}) {
        const Reply r = m_server->request("GET", QStringLiteral("/api/v1/whoami"), QByteArray(), QString(),
                                          {{QByteArrayLiteral("Authorization"), scheme + ' ' + token}});
        QVERIFY2(r.status == 200, scheme.constData());
    }
    for (const QByteArray &other : {QByteArray("Basic " + token), QByteArray("Bearer " + token.toUpper()), QByteArray("Bearer")}) {
        const Reply r = m_server->request("GET", QStringLiteral("/api/v1/whoami"), QByteArray(), QString(),
                                          {{QByteArrayLiteral("Authorization"), other}});
        QVERIFY2(r.status == 401, other.constData());
    }
}

void tst_Authz::ownerNamedWithSpaceAroundIsTheOwner()
{
    // The owner is stored as the name without the white space around it: the owner's own token
    // may create it, and sees it.
    const QString carol = m_server->token(QStringLiteral("owner"), QStringLiteral("carol"));
    const Reply created = m_server->post(QStringLiteral("/api/v1/instances"),
                                         {{QStringLiteral("name"), QStringLiteral("  board ")},
                                          {QStringLiteral("organization_id"), m_org},
                                          {QStringLiteral("provider_id"), m_provider},
                                          {QStringLiteral("application"), QStringLiteral("dataviz")},
                                          {QStringLiteral("owner"), QStringLiteral(" carol\t")}},
                                         carol);
    QCOMPARE(created.status, 201);
    QCOMPARE(created.json().value(QStringLiteral("owner")).toString(), QStringLiteral("carol"));
    QCOMPARE(created.json().value(QStringLiteral("name")).toString(), QStringLiteral("board"));
    const QJsonArray mine = m_server->get(QStringLiteral("/api/v1/instances"), carol).items();
    QCOMPARE(mine.size(), 1);
    QCOMPARE(mine.first().toObject().value(QStringLiteral("id")), created.json().value(QStringLiteral("id")));
}

QTEST_GUILESS_MAIN(tst_Authz)
#include "tst_authz.moc"
