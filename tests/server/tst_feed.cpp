// The change feed: long-poll (at once, waiting, timing out), resume, 410, WebSocket and filtering.
#include "lockwait.h"
#include "testdatabase.h"
#include "testserver.h"

#include "server/feed/changefeed.h"
#include "server/storage/database.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSqlQuery>
#include <QSignalSpy>
#include <QWebSocket>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Feed : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void answersAtOnceWhenEventsExist();
    void waitsForTheNextEvent();
    void timesOutEmpty();
    void abandonedPollIsDropped();
    void resumesAfterSeq();
    void goneForCursorOlderThanRetention();
    void rejectsBadParameters_data();
    void rejectsBadParameters();
    void webSocketReceivesEvents();
    void webSocketClosesWithGone();
    void webSocketRefusesBadParameters_data();
    void webSocketRefusesBadParameters();
    void webSocketFilteredByRole();
    void webSocketRefusesAnOversizedMessage();
    void waitingPollIsFilteredByRole();
    void replicasCommitInSequenceOrder();
    void revokedTokenEndsItsWatchAndPoll();

private:
    qint64 lastSeq();
    QNetworkReply *startPoll(QNetworkAccessManager &nam, const QString &query, const QString &token);
    // Opens /api/v1/watch with the token in Authorization and the query given.
    void openWatch(QWebSocket &socket, const QString &token, const QString &query = QString());

    std::unique_ptr<TestServer> m_server;
};

void tst_Feed::init()
{
    OPSDECK_REQUIRE_BACKEND();
    // A watch the server refuses is closed without reading a closed socket.
    QTest::failOnWarning(QRegularExpression(QStringLiteral("QIODevice::")));
    ServerOptions options;
    options.feedRetention = 10;
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
}

void tst_Feed::cleanup()
{
    m_server.reset();
}

qint64 tst_Feed::lastSeq()
{
    return m_server->get(QStringLiteral("/api/v1/events"), m_server->operatorToken()).json().value(QStringLiteral("last_seq")).toInteger();
}

QNetworkReply *tst_Feed::startPoll(QNetworkAccessManager &nam, const QString &query, const QString &token)
{
    QNetworkRequest req(QUrl(m_server->baseUrl().toString() + QStringLiteral("/api/v1/events?") + query));
    req.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    return nam.get(req);
}

void tst_Feed::answersAtOnceWhenEventsExist()
{
    const qint64 before = lastSeq();
    const qint64 id = m_server->createOrganization(QStringLiteral("Acme"));
    const Reply r = m_server->get(QStringLiteral("/api/v1/events?after=%1&wait=30").arg(before), m_server->operatorToken());
    QCOMPARE(r.status, 200);
    const QJsonArray events = r.json().value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 1);
    const QJsonObject e = events.first().toObject();
    QCOMPARE(e.value(QStringLiteral("seq")).toInteger(), before + 1);
    QCOMPARE(e.value(QStringLiteral("kind")).toString(), QStringLiteral("organization"));
    QCOMPARE(e.value(QStringLiteral("id")).toInteger(), id);
    QCOMPARE(e.value(QStringLiteral("version")).toInteger(), 1);
    QCOMPARE(e.value(QStringLiteral("op")).toString(), QStringLiteral("created"));
    QCOMPARE(e.value(QStringLiteral("object")).toObject().value(QStringLiteral("name")).toString(), QStringLiteral("Acme"));
    QCOMPARE(r.json().value(QStringLiteral("last_seq")).toInteger(), before + 1);
}

void tst_Feed::waitsForTheNextEvent()
{
    const qint64 before = lastSeq();
    QNetworkAccessManager nam;
    std::unique_ptr<QNetworkReply> poll(startPoll(nam, QStringLiteral("after=%1&wait=30").arg(before), m_server->operatorToken()));
    QTRY_COMPARE(m_server->controlPlane().feed().waiterCount(), 1);
    QVERIFY(!poll->isFinished());
    const qint64 id = m_server->createOrganization(QStringLiteral("Late"));
    QTRY_VERIFY(poll->isFinished());
    QCOMPARE(poll->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    const QJsonObject body = QJsonDocument::fromJson(poll->readAll()).object();
    const QJsonArray events = body.value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first().toObject().value(QStringLiteral("id")).toInteger(), id);
}

void tst_Feed::timesOutEmpty()
{
    const qint64 before = lastSeq();
    QNetworkAccessManager nam;
    std::unique_ptr<QNetworkReply> poll(startPoll(nam, QStringLiteral("after=%1&wait=1").arg(before), m_server->operatorToken()));
    QTRY_VERIFY_WITH_TIMEOUT(poll->isFinished(), 10000);
    QCOMPARE(poll->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    const QJsonObject body = QJsonDocument::fromJson(poll->readAll()).object();
    QVERIFY(body.value(QStringLiteral("events")).toArray().isEmpty());
    QCOMPARE(body.value(QStringLiteral("last_seq")).toInteger(), before);
    QCOMPARE(m_server->controlPlane().feed().waiterCount(), 0);
}

void tst_Feed::abandonedPollIsDropped()
{
    const qint64 before = lastSeq();
    {
        QNetworkAccessManager nam;
        std::unique_ptr<QNetworkReply> poll(startPoll(nam, QStringLiteral("after=%1&wait=30").arg(before), m_server->operatorToken()));
        QTRY_COMPARE(m_server->controlPlane().feed().waiterCount(), 1);
        poll->abort();
    }
    // The client went away: the parked answer is dropped, not written to a dead socket.
    QTRY_COMPARE(m_server->controlPlane().feed().waiterCount(), 0);
    QVERIFY(m_server->createOrganization(QStringLiteral("After")));
    QCOMPARE(m_server->get(QStringLiteral("/healthz"), {}).status, 200);
}

void tst_Feed::resumesAfterSeq()
{
    const qint64 start = lastSeq();
    for (int i = 0; i < 4; ++i)
        QVERIFY(m_server->createOrganization(QStringLiteral("O%1").arg(i)));
    const Reply page1 = m_server->get(QStringLiteral("/api/v1/events?after=%1&limit=3").arg(start), m_server->operatorToken());
    QCOMPARE(page1.json().value(QStringLiteral("events")).toArray().size(), 3);
    const qint64 cursor = page1.json().value(QStringLiteral("last_seq")).toInteger();
    QCOMPARE(cursor, start + 3);
    const Reply page2 = m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(cursor), m_server->operatorToken());
    const QJsonArray rest = page2.json().value(QStringLiteral("events")).toArray();
    QCOMPARE(rest.size(), 1);
    QCOMPARE(rest.first().toObject().value(QStringLiteral("seq")).toInteger(), start + 4);
}

void tst_Feed::goneForCursorOlderThanRetention()
{
    for (int i = 0; i < 25; ++i)
        QVERIFY(m_server->createOrganization(QStringLiteral("O%1").arg(i)));
    // Trimming runs after the commits, once per event-loop turn.
    QTRY_VERIFY(m_server->controlPlane().feed().purgedThrough() >= 15);
    const Reply gone = m_server->get(QStringLiteral("/api/v1/events?after=1"), m_server->operatorToken());
    QCOMPARE(gone.status, 410);
    QCOMPARE(gone.code(), QStringLiteral("gone"));
    const qint64 horizon = m_server->controlPlane().feed().purgedThrough();
    const Reply retained = m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(horizon), m_server->operatorToken());
    QCOMPARE(retained.status, 200);
    QCOMPARE(retained.json().value(QStringLiteral("events")).toArray().size(), 25 - horizon);
    // A cursor from the future (another database) is no better.
    QCOMPARE(m_server->get(QStringLiteral("/api/v1/events?after=100000"), m_server->operatorToken()).status, 410);
}

void tst_Feed::rejectsBadParameters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("path");
    QTest::newRow("negative after") << "after=-1" << "?after";
    QTest::newRow("after not a number") << "after=x" << "?after";
    QTest::newRow("wait too long") << "wait=61" << "?wait";
    QTest::newRow("negative wait") << "wait=-1" << "?wait";
    QTest::newRow("limit too large") << "limit=5000" << "?limit";
    QTest::newRow("cursor instead of after") << "cursor=abc" << "?cursor";
    // A number is written one way, as the server writes it: Qt's reader took these as 185.
    QTest::newRow("after with a sign") << "after=%2B185" << "?after";
    QTest::newRow("after with spaces") << "after=%20185%20" << "?after";
    QTest::newRow("after with a leading zero") << "after=0185" << "?after";
    QTest::newRow("wait with a leading zero") << "wait=05" << "?wait";
    QTest::newRow("wait with a sign") << "wait=%2B5" << "?wait";
}

void tst_Feed::rejectsBadParameters()
{
    QFETCH(QString, query);
    QFETCH(QString, path);
    const Reply r = m_server->get(QStringLiteral("/api/v1/events?") + query, m_server->operatorToken());
    QCOMPARE(r.status, 400);
    QCOMPARE(r.json().value(QStringLiteral("errors")).toArray().first().toObject().value(QStringLiteral("path")).toString(), path);
}

void tst_Feed::openWatch(QWebSocket &socket, const QString &token, const QString &query)
{
    QUrl url = m_server->baseUrl();
    url.setScheme(QStringLiteral("ws"));
    url.setPath(QStringLiteral("/api/v1/watch"));
    if (!query.isEmpty())
        url.setQuery(query);
    QNetworkRequest req(url);
    req.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    socket.open(req);
}

void tst_Feed::webSocketReceivesEvents()
{
    const qint64 before = m_server->createOrganization(QStringLiteral("Before")) ? lastSeq() : 0;
    QWebSocket socket;
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QSignalSpy connected(&socket, &QWebSocket::connected);
    openWatch(socket, m_server->operatorToken(), QStringLiteral("after=%1").arg(before - 1));
    QTRY_COMPARE(connected.size(), 1);
    // The backlog after the cursor first, then live events.
    QTRY_COMPARE(messages.size(), 1);
    QCOMPARE(QJsonDocument::fromJson(messages.at(0).at(0).toString().toUtf8()).object().value(QStringLiteral("seq")).toInteger(), before);
    const qint64 id = m_server->createOrganization(QStringLiteral("Live"));
    QTRY_COMPARE(messages.size(), 2);
    const QJsonObject e = QJsonDocument::fromJson(messages.at(1).at(0).toString().toUtf8()).object();
    QCOMPARE(e.value(QStringLiteral("seq")).toInteger(), before + 1);
    QCOMPARE(e.value(QStringLiteral("id")).toInteger(), id);
    QCOMPARE(e.value(QStringLiteral("kind")).toString(), QStringLiteral("organization"));
    QCOMPARE(m_server->controlPlane().feed().watcherCount(), 1);
    socket.close();
    QTRY_COMPARE(m_server->controlPlane().feed().watcherCount(), 0);
}

void tst_Feed::webSocketClosesWithGone()
{
    for (int i = 0; i < 25; ++i)
        QVERIFY(m_server->createOrganization(QStringLiteral("O%1").arg(i)));
    QTRY_VERIFY(m_server->controlPlane().feed().purgedThrough() >= 15);
    QWebSocket socket;
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QUrl url = m_server->baseUrl();
    url.setScheme(QStringLiteral("ws"));
    url.setPath(QStringLiteral("/api/v1/watch"));
    url.setQuery(QStringLiteral("after=1&access_token=") + m_server->operatorToken());
    socket.open(url);
    QTRY_COMPARE(disconnected.size(), 1);
    QCOMPARE(int(socket.closeCode()), 4410);
}

void tst_Feed::webSocketRefusesBadParameters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QString>("reason");
    QTest::newRow("not a number") << QStringLiteral("after=abc") << QStringLiteral("invalid-request: after");
    QTest::newRow("negative") << QStringLiteral("after=-1") << QStringLiteral("invalid-request: after");
    QTest::newRow("a sign") << QStringLiteral("after=%2B1") << QStringLiteral("invalid-request: after");
    QTest::newRow("spaces") << QStringLiteral("after=%201%20") << QStringLiteral("invalid-request: after");
    QTest::newRow("misspelt") << QStringLiteral("afterr=3") << QStringLiteral("invalid-request: afterr");
    QTest::newRow("twice") << QStringLiteral("after=1&after=2") << QStringLiteral("invalid-request: after");
    // A close reason is at most 123 bytes of UTF-8: a long name of three-byte characters is cut
    // to 32 of them, never in the middle of one (the client would see 1007 instead).
    QTest::newRow("long name") << QString(64, QChar(0x20AC)) + QStringLiteral("=1")
                               << QStringLiteral("invalid-request: ") + QString(32, QChar(0x20AC));
}

void tst_Feed::webSocketRefusesBadParameters()
{
    QFETCH(QString, query);
    QFETCH(QString, reason);
    QWebSocket socket;
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QUrl url = m_server->baseUrl();
    url.setScheme(QStringLiteral("ws"));
    url.setPath(QStringLiteral("/api/v1/watch"));
    url.setQuery(query + QStringLiteral("&access_token=") + m_server->operatorToken());
    socket.open(url);
    QTRY_COMPARE(disconnected.size(), 1);
    QCOMPARE(int(socket.closeCode()), 4400);
    QCOMPARE(socket.closeReason(), reason);
    QCOMPARE(m_server->controlPlane().feed().watcherCount(), 0);
}

void tst_Feed::webSocketRefusesAnOversizedMessage()
{
    // The feed reads nothing from a watcher. Any token could send one message of half a gigabyte
    // and the server buffered it whole (four of them took 2 GB): one larger than a ping is closed
    // with 1009 (too much data) as its header arrives.
    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    openWatch(socket, m_server->operatorToken());
    QTRY_COMPARE(connected.size(), 1);
    QTRY_COMPARE(m_server->controlPlane().feed().watcherCount(), 1);
    // A small message is let be: it is read and dropped.
    socket.sendTextMessage(QStringLiteral("hello"));
    socket.ping();
    QTest::qWait(100);
    QCOMPARE(disconnected.size(), 0);
    socket.sendTextMessage(QString(64 * 1024, QLatin1Char('x')));
    QTRY_COMPARE(disconnected.size(), 1);
    QCOMPARE(socket.closeCode(), QWebSocketProtocol::CloseCodeTooMuchData);
    QTRY_COMPARE(m_server->controlPlane().feed().watcherCount(), 0);
}

void tst_Feed::webSocketFilteredByRole()
{
    const qint64 org = m_server->createOrganization(QStringLiteral("O"));
    const qint64 provider = m_server->createProvider(QStringLiteral("P"), org, {QStringLiteral("app")});
    const qint64 other = m_server->createProvider(QStringLiteral("Q"), org, {QStringLiteral("app")});
    QWebSocket socket;
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QSignalSpy connected(&socket, &QWebSocket::connected);
    openWatch(socket, m_server->token(QStringLiteral("provider"), QString::number(provider)));
    QTRY_COMPARE(connected.size(), 1);
    QVERIFY(m_server->createInstance(QStringLiteral("theirs"), org, other, QStringLiteral("app"), QStringLiteral("bob")));
    const qint64 mine = m_server->createInstance(QStringLiteral("mine"), org, provider, QStringLiteral("app"), QStringLiteral("bob"));
    QTRY_COMPARE(messages.size(), 1);
    QCOMPARE(QJsonDocument::fromJson(messages.at(0).at(0).toString().toUtf8()).object().value(QStringLiteral("id")).toInteger(), mine);
}

void tst_Feed::waitingPollIsFilteredByRole()
{
    const qint64 org = m_server->createOrganization(QStringLiteral("O"));
    const qint64 provider = m_server->createProvider(QStringLiteral("P"), org, {QStringLiteral("app")});
    const qint64 before = lastSeq();
    QNetworkAccessManager nam;
    std::unique_ptr<QNetworkReply> poll(startPoll(nam, QStringLiteral("after=%1&wait=30").arg(before),
                                                  m_server->token(QStringLiteral("owner"), QStringLiteral("alice"))));
    QTRY_COMPARE(m_server->controlPlane().feed().waiterCount(), 1);
    QVERIFY(m_server->createInstance(QStringLiteral("bobs"), org, provider, QStringLiteral("app"), QStringLiteral("bob")));
    // Bob's instance does not wake Alice's poll ...
    QTRY_VERIFY(m_server->controlPlane().feed().lastSeq() > before);
    QVERIFY(!poll->isFinished());
    // ... hers does.
    const qint64 hers = m_server->createInstance(QStringLiteral("alices"), org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    QTRY_VERIFY(poll->isFinished());
    const QJsonArray events = QJsonDocument::fromJson(poll->readAll()).object().value(QStringLiteral("events")).toArray();
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first().toObject().value(QStringLiteral("id")).toInteger(), hers);
}

void tst_Feed::revokedTokenEndsItsWatchAndPoll()
{
    // Revocation takes effect on the next request, and on connections already open: a watch
    // or a parked long poll of that token is ended instead of going on with the feed.
    const Reply created = m_server->request("POST", QStringLiteral("/api/v1/tokens"), R"({"role": "operator", "name": "temp"})",
                                            m_server->operatorToken());
    QCOMPARE(created.status, 201);
    const QString bearer = created.json().value(QStringLiteral("token")).toString();
    const qint64 id = created.json().value(QStringLiteral("id")).toInteger();
    QWebSocket socket;
    QSignalSpy connected(&socket, &QWebSocket::connected);
    QSignalSpy disconnected(&socket, &QWebSocket::disconnected);
    QSignalSpy messages(&socket, &QWebSocket::textMessageReceived);
    QUrl url = m_server->baseUrl();
    url.setScheme(QStringLiteral("ws"));
    url.setPath(QStringLiteral("/api/v1/watch"));
    url.setQuery(QStringLiteral("access_token=") + bearer);
    socket.open(url);
    QTRY_COMPARE(connected.size(), 1);
    QNetworkAccessManager nam;
    QNetworkReply *poll = startPoll(nam, QStringLiteral("after=%1&wait=25").arg(lastSeq()), bearer);
    QTRY_COMPARE(m_server->controlPlane().feed().waiterCount(), 1);

    QCOMPARE(m_server->request("DELETE", QStringLiteral("/api/v1/tokens/%1").arg(id), QByteArray(), m_server->operatorToken()).status, 200);
    QVERIFY(m_server->createOrganization(QStringLiteral("Not for the revoked")));
    QTRY_COMPARE(disconnected.size(), 1);
    QCOMPARE(int(socket.closeCode()), 4401);
    QCOMPARE(messages.size(), 0);
    QTRY_VERIFY(poll->isFinished());
    QCOMPARE(poll->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 401);
    poll->deleteLater();
}

void tst_Feed::replicasCommitInSequenceOrder()
{
    // Another replica's transaction has taken feed sequence number N and not committed yet. A
    // write here must not commit N+1 meanwhile: a reader that saw N+1 would move its cursor past
    // N and never read it.
    if (!TestDatabase::wantsPostgres())
        QSKIP("replicas share a database on PostgreSQL only; SQLite has one writer at a time");
    // The other replica's transaction: Database::begin() takes the write turn as every write
    // transaction of a replica does, then it takes its sequence number.
    std::atomic<qint64> held{0};
    WriteLockHolder replica(
        m_server->databaseUrl(),
        [&held](Database &db) {
            QSqlQuery q(db.connection());
            if (!execWith(q, QStringLiteral("INSERT INTO events (kind, object_id, version, op, object, at, audience_private)"
                                            " VALUES ('organization', 999, 1, 'updated', '{}', '2026-12-01T00:00:00.000Z', 0)"
                                            " RETURNING seq"))
                || !q.next())
                return false;
            held = q.value(0).toLongLong();
            return true;
        },
        true);
    QVERIFY(replica.take());

    // The write here waits (set aside: this thread answers meanwhile, see tst_busystorage) until
    // the other transaction commits, and then takes the next number.
    QNetworkAccessManager nam;
    QNetworkReply *write = TestServer::start(nam, m_server->baseUrl(), "POST", QStringLiteral("/api/v1/organizations"),
                                             R"({"name": "After the other"})", m_server->operatorToken());
    QTest::qWait(300);
    QVERIFY2(!write->isFinished(), "the write here did not wait for the other replica's transaction");
    replica.release();
    QVERIFY(replica.committed());
    QTRY_VERIFY_WITH_TIMEOUT(write->isFinished(), 5000);
    QCOMPARE(write->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 201);
    const qint64 org = QJsonDocument::fromJson(write->readAll()).object().value(QStringLiteral("id")).toInteger();
    delete write;
    QVERIFY(org > 0);
    const QJsonArray events =
        m_server->get(QStringLiteral("/api/v1/events?after=%1").arg(held.load() - 1), m_server->operatorToken())
            .json().value(QStringLiteral("events")).toArray();
    QVERIFY(events.size() >= 2);
    QCOMPARE(events.at(0).toObject().value(QStringLiteral("seq")).toInteger(), held.load());
    QCOMPARE(events.at(1).toObject().value(QStringLiteral("id")).toInteger(), org);
}

QTEST_GUILESS_MAIN(tst_Feed)
#include "tst_feed.moc"
