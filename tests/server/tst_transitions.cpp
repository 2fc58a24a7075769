// Every kind's state change answers the same way: body check, 404, If-Match, refusal, audit row and feed event.
#include "testserver.h"

#include "server/storage/database.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// Nobody listens there; with the worker off nothing is sent anyway.
const QString Nowhere = QStringLiteral("http://127.0.0.1:9/hook");

} // namespace

class tst_Transitions : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void transition_data();
    void transition();
    void refusalNamesRoutes();
    void registerAsksForItsTarget();
    void storageFailure_data();
    void storageFailure();

private:
    // Runs each statement on the server's database: why one failed, or an empty string.
    QString execAll(const QStringList &statements);
    // The object the row starts from ("available organization", "pending delivery", ...): its
    // resource path, or an empty string when it could not be arranged.
    QString arrange(const QString &what);
    qint64 registeredInstance(const QString &url = Nowhere);
    QString arrangeEndpoint(const QString &what, const QString &name);
    QJsonObject object(const QString &path);
    qint64 lastSeq();
    // The feed events of `kind` about `id` after `seq`.
    QJsonArray eventsOf(qint64 seq, const QString &kind, qint64 id);
    QJsonArray auditOf(const QString &kind, qint64 id);
    Reply send(const QByteArray &method, const QString &path, const QJsonObject &body, const HeaderList &headers = {});

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

void tst_Transitions::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = TestServer::withoutDeliveryWorker(); // delivery states are the test's to arrange
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    QVERIFY(m_server->createAcmeAndCrm(&m_org, &m_provider));
}

void tst_Transitions::cleanupTestCase()
{
    m_server.reset();
}

Reply tst_Transitions::send(const QByteArray &method, const QString &path, const QJsonObject &body, const HeaderList &headers)
{
    return m_server->request(method, path, QJsonDocument(body).toJson(QJsonDocument::Compact), m_server->operatorToken(),
                             headers);
}

qint64 tst_Transitions::registeredInstance(const QString &url)
{
    const qint64 instance = m_server->createInstance(QStringLiteral("i%1").arg(++m_counter), m_org, m_provider,
                                                     QStringLiteral("crm"), QStringLiteral("alice"));
    return instance != 0 && !m_server->registerInstance(instance, url).isEmpty() ? instance : 0;
}

QString tst_Transitions::arrangeEndpoint(const QString &what, const QString &name)
{
    // Its own URL, so the endpoint is new and no other row's instance shares it.
    const QString url = Nowhere + QLatin1Char('/') + name;
    if (registeredInstance(url) == 0)
        return {};
    qint64 id = 0;
    const QJsonArray endpoints =
        m_server->get(QStringLiteral("/api/v1/endpoints?provider=%1&limit=1000").arg(m_provider), m_server->operatorToken()).items();
    for (const QJsonValue &e : endpoints) {
        if (e[QStringLiteral("url")].toString() == url)
            id = e[QStringLiteral("id")].toInteger();
    }
    const QString path = QStringLiteral("/api/v1/endpoints/%1").arg(id);
    if (id == 0 || (what.startsWith(QLatin1String("paused")) && send("POST", path + QStringLiteral("/pause"), {}).status != 200))
        return {};
    if (what.startsWith(QLatin1String("disabled"))) {
        // Only the delivery worker disables (a 410 answer), and it is off: the row is set as it would.
        QSqlQuery q(m_server->controlPlane().database().connection());
        q.prepare(QStringLiteral("UPDATE endpoints SET state = 'DISABLED', version = version + 1 WHERE id = ?"));
        q.addBindValue(id);
        if (!q.exec())
            return {};
    }
    return path;
}

QString tst_Transitions::arrange(const QString &what)
{
    const QString name = QStringLiteral("t%1").arg(++m_counter);
    if (what.endsWith(QLatin1String("organization"))) {
        const qint64 id = m_server->createOrganization(name);
        const QString path = QStringLiteral("/api/v1/organizations/%1").arg(id);
        if (id == 0 || (what.startsWith(QLatin1String("deleted")) && send("DELETE", path, {}).status != 200))
            return {};
        return path;
    }
    if (what == QLatin1String("registered instance") || what == QLatin1String("stopped instance")) {
        // Only a registered instance starts again once stopped.
        const qint64 id = registeredInstance();
        const QString path = QStringLiteral("/api/v1/instances/%1").arg(id);
        if (id == 0 || (what.startsWith(QLatin1String("stopped")) && send("POST", path + QStringLiteral("/stop"), {}).status != 200))
            return {};
        return path;
    }
    if (what.endsWith(QLatin1String("instance"))) {
        const qint64 id = m_server->createInstance(name, m_org, m_provider, QStringLiteral("crm"), QStringLiteral("alice"));
        return id == 0 ? QString() : QStringLiteral("/api/v1/instances/%1").arg(id);
    }
    if (what.endsWith(QLatin1String("endpoint")))
        return arrangeEndpoint(what, name);
    const qint64 instance = registeredInstance();
    const QJsonArray deliveries =
        m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken()).items();
    if (instance == 0 || deliveries.size() != 1)
        return {};
    const QString path = QStringLiteral("/api/v1/deliveries/%1").arg(deliveries.first().toObject().value(QStringLiteral("id")).toInteger());
    if (what.startsWith(QLatin1String("cancelled")) && send("POST", path + QStringLiteral("/cancel"), {}).status != 200)
        return {};
    return path;
}

QJsonObject tst_Transitions::object(const QString &path)
{
    return m_server->get(path, m_server->operatorToken()).json();
}

qint64 tst_Transitions::lastSeq()
{
    return m_server->get(QStringLiteral("/api/v1/events"), m_server->operatorToken()).json().value(QStringLiteral("last_seq")).toInteger();
}

QJsonArray tst_Transitions::eventsOf(qint64 seq, const QString &kind, qint64 id)
{
    const QJsonArray events = m_server->get(QStringLiteral("/api/v1/events?after=%1&limit=1000").arg(seq), m_server->operatorToken())
                                  .json()
                                  .value(QStringLiteral("events"))
                                  .toArray();
    QJsonArray matching;
    for (const QJsonValue &e : events) {
        if (e[QStringLiteral("kind")].toString() == kind && e[QStringLiteral("id")].toInteger() == id)
            matching.append(e);
    }
    return matching;
}

QJsonArray tst_Transitions::auditOf(const QString &kind, qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/audit?kind=%1&object_id=%2&limit=1000").arg(kind).arg(id), m_server->operatorToken())
        .items();
}

void tst_Transitions::transition_data()
{
    QTest::addColumn<QString>("start");        // what arrange() builds
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");        // after the object's path
    QTest::addColumn<QJsonObject>("body");     // what the action needs besides a reason
    QTest::addColumn<QString>("kind");         // in audit rows and feed events
    QTest::addColumn<QString>("stateField");
    QTest::addColumn<QString>("from");
    QTest::addColumn<QString>("to");
    QTest::addColumn<QString>("op");           // the feed event's
    QTest::addColumn<int>("repeatStatus");     // the same action once more
    QTest::addColumn<QStringList>("extra");    // answer fields the object itself does not carry
    QTest::addColumn<QStringList>("audited");  // the audit row's action, from and to when not the route's verb and states

    const QJsonObject none;
    const QJsonObject callback{{QStringLiteral("callback_url"), Nowhere}};
    const QString org = QStringLiteral("organization");
    const QString inst = QStringLiteral("instance");
    const QString del = QStringLiteral("delivery");
    const QString ep = QStringLiteral("endpoint");
    const QString status = QStringLiteral("status");
    const QString state = QStringLiteral("state");
    QTest::newRow("organization delete") << "available organization" << QByteArray("DELETE") << QString() << none << org << status
                                         << "AVAILABLE" << "DELETED" << "updated" << 409 << QStringList() << QStringList();
    QTest::newRow("organization restore") << "deleted organization" << QByteArray("POST") << "/restore" << none << org << status
                                          << "DELETED" << "AVAILABLE" << "updated" << 409 << QStringList() << QStringList();
    QTest::newRow("instance stop") << "pending instance" << QByteArray("POST") << "/stop" << none << inst << status << "PENDING"
                                   << "STOPPED" << "updated" << 409 << QStringList() << QStringList();
    QTest::newRow("instance start") << "stopped instance" << QByteArray("POST") << "/start" << none << inst << status << "STOPPED"
                                    << "RUNNING" << "updated" << 409 << QStringList() << QStringList();
    QTest::newRow("instance register") << "pending instance" << QByteArray("POST") << "/register" << callback << inst << status
                                       << "PENDING" << "RUNNING" << "updated" << 409 << QStringList{QStringLiteral("secret")} << QStringList();
    QJsonObject asStopped = callback;
    asStopped.insert(QStringLiteral("status"), QStringLiteral("STOPPED"));
    QTest::newRow("instance register as stopped") << "pending instance" << QByteArray("POST") << "/register" << asStopped << inst
                                                  << status << "PENDING" << "STOPPED" << "updated" << 409
                                                  << QStringList{QStringLiteral("secret")} << QStringList();
    QTest::newRow("delivery cancel") << "pending delivery" << QByteArray("POST") << "/cancel" << none << del << state << "PENDING"
                                     << "CANCELLED" << "updated" << 409 << QStringList() << QStringList();
    // Retry leaves PENDING for PENDING: "send now" once more is allowed.
    QTest::newRow("delivery retry") << "cancelled delivery" << QByteArray("POST") << "/retry" << none << del << state << "CANCELLED"
                                    << "PENDING" << "updated" << 200 << QStringList() << QStringList();
    QTest::newRow("endpoint pause") << "active endpoint" << QByteArray("POST") << "/pause" << none << ep << state << "ACTIVE"
                                    << "PAUSED" << "updated" << 409 << QStringList() << QStringList();
    QTest::newRow("endpoint resume") << "paused endpoint" << QByteArray("POST") << "/resume" << none << ep << state << "PAUSED"
                                     << "ACTIVE" << "updated" << 409 << QStringList() << QStringList();
    // The API has no enable route: resume enables a disabled endpoint, and the audit says what the machine took.
    QTest::newRow("endpoint resume from disabled") << "disabled endpoint" << QByteArray("POST") << "/resume" << none << ep << state
                                                   << "DISABLED" << "ACTIVE" << "updated" << 409 << QStringList()
                                                   << QStringList{QStringLiteral("enable"), QStringLiteral("DISABLED"),
                                                                  QStringLiteral("ACTIVE")};
    // No move between states (the audit row has none), yet the same sequence: If-Match, refusals, audit, feed.
    QTest::newRow("instance rotate-secret") << "registered instance" << QByteArray("POST") << "/rotate-secret" << none << inst
                                            << status << "RUNNING" << "RUNNING" << "updated" << 200
                                            << QStringList{QStringLiteral("secret"), QStringLiteral("previous_secret_valid_until")}
                                            << QStringList{QStringLiteral("rotate-secret"), QString(), QString()};
}

void tst_Transitions::transition()
{
    QFETCH(QString, start);
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QJsonObject, body);
    QFETCH(QString, kind);
    QFETCH(QString, stateField);
    QFETCH(QString, from);
    QFETCH(QString, to);
    QFETCH(QString, op);
    QFETCH(int, repeatStatus);
    QFETCH(QStringList, extra);
    QFETCH(QStringList, audited);

    const QString path = arrange(start);
    QVERIFY2(!path.isEmpty(), qPrintable(start));
    const qint64 id = path.section(QLatin1Char('/'), -1).toLongLong();
    const QString action = path + route;
    const QJsonObject before = object(path);
    QCOMPARE(before.value(stateField).toString(), from);
    const qint64 version = before.value(QStringLiteral("version")).toInteger();
    const qsizetype auditRows = auditOf(kind, id).size();

    // Refused before anything is read: a field the action does not take.
    QJsonObject unknown = body;
    unknown.insert(QStringLiteral("colour"), QStringLiteral("red"));
    const Reply bad = send(method, action, unknown);
    QVERIFY2(bad.status == 400, bad.body.constData());
    QCOMPARE(bad.code(), QStringLiteral("invalid-request"));
    QCOMPARE(bad.json().value(QStringLiteral("errors")).toArray().first()[QStringLiteral("path")].toString(), QStringLiteral("/colour"));

    const QString missingPath = path.section(QLatin1Char('/'), 0, -2) + QLatin1Char('/') + QString::number(id + 100000);
    const Reply missing = send(method, missingPath + route, body);
    QVERIFY2(missing.status == 404, missing.body.constData());
    QCOMPARE(missing.code(), QStringLiteral("not-found"));

    const Reply stale = send(method, action, body, {{QByteArray("If-Match"), QByteArray("\"99\"")}});
    QVERIFY2(stale.status == 412, stale.body.constData());
    QCOMPARE(stale.code(), QStringLiteral("precondition-failed"));
    QCOMPARE(stale.json().value(QStringLiteral("current_version")).toInteger(), version);
    QCOMPARE(object(path).value(QStringLiteral("version")).toInteger(), version);

    const qint64 seq = lastSeq();
    QJsonObject withReason = body;
    withReason.insert(QStringLiteral("reason"), QStringLiteral("row %1").arg(QString::fromLatin1(QTest::currentDataTag())));
    const Reply done = send(method, action, withReason, {{QByteArray("If-Match"), '"' + QByteArray::number(version) + '"'}});
    QVERIFY2(done.status == 200, done.body.constData());
    QCOMPARE(done.header("ETag"), '"' + QByteArray::number(version + 1) + '"');
    QJsonObject answer = done.json();
    QCOMPARE(answer.value(stateField).toString(), to);
    QCOMPARE(answer.value(QStringLiteral("version")).toInteger(), version + 1);
    for (const QString &key : std::as_const(extra)) {
        QVERIFY2(answer.contains(key), qPrintable(key));
        answer.remove(key);
    }
    QJsonObject stored = object(path);
    stored.remove(QStringLiteral("attempt_log")); // a delivery's GET adds its attempts
    QCOMPARE(answer, stored);

    const QJsonArray audit = auditOf(kind, id);
    QCOMPARE(audit.size(), auditRows + 1);
    const QJsonObject row = audit.last().toObject();
    const QStringList expected =
        audited.isEmpty() ? QStringList{route.isEmpty() ? QStringLiteral("delete") : route.mid(1), from, to} : audited;
    const auto state = [](const QString &name) { return name.isEmpty() ? QJsonValue() : QJsonValue(name); };
    QCOMPARE(row.value(QStringLiteral("action")).toString(), expected.at(0));
    QCOMPARE(row.value(QStringLiteral("from")), state(expected.at(1)));
    QCOMPARE(row.value(QStringLiteral("to")), state(expected.at(2)));
    QCOMPARE(row.value(QStringLiteral("reason")).toString(), withReason.value(QStringLiteral("reason")).toString());

    const QJsonArray events = eventsOf(seq, kind, id);
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first()[QStringLiteral("version")].toInteger(), version + 1);
    QCOMPARE(events.first()[QStringLiteral("op")].toString(), op);
    QCOMPARE(events.first()[QStringLiteral("object")].toObject(), stored);

    const Reply again = send(method, action, body);
    QVERIFY2(again.status == repeatStatus, again.body.constData());
    if (repeatStatus != 409)
        return;
    QCOMPARE(again.code(), QStringLiteral("invalid-transition"));
    QCOMPARE(again.json().value(QStringLiteral("state")).toString(), to);
    QVERIFY(again.json().value(QStringLiteral("allowed")).isArray());
    // A refusal writes nothing.
    QCOMPARE(auditOf(kind, id).size(), auditRows + 1);
    QCOMPARE(eventsOf(seq, kind, id).size(), 1);
    QCOMPARE(object(path).value(QStringLiteral("version")).toInteger(), version + 1);
}

void tst_Transitions::refusalNamesRoutes()
{
    // The machine leaves DISABLED by "enable", which the API serves as POST /resume.
    const QString path = arrange(QStringLiteral("disabled endpoint"));
    QVERIFY(!path.isEmpty());
    const Reply r = send("POST", path + QStringLiteral("/pause"), {});
    QVERIFY2(r.status == 409, r.body.constData());
    QCOMPARE(r.code(), QStringLiteral("invalid-transition"));
    QCOMPARE(r.json().value(QStringLiteral("allowed")).toArray(), QJsonArray{QStringLiteral("resume")});
    QCOMPARE(r.json().value(QStringLiteral("state")).toString(), QStringLiteral("DISABLED"));
    const QString detail = r.json().value(QStringLiteral("detail")).toString();
    QVERIFY2(detail.endsWith(QLatin1String("allowed: resume")) && !detail.contains(QLatin1String("enable")), qPrintable(detail));
}

void tst_Transitions::registerAsksForItsTarget()
{
    // The machine is asked for the target the body names, so a refusal speaks of it.
    const qint64 id = registeredInstance();
    QVERIFY(id > 0);
    const Reply r = send("POST", QStringLiteral("/api/v1/instances/%1/register").arg(id),
                         {{QStringLiteral("callback_url"), Nowhere}, {QStringLiteral("status"), QStringLiteral("STOPPED")}});
    QVERIFY2(r.status == 409, r.body.constData());
    QCOMPARE(r.code(), QStringLiteral("invalid-transition"));
    QCOMPARE(r.json().value(QStringLiteral("state")).toString(), QStringLiteral("RUNNING"));
    const QString detail = r.json().value(QStringLiteral("detail")).toString();
    QVERIFY2(detail.contains(QLatin1String("in state RUNNING as STOPPED")), qPrintable(detail));
}

QString tst_Transitions::execAll(const QStringList &statements)
{
    Database &db = m_server->controlPlane().database();
    for (const QString &sql : statements) {
        Problem problem;
        if (!db.exec(sql, &problem))
            return sql + QStringLiteral(": ") + problem.detail;
    }
    return {};
}

void tst_Transitions::storageFailure_data()
{
    QTest::addColumn<QString>("start");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QString>("route");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("table");
    QTest::addColumn<bool>("atCommit"); // the kind's UPDATE fails, or everything goes through until COMMIT

    const struct
    {
        const char *name;
        const char *start;
        QByteArray method;
        QString route;
        QString kind;
        QString table;
    } kinds[] = {
        {"organization delete", "available organization", "DELETE", QString(), QStringLiteral("organization"),
         QStringLiteral("organizations")},
        {"instance stop", "pending instance", "POST", QStringLiteral("/stop"), QStringLiteral("instance"), QStringLiteral("instances")},
        {"delivery cancel", "pending delivery", "POST", QStringLiteral("/cancel"), QStringLiteral("delivery"),
         QStringLiteral("deliveries")},
        {"endpoint pause", "active endpoint", "POST", QStringLiteral("/pause"), QStringLiteral("endpoint"), QStringLiteral("endpoints")},
        {"instance rotate-secret", "registered instance", "POST", QStringLiteral("/rotate-secret"), QStringLiteral("instance"),
         QStringLiteral("instances")},
    };
    for (const auto &k : kinds) {
        for (const bool atCommit : {false, true}) {
            QTest::addRow("%s, %s", k.name, atCommit ? "commit fails" : "update fails")
                << QString::fromLatin1(k.start) << k.method << k.route << k.kind << k.table << atCommit;
        }
    }
}

void tst_Transitions::storageFailure()
{
    QFETCH(QString, start);
    QFETCH(QByteArray, method);
    QFETCH(QString, route);
    QFETCH(QString, kind);
    QFETCH(QString, table);
    QFETCH(bool, atCommit);

    const QString path = arrange(start);
    QVERIFY2(!path.isEmpty(), qPrintable(start));
    const QJsonObject before = object(path);
    const qint64 id = path.section(QLatin1Char('/'), -1).toLongLong();
    const qsizetype auditRows = auditOf(kind, id).size();
    const qint64 seq = lastSeq();

    // A failed UPDATE is no concurrent change (412). A failed COMMIT is refused by a deferred check:
    // on PostgreSQL as a serialization failure (which running the request again may cure), on
    // SQLite as a foreign key.
    const bool postgres = m_server->testDatabase().isPostgres();
    QStringList create;
    QStringList drop;
    if (postgres) {
        const QString raise = atCommit ? QStringLiteral("RAISE EXCEPTION 'commit refused' USING ERRCODE = 'serialization_failure'")
                                       : QStringLiteral("RAISE EXCEPTION 'update refused'");
        create = {QStringLiteral("CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN %1; END $$").arg(raise),
                  atCommit ? QStringLiteral("CREATE CONSTRAINT TRIGGER refuse AFTER UPDATE ON %1 DEFERRABLE INITIALLY DEFERRED"
                                            " FOR EACH ROW EXECUTE FUNCTION refuse()").arg(table)
                           : QStringLiteral("CREATE TRIGGER refuse BEFORE UPDATE ON %1 FOR EACH ROW EXECUTE FUNCTION refuse()").arg(table)};
        drop = {QStringLiteral("DROP TRIGGER refuse ON %1").arg(table), QStringLiteral("DROP FUNCTION refuse()")};
    } else if (atCommit) {
        create = {QStringLiteral("CREATE TABLE refuse (ref INTEGER REFERENCES %1 (id) DEFERRABLE INITIALLY DEFERRED)").arg(table),
                  QStringLiteral("CREATE TRIGGER refuse AFTER UPDATE ON %1 BEGIN INSERT INTO refuse (ref) VALUES (-1); END").arg(table)};
        drop = {QStringLiteral("DROP TRIGGER refuse"), QStringLiteral("DROP TABLE refuse")};
    } else {
        create = {QStringLiteral("CREATE TRIGGER refuse BEFORE UPDATE ON %1 BEGIN SELECT RAISE(ABORT, 'update refused'); END").arg(table)};
        drop = {QStringLiteral("DROP TRIGGER refuse")};
    }
    const QString created = execAll(create);
    QVERIFY2(created.isEmpty(), qPrintable(created));
    auto restore = qScopeGuard([this, &drop] { execAll(drop); });
    const Reply r = send(method, path + route, {});
    restore.dismiss();
    const QString dropped = execAll(drop);
    QVERIFY2(dropped.isEmpty(), qPrintable(dropped));

    const QString detail = r.json().value(QStringLiteral("detail")).toString();
    if (atCommit && postgres) {
        // The storage's own answer: a conflict the server ran again, then asks the client to retry.
        QVERIFY2(r.status == 503, r.body.constData());
        QCOMPARE(r.code(), QString::fromLatin1(Database::ConflictCode));
        QCOMPARE(r.header("Retry-After"), QByteArray("1"));
        QCOMPARE(r.json().value(QStringLiteral("sqlstate")).toString(), QStringLiteral("40001"));
    } else {
        QVERIFY2(r.status == 500, r.body.constData());
        QCOMPARE(r.code(), QStringLiteral("internal"));
        const QLatin1String cause = atCommit ? QLatin1String("FOREIGN KEY") : QLatin1String("update refused");
        QVERIFY2(detail.startsWith(QLatin1String("storage: ")) && detail.contains(cause), qPrintable(detail));
    }

    // Nothing of the refused change was kept.
    QJsonObject now = object(path);
    QJsonObject then = before;
    now.remove(QStringLiteral("attempt_log"));
    then.remove(QStringLiteral("attempt_log"));
    QCOMPARE(now, then);
    QCOMPARE(auditOf(kind, id).size(), auditRows);
    QCOMPARE(eventsOf(seq, kind, id).size(), 0);
}

QTEST_GUILESS_MAIN(tst_Transitions)
#include "tst_transitions.moc"
