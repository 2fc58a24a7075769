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

private:
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

QTEST_GUILESS_MAIN(tst_OpenApi)
#include "tst_openapi.moc"
