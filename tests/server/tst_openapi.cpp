// The OpenAPI document: it parses, and its paths and methods are exactly the router's routes.
#include "testserver.h"

#include "server/http/router.h"

#include <QSet>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_OpenApi : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void documentParses();
    void everyRouteIsDocumented();
    void everyDocumentedOperationExists();
    void referencesResolve();
    void answersHoldOnlyDocumentedMembers();

private:
    // Every member of `object` (and of each object in its arrays that the schema refers to) is a
    // property of the named schema; the first that is not, or empty.
    QString undocumented(const QJsonObject &object, const QString &schema) const;
    std::unique_ptr<TestServer> m_server;
    QJsonObject m_doc;
};

void tst_OpenApi::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    m_server = std::make_unique<TestServer>();
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    const Reply r = m_server->get(QStringLiteral("/api/v1/openapi.json"), {});
    QCOMPARE(r.status, 200);
    QJsonParseError err{};
    m_doc = QJsonDocument::fromJson(r.body, &err).object();
    QCOMPARE(err.error, QJsonParseError::NoError);
}

void tst_OpenApi::cleanupTestCase()
{
    m_server.reset();
}

void tst_OpenApi::documentParses()
{
    QVERIFY(m_doc.value(QStringLiteral("openapi")).toString().startsWith(QLatin1String("3.0.")));
    QVERIFY(!m_doc.value(QStringLiteral("info")).toObject().value(QStringLiteral("title")).toString().isEmpty());
    QVERIFY(m_doc.value(QStringLiteral("paths")).toObject().size() > 10);
    QSet<QString> operationIds;
    const QJsonObject paths = m_doc.value(QStringLiteral("paths")).toObject();
    for (auto it = paths.begin(); it != paths.end(); ++it) {
        const QJsonObject item = it.value().toObject();
        for (auto op = item.begin(); op != item.end(); ++op) {
            const QJsonObject o = op.value().toObject();
            QVERIFY2(!o.value(QStringLiteral("responses")).toObject().isEmpty(), qPrintable(it.key()));
            const QString id = o.value(QStringLiteral("operationId")).toString();
            QVERIFY2(!operationIds.contains(id), qPrintable(id));
            operationIds.insert(id);
        }
    }
}

void tst_OpenApi::everyRouteIsDocumented()
{
    const QJsonObject paths = m_doc.value(QStringLiteral("paths")).toObject();
    QStringList missing;
    for (const Route &route : m_server->controlPlane().router().routes()) {
        const QJsonObject item = paths.value(route.pattern).toObject();
        if (!item.contains(QString::fromLatin1(route.method).toLower()))
            missing.append(QString::fromLatin1(route.method) + QLatin1Char(' ') + route.pattern);
    }
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("undocumented routes: ") + missing.join(QStringLiteral(", "))));
}

void tst_OpenApi::everyDocumentedOperationExists()
{
    QSet<QString> routes;
    for (const Route &route : m_server->controlPlane().router().routes())
        routes.insert(QString::fromLatin1(route.method).toLower() + QLatin1Char(' ') + route.pattern);
    const QJsonObject paths = m_doc.value(QStringLiteral("paths")).toObject();
    QStringList extra;
    for (auto it = paths.begin(); it != paths.end(); ++it) {
        const QJsonObject item = it.value().toObject();
        for (auto op = item.begin(); op != item.end(); ++op) {
            if (!routes.contains(op.key() + QLatin1Char(' ') + it.key()))
                extra.append(op.key() + QLatin1Char(' ') + it.key());
        }
    }
    QVERIFY2(extra.isEmpty(), qPrintable(QStringLiteral("documented but not routed: ") + extra.join(QStringLiteral(", "))));
}

void tst_OpenApi::referencesResolve()
{
    const QJsonObject schemas = m_doc.value(QStringLiteral("components")).toObject().value(QStringLiteral("schemas")).toObject();
    const QByteArray text = QJsonDocument(m_doc).toJson(QJsonDocument::Compact);
    qsizetype at = 0;
    int checked = 0;
    const QByteArray marker = "\"#/components/schemas/";
    while ((at = text.indexOf(marker, at)) >= 0) {
        at += marker.size();
        const QString name = QString::fromUtf8(text.mid(at, text.indexOf('"', at) - at));
        QVERIFY2(schemas.contains(name), qPrintable(name));
        ++checked;
    }
    QVERIFY(checked > 20);
}

QString tst_OpenApi::undocumented(const QJsonObject &object, const QString &schema) const
{
    const QJsonObject schemas = m_doc.value(QStringLiteral("components")).toObject().value(QStringLiteral("schemas")).toObject();
    const QJsonObject properties = schemas.value(schema).toObject().value(QStringLiteral("properties")).toObject();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (!properties.contains(it.key()))
            return schema + QLatin1Char('.') + it.key();
        const QString items = properties.value(it.key()).toObject().value(QStringLiteral("items")).toObject().value(QStringLiteral("$ref")).toString();
        if (items.isEmpty() || !it.value().isArray())
            continue;
        for (const QJsonValue &v : it.value().toArray()) {
            const QString inner = undocumented(v.toObject(), items.section(QLatin1Char('/'), -1));
            if (!inner.isEmpty())
                return inner;
        }
    }
    return {};
}

void tst_OpenApi::answersHoldOnlyDocumentedMembers()
{
    // What the server answers is in its schema: a client generated from the document sees every
    // member it gets. A delivery with its attempt log, a rotation's answer, who am I, a bulk retry.
    const QString op = m_server->operatorToken();
    qint64 org = 0;
    qint64 provider = 0;
    QVERIFY(m_server->createAcmeAndCrm(&org, &provider));
    const qint64 instance = m_server->createInstance(QStringLiteral("documented"), org, provider, QStringLiteral("crm"),
                                                     QStringLiteral("alice"));
    QVERIFY(!m_server->registerInstance(instance).isEmpty());
    const QJsonArray deliveries = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), op).items();
    QVERIFY(!deliveries.isEmpty());
    const qint64 delivery = deliveries.first().toObject().value(QStringLiteral("id")).toInteger();
    // Its first attempt (nothing listens there) is logged.
    QTRY_VERIFY(!m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(delivery), op).json().value(QStringLiteral("attempt_log")).toArray().isEmpty());
    const QJsonObject withLog = m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(delivery), op).json();
    QCOMPARE(undocumented(withLog, QStringLiteral("Delivery")), QString());
    const Reply rotated = m_server->post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(instance), {}, op);
    QCOMPARE(rotated.status, 200);
    QCOMPARE(undocumented(rotated.json(), QStringLiteral("Instance")), QString());
    QCOMPARE(undocumented(m_server->get(QStringLiteral("/api/v1/whoami"), op).json(), QStringLiteral("Whoami")), QString());
    const Reply counted = m_server->post(QStringLiteral("/api/v1/deliveries/retry?dry_run=true"), {}, op);
    QCOMPARE(counted.status, 200);
    QCOMPARE(undocumented(counted.json(), QStringLiteral("BulkRetryResult")), QString());
    const Reply retried = m_server->post(QStringLiteral("/api/v1/deliveries/retry"),
                                         {{QStringLiteral("instance"), instance}, {QStringLiteral("reason"), QStringLiteral("documented")}}, op);
    QCOMPARE(retried.status, 200);
    QCOMPARE(undocumented(retried.json(), QStringLiteral("BulkRetryResult")), QString());
}

QTEST_GUILESS_MAIN(tst_OpenApi)
#include "tst_openapi.moc"
