// The CPU clocks the delivery benchmark reads: this process, each of its threads, the calling
// thread, and the PostgreSQL backends serving the run.
#include "cpuclocks.h"

#include "server/storage/database.h"

#include <QDir>
#include <QFile>
#include <QSqlQuery>

#include <sys/resource.h>
#include <unistd.h>

namespace OpsDeck::Bench {

namespace {

qint64 micros(const timeval &t)
{
    return qint64(t.tv_sec) * 1000000 + t.tv_usec;
}

// The time on the CPU a task's schedstat gives first, in microseconds (0 when it cannot be read).
qint64 schedstatMicros(const QString &path)
{
    QFile stat(path);
    if (!stat.open(QIODevice::ReadOnly))
        return 0;
    return stat.readAll().split(' ').value(0).toLongLong() / 1000; // nanoseconds on the CPU
}

} // namespace

// CPU time of this whole process (every thread: the server's sender, store and control plane,
// and the bench's own progress checks), in microseconds.
qint64 processCpuMicros()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// CPU time so far of each of this process's threads, by name, in microseconds (threads of the
// same name added up), from /proc: which thread a delivery's CPU goes to.
QMap<QString, qint64> threadCpuByName()
{
    QMap<QString, qint64> cpu;
    const QDir tasks(QStringLiteral("/proc/self/task"));
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        QFile comm(tasks.filePath(tid + QStringLiteral("/comm")));
        if (!comm.open(QIODevice::ReadOnly))
            continue;
        cpu[QString::fromUtf8(comm.readAll()).trimmed()] += schedstatMicros(tasks.filePath(tid + QStringLiteral("/schedstat")));
    }
    return cpu;
}

// CPU time of the calling thread, in microseconds.
qint64 threadCpuMicros()
{
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// CPU time so far of another process (the sum of its threads), in microseconds, from /proc.
qint64 processCpuMicros(qint64 pid)
{
    const QDir tasks(QStringLiteral("/proc/%1/task").arg(pid));
    qint64 cpu = 0;
    for (const QString &tid : tasks.entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        cpu += schedstatMicros(tasks.filePath(tid + QStringLiteral("/schedstat")));
    return cpu;
}

// CPU time of this process's children that have ended and were waited for (wrk after its run),
// in microseconds.
qint64 endedChildrenCpuMicros()
{
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return micros(usage.ru_utime) + micros(usage.ru_stime);
}

// CPU time so far of the PostgreSQL backends serving this database for others than the caller
// (the store's connection), in microseconds, from /proc: where the database's own work goes.
qint64 backendCpuMicros(Database &probe)
{
    QSqlQuery q(probe.connection());
    q.exec(QStringLiteral("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                          " AND backend_type = 'client backend'"));
    qint64 ticks = 0;
    while (q.next()) {
        QFile stat(QStringLiteral("/proc/%1/stat").arg(q.value(0).toLongLong()));
        if (!stat.open(QIODevice::ReadOnly))
            qFatal("cannot read the CPU time of PostgreSQL backend %lld", q.value(0).toLongLong());
        const QByteArray text = stat.readAll();
        const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
        ticks += fields.value(11).toLongLong() + fields.value(12).toLongLong(); // utime, stime
    }
    return ticks * 1000000 / sysconf(_SC_CLK_TCK);
}

} // namespace OpsDeck::Bench
