// For tests that race a transaction on another connection against the code under test (PostgreSQL).
#pragma once

#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

class QSqlQuery;
class QThread;

namespace OpsDeck {
class Database;
}

namespace OpsDeck::Test {

// Polls on the holding transaction's connection until another backend waits for one of the locks
// it holds: the code under test has reached a row the holder wrote or locked, and the holder may
// commit. False after 20 s, or as soon as `abandon` (when given) is set: the code under test
// finished without waiting.
bool untilAnotherWaitsForMyLock(QSqlQuery &q, const std::atomic<bool> *abandon = nullptr);

// Another replica's transaction, in a thread with a connection of its own: `hold` writes (the
// transaction keeps their locks), then the holder waits until the code under test waits for one
// of those locks, runs `afterWait` (when given) and commits. It holds the row locks `hold` takes
// and no write turn unless `hold` takes it (Database::WriteTurnLock): the code under test then
// meets those rows' locks, as with a writer that is not one of OpsDeck's write transactions.
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

// A write transaction of the server's own kind on another connection, in a thread of its own (an
// in-process server runs on the test's thread, which must stay free to answer): on SQLite it
// holds the write lock (a backup, a shell's BEGIN IMMEDIATE), on PostgreSQL the write turn
// (another replica's transaction). `inside` runs first in it; what it wrote is rolled back, or
// committed when `commit` is set. It lets go when told, and after 15 s in any case (rolled back
// then): a server that waits for it on the test's thread fails the test instead of hanging it.
class WriteLockHolder final
{
public:
    using Step = std::function<bool(Database &)>;

    explicit WriteLockHolder(QString databaseUrl, Step inside = {}, bool commit = false);
    ~WriteLockHolder();
    WriteLockHolder(const WriteLockHolder &) = delete;
    WriteLockHolder &operator=(const WriteLockHolder &) = delete;

    // True once the transaction holds the lock and `inside` went through.
    bool take();
    // Lets go now, and waits until it has (committed, if so made).
    void release();
    // Lets go after `ms` without the test's thread doing anything.
    void releaseAfter(int ms);
    // After release(): whether the transaction committed.
    bool committed() const { return m_state.load() == 2; }

private:
    QString m_url;
    Step m_inside;
    bool m_commit = false;
    std::thread m_thread;
    std::thread m_timer;
    std::atomic<int> m_state{0}; // 1 holding, 2 committed, 3 rolled back, <0 failed
    std::atomic<bool> m_release{false};
};

} // namespace OpsDeck::Test
