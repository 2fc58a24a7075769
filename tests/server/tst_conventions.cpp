// The API conventions of spec §7: ETag/If-Match, Idempotency-Key, cursor paging, reason -> audit.
#include "testserver.h"

#include "server/http/idempotencystore.h"
#include "server/storage/database.h"

#include <QCryptographicHash>
#include <QSet>
#include <QSqlQuery>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Conventions : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void ifMatch_data();
    void ifMatch();
    void idempotentReplay();
    void idempotencyKeyReusedWithOtherBody();
    void idempotencyKeyInUse();
    void idempotencyKeysArePerCaller();
    void operatorsAreToldApart();
    void idempotencyKeyOfACommittedRequestNeverRunsItAgain();
    void idempotencyFingerprintHasTheQuery();
    void idempotencyFingerprintHasTheConditions();
    void idempotencyNeverKeepsASecret();
    void pagination();
    void paginationRejectsBadParameters_data();
    void paginationRejectsBadParameters();
    void reasonLandsInAudit();

private:
    std::unique_ptr<TestServer> m_server;
};

void tst_Conventions::init()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
}

void tst_Conventions::cleanup()
{
    m_server.reset();
}

void tst_Conventions::ifMatch_data()
{
    QTest::addColumn<QByteArray>("ifMatch");
    QTest::addColumn<int>("status");
    QTest::newRow("current version") << QByteArray("\"1\"") << 200;
    QTest::newRow("weak current version") << QByteArray("W/\"1\"") << 200;
    QTest::newRow("any") << QByteArray("*") << 200;
    QTest::newRow("one of several") << QByteArray("\"7\", \"1\"") << 200;
    QTest::newRow("stale") << QByteArray("\"0\"") << 412;
    QTest::newRow("future") << QByteArray("\"2\"") << 412;
    QTest::newRow("garbage") << QByteArray("abc") << 412;
    // Present but empty matches nothing: read as absent, it would skip the check.
    QTest::newRow("empty") << QByteArray("") << 412;
}

void tst_Conventions::ifMatch()
{
    QFETCH(QByteArray, ifMatch);
    QFETCH(int, status);
    const qint64 id = m_server->createOrganization(QStringLiteral("Acme"));
    const Reply r = m_server->request("DELETE", QStringLiteral("/api/v1/organizations/%1").arg(id), QByteArray(),
                                      m_server->operatorToken(), {{"If-Match", ifMatch}});
    QCOMPARE(r.status, status);
    if (status == 412) {
        QCOMPARE(r.code(), QStringLiteral("precondition-failed"));
        QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations/%1").arg(id), m_server->operatorToken())
                     .json().value(QStringLiteral("status")).toString(), QStringLiteral("AVAILABLE"));
    } else {
        QCOMPARE(r.header("ETag"), QByteArray("\"2\""));
    }
}

void tst_Conventions::idempotentReplay()
{
    const QByteArray body = R"({"name": "Northwind", "reason": "new customer"})";
    const Reply first = m_server->request("POST", QStringLiteral("/api/v1/organizations"), body, m_server->operatorToken(),
                                          {{"Idempotency-Key", "k-1"}});
    QCOMPARE(first.status, 201);
    QVERIFY(first.header("Idempotency-Replayed").isEmpty());
    const Reply second = m_server->request("POST", QStringLiteral("/api/v1/organizations"), body, m_server->operatorToken(),
                                           {{"Idempotency-Key", "k-1"}});
    QCOMPARE(second.status, 201);
    QCOMPARE(second.header("Idempotency-Replayed"), QByteArray("true"));
    QCOMPARE(second.body, first.body);
    QCOMPARE(second.header("ETag"), first.header("ETag"));
    QVERIFY(!first.header("Location").isEmpty());
    QCOMPARE(second.header("Location"), first.header("Location"));
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size(), 1);
}

void tst_Conventions::idempotencyKeyReusedWithOtherBody()
{
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "A"})", m_server->operatorToken(),
                               {{"Idempotency-Key", "k-2"}}).status, 201);
    const Reply other = m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "B"})",
                                          m_server->operatorToken(), {{"Idempotency-Key", "k-2"}});
    QCOMPARE(other.status, 422);
    QCOMPARE(other.code(), QStringLiteral("idempotency-key-reused"));
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size(), 1);
}

void tst_Conventions::idempotencyKeyInUse()
{
    // A first request still running (e.g. on another replica) has left its key in the running state.
    const QString token = m_server->operatorToken();
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "A"})", token,
                               {{"Idempotency-Key", "k-3"}}).status, 201);
    QSqlQuery q(m_server->controlPlane().database().connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE idempotency_keys SET state = 'running' WHERE key = 'k-3'")));
    const Reply r = m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "A"})", token,
                                      {{"Idempotency-Key", "k-3"}});
    QCOMPARE(r.status, 409);
    QCOMPARE(r.code(), QStringLiteral("idempotency-key-in-use"));

    // A key left running by a process that died long ago does not block the retry forever.
    q.prepare(QStringLiteral("UPDATE idempotency_keys SET created_at = ? WHERE key = 'k-3'"));
    q.addBindValue(QDateTime::currentDateTimeUtc().addSecs(-300).toString(Qt::ISODateWithMs));
    QVERIFY(q.exec());
    const Reply retried = m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "A"})", token,
                                            {{"Idempotency-Key", "k-3"}});
    QCOMPARE(retried.status, 201);
    QVERIFY(retried.header("Idempotency-Replayed").isEmpty());
}

void tst_Conventions::idempotencyKeysArePerCaller()
{
    const QString a = m_server->token(QStringLiteral("operator"), QStringLiteral("ann"));
    const QString b = m_server->token(QStringLiteral("operator"), QStringLiteral("ben"));
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "A"})", a, {{"Idempotency-Key", "same"}}).status, 201);
    const Reply r = m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "B"})", b, {{"Idempotency-Key", "same"}});
    QCOMPARE(r.status, 201);
    QVERIFY(r.header("Idempotency-Replayed").isEmpty());
}

void tst_Conventions::operatorsAreToldApart()
{
    // Two operators' tokens speak for no subject: their keys are still their own, and the audit
    // trail names each by its token.
    QString bearers[2];
    qint64 ids[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        const Reply made = m_server->request("POST", QStringLiteral("/api/v1/tokens"),
                                             QStringLiteral(R"({"role": "operator", "name": "laptop %1"})").arg(i).toUtf8(),
                                             m_server->operatorToken());
        QCOMPARE(made.status, 201);
        bearers[i] = made.json().value(QStringLiteral("token")).toString();
        ids[i] = made.json().value(QStringLiteral("id")).toInteger();
    }
    const QByteArray body = R"({"name": "Shared key"})";
    const Reply first = m_server->request("POST", QStringLiteral("/api/v1/organizations"), body, bearers[0], {{"Idempotency-Key", "same"}});
    const Reply second = m_server->request("POST", QStringLiteral("/api/v1/organizations"), body, bearers[1], {{"Idempotency-Key", "same"}});
    QCOMPARE(first.status, 201);
    QCOMPARE(second.status, 201);
    QVERIFY(second.header("Idempotency-Replayed").isEmpty());
    QVERIFY(second.json().value(QStringLiteral("id")) != first.json().value(QStringLiteral("id")));
    const QJsonArray audit = m_server->get(QStringLiteral("/api/v1/audit?kind=organization&object_id=%1")
                                               .arg(second.json().value(QStringLiteral("id")).toInteger()),
                                           m_server->operatorToken()).items();
    QVERIFY(!audit.isEmpty());
    QCOMPARE(audit.first().toObject().value(QStringLiteral("actor")).toObject().value(QStringLiteral("subject")).toString(),
             QStringLiteral("laptop 1 (token #%1)").arg(ids[1]));
}

void tst_Conventions::idempotencyKeyOfACommittedRequestNeverRunsItAgain()
{
    // The server stops after the request's transaction committed and before its answer was kept:
    // here the keeping fails instead (a trigger refuses it), which leaves the same rows behind.
    Database &db = m_server->controlPlane().database();
    if (db.backend() != Database::Backend::Sqlite)
        QSKIP("the trigger that stands for the stop is SQLite's");
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("CREATE TRIGGER answer_never_kept BEFORE UPDATE OF state ON idempotency_keys"
                                  " WHEN NEW.state = 'done' BEGIN SELECT RAISE(ABORT, 'stopped'); END")));
    const QString token = m_server->operatorToken();
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "Once"})", token,
                               {{"Idempotency-Key", "k-5"}}).status, 201);
    QVERIFY(q.exec(QStringLiteral("DROP TRIGGER answer_never_kept")));
    // Long after: a key merely taken would be given up by now.
    q.prepare(QStringLiteral("UPDATE idempotency_keys SET created_at = ? WHERE key = 'k-5'"));
    q.addBindValue(QDateTime::currentDateTimeUtc().addSecs(-300).toString(Qt::ISODateWithMs));
    QVERIFY(q.exec());
    const Reply retried = m_server->request("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "Once"})", token,
                                            {{"Idempotency-Key", "k-5"}});
    QCOMPARE(retried.status, 409);
    QCOMPARE(retried.code(), QStringLiteral("idempotency-answer-lost"));
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/organizations"), token).items().size(), 1);
}

void tst_Conventions::idempotencyFingerprintHasTheQuery()
{
    // The same path and body with another query string is another request: a dry run's answer
    // must not stand for the retry itself.
    const QString token = m_server->operatorToken();
    const Reply dryRun = m_server->request("POST", QStringLiteral("/api/v1/deliveries/retry?dry_run=true"), R"({})", token,
                                           {{"Idempotency-Key", "k-6"}});
    QCOMPARE(dryRun.status, 200);
    const Reply real = m_server->request("POST", QStringLiteral("/api/v1/deliveries/retry"), R"({})", token,
                                         {{"Idempotency-Key", "k-6"}});
    QCOMPARE(real.status, 422);
    QCOMPARE(real.code(), QStringLiteral("idempotency-key-reused"));
}

void tst_Conventions::idempotencyFingerprintHasTheConditions()
{
    // If-Match and X-OpsDeck-Reason change what a request does. A stale If-Match's 412 was
    // replayed to the retry that carried the current version, and a retry with a second header
    // reason was answered as the first while the audit kept the first.
    const QString token = m_server->operatorToken();
    const qint64 id = m_server->createOrganization(QStringLiteral("Acme"));
    const QString path = QStringLiteral("/api/v1/organizations/%1").arg(id);
    const Reply stale = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-7"}, {"If-Match", "\"9\""}});
    QCOMPARE(stale.status, 412);
    const Reply again = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-7"}, {"If-Match", "\"9\""}});
    QCOMPARE(again.status, 412);
    QCOMPARE(again.header("Idempotency-Replayed"), QByteArray("true"));
    const Reply current = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-7"}, {"If-Match", "\"1\""}});
    QCOMPARE(current.status, 422);
    QCOMPARE(current.code(), QStringLiteral("idempotency-key-reused"));

    const Reply first = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-8"}, {"X-OpsDeck-Reason", "first"}});
    QCOMPARE(first.status, 200);
    const Reply second = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-8"}, {"X-OpsDeck-Reason", "second"}});
    QCOMPARE(second.status, 422);
    QCOMPARE(second.code(), QStringLiteral("idempotency-key-reused"));
    const Reply replayed = m_server->request("DELETE", path, QByteArray(), token, {{"Idempotency-Key", "k-8"}, {"X-OpsDeck-Reason", "first"}});
    QCOMPARE(replayed.status, 200);
    QCOMPARE(replayed.header("Idempotency-Replayed"), QByteArray("true"));

    // Both fields, in either order and among however many others: the same request. (Qt lists
    // header fields in a hash's order, seeded per process and changed by the others' number.)
    const qint64 other = m_server->createOrganization(QStringLiteral("Globex"));
    const QString otherPath = QStringLiteral("/api/v1/organizations/%1").arg(other);
    const HeaderList headers{{"Idempotency-Key", "k-9"}, {"If-Match", "\"1\""}, {"X-OpsDeck-Reason", "both"}};
    QCOMPARE(m_server->request("DELETE", otherPath, QByteArray(), token, headers).status, 200);
    HeaderList reordered{{"X-OpsDeck-Reason", "both"}, {"Idempotency-Key", "k-9"}};
    for (int i = 0; i < 24; ++i)
        reordered.append(qMakePair("X-Other-" + QByteArray::number(i), QByteArrayLiteral("x")));
    reordered.append(qMakePair(QByteArrayLiteral("If-Match"), QByteArrayLiteral("\"1\"")));
    const Reply both = m_server->request("DELETE", otherPath, QByteArray(), token, reordered);
    QCOMPARE(both.status, 200);
    QCOMPARE(both.header("Idempotency-Replayed"), QByteArray("true"));
    // A request without either field keeps the fingerprint it always had: keys stored before
    // still replay.
    QCOMPARE(IdempotencyStore::fingerprint("POST", QStringLiteral("/a"), QString(), "{}"),
             QCryptographicHash::hash("POST /a\n{}", QCryptographicHash::Sha256).toHex());
}

void tst_Conventions::idempotencyNeverKeepsASecret()
{
    const QString token = m_server->operatorToken();
    const QByteArray body = R"({"role": "owner", "subject": "zoe"})";
    const Reply created = m_server->request("POST", QStringLiteral("/api/v1/tokens"), body, token, {{"Idempotency-Key", "k-7"}});
    QCOMPARE(created.status, 201);
    const QByteArray bearer = created.json().value(QStringLiteral("token")).toString().toUtf8();
    QVERIFY(!bearer.isEmpty());
    const Reply retried = m_server->request("POST", QStringLiteral("/api/v1/tokens"), body, token, {{"Idempotency-Key", "k-7"}});
    QCOMPARE(retried.status, 409);
    QCOMPARE(retried.code(), QStringLiteral("idempotency-secret-withheld"));
    QVERIFY(!retried.body.contains(bearer));
    // Which token the lost answer created, to revoke it: the same Location as the first answer.
    const QByteArray location = "/api/v1/tokens/" + QByteArray::number(created.json().value(QStringLiteral("id")).toInteger());
    QCOMPARE(created.header("Location"), location);
    QCOMPARE(retried.header("Location"), location);
    QSqlQuery q(m_server->controlPlane().database().connection());
    QVERIFY(q.exec(QStringLiteral("SELECT COALESCE(body, '') || COALESCE(headers, '') FROM idempotency_keys WHERE key = 'k-7'")));
    QVERIFY(q.next());
    QVERIFY(!q.value(0).toString().toUtf8().contains(bearer));
    // Only one token was made.
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/tokens"), token).items().size(), 2);
}

void tst_Conventions::pagination()
{
    for (int i = 0; i < 7; ++i)
        QVERIFY(m_server->createOrganization(QStringLiteral("Org %1").arg(i)));
    QSet<qint64> seen;
    QString path = QStringLiteral("/api/v1/organizations?limit=3");
    int pages = 0;
    for (;;) {
        const Reply r = m_server->get(path, m_server->operatorToken());
        QCOMPARE(r.status, 200);
        ++pages;
        qint64 previous = 0;
        for (const QJsonValue &v : r.items()) {
            const qint64 id = v.toObject().value(QStringLiteral("id")).toInteger();
            QVERIFY2(id > previous, "ordered by id");
            previous = id;
            QVERIFY2(!seen.contains(id), "no duplicates across pages");
            seen.insert(id);
        }
        const QJsonValue next = r.json().value(QStringLiteral("next"));
        if (next.isNull())
            break;
        QVERIFY(pages < 10);
        path = QStringLiteral("/api/v1/organizations?limit=3&cursor=") + next.toString();
    }
    QCOMPARE(seen.size(), 7);
    QCOMPARE(pages, 3);
}

void tst_Conventions::paginationRejectsBadParameters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("path");
    QTest::newRow("limit zero") << "limit=0" << "?limit";
    QTest::newRow("limit too large") << "limit=1001" << "?limit";
    QTest::newRow("limit not a number") << "limit=ten" << "?limit";
    QTest::newRow("forged cursor") << "cursor=abc" << "?cursor";
    QTest::newRow("unknown parameter") << "colour=red" << "?colour";
    QTest::newRow("repeated parameter") << "limit=1&limit=2" << "?limit";
}

void tst_Conventions::paginationRejectsBadParameters()
{
    QFETCH(QString, query);
    QFETCH(QString, path);
    const Reply r = m_server->get(QStringLiteral("/api/v1/organizations?") + query, m_server->operatorToken());
    QCOMPARE(r.status, 400);
    QCOMPARE(r.code(), QStringLiteral("invalid-request"));
    QCOMPARE(r.json().value(QStringLiteral("errors")).toArray().first().toObject().value(QStringLiteral("path")).toString(), path);
}

void tst_Conventions::reasonLandsInAudit()
{
    const qint64 org = m_server->createOrganization(QStringLiteral("O"));
    const qint64 provider = m_server->createProvider(QStringLiteral("P"), org, {QStringLiteral("app")});
    const qint64 id = m_server->createInstance(QStringLiteral("i"), org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    QVERIFY(!m_server->registerInstance(id).isEmpty());
    const QString alice = m_server->token(QStringLiteral("owner"), QStringLiteral("alice"));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id),
                            {{QStringLiteral("reason"), QStringLiteral("maintenance window")}}, alice).status, 200);
    QCOMPARE(m_server->request("POST", QStringLiteral("/api/v1/instances/%1/start").arg(id), QByteArray(), alice,
                               {{"X-OpsDeck-Reason", "fin de maintenance %C3%A9t%C3%A9"}}).status, 200);
    const Reply audit = m_server->get(QStringLiteral("/api/v1/audit?kind=instance&object_id=%1").arg(id), alice);
    QCOMPARE(audit.status, 200);
    const QJsonArray items = audit.items();
    QCOMPARE(items.size(), 4); // create, register, stop, start
    const QJsonObject stop = items.at(2).toObject();
    QCOMPARE(stop.value(QStringLiteral("action")).toString(), QStringLiteral("stop"));
    QCOMPARE(stop.value(QStringLiteral("from")).toString(), QStringLiteral("RUNNING"));
    QCOMPARE(stop.value(QStringLiteral("to")).toString(), QStringLiteral("STOPPED"));
    QCOMPARE(stop.value(QStringLiteral("reason")).toString(), QStringLiteral("maintenance window"));
    QCOMPARE(stop.value(QStringLiteral("actor")).toObject().value(QStringLiteral("role")).toString(), QStringLiteral("owner"));
    QCOMPARE(stop.value(QStringLiteral("actor")).toObject().value(QStringLiteral("subject")).toString(), QStringLiteral("alice"));
    QVERIFY(stop.value(QStringLiteral("at")).toString().endsWith(QLatin1Char('Z')));
    QCOMPARE(items.at(3).toObject().value(QStringLiteral("reason")).toString(), QString::fromUtf8("fin de maintenance été"));
    // Another owner sees none of it.
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/audit?kind=instance&object_id=%1").arg(id),
                           m_server->token(QStringLiteral("owner"), QStringLiteral("bob"))).items().size(), 0);
}

QTEST_GUILESS_MAIN(tst_Conventions)
#include "tst_conventions.moc"
