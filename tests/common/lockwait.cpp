// For tests that race a transaction on another connection against the code under test (PostgreSQL).
#include "lockwait.h"

#include "server/storage/database.h"

#include <QElapsedTimer>
#include <QSqlQuery>
#include <QThread>
#include <QVariant>

#include <chrono>

namespace OpsDeck::Test {

bool untilAnotherWaitsForMyLock(QSqlQuery &q, const std::atomic<bool> *abandon)
{
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < 20000 && !(abandon && abandon->load())) {
        // Inside a transaction PostgreSQL keeps its first view of pg_stat_activity unless told not to.
        if (q.exec(QStringLiteral("SELECT pg_stat_clear_snapshot()"))
            && q.exec(QStringLiteral("SELECT COUNT(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
                                     " AND pg_backend_pid() = ANY(pg_blocking_pids(pid))"))
            && q.next() && q.value(0).toInt() > 0)
            return true;
        QThread::msleep(5);
    }
    return false;
}

LockHolder::LockHolder(QString databaseUrl, Step hold, Step afterWait)
    : m_url(std::move(databaseUrl))
    , m_hold(std::move(hold))
    , m_afterWait(std::move(afterWait))
{
}

LockHolder::~LockHolder()
{
    m_done = true;
    // The holder stops polling within milliseconds; one stuck in a statement (waiting for a lock
    // the test's own connection holds) is a test that cannot end: say so rather than hang.
    if (m_thread && !m_thread->wait(60000))
        qFatal("the transaction holding locks for the test did not end");
}

bool LockHolder::start()
{
    m_thread.reset(QThread::create([this] {
        // A plain transaction: its locks are those `hold` takes. Database::begin() would also take
        // the write turn, which the HTTP thread's writes do not wait for in PostgreSQL but try for
        // and set aside (tst_busystorage), so nobody would be seen waiting for the holder's locks.
        Database db(m_url);
        if (!db.open() || !db.connection().transaction()) {
            m_phase = -1;
            return;
        }
        QSqlQuery q(db.connection());
        if (!m_hold(q)) {
            db.rollback();
            m_phase = -1;
            return;
        }
        m_phase = 1;
        const bool waited = untilAnotherWaitsForMyLock(q, &m_done) && (!m_afterWait || m_afterWait(q));
        const bool committed = db.commit();
        m_phase = waited && committed ? 2 : -2;
    }));
    m_thread->start();
    // The thread needs nothing from this one's event loop: a plain wait for it to hold its locks.
    QElapsedTimer clock;
    clock.start();
    while (m_phase.load() == 0 && clock.elapsed() < 20000)
        QThread::msleep(1);
    return m_phase.load() == 1;
}

bool LockHolder::finish()
{
    m_done = true;
    if (m_thread && !m_thread->wait(30000))
        return false;
    return m_phase.load() == 2;
}

WriteLockHolder::WriteLockHolder(QString databaseUrl, Step inside, bool commit)
    : m_url(std::move(databaseUrl))
    , m_inside(std::move(inside))
    , m_commit(commit)
{
}

WriteLockHolder::~WriteLockHolder()
{
    release();
}

bool WriteLockHolder::take()
{
    m_thread = std::thread([this] {
        // Database::begin(): BEGIN IMMEDIATE on SQLite, the write turn on PostgreSQL.
        Database db(m_url);
        const bool held = db.open() && db.begin() && (!m_inside || m_inside(db));
        if (!held) {
            m_state = -1;
            return;
        }
        m_state = 1;
        QElapsedTimer heldFor;
        heldFor.start();
        while (!m_release && heldFor.elapsed() < 15000)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        // Let go after the 15 s without being told to: rolled back, so committed() says so.
        if (m_commit && m_release && db.commit()) {
            m_state = 2;
            return;
        }
        db.rollback();
        m_state = 3;
    });
    while (m_state.load() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return m_state.load() == 1;
}

void WriteLockHolder::release()
{
    m_release = true;
    for (std::thread *t : {&m_thread, &m_timer}) {
        if (t->joinable())
            t->join();
    }
}

void WriteLockHolder::releaseAfter(int ms)
{
    m_timer = std::thread([this, ms] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        m_release = true;
    });
}

} // namespace OpsDeck::Test
