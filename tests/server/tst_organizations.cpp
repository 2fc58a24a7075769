// Organizations and providers over real HTTP: create, read, list, delete refusals, restore.
#include "testserver.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Organizations : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void createAndGet();
    void createRejectsBadBodies_data();
    void createRejectsBadBodies();
    void listFiltersByStatus();
    void deleteRefusedWhileInstancesRun();
    void deleteRefusedWhileProvidingApplications();
    void deleteAndRestore();
    void deleteTwiceIsInvalidTransition();
    void providers();

private:
    std::unique_ptr<TestServer> m_server;
};

void tst_Organizations::init()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
}

void tst_Organizations::cleanup()
{
    m_server.reset();
}

void tst_Organizations::createAndGet()
{
    const Reply created = m_server->post(QStringLiteral("/api/v1/organizations"),
                                         {{QStringLiteral("name"), QStringLiteral("Ville de Lyon")},
                                          {QStringLiteral("reason"), QStringLiteral("onboarding")}},
                                         m_server->operatorToken());
    QCOMPARE(created.status, 201);
    const QJsonObject o = created.json();
    const qint64 id = o.value(QStringLiteral("id")).toInteger();
    QVERIFY(id > 0);
    QCOMPARE(o.value(QStringLiteral("name")).toString(), QStringLiteral("Ville de Lyon"));
    QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("AVAILABLE"));
    QCOMPARE(o.value(QStringLiteral("version")).toInteger(), 1);
    QVERIFY(o.value(QStringLiteral("deleted_at")).isNull());
    QVERIFY(o.value(QStringLiteral("created_at")).toString().endsWith(QLatin1Char('Z')));
    QCOMPARE(created.header("ETag"), QByteArray("\"1\""));
    QCOMPARE(created.header("Location"), "/api/v1/organizations/" + QByteArray::number(id));

    const Reply got = m_server->get(QStringLiteral("/api/v1/organizations/%1").arg(id), m_server->operatorToken());
    QCOMPARE(got.status, 200);
    QCOMPARE(got.json(), o);
    QCOMPARE(got.header("ETag"), QByteArray("\"1\""));

    QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations/%1").arg(id + 100), m_server->operatorToken()).code(),
             QStringLiteral("not-found"));
}

void tst_Organizations::createRejectsBadBodies_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("path");
    QTest::newRow("missing name") << QByteArray("{}") << "/name";
    QTest::newRow("empty name") << QByteArray(R"({"name": "  "})") << "/name";
    QTest::newRow("name not a string") << QByteArray(R"({"name": 3})") << "/name";
    QTest::newRow("unknown field") << QByteArray(R"({"name": "x", "colour": "red"})") << "/colour";
    QTest::newRow("reason not a string") << QByteArray(R"({"name": "x", "reason": []})") << "/reason";
}

void tst_Organizations::createRejectsBadBodies()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, path);
    const Reply r = m_server->request("POST", QStringLiteral("/api/v1/organizations"), body, m_server->operatorToken());
    QCOMPARE(r.status, 400);
    QCOMPARE(r.code(), QStringLiteral("invalid-request"));
    const QJsonArray errors = r.json().value(QStringLiteral("errors")).toArray();
    QVERIFY(!errors.isEmpty());
    QCOMPARE(errors.first().toObject().value(QStringLiteral("path")).toString(), path);
}

void tst_Organizations::listFiltersByStatus()
{
    const qint64 a = m_server->createOrganization(QStringLiteral("A"));
    const qint64 b = m_server->createOrganization(QStringLiteral("B"));
    QVERIFY(a && b);
    QCOMPARE(m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(b), QByteArray(),
                               m_server->operatorToken()).status, 200);
    const Reply all = m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken());
    QCOMPARE(all.status, 200);
    QCOMPARE(all.items().size(), 2);
    QVERIFY(all.json().value(QStringLiteral("next")).isNull());
    const Reply deleted = m_server->get(QStringLiteral("/api/v1/organizations?status=DELETED"), m_server->operatorToken());
    QCOMPARE(deleted.items().size(), 1);
    QCOMPARE(deleted.items().first().toObject().value(QStringLiteral("id")).toInteger(), b);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations?status=GONE"), m_server->operatorToken()).status, 400);
}

void tst_Organizations::deleteRefusedWhileInstancesRun()
{
    const qint64 home = m_server->createOrganization(QStringLiteral("Provider home"));
    const qint64 org = m_server->createOrganization(QStringLiteral("Customer"));
    const qint64 provider = m_server->createProvider(QStringLiteral("Datagora"), home, {QStringLiteral("dataviz")});
    const qint64 pending = m_server->createInstance(QStringLiteral("viz-1"), org, provider, QStringLiteral("dataviz"), QStringLiteral("alice"));
    const qint64 stopped = m_server->createInstance(QStringLiteral("viz-2"), org, provider, QStringLiteral("dataviz"), QStringLiteral("alice"));
    QVERIFY(pending && stopped);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(stopped), {}, m_server->operatorToken()).status, 200);

    const Reply refused = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(org), QByteArray(),
                                            m_server->operatorToken());
    QCOMPARE(refused.status, 409);
    QCOMPARE(refused.code(), QStringLiteral("organization-has-instances"));
    const QJsonArray blocking = refused.json().value(QStringLiteral("blocking_instances")).toArray();
    QCOMPARE(blocking.size(), 1);
    QCOMPARE(blocking.first().toObject().value(QStringLiteral("id")).toInteger(), pending);
    QCOMPARE(blocking.first().toObject().value(QStringLiteral("status")).toString(), QStringLiteral("PENDING"));

    // Stopping the blocker one by one unblocks the deletion.
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(pending), {}, m_server->operatorToken()).status, 200);
    QCOMPARE(m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(org), QByteArray(),
                               m_server->operatorToken()).status, 200);
}

void tst_Organizations::deleteRefusedWhileProvidingApplications()
{
    const qint64 home = m_server->createOrganization(QStringLiteral("Provider home"));
    QVERIFY(m_server->createProvider(QStringLiteral("Datagora"), home, {QStringLiteral("dataviz")}));
    const Reply refused = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(home), QByteArray(),
                                            m_server->operatorToken());
    QCOMPARE(refused.status, 409);
    QCOMPARE(refused.code(), QStringLiteral("organization-provides-applications"));
    QCOMPARE(refused.json().value(QStringLiteral("providers")).toArray().size(), 1);
}

void tst_Organizations::deleteAndRestore()
{
    const qint64 id = m_server->createOrganization(QStringLiteral("Tailspin Toys"));
    const Reply deleted = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), QByteArray(),
                                            m_server->operatorToken(), {{"X-OpsDeck-Reason", "contract%20ended"}});
    QCOMPARE(deleted.status, 200);
    QCOMPARE(deleted.json().value(QStringLiteral("status")).toString(), QStringLiteral("DELETED"));
    QCOMPARE(deleted.json().value(QStringLiteral("version")).toInteger(), 2);
    QVERIFY(!deleted.json().value(QStringLiteral("deleted_at")).isNull());
    const Reply restored = m_server->post(QStringLiteral("/api/v1/organizations/%1/restore").arg(id),
                                          {{QStringLiteral("reason"), QStringLiteral("renewed")}}, m_server->operatorToken());
    QCOMPARE(restored.status, 200);
    QCOMPARE(restored.json().value(QStringLiteral("status")).toString(), QStringLiteral("AVAILABLE"));
    QVERIFY(restored.json().value(QStringLiteral("deleted_at")).isNull());
    QCOMPARE(restored.header("ETag"), QByteArray("\"3\""));

    const Reply audit = m_server->get(QStringLiteral("/api/v1/audit?kind=organization&object_id=%1").arg(id), m_server->operatorToken());
    QCOMPARE(audit.items().size(), 3);
    QCOMPARE(audit.items().at(1).toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("contract ended"));
    QCOMPARE(audit.items().at(2).toObject().value(QStringLiteral("from")).toString(), QStringLiteral("DELETED"));
}

void tst_Organizations::deleteTwiceIsInvalidTransition()
{
    const qint64 id = m_server->createOrganization(QStringLiteral("Twice"));
    QCOMPARE(m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), QByteArray(), m_server->operatorToken()).status, 200);
    const Reply again = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), QByteArray(), m_server->operatorToken());
    QCOMPARE(again.status, 409);
    QCOMPARE(again.code(), QStringLiteral("invalid-transition"));
    QVERIFY(again.json().value(QStringLiteral("allowed")).toArray().contains(QStringLiteral("restore")));
}

void tst_Organizations::providers()
{
    const qint64 home = m_server->createOrganization(QStringLiteral("Home"));
    const qint64 p = m_server->createProvider(QStringLiteral("Medisys"), home, {QStringLiteral("appointments"), QStringLiteral("records")});
    QVERIFY(p);
    const Reply got = m_server->get(QStringLiteral("/api/v1/providers/%1").arg(p), m_server->token(QStringLiteral("owner"), QStringLiteral("alice")));
    QCOMPARE(got.status, 200);
    QCOMPARE(got.json().value(QStringLiteral("applications")).toArray().size(), 2);
    QCOMPARE(got.json().value(QStringLiteral("organization_id")).toInteger(), home);
    const Reply list = m_server->get(QStringLiteral("/api/v1/providers?organization=%1").arg(home), m_server->operatorToken());
    QCOMPARE(list.items().size(), 1);
    const Reply badOrg = m_server->post(QStringLiteral("/api/v1/providers"),
                                        {{QStringLiteral("name"), QStringLiteral("X")}, {QStringLiteral("organization_id"), 999}},
                                        m_server->operatorToken());
    QCOMPARE(badOrg.status, 400);
    QCOMPARE(badOrg.json().value(QStringLiteral("errors")).toArray().first().toObject().value(QStringLiteral("path")).toString(),
             QStringLiteral("/organization_id"));
}

QTEST_GUILESS_MAIN(tst_Organizations)
#include "tst_organizations.moc"
