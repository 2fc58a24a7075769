// What the sync engine's and the cache's tests share: a seeded server, an engine set up for quick
// tests, a damaged cache file.
#pragma once

#include <QList>
#include <QString>
#include <QUrl>

namespace OpsDeck {
class ApiClient;
class SyncEngine;
}

namespace OpsDeck::Test {

class TestServer;

// An organization, a provider and `count` instances named wiki-1..wiki-N.
struct Seed
{
    qint64 organization = 0;
    qint64 provider = 0;
    QList<qint64> instances;
};

Seed seed(TestServer &server, int count);
// The status of instance `id` as the engine's instances model has it.
QString statusOf(SyncEngine &engine, qint64 id);
// Short retries, backoff and long-poll wait, small pages: tests see every path quickly.
void configure(ApiClient &client, SyncEngine &engine, const QUrl &url, const QString &token);
// A damage only the cache's full check sees: the header's free-page count no longer matches the
// free list (rows still read and write). The caller checks QTest::currentTestFailed().
void breakFreelistCount(const QString &path);

} // namespace OpsDeck::Test
