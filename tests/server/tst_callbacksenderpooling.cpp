// The callback sender's connection pools against the real demo provider: kept-alive reuse,
// per-endpoint pools and their caps, idle close, many attempts at once, abortAll() and a sender
// deleted from its own callback.
#include "server/delivery/callbacksender.h"

#include "callbackfixture.h"
#include "testsupport.h"

#include <QtTest>

#include <QJsonObject>
#include <QProcess>
#include <QTcpServer>
#include <QTcpSocket>

using namespace OpsDeck;
using namespace OpsDeck::Test;
using namespace std::chrono_literals;

namespace {

const QByteArray SecretA = QByteArrayLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");

} // namespace

class tst_CallbackSenderPooling final : public QObject
{
    Q_OBJECT

public:
    static void initMain() { useRequestedEventDispatcher(); }

private slots:
    void initTestCase();
    void cleanupTestCase();
    void manyConcurrentSends();
    void callbackWithContext();
    void abortAllReportsEveryAttempt();
    void isolationKeepsHangsInTheirPool();
    void sequentialSendsShareOneConnection();
    void knownAddressIsWrittenFromInsideSend();
    void idleConnectionsAreClosed();
    void connectionCapIsConfigurable();
    void deletedFromItsOwnCallback_data();
    void deletedFromItsOwnCallback();

private:
    void send(CallbackSender &sender, const CallbackRequest &req, AttemptResult *result) { sendAndWait(sender, req, result); }
    CallbackRequest request(const QString &url, const QByteArray &id) const { return stoppedInstanceRequest(url, id, SecretA); }

    DemoProvider m_providerA; // knows SecretA
    int m_nextId = 1;
};

void tst_CallbackSenderPooling::initTestCase()
{
    startProvider(&m_providerA, {QString::fromLatin1(SecretA)});
}

void tst_CallbackSenderPooling::cleanupTestCase()
{
    if (!m_providerA.process)
        return;
    m_providerA.process->terminate();
    QVERIFY(m_providerA.process->waitForFinished(10000));
    // SIGTERM flushes the log and exits cleanly.
    QCOMPARE(m_providerA.process->exitStatus(), QProcess::NormalExit);
    QCOMPARE(m_providerA.process->exitCode(), 0);
}

void tst_CallbackSenderPooling::manyConcurrentSends()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    QSet<quint64> ids;
    constexpr int Count = 40;
    for (int i = 0; i < Count; ++i) {
        // Half of them hang. They share one pool with the others, so its 6 connections are
        // taken by hangs until they time out; every attempt must still end, classified.
        const QString path = i % 2 ? QStringLiteral("/hang/many") : QStringLiteral("/slow/50/many");
        CallbackRequest req = request(m_providerA.baseUrl + path, "msg_many_" + QByteArray::number(i));
        req.timeout = i % 2 ? 1s : 20s;
        ids.insert(sender.send(req));
    }
    QCOMPARE(ids.size(), Count);
    QCOMPARE(sender.inFlight(), Count);
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), Count, 30000);
    int delivered = 0;
    int timedOut = 0;
    for (const QList<QVariant> &arguments : std::as_const(spy)) {
        QVERIFY(ids.remove(arguments.at(0).toULongLong()));
        const AttemptResult result = arguments.at(1).value<AttemptResult>();
        delivered += result.delivered ? 1 : 0;
        timedOut += result.errorClass == QLatin1String("timeout") ? 1 : 0;
    }
    QCOMPARE(delivered, Count / 2);
    QCOMPARE(timedOut, Count / 2);
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSenderPooling::callbackWithContext()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    int calls = 0;
    AttemptResult seen;
    QObject context;
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/ok/cb"), "msg_cb_1"), &context,
                [&calls, &seen](const AttemptResult &result) {
                    ++calls;
                    seen = result;
                });
    auto *gone = new QObject;
    int goneCalls = 0;
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/ok/cb"), "msg_cb_2"), gone,
                [&goneCalls](const AttemptResult &) { ++goneCalls; });
    delete gone;
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 20000);
    QCOMPARE(calls, 1);
    QVERIFY(seen.delivered);
    QCOMPARE(goneCalls, 0);
}

void tst_CallbackSenderPooling::abortAllReportsEveryAttempt()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/hang/abort"), "msg_abort_1"));
    sender.send(request(QStringLiteral("http://opsdeck-abort.invalid/x"), "msg_abort_2"));
    // Wait until the hanging request is really at the provider before pulling the plug.
    QTRY_VERIFY_WITH_TIMEOUT(!logEntry(m_providerA, "msg_abort_1").isEmpty() || spy.count() > 0, 10000);
    sender.abortAll();
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 10000);
    for (const QList<QVariant> &arguments : std::as_const(spy)) {
        const AttemptResult result = arguments.at(1).value<AttemptResult>();
        QVERIFY(!result.delivered);
        QVERIFY2(result.errorClass == QLatin1String("connect") || result.errorClass == QLatin1String("dns"),
                 qPrintable(result.errorClass));
    }
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSenderPooling::isolationKeepsHangsInTheirPool()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QCOMPARE(sender.maxConnectionsPerPool(), 6);
    QSignalSpy spy(&sender, &CallbackSender::finished);
    // Eight hanging attempts of one endpoint: they fill that pool's 6 connections, 2 queue.
    for (int i = 0; i < 8; ++i) {
        CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/hang/isolated"),
                                      "msg_isolated_hang_" + QByteArray::number(i));
        req.isolationKey = QStringLiteral("endpoint-hanging");
        req.timeout = 60s;
        sender.send(req);
    }
    const auto hangsAtProvider = [this] {
        int count = 0;
        for (int i = 0; i < 8; ++i)
            count += logEntry(m_providerA, "msg_isolated_hang_" + QByteArray::number(i)).isEmpty() ? 0 : 1;
        return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), 6, 20000);

    // Another endpoint on the same host:port is not stuck behind them.
    CallbackRequest ok = request(m_providerA.baseUrl + QStringLiteral("/ok/isolated"), "msg_isolated_ok");
    ok.isolationKey = QStringLiteral("endpoint-healthy");
    ok.timeout = 60s;
    const quint64 okId = sender.send(ok);
    QTRY_VERIFY_WITH_TIMEOUT(spy.count() >= 1, 30000);
    QCOMPARE(spy.at(0).at(0).toULongLong(), okId);
    QVERIFY(spy.at(0).at(1).value<AttemptResult>().delivered);
    QCOMPARE(sender.isolatedPools(), 2);
    QCOMPARE(sender.inFlight(), 8);

    sender.abortAll();
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 9, 10000);
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSenderPooling::sequentialSendsShareOneConnection()
{
    CallbackSender sender(CallbackUrlGuard(true));
    for (int i = 0; i < 5; ++i) {
        AttemptResult result;
        send(sender, request(m_providerA.baseUrl + QStringLiteral("/ok/reuse"), "msg_reuse_" + QByteArray::number(m_nextId++)),
             &result);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(result.delivered, qPrintable(result.errorMessage));
        // Kept alive and reused: never more than the one connection.
        QCOMPARE(sender.openConnections(), 1);
    }
    QCOMPARE(sender.pools(), 1);
    QCOMPARE(sender.isolatedPools(), 0);
}

void tst_CallbackSenderPooling::knownAddressIsWrittenFromInsideSend()
{
    // A plain listener in place of the provider, to watch the wire: once a kept-alive connection
    // to the address is up, a request is on it when send() returns, before the sender's event
    // loop turns again. A worker refilling a slot from a finished attempt's callback relies on it
    // to keep the provider busy while the other responses of that turn are read.
    QTcpServer listener;
    QVERIFY(listener.listen(QHostAddress::LocalHost));
    const QString url = QStringLiteral("http://127.0.0.1:%1/wire").arg(listener.serverPort());
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy finished(&sender, &CallbackSender::finished);
    const QByteArray ok = QByteArrayLiteral("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");

    sender.send(request(url, "msg_wire_1"));
    QTRY_VERIFY(listener.hasPendingConnections());
    std::unique_ptr<QTcpSocket> peer(listener.nextPendingConnection());
    QByteArray first;
    QTRY_VERIFY((first += peer->readAll()).contains("msg_wire_1") && first.endsWith('}'));
    peer->write(ok);
    QTRY_COMPARE(finished.count(), 1);

    sender.send(request(url, "msg_wire_2"));
    QCOMPARE(finished.count(), 1); // still never reported from inside send()
    // Waits on this socket alone: the sender's events are not processed meanwhile.
    QVERIFY2(peer->waitForReadyRead(5000), "the request was left for a later turn of the event loop");
    QByteArray second = peer->readAll();
    while (!second.endsWith('}') && peer->waitForReadyRead(5000))
        second += peer->readAll();
    QVERIFY(second.startsWith("POST /wire HTTP/1.1\r\n"));
    QVERIFY(second.contains("webhook-id: msg_wire_2\r\n"));
    QVERIFY(!listener.hasPendingConnections()); // on the kept-alive connection
    peer->write(ok);
    QTRY_COMPARE(finished.count(), 2);
    QVERIFY(finished.at(1).at(1).value<AttemptResult>().delivered);
}

void tst_CallbackSenderPooling::idleConnectionsAreClosed()
{
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/ok/idle"), "msg_idle");
    req.isolationKey = QStringLiteral("endpoint-idle");
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(sender.openConnections(), 1);
    QCOMPARE(sender.isolatedPools(), 1);
    // After IdleConnectionMs without traffic the connection is closed and its pool dropped.
    QTRY_COMPARE_WITH_TIMEOUT(sender.pools(), 0, 4 * CallbackSender::IdleConnectionMs);
    QCOMPARE(sender.openConnections(), 0);
}

void tst_CallbackSenderPooling::connectionCapIsConfigurable()
{
    CallbackSender sender(CallbackUrlGuard(true));
    sender.setMaxConnectionsPerPool(10);
    QCOMPARE(sender.maxConnectionsPerPool(), 10);
    QSignalSpy spy(&sender, &CallbackSender::finished);
    constexpr int Count = 12;
    for (int i = 0; i < Count; ++i) {
        CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/hang/wide"), "msg_wide_" + QByteArray::number(i));
        req.isolationKey = QStringLiteral("endpoint-wide");
        req.timeout = 60s;
        sender.send(req);
    }
    const auto hangsAtProvider = [this] {
        int count = 0;
        for (int i = 0; i < Count; ++i)
            count += logEntry(m_providerA, "msg_wide_" + QByteArray::number(i)).isEmpty() ? 0 : 1;
        return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), 10, 20000);
    QCOMPARE(sender.openConnections(), 10);

    // Raised while requests wait: the pool opens more for them.
    sender.setMaxConnectionsPerPool(Count);
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), Count, 20000);
    QCOMPARE(sender.openConnections(), Count);
    QCOMPARE(spy.count(), 0);

    sender.abortAll();
    QCOMPARE(spy.count(), Count);
    QCOMPARE(sender.openConnections(), 0);
}

void tst_CallbackSenderPooling::deletedFromItsOwnCallback_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("delivered");
    QTest::newRow("on a response") << "/ok/delete" << true;
    QTest::newRow("on a failure") << "/fail/delete" << false;
}

void tst_CallbackSenderPooling::deletedFromItsOwnCallback()
{
    // A worker shutting down may drop its sender from inside finished(); the sockets whose
    // signal brought it there must survive that.
    QFETCH(QString, path);
    QFETCH(bool, delivered);
    auto *sender = new CallbackSender(CallbackUrlGuard(true));
    QPointer<CallbackSender> watch(sender);
    bool reported = false;
    bool deliveredSeen = false;
    QObject context;
    // A second attempt in flight on another connection of the same pool goes down with it.
    sender->send(request(m_providerA.baseUrl + QStringLiteral("/hang/delete"), "msg_delete_hang"));
    sender->send(request(m_providerA.baseUrl + path, "msg_delete_" + QByteArray::number(m_nextId++)), &context,
                 [&reported, &deliveredSeen, sender](const AttemptResult &result) {
                     reported = true;
                     deliveredSeen = result.delivered;
                     delete sender;
                 });
    QTRY_VERIFY_WITH_TIMEOUT(reported, 20000);
    QVERIFY(watch.isNull());
    QCOMPARE(deliveredSeen, delivered);
    // Let what the sender left to the event loop run; none of it may touch the sender.
    QPointer<QObject> marker(new QObject);
    marker->deleteLater();
    QTRY_VERIFY(marker.isNull());
}

QTEST_GUILESS_MAIN(tst_CallbackSenderPooling)
#include "tst_callbacksenderpooling.moc"
