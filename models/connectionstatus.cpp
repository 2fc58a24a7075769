// The connection state shown in the status bar.
#include "connectionstatus.h"

#include <QLocale>

#include <algorithm>

namespace OpsDeck {

ConnectionStatus::ConnectionStatus(QObject *parent)
    : QObject(parent)
{
    m_tick.setSingleShot(true);
    m_tick.setTimerType(Qt::PreciseTimer);
    connect(&m_tick, &QTimer::timeout, this, &ConnectionStatus::onTick);
}

int ConnectionStatus::nextAttemptMs() const
{
    return m_attemptScheduled ? int(m_nextAttempt.remainingTime()) : -1;
}

int ConnectionStatus::secondsToAttempt() const
{
    const int ms = nextAttemptMs();
    return ms < 0 ? -1 : (ms + 999) / 1000;
}

QString ConnectionStatus::text() const
{
    const QString when = m_lastSync.isValid()
        ? QLocale().toString(m_lastSync.toLocalTime().time(), QLocale::LongFormat)
        : QString();
    const int seconds = secondsToAttempt();
    switch (m_state) {
    case State::Live:
        return tr("Live");
    case State::Connecting:
        return tr("Connecting…");
    case State::Reconnecting:
        if (seconds > 0) {
            return when.isEmpty() ? tr("Reconnecting in %1 s…").arg(seconds)
                                  : tr("Reconnecting in %1 s… (offline as of %2)").arg(seconds).arg(when);
        }
        return when.isEmpty() ? tr("Reconnecting…") : tr("Reconnecting… (offline as of %1)").arg(when);
    case State::Offline:
        if (seconds > 0) {
            return when.isEmpty() ? tr("Offline, retrying in %1 s").arg(seconds)
                                  : tr("Offline (as of %1), retrying in %2 s").arg(when).arg(seconds);
        }
        if (seconds == 0)
            return when.isEmpty() ? tr("Offline, retrying…") : tr("Offline (as of %1), retrying…").arg(when);
        return when.isEmpty() ? tr("Offline") : tr("Offline (as of %1)").arg(when);
    }
    return {};
}

void ConnectionStatus::scheduleTick()
{
    const int ms = nextAttemptMs();
    if (ms <= 0) {
        m_tick.stop();
        return;
    }
    // The shown count drops when the time left crosses a whole second (3 s at 3000 ms..2001 ms).
    const int untilNext = ms % 1000 == 0 ? 1000 : ms % 1000;
    m_tick.start(untilNext);
}

void ConnectionStatus::onTick()
{
    if (!m_attemptScheduled)
        return;
    scheduleTick();
    emit changed();
}

void ConnectionStatus::setState(State state, Transport transport)
{
    const bool sameState = state == m_state && transport == m_transport
        && (state != State::Live || m_lastError.isEmpty());
    const bool same = sameState && !m_attemptScheduled;
    m_state = state;
    m_transport = transport;
    m_attemptScheduled = false;
    m_tick.stop();
    if (state == State::Live) {
        m_lastError.clear();
        m_lastSync = QDateTime::currentDateTimeUtc();
    }
    if (!same)
        emit changed();
}

void ConnectionStatus::setFailure(State state, const QString &error, int nextAttemptMs)
{
    // A live feed kept the rows current until this moment, even when nothing changed for a while.
    if (m_state == State::Live)
        m_lastSync = QDateTime::currentDateTimeUtc();
    m_state = state;
    m_transport = Transport::None;
    m_lastError = error;
    m_attemptScheduled = nextAttemptMs >= 0;
    m_nextAttempt = QDeadlineTimer(std::max(0, nextAttemptMs), Qt::PreciseTimer);
    scheduleTick();
    emit changed();
    if (m_attemptScheduled)
        emit retryScheduled(nextAttemptMs);
}

void ConnectionStatus::touch()
{
    m_lastSync = QDateTime::currentDateTimeUtc();
}

} // namespace OpsDeck
