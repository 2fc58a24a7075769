// Tests for the sync engine's listing and cache against a real control plane: pages, priority, damage, resume, 410.
#include "models/syncengine.h"

#include "models/apiclient.h"
#include "models/cache.h"
#include "syncfixture.h"
#include "testserver.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTest>

#include <numeric>
#include <utility>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

using State = ConnectionStatus::State;


// The console's sync parts on the cache file at `path`, pointed at `server`.
struct CachedConsole
{
    CachedConsole(TestServer &server, const QString &path)
        : cache(path)
        , engine(&client, &cache)
    {
        configure(client, engine, server.baseUrl(), server.operatorToken());
    }

    Cache cache;
    ApiClient client;
    SyncEngine engine;
};

// A first run of the console against `server`: everything listed into the cache at `path`, the
// feed followed until the engine is live when `untilLive`. The caller checks currentTestFailed().
void syncIntoCache(TestServer &server, const QString &path, bool untilLive = false)
{
    CachedConsole console(server, path);
    SyncEngine &engine = console.engine;
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(synced.count(), 1);
    if (untilLive)
        QTRY_COMPARE(engine.status()->state(), State::Live);
    engine.stop();
    // The cache, gone on return, finishes its queued writes before closing.
}

// A cache file holding `rows` of instances and no cursor, written before any server is asked.
void storeInCache(const QString &path, const QList<QJsonObject> &rows)
{
    Cache cache(path);
    QSignalSpy opened(&cache, &Cache::opened);
    cache.open();
    QVERIFY(opened.wait());
    cache.store(QStringLiteral("instances"), rows);
}

} // namespace

class tst_SyncEngine final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void initialListInPages();
    void relistWhileListingStartsOver();
    void priorityKindFirst_data();
    void priorityKindFirst();
    void damageFoundAfterCachedRowsRelists();
    void firstCachedScreenfulShownOnItsOwn();
    void resumeFromCachedCursor();
    void goneCursorRelists();
    void vanishedRowsDropped();
};

void tst_SyncEngine::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_SyncEngine::initialListInPages()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 25);
    QCOMPARE(s.instances.size(), 25);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    QSignalSpy listed(&engine, &SyncEngine::listed);
    QSignalSpy progress(&engine, &SyncEngine::listProgress);
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(synced.count(), 1);
    QTRY_COMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 25);
    QList<int> instancePages;
    for (const auto &args : progress) {
        if (args.at(0).toString() == QLatin1String("instances"))
            instancePages << args.at(1).toInt();
    }
    QCOMPARE(instancePages, (QList<int>{10, 20, 25})); // pages of 10
    QCOMPARE(engine.model(QStringLiteral("organizations"))->rowCount(), 1);
    QCOMPARE(engine.model(QStringLiteral("providers"))->rowCount(), 1);
    bool sawInstances = false;
    for (const auto &args : listed) {
        if (args.at(0).toString() == QLatin1String("instances")) {
            sawInstances = true;
            QCOMPARE(args.at(1).toInt(), 25);
        }
    }
    QVERIFY(sawInstances);
    QTRY_COMPARE(engine.status()->state(), State::Live);
    QVERIFY(engine.status()->lastSync().isValid());
    QCOMPARE(statusOf(engine, s.instances.first()), QStringLiteral("PENDING"));
    // References resolve through the providers model.
    ResourceModel *instances = engine.model(QStringLiteral("instances"));
    const int providerColumn = instances->kind().fieldIndex(u"provider_id");
    QCOMPARE(instances->index(0, providerColumn).data().toString(), QStringLiteral("acme-apps"));
}

void tst_SyncEngine::relistWhileListingStartsOver()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 45);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    engine.setKinds({QStringLiteral("instances")});
    // Pages of the first listing that were read ahead must not land in the second one.
    QList<int> progress;
    bool relisted = false;
    connect(&engine, &SyncEngine::listProgress, &engine, [&](const QString &, int rows) {
        progress << rows;
        if (!std::exchange(relisted, true))
            engine.relist(QStringLiteral("test"));
    });
    QSignalSpy listed(&engine, &SyncEngine::listed);
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(synced.count(), 1);
    QCOMPARE(progress, (QList<int>{10, 10, 20, 30, 40, 45}));
    QCOMPARE(listed.count(), 1);
    QCOMPARE(listed.first().at(1).toInt(), 45);
    QCOMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 45);
}

void tst_SyncEngine::priorityKindFirst_data()
{
    QTest::addColumn<QString>("priority");
    QTest::addColumn<QString>("first");
    QTest::newRow("default: instances") << QString() << QStringLiteral("instances");
    QTest::newRow("providers") << QStringLiteral("providers") << QStringLiteral("providers");
}

void tst_SyncEngine::priorityKindFirst()
{
    QFETCH(QString, priority);
    QFETCH(QString, first);
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 3);
    const QString path = Test::scratchDir() + QStringLiteral("/priority-%1.sqlite").arg(first);
    QStringList loadOrder;
    QStringList listOrder;
    for (int pass = 0; pass < 2; ++pass) {
        CachedConsole console(server, path);
        Cache &cache = console.cache;
        SyncEngine &engine = console.engine;
        engine.setKinds({QStringLiteral("organizations"), QStringLiteral("providers"), QStringLiteral("instances")});
        if (!priority.isEmpty())
            engine.setPriorityKind(priority);
        connect(&cache, &Cache::rowsLoaded, &engine, [&loadOrder](const QString &kind, const QList<QJsonObject> &, bool last) {
            if (last)
                loadOrder << kind;
        });
        connect(&engine, &SyncEngine::listed, &engine, [&listOrder](const QString &kind) { listOrder << kind; });
        QSignalSpy synced(&engine, &SyncEngine::synced);
        engine.start();
        if (pass == 0) {
            QTRY_COMPARE(synced.count(), 1);
            QCOMPARE(listOrder.size(), 3);
            QCOMPARE(listOrder.first(), first);
        } else {
            // Second start: from the cache, the kind on screen first.
            QTRY_COMPARE(loadOrder.size(), 6);
            QCOMPARE(loadOrder.at(3), first);
            QTRY_COMPARE(engine.status()->state(), State::Live);
        }
        QCOMPARE(loadOrder.first(), first);
    }
}

void tst_SyncEngine::damageFoundAfterCachedRowsRelists()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 5);
    const QString path = Test::scratchDir() + QStringLiteral("/damaged.sqlite");
    syncIntoCache(server, path);
    if (QTest::currentTestFailed())
        return;
    breakFreelistCount(path);
    if (QTest::currentTestFailed())
        return;

    {
        CachedConsole console(server, path);
        Cache &cache = console.cache;
        SyncEngine &engine = console.engine;
        QSignalSpy rebuilt(&cache, &Cache::cacheRebuilt);
        QSignalSpy relisting(&engine, &SyncEngine::relisting);
        QSignalSpy synced(&engine, &SyncEngine::synced);
        QList<int> rowsWhenRebuilt;
        connect(&cache, &Cache::cacheRebuilt, &engine, [&rowsWhenRebuilt, &engine] {
            ResourceModel *instances = engine.model(QStringLiteral("instances"));
            instances->flush(); // rows handed over but not yet shown count as shown
            rowsWhenRebuilt << instances->rowCount();
        });
        engine.start();
        // The cached rows were shown before the check found the damage; then everything is listed
        // again into a fresh file.
        QTRY_COMPARE(rebuilt.count(), 1);
        QVERIFY2(rebuilt.first().first().toString().contains(QStringLiteral("damaged")),
                 qPrintable(rebuilt.first().first().toString()));
        QCOMPARE(rowsWhenRebuilt, QList<int>{5});
        QTRY_COMPARE(relisting.count(), 1);
        QTRY_COMPARE(synced.count(), 1);
        QCOMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 5);
        QTRY_COMPARE(engine.status()->state(), State::Live);
        const QFileInfo info(path);
        QCOMPARE(QDir(info.absolutePath()).entryList({info.fileName() + QStringLiteral(".corrupt-*")}, QDir::Files).size(), 1);
        engine.stop();
    } // the cache finishes its queued writes before closing
    // The fresh file holds the relisted rows.
    Cache again(path);
    QSignalSpy loaded(&again, &Cache::rowsLoaded);
    again.open();
    again.load(QStringLiteral("instances"));
    QTRY_VERIFY(!loaded.isEmpty() && loaded.last().at(2).toBool());
    int rows = 0;
    for (const auto &args : loaded)
        rows += int(args.at(1).value<QList<QJsonObject>>().size());
    QCOMPARE(rows, s.instances.size());
}

void tst_SyncEngine::firstCachedScreenfulShownOnItsOwn()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const QString path = Test::scratchDir() + QStringLiteral("/screenful.sqlite");
    QList<QJsonObject> rows;
    for (int id = 1; id <= 1200; ++id)
        rows << QJsonObject{{QStringLiteral("id"), id}, {QStringLiteral("version"), 1},
                            {QStringLiteral("name"), QStringLiteral("cached-%1").arg(id)}};
    storeInCache(path, rows);
    if (QTest::currentTestFailed())
        return;
    CachedConsole console(server, path);
    SyncEngine &engine = console.engine;
    ResourceModel *instances = engine.model(QStringLiteral("instances"));
    QList<int> inserted;
    connect(instances, &QAbstractItemModel::rowsInserted, &engine,
            [&inserted](const QModelIndex &, int first, int last) { inserted << last - first + 1; });
    QSignalSpy listed(&engine, &SyncEngine::listed);
    engine.start();
    QTRY_VERIFY(!listed.isEmpty());
    // The first chunk (500) goes in at once and alone; the rest follows in a later turn.
    QVERIFY(inserted.size() >= 2);
    QCOMPARE(inserted.first(), 500);
    QCOMPARE(std::accumulate(inserted.cbegin(), inserted.cend(), 0), 1200);
    // The server holds none of them: the listing dropped them.
    QTRY_COMPARE(instances->rowCount(), 0);
}

void tst_SyncEngine::resumeFromCachedCursor()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 5);
    const QString path = Test::scratchDir() + QStringLiteral("/resume.sqlite");
    syncIntoCache(server, path, true);
    if (QTest::currentTestFailed())
        return;
    // Changes while the console is closed.
    const qint64 created = server.createInstance(QStringLiteral("late"), s.organization, s.provider,
                                                 QStringLiteral("wiki"), QStringLiteral("carol"));
    server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(s.instances.first()),
                {{QStringLiteral("reason"), QStringLiteral("t")}}, server.operatorToken());

    CachedConsole console(server, path);
    SyncEngine &engine = console.engine;
    QSignalSpy listed(&engine, &SyncEngine::listed);
    engine.start();
    // The cached rows come first, then the feed catches up from the stored cursor: no listing.
    QTRY_VERIFY(engine.model(QStringLiteral("instances"))->rowCount() >= 5);
    QTRY_VERIFY(engine.model(QStringLiteral("instances"))->rowOfId(created) >= 0);
    QTRY_COMPARE(statusOf(engine, s.instances.first()), QStringLiteral("STOPPED"));
    QCOMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 6);
    QCOMPARE(listed.count(), 0);
    QCOMPARE(engine.status()->state(), State::Live);
}

void tst_SyncEngine::goneCursorRelists()
{
    ServerOptions options;
    options.feedRetention = 3;
    Test::TestServer server(options);
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 2);
    const QString path = Test::scratchDir() + QStringLiteral("/gone.sqlite");
    syncIntoCache(server, path);
    if (QTest::currentTestFailed())
        return;
    // More changes than the feed keeps: the stored cursor falls out of it.
    QList<qint64> more;
    for (int i = 0; i < 8; ++i)
        more << server.createInstance(QStringLiteral("more-%1").arg(i), s.organization, s.provider,
                                      QStringLiteral("wiki"), QStringLiteral("dave"));
    CachedConsole console(server, path);
    SyncEngine &engine = console.engine;
    QSignalSpy relisting(&engine, &SyncEngine::relisting);
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(relisting.count(), 1);
    QTRY_COMPARE(synced.count(), 1);
    QTRY_COMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 10);
    for (qint64 id : more)
        QVERIFY(engine.model(QStringLiteral("instances"))->rowOfId(id) >= 0);
    QTRY_COMPARE(engine.status()->state(), State::Live);
}

void tst_SyncEngine::vanishedRowsDropped()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 2);
    const QString path = Test::scratchDir() + QStringLiteral("/vanished.sqlite");
    // A cache holding a row the server does not have, and no cursor: a full list follows.
    storeInCache(path, {QJsonObject{{QStringLiteral("id"), 424242},
                                    {QStringLiteral("name"), QStringLiteral("ghost")},
                                    {QStringLiteral("status"), QStringLiteral("RUNNING")},
                                    {QStringLiteral("version"), 1}}});
    if (QTest::currentTestFailed())
        return;
    CachedConsole console(server, path);
    SyncEngine &engine = console.engine;
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(synced.count(), 1);
    ResourceModel *instances = engine.model(QStringLiteral("instances"));
    QTRY_COMPARE(instances->rowOfId(424242), -1);
    QTRY_COMPARE(instances->rowCount(), 2);
    QVERIFY(instances->rowOfId(s.instances.first()) >= 0);
}

QTEST_GUILESS_MAIN(tst_SyncEngine)
#include "tst_syncengine.moc"
