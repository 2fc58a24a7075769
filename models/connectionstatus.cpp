// The connection state shown in the status bar.
#include "connectionstatus.h"

#include <QDate>
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

QString ConnectionStatus::asOfText() const
{
    const QDateTime asOf = (m_lastSync.isValid() ? m_lastSync : m_cachedAsOf).toLocalTime();
    if (!asOf.isValid())
        return {};
    // A cache from another day needs its date; today's only its time.
    QString when = QLocale().toString(asOf.time(), QLocale::LongFormat);
    if (asOf.date() != QDate::currentDate())
        when = tr("%1 %2").arg(QLocale().toString(asOf.date(), QLocale::ShortFormat), when);
    return m_lastSync.isValid() ? tr("as of %1").arg(when) : tr("cached data as of %1").arg(when);
}

QString ConnectionStatus::text() const
{
    const QString asOf = asOfText();
    const QString dated = asOf.isEmpty() ? QString() : tr(" (%1)").arg(asOf);
    const int seconds = secondsToAttempt();
    switch (m_state) {
    case State::Live:
        return tr("Live");
    case State::Connecting:
        return tr("Connecting…") + dated;
    case State::Reconnecting:
        return (seconds > 0 ? tr("Reconnecting in %1 s…").arg(seconds) : tr("Reconnecting…")) + dated;
    case State::Offline:
        if (seconds > 0)
            return tr("Offline") + dated + tr(", retrying in %1 s").arg(seconds);
        if (seconds == 0)
            return tr("Offline") + dated + tr(", retrying…");
        return tr("Offline") + dated;
    }
    return {};
}

void ConnectionStatus::setCachedAsOf(const QDateTime &asOf)
{
    if (asOf == m_cachedAsOf)
        return;
    m_cachedAsOf = asOf;
    emit changed();
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
        m_cachedAsOf = QDateTime();
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
