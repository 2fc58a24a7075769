// EpollEventDispatcher, the sending thread's event loop: the whole test runs on it (initMain), so
// QTest's own waiting does too. Timers, events posted from other threads, quitting a thread,
// socket notifiers (toggled, deleted by an earlier slot, a descriptor number reused within one
// turn, a regular file) and TCP through QTcpServer and QTcpSocket.
#include "server/delivery/epolleventdispatcher.h"

#include <QtTest>

#include <QElapsedTimer>
#include <QPointer>
#include <QSocketNotifier>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryFile>
#include <QThread>
#include <QTimer>

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

using namespace OpsDeck;

namespace {

// Both ends of a local stream socket, closed when it goes.
struct SocketPair
{
    int fds[2] = {-1, -1};
    SocketPair() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds); }
    ~SocketPair() { closeEnd(0), closeEnd(1); }
    void closeEnd(int i)
    {
        if (fds[i] >= 0)
            ::close(fds[i]);
        fds[i] = -1;
    }
    bool isValid() const { return fds[0] >= 0 && fds[1] >= 0; }
    void send(int end) const { QCOMPARE_EQ(::write(fds[end], "x", 1), 1); }
    void drain(int end) const
    {
        char buffer[64];
        while (::read(fds[end], buffer, sizeof buffer) > 0) {
        }
    }
};

// Runs the event loop for `ms` (a QTimer ends it).
void spin(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

class tst_EpollEventDispatcher final : public QObject
{
    Q_OBJECT

public:
    static void initMain()
    {
        if (!EpollEventDispatcher::install())
            qFatal("the kernel refused an epoll or an eventfd");
    }

private slots:
    void installed();
    void timersFireInOrderNeverEarly();
    void remainingTime();
    void zeroTimerLeavesSocketsTheirTurn();
    void postFromAnotherThreadWakesTheLoop();
    void threadQuitsFromOutside();
    void readNotifierIsLevelTriggered();
    void writeNotifierToggles();
    void notifierDeletedByAnEarlierSlot();
    void descriptorNumberReusedWithinOneTurn();
    void regularFileIsAlwaysReady();
    void tcpEcho();
};

void tst_EpollEventDispatcher::installed()
{
    QVERIFY(qobject_cast<EpollEventDispatcher *>(QAbstractEventDispatcher::instance()));
}

void tst_EpollEventDispatcher::timersFireInOrderNeverEarly()
{
    QElapsedTimer clock;
    QStringList fired;
    qint64 shortAt = -1;
    qint64 longAt = -1;
    int ticks = 0;
    QTimer tick;
    tick.setTimerType(Qt::PreciseTimer);
    connect(&tick, &QTimer::timeout, this, [&] { ++ticks; });
    clock.start();
    QTimer::singleShot(60, Qt::PreciseTimer, this, [&] {
        fired << QStringLiteral("long");
        longAt = clock.elapsed();
    });
    QTimer::singleShot(20, Qt::PreciseTimer, this, [&] {
        fired << QStringLiteral("short");
        shortAt = clock.elapsed();
    });
    tick.start(5);
    QTRY_COMPARE(fired.size(), 2);
    tick.stop();
    QCOMPARE(fired, (QStringList{QStringLiteral("short"), QStringLiteral("long")}));
    // Rounded up to whole milliseconds: never before the interval.
    QCOMPARE_GE(shortAt, 20);
    QCOMPARE_GE(longAt, 60);
    // 60 ms of a 5 ms timer: it kept firing meanwhile (however late a busy machine made it).
    QCOMPARE_GE(ticks, 2);
    const int stopped = ticks;
    spin(30);
    QCOMPARE(ticks, stopped);
}

void tst_EpollEventDispatcher::remainingTime()
{
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    timer.start(10000);
    const int left = timer.remainingTime();
    QCOMPARE_GT(left, 0);
    QCOMPARE_LE(left, 10000);
    timer.stop();
    QCOMPARE(timer.remainingTime(), -1);
}

void tst_EpollEventDispatcher::zeroTimerLeavesSocketsTheirTurn()
{
    SocketPair pair;
    QVERIFY(pair.isValid());
    QSocketNotifier notifier(pair.fds[0], QSocketNotifier::Read);
    int reads = 0;
    connect(&notifier, &QSocketNotifier::activated, this, [&] {
        pair.drain(0);
        ++reads;
    });
    // A 0 ms timer fires on every turn and keeps the loop from waiting; the socket still gets
    // its turns.
    int idle = 0;
    QTimer busy;
    connect(&busy, &QTimer::timeout, this, [&] { ++idle; });
    busy.start(0);
    pair.send(1);
    QTRY_COMPARE(reads, 1);
    pair.send(1);
    QTRY_COMPARE(reads, 2);
    busy.stop();
    QCOMPARE_GT(idle, 0);
}

void tst_EpollEventDispatcher::postFromAnotherThreadWakesTheLoop()
{
    // No timer runs in this loop but the watchdog: only the eventfd can end its wait early.
    QEventLoop loop;
    bool watchdog = false;
    QTimer::singleShot(60000, &loop, [&] {
        watchdog = true;
        loop.quit();
    });
    std::atomic<bool> posted = false;
    std::thread other([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        QMetaObject::invokeMethod(&loop, [&] { loop.quit(); }, Qt::QueuedConnection);
        posted = true;
    });
    loop.exec();
    other.join();
    QVERIFY(posted);
    QVERIFY2(!watchdog, "the loop slept through an event posted from another thread");

    // Many posts from several threads while the loop runs: every one arrives, once.
    std::atomic<int> delivered = 0;
    constexpr int kThreads = 4;
    constexpr int kPosts = 2000;
    std::vector<std::thread> posters;
    QObject receiver;
    for (int t = 0; t < kThreads; ++t) {
        posters.emplace_back([&] {
            for (int i = 0; i < kPosts; ++i)
                QMetaObject::invokeMethod(&receiver, [&] { ++delivered; }, Qt::QueuedConnection);
        });
    }
    for (std::thread &t : posters)
        t.join();
    QTRY_COMPARE(delivered.load(), kThreads * kPosts);
    spin(20);
    QCOMPARE(delivered.load(), kThreads * kPosts);
}

void tst_EpollEventDispatcher::threadQuitsFromOutside()
{
    QThread thread;
    QVERIFY(EpollEventDispatcher::install(&thread));
    // Deleted in its thread as the thread ends (QThread::finished runs there).
    auto *worker = new QObject;
    worker->moveToThread(&thread);
    connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
    thread.start();
    // A call there and its answer here, both through the loops.
    Qt::HANDLE ranIn = nullptr;
    QMetaObject::invokeMethod(worker, [&] { ranIn = QThread::currentThreadId(); }, Qt::BlockingQueuedConnection);
    QVERIFY(ranIn);
    QVERIFY(ranIn != QThread::currentThreadId());
    // A timer there, idle here: the thread's loop waits for it, and quit() must still end it.
    QPointer<QObject> alive = worker;
    QMetaObject::invokeMethod(worker, [worker] { QTimer::singleShot(60000, worker, [] {}); }, Qt::BlockingQueuedConnection);
    thread.quit();
    QVERIFY(thread.wait(60000));
    QVERIFY(!alive);
}

void tst_EpollEventDispatcher::readNotifierIsLevelTriggered()
{
    SocketPair pair;
    QVERIFY(pair.isValid());
    QSocketNotifier notifier(pair.fds[0], QSocketNotifier::Read);
    int activations = 0;
    bool readIt = false;
    connect(&notifier, &QSocketNotifier::activated, this, [&] {
        ++activations;
        if (readIt)
            pair.drain(0);
    });
    pair.send(1);
    // Not read: reported again on the next turns, as poll() would.
    QTRY_COMPARE_GE(activations, 3);
    readIt = true;
    QTRY_VERIFY(::recv(pair.fds[0], nullptr, 0, MSG_PEEK | MSG_DONTWAIT) < 0);
    const int settled = activations;
    spin(30);
    QCOMPARE(activations, settled);
    // Disabled, then enabled again with data waiting.
    notifier.setEnabled(false);
    pair.send(1);
    spin(30);
    QCOMPARE(activations, settled);
    notifier.setEnabled(true);
    QTRY_COMPARE(activations, settled + 1);
}

void tst_EpollEventDispatcher::writeNotifierToggles()
{
    SocketPair pair;
    QVERIFY(pair.isValid());
    QSocketNotifier reader(pair.fds[0], QSocketNotifier::Read);
    QSocketNotifier writer(pair.fds[0], QSocketNotifier::Write);
    int writable = 0;
    int readable = 0;
    connect(&writer, &QSocketNotifier::activated, this, [&] {
        ++writable;
        writer.setEnabled(false); // as QAbstractSocket does once its buffer is written
    });
    connect(&reader, &QSocketNotifier::activated, this, [&] {
        ++readable;
        pair.drain(0);
    });
    QTRY_COMPARE(writable, 1);
    spin(20);
    QCOMPARE(writable, 1);
    // Enabled and disabled again within one turn: the kernel need not hear of it, and nothing fires.
    QTimer::singleShot(0, this, [&] {
        writer.setEnabled(true);
        writer.setEnabled(false);
    });
    spin(20);
    QCOMPARE(writable, 1);
    // The read notifier of the same descriptor kept working throughout.
    pair.send(1);
    QTRY_COMPARE(readable, 1);
    writer.setEnabled(true);
    QTRY_COMPARE(writable, 2);
}

void tst_EpollEventDispatcher::notifierDeletedByAnEarlierSlot()
{
    SocketPair a;
    SocketPair b;
    QVERIFY(a.isValid() && b.isValid());
    auto first = std::make_unique<QSocketNotifier>(a.fds[0], QSocketNotifier::Read);
    auto second = std::make_unique<QSocketNotifier>(b.fds[0], QSocketNotifier::Read);
    int activations = 0;
    // Both ready in the same turn; whichever comes first deletes the other, whose activation
    // was already due.
    connect(first.get(), &QSocketNotifier::activated, this, [&] {
        ++activations;
        a.drain(0);
        second.reset();
    });
    connect(second.get(), &QSocketNotifier::activated, this, [&] {
        ++activations;
        b.drain(0);
        first.reset();
    });
    a.send(1);
    b.send(1);
    QTRY_COMPARE(activations, 1);
    QVERIFY(!first != !second);
    spin(20);
    QCOMPARE(activations, 1);
    // The survivor still works.
    (first ? a : b).send(1);
    QTRY_COMPARE(activations, 2);
}

void tst_EpollEventDispatcher::descriptorNumberReusedWithinOneTurn()
{
    auto old = std::make_unique<SocketPair>();
    QVERIFY(old->isValid());
    const int number = old->fds[0];
    auto notifier = std::make_unique<QSocketNotifier>(number, QSocketNotifier::Read);
    spin(10); // the kernel watches the old descriptor now
    // In one go, with no turn of the loop between: the old socket's notifier goes, the socket
    // is closed, and a new socket gets the same number and a notifier of the same kind.
    std::unique_ptr<SocketPair> fresh;
    bool done = false;
    bool reused = false;
    int fired = 0;
    QTimer::singleShot(0, this, [&] {
        notifier.reset();
        old->closeEnd(0);
        fresh = std::make_unique<SocketPair>();
        done = true;
        const int end = fresh->fds[0] == number ? 0 : fresh->fds[1] == number ? 1 : -1;
        if (end < 0)
            return;
        reused = true;
        notifier = std::make_unique<QSocketNotifier>(number, QSocketNotifier::Read);
        connect(notifier.get(), &QSocketNotifier::activated, this, [&, end] {
            ++fired;
            fresh->drain(end);
        });
        fresh->send(1 - end);
    });
    QTRY_VERIFY(done);
    if (!reused)
        QSKIP("the kernel gave the new socket another number");
    QTRY_COMPARE(fired, 1);
}

void tst_EpollEventDispatcher::regularFileIsAlwaysReady()
{
    QTemporaryFile file;
    QVERIFY(file.open());
    QSocketNotifier notifier(file.handle(), QSocketNotifier::Read);
    int activations = 0;
    connect(&notifier, &QSocketNotifier::activated, this, [&] {
        if (++activations == 3)
            notifier.setEnabled(false);
    });
    QTRY_COMPARE(activations, 3);
    // Disabled, it no longer keeps the loop from waiting: a timer still fires on time.
    spin(20);
    QCOMPARE(activations, 3);
}

void tst_EpollEventDispatcher::tcpEcho()
{
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost));
    connect(&server, &QTcpServer::newConnection, this, [&] {
        while (QTcpSocket *peer = server.nextPendingConnection()) {
            connect(peer, &QTcpSocket::readyRead, peer, [peer] { peer->write(peer->readAll()); });
            connect(peer, &QTcpSocket::disconnected, peer, &QObject::deleteLater);
        }
    });
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(client.waitForConnected(60000) || client.state() == QAbstractSocket::ConnectedState);
    // Many requests, each written and answered in turn: the write notifier goes on and off for
    // every one, large ones take several turns.
    QByteArray received;
    connect(&client, &QTcpSocket::readyRead, this, [&] { received += client.readAll(); });
    QByteArray sent;
    for (int i = 0; i < 200; ++i) {
        const QByteArray chunk = QByteArray(i % 50 == 49 ? 256 * 1024 : 100, char('a' + i % 26));
        sent += chunk;
        client.write(chunk);
        QTRY_COMPARE(received.size(), sent.size());
    }
    QCOMPARE(received, sent);
    client.disconnectFromHost();
    QTRY_COMPARE(client.state(), QAbstractSocket::UnconnectedState);
}

QTEST_GUILESS_MAIN(tst_EpollEventDispatcher)
#include "tst_epolleventdispatcher.moc"
