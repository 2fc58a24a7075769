// The connection state shown in the status bar.
#include "connectionstatus.h"

#include <QLocale>

namespace OpsDeck {

ConnectionStatus::ConnectionStatus(QObject *parent)
    : QObject(parent)
{
}

QString ConnectionStatus::text() const
{
    const QString when = m_lastSync.isValid()
        ? QLocale().toString(m_lastSync.toLocalTime().time(), QLocale::LongFormat)
        : QString();
    switch (m_state) {
    case State::Live:
        return tr("Live");
    case State::Connecting:
        return tr("Connecting…");
    case State::Reconnecting:
        return when.isEmpty() ? tr("Reconnecting…") : tr("Reconnecting… (offline as of %1)").arg(when);
    case State::Offline:
        return when.isEmpty() ? tr("Offline") : tr("Offline (as of %1)").arg(when);
    }
    return {};
}

void ConnectionStatus::setState(State state, Transport transport)
{
    const bool same = state == m_state && transport == m_transport && m_nextAttemptMs < 0
        && (state != State::Live || m_lastError.isEmpty());
    m_state = state;
    m_transport = transport;
    m_nextAttemptMs = -1;
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
    m_nextAttemptMs = nextAttemptMs;
    emit changed();
}

void ConnectionStatus::touch()
{
    m_lastSync = QDateTime::currentDateTimeUtc();
}

} // namespace OpsDeck
