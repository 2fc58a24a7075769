// Keep-alive connection pools of the callback sender against scripted loopback HTTP servers:
// reuse, Connection: close, servers hanging up idle or stale connections, the retry-once rule,
// the connection cap and its queue, cancelling, and responses arriving in tiny pieces.
#include "server/delivery/callbackconnectionpool.h"

#include "testsupport.h"

#include <QtTest>

#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

#include <functional>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QByteArray Request = QByteArrayLiteral("POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}");
const QByteArray Ok = QByteArrayLiteral("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");

// A loopback server that hands each complete request (fixed-length bodies only) to `answer`,
// with the connection's number (from 1) and the request's number on that connection (from 1).
struct ScriptedServer
{
    using Answer = std::function<void(QTcpSocket *socket, int connection, int request)>;

    explicit ScriptedServer(Answer answerWith)
        : answer(std::move(answerWith))
    {
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this] {
            while (QTcpSocket *socket = server.nextPendingConnection()) {
                const int number = ++connections;
                QObject::connect(socket, &QTcpSocket::disconnected, &server, [this] { ++disconnects; });
                QObject::connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
                QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket, number] {
                    QByteArray buffer = socket->property("buffer").toByteArray() + socket->readAll();
                    for (qsizetype end; (end = buffer.indexOf("\r\n\r\n")) >= 0;) {
                        const qsizetype length = buffer.indexOf("Content-Length: 2") >= 0 ? 2 : 0;
                        if (buffer.size() < end + 4 + length)
                            break;
                        buffer.remove(0, end + 4 + length);
                        ++requests;
                        const int served = socket->property("served").toInt() + 1;
                        socket->setProperty("served", served);
                        answer(socket, number, served);
                        if (socket->state() != QAbstractSocket::ConnectedState)
                            break;
                    }
                    socket->setProperty("buffer", buffer);
                });
            }
        });
    }

    bool listen() { return server.listen(QHostAddress::LocalHost, 0); }
    CallbackConnection::Target target() const { return {QHostAddress::LocalHost, server.serverPort(), false, {}}; }

    QTcpServer server;
    Answer answer;
    int connections = 0;
    int requests = 0;
    int disconnects = 0;
};

struct Outcome
{
    int responses = 0;
    int failures = 0;
    int lastStatus = 0;
    QByteArray lastBody;
    QString lastErrorClass;
    QString lastMessage;
};

void record(CallbackConnectionPool *pool, Outcome *outcome)
{
    QObject::connect(pool, &CallbackConnectionPool::responded, pool, [outcome](quint64, const HttpResponse &response) {
        ++outcome->responses;
        outcome->lastStatus = response.status;
        outcome->lastBody = response.body;
    });
    QObject::connect(pool, &CallbackConnectionPool::failed, pool,
                     [outcome](quint64, const QString &errorClass, const QString &message) {
                         ++outcome->failures;
                         outcome->lastErrorClass = errorClass;
                         outcome->lastMessage = message;
                     });
}

// A pool towards `target` (4 connections unless said otherwise) whose outcomes `outcome` counts.
std::unique_ptr<CallbackConnectionPool> poolFor(const CallbackConnection::Target &target, Outcome *outcome,
                                                int maxConnections = 4)
{
    auto pool = std::make_unique<CallbackConnectionPool>(target, maxConnections, 1024);
    record(pool.get(), outcome);
    return pool;
}

} // namespace

class tst_CallbackConnectionPool final : public QObject
{
    Q_OBJECT

public:
    static void initMain() { useRequestedEventDispatcher(); }

private slots:
    void keepAliveReusesOneConnection();
    void connectionCloseOpensANewOne();
    void serverClosingAnIdleConnection();
    void staleConnectionIsRetriedOnce_data();
    void staleConnectionIsRetriedOnce();
    void capQueuesAndCancels();
    void closeIdle();
    void unaskedBytesWhileIdleCloseTheConnection();
    void responseInTinyPieces();
    void bodyDelimitedByClose();
    void failures_data();
    void failures();
};

void tst_CallbackConnectionPool::keepAliveReusesOneConnection()
{
    ScriptedServer server([](QTcpSocket *socket, int, int) { socket->write(Ok); });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    for (int i = 1; i <= 5; ++i) {
        pool->submit(quint64(i), Request);
        QCOMPARE(outcome.responses, i - 1); // never from inside submit()
        QTRY_COMPARE(outcome.responses, i);
        QCOMPARE(outcome.lastStatus, 200);
        QCOMPARE(outcome.lastBody, QByteArray("ok"));
    }
    QCOMPARE(server.connections, 1);
    QCOMPARE(server.requests, 5);
    QCOMPARE(pool->connections(), 1);
    QCOMPARE(outcome.failures, 0);
}

void tst_CallbackConnectionPool::connectionCloseOpensANewOne()
{
    ScriptedServer server([](QTcpSocket *socket, int, int) {
        socket->write("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok");
        socket->disconnectFromHost();
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    for (int i = 1; i <= 3; ++i) {
        pool->submit(quint64(i), Request);
        QTRY_COMPARE(outcome.responses, i);
        QCOMPARE(pool->connections(), 0); // not kept after "Connection: close"
    }
    QCOMPARE(server.connections, 3);
    QCOMPARE(server.requests, 3);
    QCOMPARE(outcome.failures, 0);
}

void tst_CallbackConnectionPool::serverClosingAnIdleConnection()
{
    // The server answers keep-alive, then hangs up a moment later (its idle timeout).
    ScriptedServer server([](QTcpSocket *socket, int, int) {
        socket->write(Ok);
        QTimer::singleShot(20, socket, [socket] { socket->disconnectFromHost(); });
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.responses, 1);
    QTRY_COMPARE(pool->connections(), 0);
    pool->submit(2, Request);
    QTRY_COMPARE(outcome.responses, 2);
    QCOMPARE(server.connections, 2);
    QCOMPARE(server.requests, 2); // nothing was sent twice
    QCOMPARE(outcome.failures, 0);
}

void tst_CallbackConnectionPool::staleConnectionIsRetriedOnce_data()
{
    QTest::addColumn<bool>("retryAnswered");
    QTest::addColumn<int>("responses");
    QTest::addColumn<int>("failures");
    QTest::newRow("retry succeeds") << true << 2 << 0;
    // The retry went out on a fresh connection, and a fresh connection is never retried.
    QTest::newRow("retry fails too") << false << 1 << 1;
}

void tst_CallbackConnectionPool::staleConnectionIsRetriedOnce()
{
    QFETCH(bool, retryAnswered);
    QFETCH(int, responses);
    QFETCH(int, failures);
    // Connection 1 answers its first request and resets on its second without a byte of answer,
    // the way a kept-alive connection that the server had already dropped fails.
    ScriptedServer server([retryAnswered](QTcpSocket *socket, int connection, int request) {
        if ((connection == 1 && request == 1) || (connection > 1 && retryAnswered))
            socket->write(Ok);
        else
            socket->abort();
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.responses, 1);
    pool->submit(2, Request);
    QTRY_COMPARE(outcome.responses + outcome.failures, 2);
    QCOMPARE(outcome.responses, responses);
    QCOMPARE(outcome.failures, failures);
    if (failures > 0)
        QCOMPARE(outcome.lastErrorClass, QStringLiteral("connect"));
    QCOMPARE(server.connections, 2);
    QCOMPARE(server.requests, 3);
}

void tst_CallbackConnectionPool::capQueuesAndCancels()
{
    // A server that never answers: requests hold their connections.
    ScriptedServer server([](QTcpSocket *, int, int) {});
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome, 2);
    for (quint64 ticket = 1; ticket <= 5; ++ticket)
        pool->submit(ticket, Request);
    QTRY_COMPARE(server.requests, 2);
    QCOMPARE(server.connections, 2);
    QCOMPARE(pool->connections(), 2);
    QCOMPARE(pool->waiting(), 3);

    pool->setMaxConnections(4);
    QTRY_COMPARE(server.requests, 4);
    QCOMPARE(pool->waiting(), 1);

    // A waiting request is forgotten; one on the wire takes its connection down with it, and
    // the freed place goes to the next waiting one.
    pool->cancel(5);
    QCOMPARE(pool->waiting(), 0);
    pool->cancel(1);
    QCOMPARE(pool->connections(), 3);
    QTRY_COMPARE(server.disconnects, 1);
    for (quint64 ticket = 2; ticket <= 4; ++ticket)
        pool->cancel(ticket);
    QCOMPARE(pool->connections(), 0);
    QVERIFY(pool->isUnused());
    QTRY_COMPARE(server.disconnects, 4);
    QCOMPARE(outcome.responses + outcome.failures, 0); // cancelling reports nothing
}

void tst_CallbackConnectionPool::closeIdle()
{
    ScriptedServer server([](QTcpSocket *socket, int, int) { socket->write(Ok); });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.responses, 1);
    pool->closeIdle(60 * 1000);
    QCOMPARE(pool->connections(), 1); // not idle long enough
    pool->closeIdle(0);
    QCOMPARE(pool->connections(), 0);
    QTRY_COMPARE(server.disconnects, 1);
}

void tst_CallbackConnectionPool::unaskedBytesWhileIdleCloseTheConnection()
{
    ScriptedServer server([](QTcpSocket *socket, int, int) {
        socket->write(Ok);
        QTimer::singleShot(20, socket, [socket] { socket->write("HTTP/1.1 408 Request Timeout\r\n\r\n"); });
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.responses, 1);
    QTRY_COMPARE(pool->connections(), 0);
    QCOMPARE(outcome.lastStatus, 200);
    QCOMPARE(outcome.failures, 0);
}

void tst_CallbackConnectionPool::responseInTinyPieces()
{
    // A chunked answer dribbled out one byte per timer tick, each its own TCP segment.
    const QByteArray answer = QByteArrayLiteral("HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\nX-Tiny: 1\r\n\r\n"
                                                "3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n");
    ScriptedServer server([answer](QTcpSocket *socket, int, int) {
        auto *timer = new QTimer(socket);
        auto *sent = new qsizetype(0);
        connect(timer, &QTimer::timeout, socket, [socket, timer, sent, answer] {
            socket->write(answer.mid(*sent, 1));
            socket->flush();
            if (++*sent == answer.size()) {
                timer->stop();
                delete sent;
            }
        });
        timer->start(1);
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE_WITH_TIMEOUT(outcome.responses, 1, 20000);
    QCOMPARE(outcome.lastStatus, 202);
    QCOMPARE(outcome.lastBody, QByteArray("abcdefg"));
    QCOMPARE(pool->connections(), 1); // complete and reusable
    pool->submit(2, Request);
    QTRY_COMPARE_WITH_TIMEOUT(outcome.responses, 2, 20000);
    QCOMPARE(server.connections, 1);
}

void tst_CallbackConnectionPool::bodyDelimitedByClose()
{
    // No length, no chunking: the body runs until the server hangs up (HTTP/1.0 style).
    ScriptedServer server([](QTcpSocket *socket, int, int) {
        socket->write("HTTP/1.0 503 Service Unavailable\r\nRetry-After: 7\r\n\r\nbusy, ");
        QTimer::singleShot(20, socket, [socket] {
            socket->write("come back later");
            socket->disconnectFromHost();
        });
    });
    QVERIFY(server.listen());
    Outcome outcome;
    const auto pool = poolFor(server.target(), &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.responses, 1);
    QCOMPARE(outcome.lastStatus, 503);
    QCOMPARE(outcome.lastBody, QByteArray("busy, come back later"));
    QCOMPARE(outcome.failures, 0);
    QCOMPARE(pool->connections(), 0);
}

void tst_CallbackConnectionPool::failures_data()
{
    QTest::addColumn<QByteArray>("answer"); // "REFUSE": nothing listens; "ABORT": reset at once
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<QString>("message");
    QTest::newRow("refused") << QByteArray("REFUSE") << "connect" << "";
    QTest::newRow("reset before any answer") << QByteArray("ABORT") << "connect" << "closed before any response";
    QTest::newRow("closed mid-body") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") << "connect"
                                     << "before the response was complete";
    QTest::newRow("not http") << QByteArray("220 smtp.example ESMTP\r\n") << "http" << "malformed status line";
    QTest::newRow("oversized headers") << ("HTTP/1.1 200 OK\r\nX-Big: " + QByteArray(100 * 1024, 'h') + "\r\n\r\n") << "http"
                                       << "larger than";
    QTest::newRow("bad length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: lots\r\n\r\n") << "http"
                                << "invalid Content-Length";
}

void tst_CallbackConnectionPool::failures()
{
    QFETCH(QByteArray, answer);
    QFETCH(QString, errorClass);
    QFETCH(QString, message);
    ScriptedServer server([answer](QTcpSocket *socket, int, int) {
        if (answer == "ABORT") {
            socket->abort();
            return;
        }
        socket->write(answer);
        socket->disconnectFromHost();
    });
    QVERIFY(server.listen());
    CallbackConnection::Target target = server.target();
    if (answer == "REFUSE")
        server.server.close();
    Outcome outcome;
    const auto pool = poolFor(target, &outcome);
    pool->submit(1, Request);
    QTRY_COMPARE(outcome.failures, 1);
    QCOMPARE(outcome.responses, 0);
    QCOMPARE(outcome.lastErrorClass, errorClass);
    QVERIFY2(outcome.lastMessage.contains(message), qPrintable(outcome.lastMessage));
    QVERIFY(!outcome.lastMessage.isEmpty());
    QCOMPARE(pool->connections(), 0);
    QCOMPARE(server.requests, answer == "REFUSE" ? 0 : 1); // a fresh connection is never retried
}

QTEST_GUILESS_MAIN(tst_CallbackConnectionPool)
#include "tst_callbackconnectionpool.moc"
