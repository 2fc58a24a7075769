// Tests for the sync engine against a real control plane: list, live feed, fallback, resume, 410, outages.
#include "models/syncengine.h"

#include "models/apiclient.h"
#include "models/cache.h"
#include "server/controlplane.h"
#include "testserver.h"
#include "testsupport.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QJsonDocument>
#include <QCryptographicHash>
#include <QDir>
#include <QRegularExpression>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <memory>
#include <numeric>

using namespace OpsDeck;

namespace {

using State = ConnectionStatus::State;
using Transport = ConnectionStatus::Transport;

// An organization, a provider and `count` instances named wiki-1..wiki-N.
struct Seed
{
    qint64 organization = 0;
    qint64 provider = 0;
    QList<qint64> instances;
};

Seed seed(Test::TestServer &server, int count)
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

// A control plane on a database of its own that can be stopped and started again at the same
// address, as a restarted server is.
class RestartablePlane
{
public:
    // The first start picks a port; later ones listen on it again.
    bool start()
    {
        if (!m_db.isValid())
            return false;
        m_options.databaseUrl = m_db.url();
        m_plane = std::make_unique<ControlPlane>(m_options);
        if (!m_plane->start())
            return false;
        m_options.port = m_plane->port();
        if (m_token.isEmpty())
            m_token = m_plane->createToken(QStringLiteral("operator"), {});
        return !m_token.isEmpty();
    }
    void stop()
    {
        m_plane->stop();
        m_plane.reset();
    }
    QString error() const { return m_db.error(); }
    QUrl baseUrl() const { return m_plane->baseUrl(); }
    QString token() const { return m_token; }

private:
    Test::TestDatabase m_db;
    ServerOptions m_options;
    std::unique_ptr<ControlPlane> m_plane;
    QString m_token;
};

// A damage only the cache's full check sees (the header's free-page count is wrong).
void breakFreelistCount(const QString &path)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadWrite));
    QVERIFY(file.seek(36));
    const char count[4] = {0, 0, 0, 7};
    QCOMPARE(file.write(count, 4), qint64(4));
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
    void liveChangesOverWebSocket();
    void longPollFallback();
    void resumeFromCachedCursor();
    void goneCursorRelists();
    void vanishedRowsDropped();
    void serverStoppedThenBack();
    void restartedServerLiveWithinTheDefaultCap();
    void badTokenIsAProblem();
    void listingRefusedReachesTheUser();
    void mutationAnswersApplyAtOnce();
    void silentPeerTakenForDead();
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
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
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
    {
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
        QSignalSpy synced(&engine, &SyncEngine::synced);
        engine.start();
        QTRY_COMPARE(synced.count(), 1);
        engine.stop();
    }
    breakFreelistCount(path);
    if (QTest::currentTestFailed())
        return;

    {
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
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
    {
        Cache cache(path);
        QSignalSpy opened(&cache, &Cache::opened);
        cache.open();
        QVERIFY(opened.wait());
        QList<QJsonObject> rows;
        for (int id = 1; id <= 1200; ++id)
            rows << QJsonObject{{QStringLiteral("id"), id}, {QStringLiteral("version"), 1},
                                {QStringLiteral("name"), QStringLiteral("cached-%1").arg(id)}};
        cache.store(QStringLiteral("instances"), rows);
    }
    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, server.baseUrl(), server.operatorToken());
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

void tst_SyncEngine::liveChangesOverWebSocket()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 3);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    QCOMPARE(engine.status()->transport(), Transport::WebSocket);
    QSignalSpy applied(&engine, &SyncEngine::eventsApplied);
    const qint64 created = server.createInstance(QStringLiteral("crm-1"), s.organization, s.provider,
                                                 QStringLiteral("wiki"), QStringLiteral("bob"));
    QTRY_VERIFY(engine.model(QStringLiteral("instances"))->rowOfId(created) >= 0);
    const auto stopped = server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(s.instances.at(1)),
                                     {{QStringLiteral("reason"), QStringLiteral("test")}}, server.operatorToken());
    QCOMPARE(stopped.status, 200);
    QTRY_COMPARE(statusOf(engine, s.instances.at(1)), QStringLiteral("STOPPED"));
    QVERIFY(!applied.isEmpty());
    QVERIFY(engine.cursor() > 0);
    // Audit entries have no feed events of their own: they follow the events that caused them.
    ResourceModel *audit = engine.model(QStringLiteral("audit"));
    auto auditShowsStop = [&] {
        const QList<qint64> ids = audit->ids();
        return std::any_of(ids.cbegin(), ids.cend(), [&](qint64 id) {
            const QJsonObject entry = audit->objectById(id);
            return entry.value(QStringLiteral("object_id")).toInteger() == s.instances.at(1)
                && entry.value(QStringLiteral("to")).toString() == QLatin1String("STOPPED");
        });
    };
    auto auditText = [&] {
        QStringList lines;
        for (qint64 id : audit->ids())
            lines << QString::fromUtf8(QJsonDocument(audit->objectById(id)).toJson(QJsonDocument::Compact));
        return lines.join(u'\n');
    };
    QTRY_VERIFY2(auditShowsStop(), qPrintable(auditText()));
    QCOMPARE(engine.status()->transport(), Transport::WebSocket);
}

void tst_SyncEngine::longPollFallback()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 2);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    engine.setWebSocketEnabled(false);
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    QCOMPARE(engine.status()->transport(), Transport::LongPoll);
    const qint64 created = server.createInstance(QStringLiteral("crm-1"), s.organization, s.provider,
                                                 QStringLiteral("wiki"), QStringLiteral("bob"));
    QTRY_VERIFY(engine.model(QStringLiteral("instances"))->rowOfId(created) >= 0);
    server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(created), {{QStringLiteral("reason"), QStringLiteral("t")}},
                server.operatorToken());
    QTRY_COMPARE(statusOf(engine, created), QStringLiteral("STOPPED"));
}

void tst_SyncEngine::resumeFromCachedCursor()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 5);
    const QString path = Test::scratchDir() + QStringLiteral("/resume.sqlite");
    {
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
        QSignalSpy synced(&engine, &SyncEngine::synced);
        engine.start();
        QTRY_COMPARE(synced.count(), 1);
        QTRY_COMPARE(engine.status()->state(), State::Live);
        engine.stop();
    } // the cache finishes its queued writes before closing
    // Changes while the console is closed.
    const qint64 created = server.createInstance(QStringLiteral("late"), s.organization, s.provider,
                                                 QStringLiteral("wiki"), QStringLiteral("carol"));
    server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(s.instances.first()),
                {{QStringLiteral("reason"), QStringLiteral("t")}}, server.operatorToken());

    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, server.baseUrl(), server.operatorToken());
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
    {
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
        QSignalSpy synced(&engine, &SyncEngine::synced);
        engine.start();
        QTRY_COMPARE(synced.count(), 1);
        engine.stop();
    }
    // More changes than the feed keeps: the stored cursor falls out of it.
    QList<qint64> more;
    for (int i = 0; i < 8; ++i)
        more << server.createInstance(QStringLiteral("more-%1").arg(i), s.organization, s.provider,
                                      QStringLiteral("wiki"), QStringLiteral("dave"));
    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, server.baseUrl(), server.operatorToken());
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
    {
        // A cache holding a row the server does not have, and no cursor: a full list follows.
        Cache cache(path);
        QSignalSpy opened(&cache, &Cache::opened);
        cache.open();
        QVERIFY(opened.wait());
        cache.store(QStringLiteral("instances"), {QJsonObject{{QStringLiteral("id"), 424242},
                                                              {QStringLiteral("name"), QStringLiteral("ghost")},
                                                              {QStringLiteral("status"), QStringLiteral("RUNNING")},
                                                              {QStringLiteral("version"), 1}}});
    }
    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    QSignalSpy synced(&engine, &SyncEngine::synced);
    engine.start();
    QTRY_COMPARE(synced.count(), 1);
    ResourceModel *instances = engine.model(QStringLiteral("instances"));
    QTRY_COMPARE(instances->rowOfId(424242), -1);
    QTRY_COMPARE(instances->rowCount(), 2);
    QVERIFY(instances->rowOfId(s.instances.first()) >= 0);
}

void tst_SyncEngine::serverStoppedThenBack()
{
    RestartablePlane server;
    QVERIFY2(server.start(), qPrintable(server.error()));

    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.token());
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    const QDateTime liveAt = engine.status()->lastSync();

    server.stop();
    QTRY_COMPARE(engine.status()->state(), State::Reconnecting);
    QVERIFY(!engine.status()->lastError().isEmpty());
    QTRY_COMPARE(engine.status()->state(), State::Offline);
    QVERIFY(engine.status()->text().startsWith(QStringLiteral("Offline (data as of ")));
    QVERIFY(engine.status()->lastSync() >= liveAt);

    QVERIFY(server.start()); // the same address, the same database
    QTRY_COMPARE_WITH_TIMEOUT(engine.status()->state(), State::Live, 10000);
    // And the feed flows again.
    QNetworkAccessManager nam;
    QNetworkRequest request(QUrl(server.baseUrl().toString() + QStringLiteral("/api/v1/organizations")));
    request.setRawHeader("Authorization", "Bearer " + server.token().toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QNetworkReply *reply = nam.post(request, QByteArrayLiteral("{\"name\":\"after-restart\"}"));
    QTRY_VERIFY(reply->isFinished());
    QCOMPARE(reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 201);
    reply->deleteLater();
    QTRY_COMPARE(engine.model(QStringLiteral("organizations"))->rowCount(), 1);
}

void tst_SyncEngine::restartedServerLiveWithinTheDefaultCap()
{
    RestartablePlane server;
    QVERIFY2(server.start(), qPrintable(server.error()));

    ApiClient client;
    client.setBaseUrl(server.baseUrl());
    client.setToken(server.token());
    client.setRetryPolicy(0, 10, 50);
    client.setTimeout(5000);
    SyncEngine engine(&client, nullptr); // the default backoff
    engine.setPageSize(10);
    engine.setLongPollWait(2);
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);

    // What a user waits at most for the next attempt once the server is back.
    constexpr int kFewSecondsMs = 5000;
    QSignalSpy retries(engine.status(), &ConnectionStatus::retryScheduled);
    server.stop();
    // Down long enough for the delays to reach the cap (0.5, 1, 2, 4, 4, 4 s before jitter; without
    // a cap the sixth would be 8-16 s): they stay there.
    QTRY_VERIFY_WITH_TIMEOUT(retries.count() >= 6, 30000);
    for (const QList<QVariant> &retry : std::as_const(retries)) {
        const int delay = retry.at(0).toInt();
        QVERIFY2(delay > 0 && delay <= kFewSecondsMs, qPrintable(QString::number(delay)));
    }
    QVERIFY(retries.at(5).at(0).toInt() >= SyncEngine::kDefaultBackoffMaxMs / 2); // jittered, never below half
    const QRegularExpression countdown(QStringLiteral("^Offline \\(data as of .+\\), retrying( in [1-4] s|…)$"));
    QVERIFY2(countdown.match(engine.status()->text()).hasMatch(), qPrintable(engine.status()->text()));

    QVERIFY(server.start()); // the same address, the same database
    // The attempt due within the cap finds it: live a few seconds after the server came back.
    QTRY_COMPARE_WITH_TIMEOUT(engine.status()->state(), State::Live, kFewSecondsMs + 3000);
    QCOMPARE(engine.status()->text(), QStringLiteral("Live"));
}

void tst_SyncEngine::badTokenIsAProblem()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), QStringLiteral("nope"));
    QSignalSpy problems(&engine, &SyncEngine::problem);
    engine.start();
    QTRY_VERIFY(!problems.isEmpty());
    QCOMPARE(problems.first().first().value<Problem>().code, QStringLiteral("unauthenticated"));
    QVERIFY(engine.status()->state() != State::Live);
}

void tst_SyncEngine::listingRefusedReachesTheUser()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 5);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    engine.setBackoff(60000, 60000); // no second try within the test
    engine.setKinds({QStringLiteral("instances")});
    QSignalSpy unauthenticated(&client, &ApiClient::unauthenticated);
    QSignalSpy problems(&engine, &SyncEngine::problem);
    engine.start();
    // The sequence query is on its way with the good token; the pages will be asked for with
    // this one, by the reader's own client on its own thread.
    client.setToken(QStringLiteral("not-a-token"));
    QTRY_VERIFY(!problems.isEmpty());
    QCOMPARE(problems.first().first().value<Problem>().status, 401);
    // Its 401 reaches the client the window listens to.
    QTRY_COMPARE(unauthenticated.count(), 1);
    QVERIFY(engine.status()->state() != State::Live);
    QCOMPARE(engine.model(QStringLiteral("instances"))->rowCount(), 0);
}

void tst_SyncEngine::mutationAnswersApplyAtOnce()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 1);
    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    engine.setWebSocketEnabled(false);
    engine.setLongPollWait(30); // the feed would answer late; the answer of the mutation does not
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    QSignalSpy applied(&engine, &SyncEngine::eventsApplied);
    const auto reply = server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(s.instances.first()),
                                   {{QStringLiteral("reason"), QStringLiteral("t")}}, server.operatorToken());
    QCOMPARE(reply.status, 200);
    engine.apply(QStringLiteral("instances"), reply.json());
    engine.apply(QStringLiteral("nothing"), reply.json()); // unknown kinds are ignored
    engine.model(QStringLiteral("instances"))->flush();
    QCOMPARE(statusOf(engine, s.instances.first()), QStringLiteral("STOPPED"));
    const qint64 version = engine.model(QStringLiteral("instances"))->versionAt(0);
    QTRY_VERIFY(!applied.isEmpty()); // the event comes after and changes nothing
    engine.model(QStringLiteral("instances"))->flush();
    QCOMPARE(engine.model(QStringLiteral("instances"))->versionAt(0), version);
}

void tst_SyncEngine::silentPeerTakenForDead()
{
    // A peer that completes the WebSocket handshake and then never says anything again, not
    // even a pong: what a server looks like behind a dead network path.
    QTcpServer silent;
    QVERIFY(silent.listen(QHostAddress::LocalHost, 0));
    QList<QTcpSocket *> accepted;
    connect(&silent, &QTcpServer::newConnection, &silent, [&silent, &accepted] {
        while (QTcpSocket *socket = silent.nextPendingConnection()) {
            accepted << socket;
            connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                if (socket->property("upgraded").toBool()) {
                    socket->readAll(); // pings and all: swallowed unanswered
                    return;
                }
                const QByteArray request = socket->peek(8192);
                if (!request.contains("\r\n\r\n"))
                    return;
                socket->readAll();
                QByteArray key;
                for (const QByteArray &line : request.split('\n')) {
                    if (line.toLower().startsWith("sec-websocket-key:"))
                        key = line.mid(18).trimmed();
                }
                const QByteArray accept = QCryptographicHash::hash(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11",
                                                                   QCryptographicHash::Sha1).toBase64();
                socket->write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: " + accept + "\r\n\r\n");
                socket->setProperty("upgraded", true);
            });
        }
    });
    // A cache with a cursor sends the engine straight to the feed.
    const QString path = Test::scratchDir() + QStringLiteral("/silent.sqlite");
    {
        Cache cache(path);
        QSignalSpy opened(&cache, &Cache::opened);
        cache.open();
        QVERIFY(opened.wait());
        cache.saveCursor(5);
    }
    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, QUrl(QStringLiteral("http://127.0.0.1:%1").arg(silent.serverPort())), QStringLiteral("t"));
    engine.setPingInterval(100);
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    QCOMPARE(engine.status()->transport(), Transport::WebSocket);
    QTRY_VERIFY(engine.status()->state() != State::Live);
    QVERIFY(!accepted.isEmpty());
    engine.stop();
}

QTEST_GUILESS_MAIN(tst_SyncEngine)
#include "tst_syncengine.moc"
