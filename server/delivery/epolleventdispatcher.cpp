// An event dispatcher on Linux's epoll, for the thread that sends callbacks.
#include "epolleventdispatcher.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QThread>
#include <QTimerEvent>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

namespace OpsDeck {

namespace {

constexpr int kMaxEventsPerTurn = 256;
constexpr qint64 kNsPerMs = 1000 * 1000;
// What each kind of notifier waits for, by QSocketNotifier::Type (Read, Write, Exception).
constexpr quint32 kEventsByType[3] = {EPOLLIN, EPOLLOUT, EPOLLPRI};

} // namespace

std::unique_ptr<EpollEventDispatcher> EpollEventDispatcher::create()
{
    const int epoll = epoll_create1(EPOLL_CLOEXEC);
    if (epoll < 0)
        return nullptr;
    const int wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wakeFd;
    if (wakeFd < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, wakeFd, &ev) != 0) {
        if (wakeFd >= 0)
            ::close(wakeFd);
        ::close(epoll);
        return nullptr;
    }
    return std::unique_ptr<EpollEventDispatcher>(new EpollEventDispatcher(epoll, wakeFd));
}

bool EpollEventDispatcher::install(QThread *thread)
{
    auto dispatcher = create();
    if (!dispatcher)
        return false;
    if (thread)
        thread->setEventDispatcher(dispatcher.release());
    else
        QCoreApplication::setEventDispatcher(dispatcher.release());
    return true;
}

EpollEventDispatcher::EpollEventDispatcher(int epoll, int wakeFd)
    : m_epoll(epoll)
    , m_wakeFd(wakeFd)
{
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    ::close(m_wakeFd);
    ::close(m_epoll);
}

void EpollEventDispatcher::startingUp()
{
    m_thread.store(QThread::currentThreadId(), std::memory_order_release);
}

bool EpollEventDispatcher::isOwnThread() const
{
    const Qt::HANDLE own = m_thread.load(std::memory_order_acquire);
    return own && QThread::currentThreadId() == own;
}

qint64 EpollEventDispatcher::now()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted.storeRelaxed(0);
    Q_EMIT awake();
    m_postedHere = false;
    QCoreApplication::sendPostedEvents();

    // Events posted meanwhile from this thread did not write the eventfd (wakeUp()): they are
    // what keeps this turn from waiting.
    const bool mayWait = flags.testFlag(QEventLoop::WaitForMoreEvents) && !m_postedHere
                         && !m_interrupted.loadRelaxed() && m_unwatchable.isEmpty();
    const int timeout = mayWait ? (flags.testFlag(QEventLoop::X11ExcludeTimers) ? -1 : msToNextTimer()) : 0;
    applyChanges();
    if (timeout != 0)
        Q_EMIT aboutToBlock();
    epoll_event events[kMaxEventsPerTurn];
    int ready = epoll_wait(m_epoll, events, kMaxEventsPerTurn, timeout);
    if (ready < 0)
        ready = 0; // EINTR: a signal; the loop turns again

    for (int i = 0; i < ready; ++i) {
        const int fd = events[i].data.fd;
        if (fd == m_wakeFd) {
            eventfd_t count;
            eventfd_read(m_wakeFd, &count);
            // Reset before this thread next sends the posted events: a post after this point
            // writes the eventfd again, one before it is sent on the next turn.
            m_wakePending.storeRelease(0);
            continue;
        }
        const auto watch = m_watches.constFind(fd);
        if (watch == m_watches.cend())
            continue;
        const quint32 got = events[i].events;
        // A hang-up or an error is news to every notifier of the descriptor (the kernel reports
        // it whatever was asked, so one left out would have the loop spin): they learn which.
        const bool broken = got & (EPOLLHUP | EPOLLERR);
        for (int type = 0; type < 3; ++type) {
            if (QSocketNotifier *n = watch->notifiers[type]; n && ((got & kEventsByType[type]) || broken))
                m_activations.append(n);
        }
    }
    for (const int fd : std::as_const(m_unwatchable)) {
        const Watch &watch = m_watches.value(fd);
        for (QSocketNotifier *n : watch.notifiers) {
            if (n)
                m_activations.append(n);
        }
    }

    int activated = 0;
    if (flags.testFlag(QEventLoop::ExcludeSocketNotifiers))
        m_activations.clear(); // still ready next turn: level-triggered
    else
        activated += activateSocketNotifiers();
    if (!flags.testFlag(QEventLoop::X11ExcludeTimers))
        activated += activateTimers();
    return activated > 0;
}

int EpollEventDispatcher::activateSocketNotifiers()
{
    // One at a time from the front: a nested event loop inside a slot goes on with the rest, and
    // a notifier unregistered meanwhile (its socket closed by an earlier slot) was nulled here.
    int activated = 0;
    while (!m_activations.isEmpty()) {
        QSocketNotifier *notifier = m_activations.takeFirst();
        if (!notifier)
            continue;
        QEvent event(QEvent::SockAct);
        QCoreApplication::sendEvent(notifier, &event);
        ++activated;
    }
    return activated;
}

int EpollEventDispatcher::activateTimers()
{
    if (m_timers.isEmpty())
        return 0;
    const qint64 t = now();
    QList<std::pair<qint64, int>> due; // deadline, id
    for (const Timer &timer : std::as_const(m_timers)) {
        if (!timer.firing && timer.deadline <= t)
            due.append({timer.deadline, timer.id});
    }
    std::sort(due.begin(), due.end());
    const auto find = [this](int id) {
        return std::find_if(m_timers.begin(), m_timers.end(), [id](const Timer &timer) { return timer.id == id; });
    };
    int fired = 0;
    for (const auto &[deadline, id] : std::as_const(due)) {
        // An earlier timer's slot may have stopped this one, or restarted it (a new deadline).
        auto timer = find(id);
        if (timer == m_timers.end() || timer->firing || timer->deadline > t)
            continue;
        // The next one an interval after this one was due; a timer behind by more than its
        // interval (the loop was busy) fires once, not in a burst to catch up.
        const qint64 interval = timer->interval * kNsPerMs;
        timer->deadline += interval;
        if (timer->deadline <= t)
            timer->deadline = t + interval;
        timer->firing = true;
        QObject *object = timer->object;
        QTimerEvent event(id);
        QCoreApplication::sendEvent(object, &event);
        ++fired;
        timer = find(id);
        if (timer != m_timers.end())
            timer->firing = false;
    }
    return fired;
}

int EpollEventDispatcher::msToNextTimer() const
{
    qint64 earliest = LLONG_MAX;
    for (const Timer &timer : m_timers) {
        if (!timer.firing)
            earliest = std::min(earliest, timer.deadline);
    }
    return earliest == LLONG_MAX ? -1 : msUntil(earliest);
}

int EpollEventDispatcher::msUntil(qint64 deadline)
{
    const qint64 left = deadline - now();
    return left <= 0 ? 0 : int(std::min<qint64>(INT_MAX, (left + kNsPerMs - 1) / kNsPerMs));
}

quint32 EpollEventDispatcher::wantedEvents(const Watch &watch)
{
    quint32 events = 0;
    for (int type = 0; type < 3; ++type) {
        if (watch.notifiers[type])
            events |= kEventsByType[type];
    }
    return events;
}

void EpollEventDispatcher::applyChanges()
{
    for (const int fd : std::as_const(m_changed)) {
        const auto watch = m_watches.find(fd);
        if (watch == m_watches.end())
            continue; // removed since: the kernel was told then
        watch->changed = false;
        const quint32 wanted = wantedEvents(*watch);
        if (wanted != watch->registered)
            updateKernel(fd, *watch, wanted);
    }
    m_changed.clear();
}

void EpollEventDispatcher::updateKernel(int fd, Watch &watch, quint32 wanted)
{
    epoll_event ev{};
    ev.events = wanted;
    ev.data.fd = fd;
    int op = watch.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    int result = epoll_ctl(m_epoll, op, fd, &ev);
    // The kernel drops a closed descriptor by itself, and the number may be a new socket's now.
    if (result != 0 && op == EPOLL_CTL_MOD && errno == ENOENT)
        result = epoll_ctl(m_epoll, op = EPOLL_CTL_ADD, fd, &ev);
    else if (result != 0 && op == EPOLL_CTL_ADD && errno == EEXIST)
        result = epoll_ctl(m_epoll, op = EPOLL_CTL_MOD, fd, &ev);
    if (result == 0) {
        watch.registered = wanted;
        return;
    }
    if (errno == EPERM) {
        // A regular file: poll() calls it always ready, and so does this dispatcher.
        if (!m_unwatchable.contains(fd))
            m_unwatchable.append(fd);
        return;
    }
    qWarning("EpollEventDispatcher: cannot watch descriptor %d: %s", fd, strerror(errno));
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    const int type = int(notifier->type());
    if (fd < 0 || type < 0 || type > 2) {
        qWarning("EpollEventDispatcher: invalid socket notifier (descriptor %d)", fd);
        return;
    }
    Watch &watch = m_watches[fd];
    if (watch.notifiers[type] && watch.notifiers[type] != notifier)
        qWarning("EpollEventDispatcher: descriptor %d already has a notifier of this type; the new one replaces it", fd);
    watch.notifiers[type] = notifier;
    if (!watch.changed) {
        watch.changed = true;
        m_changed.append(fd);
    }
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    const int type = int(notifier->type());
    const auto watch = m_watches.find(fd);
    if (watch == m_watches.end() || type < 0 || type > 2 || watch->notifiers[type] != notifier)
        return;
    watch->notifiers[type] = nullptr;
    std::replace(m_activations.begin(), m_activations.end(), notifier, static_cast<QSocketNotifier *>(nullptr));
    if (watch->isEmpty()) {
        // At once: the descriptor may be closed next and its number given to another socket,
        // which a later change could not tell from this one.
        if (watch->registered)
            epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
        m_unwatchable.removeOne(fd);
        m_watches.erase(watch);
        return;
    }
    if (!watch->changed) {
        watch->changed = true;
        m_changed.append(fd);
    }
}

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object)
{
    m_timers.append(Timer{timerId, std::max<qint64>(0, interval), timerType, object,
                          now() + std::max<qint64>(0, interval) * kNsPerMs, false});
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    return m_timers.removeIf([timerId](const Timer &timer) { return timer.id == timerId; }) > 0;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    return m_timers.removeIf([object](const Timer &timer) { return timer.object == object; }) > 0;
}

QList<QAbstractEventDispatcher::TimerInfo> EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> infos;
    for (const Timer &timer : m_timers) {
        if (timer.object == object)
            infos.append(TimerInfo(timer.id, int(timer.interval), timer.type));
    }
    return infos;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    for (const Timer &timer : std::as_const(m_timers)) {
        if (timer.id == timerId)
            return msUntil(timer.deadline);
    }
    return -1;
}

void EpollEventDispatcher::wakeUp()
{
    // From this thread the loop is not waiting: it need only not wait on its next turn.
    if (isOwnThread()) {
        m_postedHere = true;
        return;
    }
    if (m_wakePending.testAndSetAcquire(0, 1))
        eventfd_write(m_wakeFd, 1);
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.storeRelaxed(1);
    wakeUp();
}

} // namespace OpsDeck
