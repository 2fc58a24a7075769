// What the sync engine's and the cache's tests share: a seeded server, an engine set up for quick
// tests, a damaged cache file.
#include "syncfixture.h"

#include "testserver.h"

#include "models/apiclient.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include <QFile>
#include <QTest>

namespace OpsDeck::Test {

Seed seed(TestServer &server, int count)
{
    Seed s;
    s.organization = server.createOrganization(QStringLiteral("acme"));
    s.provider = server.createProvider(QStringLiteral("acme-apps"), s.organization, {QStringLiteral("wiki")});
    for (int i = 1; i <= count; ++i)
        s.instances << server.createInstance(QStringLiteral("wiki-%1").arg(i), s.organization, s.provider,
                                             QStringLiteral("wiki"), QStringLiteral("alice"));
    return s;
}

QString statusOf(SyncEngine &engine, qint64 id)
{
    ResourceModel *m = engine.model(QStringLiteral("instances"));
    return m->objectById(id).value(QStringLiteral("status")).toString();
}

void configure(ApiClient &client, SyncEngine &engine, const QUrl &url, const QString &token)
{
    client.setBaseUrl(url);
    client.setToken(token);
    client.setRetryPolicy(0, 10, 50);
    client.setTimeout(5000);
    engine.setBackoff(20, 200);
    engine.setPageSize(10);
    engine.setLongPollWait(2);
}

void breakFreelistCount(const QString &path)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QVERIFY(file.seek(36));
    const char count[4] = {0, 0, 0, 7};
    QCOMPARE(file.write(count, 4), qint64(4));
}

} // namespace OpsDeck::Test
