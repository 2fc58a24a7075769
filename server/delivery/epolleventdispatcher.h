// An event dispatcher on Linux's epoll, for the thread that sends callbacks.
#pragma once

#include <QAbstractEventDispatcher>
#include <QAtomicInt>
#include <QHash>
#include <QList>

#include <atomic>
#include <memory>

class QSocketNotifier;
class QThread;

namespace OpsDeck {

// Qt's own dispatchers hand the kernel every watched socket on every turn of the event loop
// (poll()), so a turn costs as much as the connections open: the sending thread keeps one per
// slot of every endpoint. With epoll the kernel keeps the set and a turn costs what is ready.
//
// Level-triggered, as poll() is. A socket's read, write and exception notifiers share one
// registration; enabling and disabling them (QAbstractSocket turns its write notifier on and off
// around every request it writes) only marks the socket, and the kernel is told the net change
// once, before the loop waits. A socket whose last notifier goes is removed at once, since its
// descriptor may be closed and reused next. Timers keep millisecond precision (their timeouts
// round up, so none fires early). Other threads wake the loop through an eventfd, once per turn.
//
class EpollEventDispatcher final : public QAbstractEventDispatcher
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EpollEventDispatcher)

public:
    // Installs one on `thread` before it starts, or with no thread on the main thread before the
    // QCoreApplication exists. False where the kernel refuses an epoll or an eventfd: the thread
    // keeps Qt's default. The thread (or the application) owns it.
    static bool install(QThread *thread = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;
    void startingUp() override;

private:
    EpollEventDispatcher(int epoll, int wakeFd);
    static std::unique_ptr<EpollEventDispatcher> create();

    // The notifiers of one descriptor, by QSocketNotifier::Type, and the events the kernel has.
    struct Watch
    {
        QSocketNotifier *notifiers[3] = {};
        quint32 registered = 0; // epoll events the kernel watches for (0: not added)
        bool changed = false;   // listed in m_changed
        bool isEmpty() const { return !notifiers[0] && !notifiers[1] && !notifiers[2]; }
    };
    struct Timer
    {
        int id = 0;
        qint64 interval = 0; // ms
        Qt::TimerType type = Qt::CoarseTimer;
        QObject *object = nullptr;
        qint64 deadline = 0; // ns on the monotonic clock
        bool firing = false; // its QTimerEvent is being delivered (a nested loop must not repeat it)
    };

    static qint64 now();
    static quint32 wantedEvents(const Watch &watch);
    // Tells the kernel what changed since the last turn.
    void applyChanges();
    void updateKernel(int fd, Watch &watch, quint32 wanted);
    // -1: no timer; else ms until the earliest one is due, rounded up.
    int msToNextTimer() const;
    // Milliseconds until `deadline` (ns, monotonic), rounded up; 0 once it passed.
    static int msUntil(qint64 deadline);
    int activateTimers();
    int activateSocketNotifiers();
    bool isOwnThread() const;

    int m_epoll;
    int m_wakeFd;
    QHash<int, Watch> m_watches;
    QList<int> m_changed;                 // descriptors whose notifiers changed since the last turn
    QList<int> m_unwatchable;             // descriptors epoll refuses (regular files): always ready, as poll() says
    QList<QSocketNotifier *> m_activations; // ready, not yet delivered; nulled when unregistered
    QList<Timer> m_timers;
    QAtomicInt m_wakePending;   // the eventfd was written and not yet read
    QAtomicInt m_interrupted;
    bool m_postedHere = false;  // events were posted from this thread since the posted events were sent
    std::atomic<Qt::HANDLE> m_thread = nullptr; // set as the thread starts; wakeUp() reads it from any thread
};

} // namespace OpsDeck
