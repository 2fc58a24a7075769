// The connection state shown in the status bar, and its wording.
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

namespace {

// Where the rows on screen come from: nowhere yet, this session's last contact, or the disk cache
// of an earlier session.
enum Rows { NoRows, SessionRows, CachedRows, RowsCount };

// What the status says, short of the rows' time.
enum Sentence { Connecting, ReconnectingIn, Reconnecting, OfflineRetryingIn, OfflineRetrying, Offline, SentenceCount };

// Every form is one whole sentence, so that a translation can put the state, the rows' time and
// the countdown in the order its language wants.
constexpr const char *kSentences[SentenceCount][RowsCount] = {
    {
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Connecting…"),
        //: %1: the time of the last contact, which the rows shown date from
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Connecting… (data as of %1)"),
        //: %1: the time the cached rows shown were written
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Connecting… (cached data as of %1)"),
    },
    {
        //: %1: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting in %1 s…"),
        //: %1: the time of the last contact, which the rows shown date from; %2: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting in %2 s… (data as of %1)"),
        //: %1: the time the cached rows shown were written; %2: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting in %2 s… (cached data as of %1)"),
    },
    {
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting…"),
        //: %1: the time of the last contact, which the rows shown date from
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting… (data as of %1)"),
        //: %1: the time the cached rows shown were written
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Reconnecting… (cached data as of %1)"),
    },
    {
        //: %1: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline, retrying in %1 s"),
        //: %1: the time of the last contact, which the rows shown date from; %2: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (data as of %1), retrying in %2 s"),
        //: %1: the time the cached rows shown were written; %2: whole seconds to the next attempt
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (cached data as of %1), retrying in %2 s"),
    },
    {
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline, retrying…"),
        //: %1: the time of the last contact, which the rows shown date from
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (data as of %1), retrying…"),
        //: %1: the time the cached rows shown were written
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (cached data as of %1), retrying…"),
    },
    {
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline"),
        //: %1: the time of the last contact, which the rows shown date from
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (data as of %1)"),
        //: %1: the time the cached rows shown were written
        QT_TRANSLATE_NOOP("OpsDeck::ConnectionStatus", "Offline (cached data as of %1)"),
    },
};

} // namespace

QString ConnectionStatus::rowsTime() const
{
    const QDateTime asOf = (m_lastSync.isValid() ? m_lastSync : m_cachedAsOf).toLocalTime();
    if (!asOf.isValid())
        return {};
    // A cache from another day needs its date; today's only its time.
    QString when = QLocale().toString(asOf.time(), QLocale::LongFormat);
    if (asOf.date() != QDate::currentDate())
        //: %1: a date, %2: a time of day
        when = tr("%1 %2").arg(QLocale().toString(asOf.date(), QLocale::ShortFormat), when);
    return when;
}

QString ConnectionStatus::text() const
{
    const int seconds = secondsToAttempt();
    Sentence sentence = Offline;
    switch (m_state) {
    case State::Live:
        return tr("Live");
    case State::Connecting:
        sentence = Connecting;
        break;
    case State::Reconnecting:
        sentence = seconds > 0 ? ReconnectingIn : Reconnecting;
        break;
    case State::Offline:
        sentence = seconds > 0 ? OfflineRetryingIn : seconds == 0 ? OfflineRetrying : Offline;
        break;
    }
    const Rows rows = m_lastSync.isValid() ? SessionRows : m_cachedAsOf.isValid() ? CachedRows : NoRows;
    const QString pattern = tr(kSentences[sentence][rows]);
    const bool countingDown = sentence == ReconnectingIn || sentence == OfflineRetryingIn;
    if (rows == NoRows)
        return countingDown ? pattern.arg(seconds) : pattern;
    // One call for both, so that a translation may name the seconds before the time.
    return countingDown ? pattern.arg(rowsTime(), QString::number(seconds)) : pattern.arg(rowsTime());
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
