// The write lock held by another process: SQLite's (a backup, a shell's BEGIN IMMEDIATE), or
// PostgreSQL's write turn (another replica's transaction, or one stopped mid-transaction). The
// requests that need it wait aside, and every other request is answered meanwhile.
#include "lockwait.h"
#include "testserver.h"
#include "testsupport.h"

#include "server/http/router.h"
#include "server/outbox/writetransaction.h"
#include "server/storage/database.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTcpSocket>
#include <QtTest>


using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// A write of the holder's own, so that SQLite's lock is surely held; rolled back, nothing the
// tests would see.
bool writeSomething(Database &db)
{
    return db.exec(QStringLiteral("INSERT INTO feed_state (id, purged_through) VALUES (424242, 0)"));
}

// Sends a POST in plain bytes on `socket`, connected to `base` first; `headers` are further
// "Name: value\r\n" lines. What it answers is the test's to read.
bool postOnSocket(QTcpSocket *socket, const QUrl &base, const QString &token, const QByteArray &path,
                  const QByteArray &body, const QByteArray &headers = {})
{
    socket->connectToHost(base.host(), quint16(base.port()));
    if (!socket->waitForConnected(5000))
        return false;
    socket->write("POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer "
                  + token.toUtf8() + "\r\n" + headers + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n"
                  + body);
    return socket->waitForBytesWritten(5000);
}

// Reads what `socket` is answered until the server closes it: nothing if it was not closed
// within `timeoutMs`.
QByteArray readUntilClosed(QTcpSocket &socket, int timeoutMs)
{
    QByteArray answer;
    if (!QTest::qWaitFor([&] { return (answer += socket.readAll(), socket.state() == QAbstractSocket::UnconnectedState); },
                         timeoutMs))
        return {};
    return answer + socket.readAll();
}

// Stops the server, then reads what `socket` was answered until the server closed it: nothing
// if it was not closed within 5 s.
QByteArray stopAndRead(TestServer &server, QTcpSocket &socket)
{
    server.controlPlane().stop();
    return readUntilClosed(socket, 5000);
}

// Sends, on a connection with a request already on it, a read behind that request, the last
// one on the connection.
bool healthzBehind(QTcpSocket &socket)
{
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return socket.waitForBytesWritten(5000);
}

// Whether a connection that created an organization, then sent healthzBehind(), heard the two
// answers in that order and nothing else.
bool createdThenHealthy(const QByteArray &answer)
{
    return answer.count("HTTP/1.1 ") == 2 && answer.startsWith("HTTP/1.1 201") && answer.indexOf("HTTP/1.1 200") > 0;
}

} // namespace

class tst_BusyStorage : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void readsGoOnWhileAWriteWaits();
    void idempotentWriteWaitsToo();
    void aWriteGivesUpAfterTheBusyTimeout();
    void nothingRunsForAClientThatLeft();
    void pipelinedAnswersKeepTheirOrder();
    void aRequestBehindAWaitingWriteHoldsUpNoOtherClient();
    void aReadBehindAWriteThatGaveUpStillRuns();
    void aKeyTakenBeforeTheMissIsKept();
    void aKeyTakenBeforeTheMissIsLetGo();
    void manyWaitingWritesTryTheLockOncePerTurn();
    void aWriteWaitingAtStopIsAnswered();
    void aKeyHeldAtStopIsLetGoAtStart();
    void aRequestWhoseKeyWasLetGoDoesNotCommit();

private:
    QNetworkReply *send(const QByteArray &method, const QString &path, const QByteArray &body = {},
                        const QList<QPair<QByteArray, QByteArray>> &headers = {});
    int organizationsNamed(const QString &name);
    static int organizationsNamedOn(TestServer &server, const QString &name);
    // Sends "create the organization `name`" on a connection of its own, in plain bytes.
    bool createOnSocket(QTcpSocket *socket, const QByteArray &name);


    std::unique_ptr<TestServer> m_server;
    QNetworkAccessManager m_nam;
};

void tst_BusyStorage::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    ServerOptions options;
    options.deliveryWorker = false; // nothing of the server's own takes the lock meanwhile
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    m_server->operatorToken(); // created before any lock is held
}

QNetworkReply *tst_BusyStorage::send(const QByteArray &method, const QString &path, const QByteArray &body,
                                     const QList<QPair<QByteArray, QByteArray>> &headers)
{
    QNetworkReply *reply = TestServer::start(m_nam, m_server->baseUrl(), method, path, body, m_server->operatorToken(), headers);
    reply->setParent(this);
    return reply;
}

bool tst_BusyStorage::createOnSocket(QTcpSocket *socket, const QByteArray &name)
{
    return postOnSocket(socket, m_server->baseUrl(), m_server->operatorToken(), "/api/v1/organizations",
                        R"({"name": ")" + name + R"("})");
}

int tst_BusyStorage::organizationsNamed(const QString &name)
{
    return organizationsNamedOn(*m_server, name);
}

int tst_BusyStorage::organizationsNamedOn(TestServer &server, const QString &name)
{
    int n = 0;
    for (const QJsonValue &o : server.get(QStringLiteral("/api/v1/organizations?limit=500"), server.operatorToken()).items())
        n += o.toObject().value(QStringLiteral("name")).toString() == name ? 1 : 0;
    return n;
}

static int statusOf(QNetworkReply *reply)
{
    return reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
}

void tst_BusyStorage::readsGoOnWhileAWriteWaits()
{
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QNetworkReply *write = send("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "waited"})");
    // The write reached the server and found the lock taken. A server that waited for it on its
    // one HTTP thread would answer nothing else for the 5 s of its busy timeout.
    QTest::qWait(300);
    QVERIFY(!write->isFinished());
    QNetworkReply *health = send("GET", QStringLiteral("/healthz"));
    QNetworkReply *list = send("GET", QStringLiteral("/api/v1/organizations"));
    QTRY_VERIFY_WITH_TIMEOUT(health->isFinished() && list->isFinished(), 2000);
    QCOMPARE(statusOf(health), 200);
    QCOMPARE(statusOf(list), 200);
    QVERIFY2(!write->isFinished(), write->readAll().constData());

    // Once the lock is free the write goes through: the client never heard of the wait.
    holder.release();
    QTRY_VERIFY_WITH_TIMEOUT(write->isFinished(), 5000);
    QCOMPARE(statusOf(write), 201);
    QCOMPARE(organizationsNamed(QStringLiteral("waited")), 1);
}

void tst_BusyStorage::idempotentWriteWaitsToo()
{
    // Its key is taken by a write of its own: the request set aside runs under it, and the retry
    // after the answer hears that answer again.
    const QList<QPair<QByteArray, QByteArray>> key = {{"Idempotency-Key", "busy-1"}};
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QNetworkReply *write = send("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "keyed"})", key);
    QTest::qWait(300);
    QVERIFY(!write->isFinished());
    holder.release();
    QTRY_VERIFY_WITH_TIMEOUT(write->isFinished(), 5000);
    QCOMPARE(statusOf(write), 201);
    const QByteArray first = write->readAll();
    QNetworkReply *again = send("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "keyed"})", key);
    QTRY_VERIFY_WITH_TIMEOUT(again->isFinished(), 5000);
    QCOMPARE(statusOf(again), 201);
    QCOMPARE(again->readAll(), first);
    QCOMPARE(organizationsNamed(QStringLiteral("keyed")), 1);
}

void tst_BusyStorage::aWriteGivesUpAfterTheBusyTimeout()
{
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QElapsedTimer timer;
    timer.start();
    QNetworkReply *write = send("POST", QStringLiteral("/api/v1/organizations"), R"({"name": "never"})");
    QTRY_VERIFY_WITH_TIMEOUT(write->isFinished(), 15000);
    const qint64 waited = timer.elapsed();
    QCOMPARE(statusOf(write), 503);
    QCOMPARE(write->rawHeader("Content-Type"), QByteArray("application/problem+json"));
    QVERIFY(!write->rawHeader("Retry-After").isEmpty());
    QCOMPARE(QJsonDocument::fromJson(write->readAll()).object().value(QStringLiteral("code")).toString(),
             QStringLiteral("storage-busy"));
    // As long as a statement would have waited (Database::SqliteBusyTimeoutMs), not twice that.
    QVERIFY2(waited >= 4500 && waited < 9000, qPrintable(QString::number(waited)));
    holder.release();
    QCOMPARE(organizationsNamed(QStringLiteral("never")), 0);
}

void tst_BusyStorage::nothingRunsForAClientThatLeft()
{
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QTcpSocket socket;
    QVERIFY(createOnSocket(&socket, "abandoned"));
    QTest::qWait(300);
    socket.abort();
    QTest::qWait(100);
    holder.release();
    QTest::qWait(500); // every retry of the set-aside write is due by now
    QCOMPARE(organizationsNamed(QStringLiteral("abandoned")), 0);
}

void tst_BusyStorage::pipelinedAnswersKeepTheirOrder()
{
    // A request after a waiting write on the same connection: the write is answered first (it
    // waits for the lock then), then the request, in the order they were sent.
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QTcpSocket socket;
    QVERIFY(createOnSocket(&socket, "first"));
    QTest::qWait(200);
    holder.releaseAfter(300);
    QVERIFY(healthzBehind(socket));
    const QByteArray answer = readUntilClosed(socket, 10000);
    QVERIFY2(createdThenHealthy(answer), answer.left(600).constData());
    holder.release();
    QCOMPARE(organizationsNamed(QStringLiteral("first")), 1);
}

void tst_BusyStorage::aRequestBehindAWaitingWriteHoldsUpNoOtherClient()
{
    // A client sends a request behind its write that waits for the lock, on the same connection.
    // That request waits its turn behind the write, set aside as well, and every other client is
    // answered meanwhile, as while the write waits alone: it is not the write's wait, on the
    // server's one thread, that keeps the two answers in order.
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QTcpSocket socket;
    QVERIFY(createOnSocket(&socket, "behind"));
    QTRY_COMPARE_WITH_TIMEOUT(m_server->controlPlane().requestsWaitingForTheLock(), 1, 5000);
    QVERIFY(healthzBehind(socket));
    QTRY_COMPARE_WITH_TIMEOUT(m_server->controlPlane().requestsWaitingForTheLock(), 2, 5000);
    QNetworkReply *other = send("GET", QStringLiteral("/healthz"));
    QTRY_VERIFY_WITH_TIMEOUT(other->isFinished(), 5000);
    QCOMPARE(other->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    // Answered while the write still waits: nothing has come back on its connection yet.
    QCOMPARE(socket.bytesAvailable(), 0);
    QCOMPARE(m_server->controlPlane().requestsWaitingForTheLock(), 2);

    holder.release();
    const QByteArray answer = readUntilClosed(socket, 10000);
    QVERIFY2(createdThenHealthy(answer), answer.left(600).constData());
    QCOMPARE(organizationsNamed(QStringLiteral("behind")), 1);
}

void tst_BusyStorage::aReadBehindAWriteThatGaveUpStillRuns()
{
    // The lock stays held for the write's whole busy timeout: it gives up (503). The read sent
    // right behind it never needed the lock, so it runs then and is answered, though it too has
    // waited about as long.
    WriteLockHolder holder(m_server->databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QTcpSocket socket;
    QVERIFY(createOnSocket(&socket, "gave-up"));
    QVERIFY(healthzBehind(socket));
    const QByteArray answer = readUntilClosed(socket, 12000);
    holder.release();
    QCOMPARE(answer.count("HTTP/1.1 "), 2);
    QVERIFY2(answer.startsWith("HTTP/1.1 503"), answer.left(300).constData());
    QVERIFY2(answer.contains("storage-busy"), answer.constData());
    QVERIFY2(answer.indexOf("HTTP/1.1 200") > 0, answer.constData());
    QCOMPARE(organizationsNamed(QStringLiteral("gave-up")), 0);
}

namespace {

// A route whose first run takes the lock on another connection after the request took its
// Idempotency-Key (an autocommit write) and before its own transaction begins: the one moment
// where a request set aside already holds its key. `holdMs` < 0 holds until the test lets go.
struct KeyThenLockRoute
{
    TestServer server;
    std::unique_ptr<WriteLockHolder> holder;
    int runs = 0;
    int commits = 0;

    // `beforeRun`, when given, runs at the start of every run of the route, the run's number given.
    explicit KeyThenLockRoute(int holdMs, std::function<void(int)> beforeRun = {})
        : server([] {
            ServerOptions o;
            o.deliveryWorker = false;
            return o;
        }())
        , beforeRun(std::move(beforeRun))
    {
        addRoute(holdMs);
    }

    std::function<void(int)> beforeRun;

    // Again after the server was stopped and started: a start brings its own routes only.
    void addRoute(int holdMs)
    {
        Database &db = server.controlPlane().database();
        server.controlPlane().router().add("POST", QStringLiteral("/api/v1/test-key-then-lock"), Actors(Actor::Operator), true,
                                           [this, &db, holdMs](Request &) {
                                               if (beforeRun)
                                                   beforeRun(runs + 1);
                                               if (++runs == 1) {
                                                   holder = std::make_unique<WriteLockHolder>(server.databaseUrl(), writeSomething);
                                                   if (!holder->take())
                                                       return Response::problem(Problem::make(500, QStringLiteral("internal"),
                                                                                              QStringLiteral("no lock"), {}));
                                                   if (holdMs >= 0)
                                                       holder->releaseAfter(holdMs);
                                               }
                                               WriteTransaction tx(db);
                                               Problem problem;
                                               if (!tx.isActive())
                                                   return Response::problem(tx.problem());
                                               if (!db.exec(QStringLiteral("UPDATE feed_state SET purged_through = purged_through"),
                                                            &problem)
                                                   || !tx.commit(&problem))
                                                   return Response::problem(problem);
                                               return Response::json(201, QJsonObject{{QStringLiteral("commits"), ++commits}});
                                           });
    }

    Reply post() { return server.request("POST", QStringLiteral("/api/v1/test-key-then-lock"), "{}", server.operatorToken(),
                                         {{"Idempotency-Key", "held-1"}}); }
};

} // namespace

void tst_BusyStorage::aKeyTakenBeforeTheMissIsKept()
{
    // Set aside holding its key (on SQLite letting it go needs the lock too), it runs again under it once
    // the lock is free, and a retry hears that answer: not "the key is in use" by itself.
    KeyThenLockRoute route(400);
    QVERIFY2(route.server.isRunning(), qPrintable(route.server.error()));
    const Reply first = route.post();
    QVERIFY2(first.status == 201, first.body.constData());
    QVERIFY(route.runs >= 2); // tried while the lock was held, then once it was free
    QCOMPARE(first.json().value(QStringLiteral("commits")).toInt(), 1);
    const int runs = route.runs;
    const Reply again = route.post();
    QCOMPARE(again.status, 201);
    QCOMPARE(again.body, first.body);
    QCOMPARE(route.runs, runs);
    QCOMPARE(route.commits, 1);
}

void tst_BusyStorage::aKeyTakenBeforeTheMissIsLetGo()
{
    // Its time runs out while the lock is held: 503, and once the lock is free its key is let go,
    // so the client's retry runs instead of hearing "in use" for a minute.
    KeyThenLockRoute route(-1);
    QVERIFY2(route.server.isRunning(), qPrintable(route.server.error()));
    const Reply busy = route.post();
    QCOMPARE(busy.status, 503);
    QCOMPARE(busy.code(), QStringLiteral("storage-busy"));
    route.holder->release();
    Reply retry;
    QTRY_VERIFY_WITH_TIMEOUT((retry = route.post()).status == 201, 3000);
    QCOMPARE(retry.json().value(QStringLiteral("commits")).toInt(), 1);
}

void tst_BusyStorage::manyWaitingWritesTryTheLockOncePerTurn()
{
    // Twenty writes wait for a lock held for a second. Had each tried it every turn, the thread
    // would wait 20 ms twenty times a turn, and a crowd of writes would hold up the reads again.
    // The oldest tries it; the rest follow once it got it: a handful of runs beyond one each.
    TestServer server([] {
        ServerOptions o;
        o.deliveryWorker = false;
        return o;
    }());
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    Database &db = server.controlPlane().database();
    int runs = 0;
    server.controlPlane().router().add("POST", QStringLiteral("/api/v1/test-crowd"), Actors(Actor::Operator), false,
                                       [&db, &runs](Request &) {
                                           ++runs;
                                           WriteTransaction tx(db);
                                           Problem problem;
                                           if (!tx.isActive())
                                               return Response::problem(tx.problem());
                                           if (!tx.commit(&problem))
                                               return Response::problem(problem);
                                           return Response::json(201, QJsonObject{});
                                       });
    server.operatorToken(); // created before the lock is held
    WriteLockHolder holder(server.databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    constexpr int Writes = 20;
    std::vector<std::unique_ptr<QTcpSocket>> sockets;
    for (int i = 0; i < Writes; ++i) {
        auto socket = std::make_unique<QTcpSocket>();
        QVERIFY(postOnSocket(socket.get(), server.baseUrl(), server.operatorToken(), "/api/v1/test-crowd", {},
                             "Connection: close\r\n"));
        sockets.push_back(std::move(socket));
    }
    QTRY_VERIFY_WITH_TIMEOUT(runs >= Writes, 5000); // each tried on arrival (the oldest perhaps again)
    holder.releaseAfter(1000);
    QByteArray answers;
    for (auto &socket : sockets) {
        QTRY_VERIFY_WITH_TIMEOUT(socket->state() == QAbstractSocket::UnconnectedState, 10000);
        answers += socket->readAll();
    }
    QCOMPARE(answers.count("HTTP/1.1 201"), Writes);
    QVERIFY2(runs < 3 * Writes, qPrintable(QString::number(runs)));
}

void tst_BusyStorage::aWriteWaitingAtStopIsAnswered()
{
    // The server stops (SIGTERM) while a write waits for the lock: the client hears that nothing
    // was written, not a connection closed with no answer, which would leave it not knowing.
    // Started again, the server runs a retry under the same Idempotency-Key.
    const auto owned = TestServer::withoutDeliveryWorker();
    TestServer &server = *owned;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    server.operatorToken(); // created before the lock is held
    WriteLockHolder holder(server.databaseUrl(), writeSomething);
    QVERIFY(holder.take());
    QTcpSocket socket;
    const QByteArray body = R"({"name": "stopped"})";
    QVERIFY(postOnSocket(&socket, server.baseUrl(), server.operatorToken(), "/api/v1/organizations", body,
                         "Idempotency-Key: stopped-1\r\n"));
    QTRY_COMPARE_WITH_TIMEOUT(server.controlPlane().requestsWaitingForTheLock(), 1, 5000);
    QCOMPARE(socket.bytesAvailable(), 0);
    const QByteArray answer = stopAndRead(server, socket);
    QVERIFY2(answer.startsWith("HTTP/1.1 503"), answer.constData());
    QVERIFY2(answer.contains("Retry-After: "), answer.constData());
    QVERIFY2(answer.contains(R"("code":"stopping")"), answer.constData());
    holder.release();
    Problem problem;
    QVERIFY2(server.controlPlane().start(&problem), qPrintable(problem.detail));
    QCOMPARE(organizationsNamedOn(server, QStringLiteral("stopped")), 0); // nothing of it was written
    const Reply retry = server.request("POST", QStringLiteral("/api/v1/organizations"), body, server.operatorToken(),
                                       {{"Idempotency-Key", "stopped-1"}});
    QVERIFY2(retry.status == 201, retry.body.constData());
    QCOMPARE(organizationsNamedOn(server, QStringLiteral("stopped")), 1);
}

void tst_BusyStorage::aKeyHeldAtStopIsLetGoAtStart()
{
    // Stopped while set aside holding its key (letting it go needs the lock, still held), the
    // request leaves the key "running" in the database. The next start lets it go: the client
    // was told to retry, and its retry runs instead of hearing "in use" for a minute.
    KeyThenLockRoute route(-1);
    QVERIFY2(route.server.isRunning(), qPrintable(route.server.error()));
    TestServer &server = route.server;
    QTcpSocket socket;
    QVERIFY(postOnSocket(&socket, server.baseUrl(), server.operatorToken(), "/api/v1/test-key-then-lock", "{}",
                         "Idempotency-Key: held-1\r\n"));
    QTRY_COMPARE_WITH_TIMEOUT(server.controlPlane().requestsWaitingForTheLock(), 1, 5000);
    const QByteArray answer = stopAndRead(server, socket);
    QVERIFY2(answer.startsWith("HTTP/1.1 503"), answer.constData());
    route.holder->release();
    Problem problem;
    QVERIFY2(server.controlPlane().start(&problem), qPrintable(problem.detail));
    route.addRoute(-1);
    const Reply retry = route.post();
    QVERIFY2(retry.status == 201, retry.body.constData());
    QCOMPARE(route.commits, 1);
}

void tst_BusyStorage::aRequestWhoseKeyWasLetGoDoesNotCommit()
{
    // The request waited aside with its key; meanwhile the key was let go as a dead request's
    // (another server starting on the same file, or a replica's takeover after a minute), and a
    // retry took it. The request runs again, under what it takes for its own key, just as the
    // retry commits. It must not commit too: that would carry the request out twice.
    QString databaseUrl;
    std::unique_ptr<WriteLockHolder> *holder = nullptr;
    KeyThenLockRoute route(-1, [&databaseUrl, &holder](int run) {
        if (run != 2)
            return;
        // The lock is free for this run, and the retry commits at its start, on another connection.
        (*holder)->release();
        Database other(databaseUrl);
        if (!other.open() || !other.exec(QStringLiteral("UPDATE idempotency_keys SET state = 'committed' WHERE key = 'held-1'")))
            qWarning("the retry's commit was not written");
    });
    databaseUrl = route.server.databaseUrl();
    holder = &route.holder;
    QVERIFY2(route.server.isRunning(), qPrintable(route.server.error()));
    const Reply r = route.post();
    QVERIFY2(r.status == 409, r.body.constData());
    QCOMPARE(r.code(), QStringLiteral("idempotency-key-in-use"));
    QCOMPARE(route.runs, 2);
    QCOMPARE(route.commits, 0);
}

QTEST_MAIN(tst_BusyStorage)
#include "tst_busystorage.moc"
