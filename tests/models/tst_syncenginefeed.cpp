// Tests for the sync engine's live feed against a real control plane: WebSocket, long poll, outages, refusals.
#include "models/syncengine.h"

#include "models/apiclient.h"
#include "models/cache.h"
#include "server/controlplane.h"
#include "syncfixture.h"
#include "testserver.h"
#include "testsupport.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

#include <algorithm>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

using State = ConnectionStatus::State;
using Transport = ConnectionStatus::Transport;


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

// Whether the audit model has an entry of instance `id` going to `to`.
bool auditShows(ResourceModel *audit, qint64 id, const QString &to)
{
    const QList<qint64> ids = audit->ids();
    return std::any_of(ids.cbegin(), ids.cend(), [&](qint64 entryId) {
        const QJsonObject entry = audit->objectById(entryId);
        return entry.value(QStringLiteral("object_id")).toInteger() == id && entry.value(QStringLiteral("to")).toString() == to;
    });
}

// The audit model's entries, one compact JSON line each, for a failure's message.
QString auditText(ResourceModel *audit)
{
    QStringList lines;
    for (qint64 id : audit->ids())
        lines << QString::fromUtf8(QJsonDocument(audit->objectById(id)).toJson(QJsonDocument::Compact));
    return lines.join(u'\n');
}

} // namespace

class tst_SyncEngineFeed final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void liveChangesOverWebSocket();
    void auditCaughtUpOnAStartFromTheCache();
    void longPollFallback();
    void serverStoppedThenBack();
    void restartedServerLiveWithinTheDefaultCap();
    void badTokenIsAProblem();
    void listingRefusedReachesTheUser();
    void mutationAnswersApplyAtOnce();
    void silentPeerTakenForDead();
};

void tst_SyncEngineFeed::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_SyncEngineFeed::liveChangesOverWebSocket()
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
    QTRY_VERIFY2(auditShows(audit, s.instances.at(1), QStringLiteral("STOPPED")), qPrintable(auditText(audit)));
    QCOMPARE(engine.status()->transport(), Transport::WebSocket);
}

void tst_SyncEngineFeed::auditCaughtUpOnAStartFromTheCache()
{
    // A console started again resumes the feed from its cache rather than listing everything. The
    // audit has no feed events: what it gained while the console was closed, and what it gains
    // from then on, is read after where the last run left off.
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seed s = seed(server, 3);
    const QString path = Test::scratchDir() + QStringLiteral("/audit-resume.sqlite");
    const auto stop = [&](qint64 id) {
        return server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {{QStringLiteral("reason"), QStringLiteral("test")}},
                           server.operatorToken()).status;
    };
    {
        Cache cache(path);
        ApiClient client;
        SyncEngine engine(&client, &cache);
        configure(client, engine, server.baseUrl(), server.operatorToken());
        engine.start();
        QTRY_COMPARE(engine.status()->state(), State::Live);
        QCOMPARE(stop(s.instances.at(0)), 200);
        ResourceModel *audit = engine.model(QStringLiteral("audit"));
        QTRY_VERIFY2(auditShows(audit, s.instances.at(0), QStringLiteral("STOPPED")), qPrintable(auditText(audit)));
        engine.stop();
    }
    QCOMPARE(stop(s.instances.at(1)), 200); // while the console is closed

    Cache cache(path);
    ApiClient client;
    SyncEngine engine(&client, &cache);
    configure(client, engine, server.baseUrl(), server.operatorToken());
    QSignalSpy relisting(&engine, &SyncEngine::relisting);
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    ResourceModel *audit = engine.model(QStringLiteral("audit"));
    QTRY_VERIFY2(auditShows(audit, s.instances.at(1), QStringLiteral("STOPPED")), qPrintable(auditText(audit)));
    QCOMPARE(stop(s.instances.at(2)), 200);
    QTRY_VERIFY2(auditShows(audit, s.instances.at(2), QStringLiteral("STOPPED")), qPrintable(auditText(audit)));
    QVERIFY(auditShows(audit, s.instances.at(0), QStringLiteral("STOPPED")));
    QVERIFY(relisting.isEmpty()); // resumed, not listed again
    engine.stop();
}

void tst_SyncEngineFeed::longPollFallback()
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

void tst_SyncEngineFeed::serverStoppedThenBack()
{
    RestartablePlane server;
    QVERIFY2(server.start(), qPrintable(server.error()));

    ApiClient client;
    SyncEngine engine(&client, nullptr);
    configure(client, engine, server.baseUrl(), server.token());
    engine.start();
    QTRY_COMPARE(engine.status()->state(), State::Live);
    const QDateTime liveAt = engine.status()->lastSync();

    // Reconnecting lasts only as long as the first quick retries: seen as the state changes.
    QList<State> states;
    const QMetaObject::Connection watch =
        connect(engine.status(), &ConnectionStatus::changed, this, [&] { states.append(engine.status()->state()); });
    server.stop();
    QTRY_COMPARE(engine.status()->state(), State::Offline);
    disconnect(watch);
    QVERIFY(!engine.status()->lastError().isEmpty());
    const qsizetype reconnecting = states.indexOf(State::Reconnecting);
    QVERIFY(reconnecting >= 0);
    QVERIFY(reconnecting < states.indexOf(State::Offline));
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

void tst_SyncEngineFeed::restartedServerLiveWithinTheDefaultCap()
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

void tst_SyncEngineFeed::badTokenIsAProblem()
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

void tst_SyncEngineFeed::listingRefusedReachesTheUser()
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

void tst_SyncEngineFeed::mutationAnswersApplyAtOnce()
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

void tst_SyncEngineFeed::silentPeerTakenForDead()
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

QTEST_GUILESS_MAIN(tst_SyncEngineFeed)
#include "tst_syncenginefeed.moc"
