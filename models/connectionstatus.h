// The console's connection state (live / reconnecting / offline as of a time) for the status bar.
#pragma once

#include <QDateTime>
#include <QDeadlineTimer>
#include <QObject>
#include <QString>
#include <QTimer>

namespace OpsDeck {

class ConnectionStatus final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConnectionStatus)
    Q_PROPERTY(State state READ state NOTIFY changed)
    Q_PROPERTY(QDateTime lastSync READ lastSync NOTIFY changed)
    Q_PROPERTY(QString text READ text NOTIFY changed)

public:
    enum class State {
        Offline,      // not connected and not trying (stopped), or failing for a while: rows are the cache's
        Connecting,   // first contact: loading the cache and listing
        Live,         // the change feed is flowing
        Reconnecting, // lost the feed a moment ago, trying again
    };
    Q_ENUM(State)

    enum class Transport { None, WebSocket, LongPoll };
    Q_ENUM(Transport)

    explicit ConnectionStatus(QObject *parent = nullptr);

    State state() const { return m_state; }
    Transport transport() const { return m_transport; }
    // Last successful contact with the server (an answer or an event); invalid when never.
    QDateTime lastSync() const { return m_lastSync; }
    // Why the last attempt failed (the problem's detail), empty when live.
    QString lastError() const { return m_lastError; }
    // Milliseconds left until the next attempt while one is scheduled (0 once it is under way), else -1.
    int nextAttemptMs() const;
    bool isLive() const { return m_state == State::Live; }
    // The time of the cached rows shown before any contact in this session (the cache's last
    // write); invalid when there are none. Cleared once live: from then on lastSync() dates the rows.
    QDateTime cachedAsOf() const { return m_cachedAsOf; }
    void setCachedAsOf(const QDateTime &asOf);
    // One whole sentence for every state, saying what the rows shown date from (this session's
    // last contact, or the disk cache of an earlier one) and when the next attempt is: "Live",
    // "Connecting… (cached data as of 10:02:48)", "Reconnecting in 3 s… (data as of 21:30:05)",
    // "Offline (data as of 21:30:05), retrying in 3 s", "Offline (cached data as of 10:02:48),
    // retrying…". changed() is emitted whenever the seconds shown change.
    QString text() const;

    void setState(State state, Transport transport = Transport::None);
    void setFailure(State state, const QString &error, int nextAttemptMs);
    void touch(); // a successful contact now

signals:
    void changed();
    // A failure was recorded and the next attempt is due in delayMs.
    void retryScheduled(int delayMs);

private:
    // The time the rows shown date from ("21:30:05", with the date when not today), or empty.
    QString rowsTime() const;
    // Whole seconds left until the next attempt, rounded up (0 once it is under way, -1 for none).
    int secondsToAttempt() const;
    // Wakes when the seconds shown next change.
    void scheduleTick();
    void onTick();

    State m_state = State::Offline;
    Transport m_transport = Transport::None;
    QDateTime m_lastSync;
    QDateTime m_cachedAsOf;
    QString m_lastError;
    bool m_attemptScheduled = false;
    QDeadlineTimer m_nextAttempt;
    QTimer m_tick;
};

} // namespace OpsDeck
