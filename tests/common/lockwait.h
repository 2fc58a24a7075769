// For tests that race a transaction on another connection against the code under test (PostgreSQL).
#pragma once

#include <QString>

#include <atomic>
#include <functional>
#include <memory>

class QSqlQuery;
class QThread;

namespace OpsDeck::Test {

// Polls on the holding transaction's connection until another backend waits for one of the locks
// it holds: the code under test has reached a row the holder wrote or locked, and the holder may
// commit. False after 20 s, or as soon as `abandon` (when given) is set: the code under test
// finished without waiting.
bool untilAnotherWaitsForMyLock(QSqlQuery &q, const std::atomic<bool> *abandon = nullptr);

// Another replica's transaction, in a thread with a connection of its own: `hold` writes (the
// transaction keeps their locks), then the holder waits until the code under test waits for one
// of those locks, runs `afterWait` (when given) and commits.
class LockHolder final
{
public:
    using Step = std::function<bool(QSqlQuery &)>;

    LockHolder(QString databaseUrl, Step hold, Step afterWait = {});
    ~LockHolder();
    LockHolder(const LockHolder &) = delete;
    LockHolder &operator=(const LockHolder &) = delete;

    // Starts the transaction; true once `hold` went through and its locks are held.
    bool start();
    // After the code under test returned: stops waiting for it and lets the transaction commit.
    // True if the code under test waited for the holder's locks while they were held (and
    // `afterWait`, when given, went through).
    bool finish();

private:
    QString m_url;
    Step m_hold;
    Step m_afterWait;
    std::unique_ptr<QThread> m_thread;
    std::atomic<int> m_phase{0}; // 1 holding, 2 the other waited, <0 failed or nobody waited
    std::atomic<bool> m_done{false};
};

} // namespace OpsDeck::Test
