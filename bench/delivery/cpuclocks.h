// The CPU clocks the delivery benchmark reads, in microseconds.
#pragma once

#include <QMap>
#include <QString>

namespace OpsDeck {
class Database;
}

namespace OpsDeck::Bench {

// This whole process (every thread: the server's sender, store and control plane, and the
// bench's own progress checks).
qint64 processCpuMicros();
// Each of this process's threads so far, by name (threads of the same name added up).
QMap<QString, qint64> threadCpuByName();
// The calling thread.
qint64 threadCpuMicros();
// Another process of this machine (every thread of it), or 0 when it is gone.
qint64 processCpuMicros(qint64 pid);
// This process's children that ended and were waited for.
qint64 endedChildrenCpuMicros();
// The PostgreSQL backends serving this database for others than the caller (the store's connection).
qint64 backendCpuMicros(Database &probe);

} // namespace OpsDeck::Bench
