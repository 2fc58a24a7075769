// App instances over real HTTP: create, register with a callback, stop/start, filters and the outbox.
#include "testserver.h"

#include "server/storage/database.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Instances : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void createIsPending();
    void createValidatesReferences_data();
    void createValidatesReferences();
    void registerSetsCallbackAndSecret();
    void registerRefusesPrivateCallbacksByDefault();
    void stopAndStartWriteOutbox();
    void invalidTransitionNamesAllowedActions();
    void noStartInADeletedOrganization();
    void neverRegisteredDoesNotStart();
    void listFilters_data();
    void listFilters();
    void listGetAndFeedAgree();

private:
    qint64 instance(const QString &owner = QStringLiteral("alice"));
    QList<QPair<QString, QString>> deliveries(qint64 instanceId); // (state, body) in id order

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    qint64 m_otherProvider = 0;
};

void tst_Instances::init()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_org = m_server->createOrganization(QStringLiteral("Ville de Lyon"));
    const qint64 home = m_server->createOrganization(QStringLiteral("Datagora SAS"));
    m_provider = m_server->createProvider(QStringLiteral("Datagora"), home, {QStringLiteral("dataviz"), QStringLiteral("hub")});
    m_otherProvider = m_server->createProvider(QStringLiteral("Medisys"), home, {QStringLiteral("appointments")});
    QVERIFY(m_org && m_provider && m_otherProvider);
}

void tst_Instances::cleanup()
{
    m_server.reset();
}

qint64 tst_Instances::instance(const QString &owner)
{
    return m_server->createInstance(QStringLiteral("viz"), m_org, m_provider, QStringLiteral("dataviz"), owner);
}

QList<QPair<QString, QString>> tst_Instances::deliveries(qint64 instanceId)
{
    QSqlQuery q(m_server->controlPlane().database().connection());
    q.prepare(QStringLiteral("SELECT state, body FROM deliveries WHERE instance_id = ? ORDER BY id"));
    q.addBindValue(instanceId);
    q.exec();
    QList<QPair<QString, QString>> out;
    while (q.next())
        out.append({q.value(0).toString(), q.value(1).toString()});
    return out;
}

void tst_Instances::createIsPending()
{
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances"),
                                   {{QStringLiteral("name"), QStringLiteral("viz-lyon")},
                                    {QStringLiteral("organization_id"), m_org},
                                    {QStringLiteral("provider_id"), m_provider},
                                    {QStringLiteral("application"), QStringLiteral("dataviz")},
                                    {QStringLiteral("owner"), QStringLiteral("alice")}},
                                   m_server->token(QStringLiteral("owner"), QStringLiteral("alice")));
    QCOMPARE(r.status, 201);
    const QJsonObject o = r.json();
    QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(o.value(QStringLiteral("owner")).toString(), QStringLiteral("alice"));
    QCOMPARE(o.value(QStringLiteral("version")).toInteger(), 1);
    QVERIFY(o.value(QStringLiteral("callback")).isNull());
    QVERIFY(o.value(QStringLiteral("awaiting_ack")).isNull());
    QVERIFY(o.value(QStringLiteral("destroy_after")).isNull());
    for (const char *key : {"id", "name", "organization_id", "provider_id", "application", "created_at", "updated_at", "status_changed_at"})
        QVERIFY2(o.contains(QLatin1String(key)), key);

    // An owner may not create an instance for someone else.
    const Reply forged = m_server->post(QStringLiteral("/api/v1/instances"),
                                        {{QStringLiteral("name"), QStringLiteral("x")},
                                         {QStringLiteral("organization_id"), m_org},
                                         {QStringLiteral("provider_id"), m_provider},
                                         {QStringLiteral("application"), QStringLiteral("dataviz")},
                                         {QStringLiteral("owner"), QStringLiteral("bob")}},
                                        m_server->token(QStringLiteral("owner"), QStringLiteral("alice")));
    QCOMPARE(forged.status, 403);
}

void tst_Instances::createValidatesReferences_data()
{
    QTest::addColumn<qint64>("org");
    QTest::addColumn<qint64>("provider");
    QTest::addColumn<QString>("application");
    QTest::addColumn<QString>("path");
    QTest::newRow("unknown organization") << qint64(999) << qint64(0) << "dataviz" << "/organization_id";
    QTest::newRow("unknown provider") << qint64(0) << qint64(999) << "dataviz" << "/provider_id";
    QTest::newRow("application not offered") << qint64(0) << qint64(0) << "appointments" << "/application";
}

void tst_Instances::createValidatesReferences()
{
    QFETCH(qint64, org);
    QFETCH(qint64, provider);
    QFETCH(QString, application);
    QFETCH(QString, path);
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances"),
                                   {{QStringLiteral("name"), QStringLiteral("x")},
                                    {QStringLiteral("organization_id"), org ? org : m_org},
                                    {QStringLiteral("provider_id"), provider ? provider : m_provider},
                                    {QStringLiteral("application"), application},
                                    {QStringLiteral("owner"), QStringLiteral("alice")}},
                                   m_server->operatorToken());
    QCOMPARE(r.status, 400);
    QCOMPARE(r.json().value(QStringLiteral("errors")).toArray().first().toObject().value(QStringLiteral("path")).toString(), path);
}

void tst_Instances::registerSetsCallbackAndSecret()
{
    const qint64 id = instance();
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                   {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hooks")}},
                                   m_server->token(QStringLiteral("provider"), QString::number(m_provider)));
    QCOMPARE(r.status, 200);
    const QJsonObject o = r.json();
    QCOMPARE(o.value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
    QCOMPARE(o.value(QStringLiteral("version")).toInteger(), 2);
    QVERIFY(o.value(QStringLiteral("secret")).toString().startsWith(QLatin1String("whsec_")));
    QCOMPARE(o.value(QStringLiteral("callback")).toObject().value(QStringLiteral("url")).toString(), QStringLiteral("http://127.0.0.1:9/hooks"));
    QCOMPARE(o.value(QStringLiteral("callback")).toObject().value(QStringLiteral("signing")).toString(), QStringLiteral("standard-webhooks"));
    // The secret is shown once.
    const Reply again = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken());
    QVERIFY(!again.json().contains(QStringLiteral("secret")));
    // The first status change is already in the outbox.
    const auto d = deliveries(id);
    QCOMPARE(d.size(), 1);
    QCOMPARE(d.first().first, QStringLiteral("PENDING"));
    const QJsonObject body = QJsonDocument::fromJson(d.first().second.toUtf8()).object();
    QCOMPARE(body.value(QStringLiteral("type")).toString(), QStringLiteral("instance.status_changed"));
    QCOMPARE(body.value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
    QCOMPARE(body.value(QStringLiteral("previous_status")).toString(), QStringLiteral("PENDING"));
    QCOMPARE(body.value(QStringLiteral("instance_id")).toInteger(), id);
    QCOMPARE(body.value(QStringLiteral("organization_id")).toInteger(), m_org);
    QCOMPARE(body.value(QStringLiteral("version")).toInteger(), 2);

    // Registering twice is not a transition the machine has.
    const Reply twice = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                       {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hooks")}},
                                       m_server->operatorToken());
    QCOMPARE(twice.status, 409);
    QCOMPARE(twice.code(), QStringLiteral("invalid-transition"));
}

void tst_Instances::registerRefusesPrivateCallbacksByDefault()
{
    TestServer strict({}, false);
    QVERIFY2(strict.isRunning(), qPrintable(strict.error()));
    const qint64 org = strict.createOrganization(QStringLiteral("O"));
    const qint64 provider = strict.createProvider(QStringLiteral("P"), org, {QStringLiteral("app")});
    const qint64 id = strict.createInstance(QStringLiteral("i"), org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    for (const char *url : {"http://127.0.0.1/x", "http://10.1.2.3/x", "http://169.254.169.254/latest", "ftp://example.com/x"}) {
        const Reply r = strict.post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                    {{QStringLiteral("callback_url"), QLatin1String(url)}}, strict.operatorToken());
        QVERIFY2(r.status == 400, r.body.constData());
        QCOMPARE(r.json().value(QStringLiteral("errors")).toArray().first().toObject().value(QStringLiteral("path")).toString(),
                 QStringLiteral("/callback_url"));
    }
}

void tst_Instances::stopAndStartWriteOutbox()
{
    const qint64 id = instance();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                            {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hooks")}},
                            m_server->operatorToken()).status, 200);
    const QString alice = m_server->token(QStringLiteral("owner"), QStringLiteral("alice"));
    const Reply stopped = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {{QStringLiteral("reason"), QStringLiteral("night")}}, alice);
    QVERIFY2(stopped.status == 200, stopped.body.constData());
    QCOMPARE(stopped.json().value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QVERIFY(!stopped.json().value(QStringLiteral("destroy_after")).isNull());
    const Reply started = m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, alice);
    QCOMPARE(started.status, 200);
    QCOMPARE(started.json().value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING"));
    QCOMPARE(started.json().value(QStringLiteral("version")).toInteger(), 4);
    QVERIFY(started.json().value(QStringLiteral("destroy_after")).isNull());

    // Undelivered notifications are superseded by the newest, which carries the full status.
    const auto d = deliveries(id);
    QCOMPARE(d.size(), 3);
    QCOMPARE(d.at(0).first, QStringLiteral("SUPERSEDED"));
    QCOMPARE(d.at(1).first, QStringLiteral("SUPERSEDED"));
    QCOMPARE(d.at(2).first, QStringLiteral("PENDING"));
    QCOMPARE(QJsonDocument::fromJson(d.at(2).second.toUtf8()).object().value(QStringLiteral("previous_status")).toString(),
             QStringLiteral("STOPPED"));
}

void tst_Instances::neverRegisteredDoesNotStart()
{
    // Stopped while PENDING, the instance has no callback: RUNNING would reach no provider.
    const QString op = m_server->operatorToken();
    const qint64 org = m_server->createOrganization(QStringLiteral("Trial"));
    const qint64 provider = m_server->createProvider(QStringLiteral("Prov"), org, {QStringLiteral("crm")});
    const qint64 id = m_server->createInstance(QStringLiteral("cancelled"), org, provider, QStringLiteral("crm"), QStringLiteral("alice"));
    QVERIFY(id > 0);
    const Reply stopped = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, op);
    QCOMPARE(stopped.status, 200);
    const qint64 version = stopped.json().value(QStringLiteral("version")).toInteger();
    const Reply refused = m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, op);
    QCOMPARE(refused.status, 409);
    QCOMPARE(refused.code(), QStringLiteral("instance-not-registered"));
    QVERIFY2(refused.json().value(QStringLiteral("detail")).toString().contains(QLatin1String("before its provider registered it")),
             refused.body.constData());
    const QJsonObject after = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), op).json();
    QCOMPARE(after.value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QCOMPARE(after.value(QStringLiteral("version")).toInteger(), version);
    QVERIFY(m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(id), op).items().isEmpty());
    // Nor is start offered where another action is refused: clients enable actions from "allowed".
    const Reply again = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, op);
    QCOMPARE(again.status, 409);
    QCOMPARE(again.json().value(QStringLiteral("allowed")).toArray(), QJsonArray());
    QVERIFY2(again.json().value(QStringLiteral("detail")).toString().endsWith(QLatin1String("; allowed: none")), again.body.constData());
    // Its owner is refused the same way; a registered instance of the same provider starts.
    const QString alice = m_server->token(QStringLiteral("owner"), QStringLiteral("alice"));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, alice).code(),
             QStringLiteral("instance-not-registered"));
    const qint64 registered = m_server->createInstance(QStringLiteral("kept"), org, provider, QStringLiteral("crm"), QStringLiteral("alice"));
    QVERIFY(!m_server->registerInstance(registered).isEmpty());
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(registered), {}, alice).status, 200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(registered), {}, alice).status, 200);
}

void tst_Instances::noStartInADeletedOrganization()
{
    // Its instances all stopped, an organization may be deleted; none of them runs again until
    // it is restored.
    const QString op = m_server->operatorToken();
    const qint64 org = m_server->createOrganization(QStringLiteral("Closing"));
    // The provider's own organization stays (one that provides applications cannot be deleted).
    const qint64 provider = m_server->createProvider(QStringLiteral("Prov"), m_server->createOrganization(QStringLiteral("Host")),
                                                     {QStringLiteral("crm")});
    const qint64 id = m_server->createInstance(QStringLiteral("last"), org, provider, QStringLiteral("crm"), QStringLiteral("alice"));
    QVERIFY(id > 0);
    QVERIFY(!m_server->registerInstance(id).isEmpty());
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, op).status, 200);
    const Reply deleted = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(org), QByteArray(), op);
    QVERIFY2(deleted.status == 200, deleted.body.constData());
    const Reply refused = m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, op);
    QCOMPARE(refused.status, 409);
    QCOMPARE(refused.code(), QStringLiteral("organization-deleted"));
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/organizations/%1/restore").arg(org), QByteArray(), op).status, 200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, op).status, 200);
}

void tst_Instances::invalidTransitionNamesAllowedActions()
{
    const qint64 id = instance();
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(id), {}, m_server->operatorToken());
    QCOMPARE(r.status, 409);
    QCOMPARE(r.code(), QStringLiteral("invalid-transition"));
    const QJsonArray allowed = r.json().value(QStringLiteral("allowed")).toArray();
    QVERIFY(allowed.contains(QStringLiteral("stop")));
    QVERIFY(!allowed.contains(QStringLiteral("start")));
    // Nothing changed.
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken()).json()
                 .value(QStringLiteral("version")).toInteger(), 1);
}

void tst_Instances::listFilters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<int>("count");
    QTest::newRow("all") << "" << 4;
    QTest::newRow("by owner") << "owner=bob" << 1;
    QTest::newRow("by status") << "status=STOPPED" << 1;
    QTest::newRow("by organization") << "organization=%ORG%" << 4;
    QTest::newRow("by provider") << "provider=%PROVIDER%" << 3;
    QTest::newRow("combined") << "status=PENDING&owner=alice" << 2;
    QTest::newRow("updated after the future") << "updated_after=2999-01-01T00:00:00Z" << 0;
    QTest::newRow("updated after the past") << "updated_after=2000-01-01T00:00:00.000Z" << 4;
}

void tst_Instances::listFilters()
{
    QFETCH(QString, query);
    QFETCH(int, count);
    instance();
    instance();
    const qint64 bobs = instance(QStringLiteral("bob"));
    QVERIFY(m_server->createInstance(QStringLiteral("appt"), m_org, m_otherProvider, QStringLiteral("appointments"), QStringLiteral("carol")));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(bobs), {}, m_server->operatorToken()).status, 200);
    query.replace(QLatin1String("%ORG%"), QString::number(m_org)).replace(QLatin1String("%PROVIDER%"), QString::number(m_provider));
    const Reply r = m_server->get(QStringLiteral("/api/v1/instances?") + query, m_server->operatorToken());
    QCOMPARE(r.status, 200);
    QCOMPARE(r.items().size(), count);
}

void tst_Instances::listGetAndFeedAgree()
{
    // Names that need escaping, and one instance with a callback, so every field shape is covered.
    const QString odd = QString::fromUtf8("quote \" backslash \\ slash / été 日本 😀");
    const qint64 a = m_server->createInstance(odd, m_org, m_provider, QStringLiteral("dataviz"), QStringLiteral("alice"));
    const qint64 b = instance();
    // A name with control characters, as a database written before names refused them may hold.
    const qint64 legacy = instance();
    QVERIFY(a && b && legacy);
    const QString control = QString::fromUtf8("tab \t newline \n bell \x07 escape \x1b end");
    {
        Database db(m_server->databaseUrl());
        Problem problem;
        QVERIFY2(db.open(&problem), qPrintable(problem.detail));
        QSqlQuery q(db.connection());
        q.prepare(QStringLiteral("UPDATE instances SET name = ? WHERE id = ?"));
        q.addBindValue(control);
        q.addBindValue(legacy);
        QVERIFY2(q.exec(), qPrintable(q.lastError().text()));
    }
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(b),
                            {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/h")}}, m_server->operatorToken()).status, 200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(b), {}, m_server->operatorToken()).status, 200);
    const Reply list = m_server->get(QStringLiteral("/api/v1/instances"), m_server->operatorToken());
    QCOMPARE(list.status, 200);
    const Reply feed = m_server->get(QStringLiteral("/api/v1/events?after=0&limit=1000"), m_server->operatorToken());
    QHash<qint64, QJsonObject> latest;
    for (const QJsonValue &v : feed.json().value(QStringLiteral("events")).toArray()) {
        const QJsonObject e = v.toObject();
        if (e.value(QStringLiteral("kind")).toString() == QLatin1String("instance"))
            latest.insert(e.value(QStringLiteral("id")).toInteger(), e.value(QStringLiteral("object")).toObject());
    }
    QCOMPARE(list.items().size(), 3);
    for (const QJsonValue &v : list.items()) {
        const QJsonObject item = v.toObject();
        const qint64 id = item.value(QStringLiteral("id")).toInteger();
        const Reply got = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken());
        QCOMPARE(got.json(), item);
        if (id != legacy) // renamed behind the server's back: its feed event has the old name
            QCOMPARE(latest.value(id), item);
    }
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances/%1").arg(a), m_server->operatorToken()).json().value(QStringLiteral("name")).toString(), odd);
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/instances/%1").arg(legacy), m_server->operatorToken()).json().value(QStringLiteral("name")).toString(),
             control);
}

QTEST_GUILESS_MAIN(tst_Instances)
#include "tst_instances.moc"
