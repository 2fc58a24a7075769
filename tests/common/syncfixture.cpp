// What the sync engine's tests share: a seeded server and an engine set up for quick tests.
#include "syncfixture.h"

#include "testserver.h"

#include "models/apiclient.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

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

} // namespace OpsDeck::Test
