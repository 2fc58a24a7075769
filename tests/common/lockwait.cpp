// For tests that race a transaction on another connection against the code under test (PostgreSQL).
#include "lockwait.h"

#include <QElapsedTimer>
#include <QSqlQuery>
#include <QThread>
#include <QVariant>

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

} // namespace OpsDeck::Test
