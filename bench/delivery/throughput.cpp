// What a throughput run of the delivery benchmark measured, and how its lines put it.
#include "throughput.h"

#include <QThread>

#include <algorithm>

namespace OpsDeck::Bench {

QString threadShare(const Throughput &t)
{
    return QStringLiteral("(sending thread %1, store thread %2)").arg(qRound(t.sendCpu)).arg(qRound(t.storeCpu));
}

QString coreShare(const Throughput &t, double wrkRate)
{
    const int cores = QThread::idealThreadCount();
    const double bound = 1e6 * cores / std::max(1.0, t.cpuPerDelivery + t.providerCpu);
    return QStringLiteral("provider %1 us; %2 of %3 cores busy (all %3 at these costs: %4/s, %5x)")
        .arg(qRound(t.providerCpu))
        .arg(t.busyCores, 0, 'f', 2)
        .arg(cores)
        .arg(qRound(bound))
        .arg(wrkRate > 0 ? bound / wrkRate : 0.0, 0, 'f', 2);
}

QString apiLine(const ApiProbe::Result &r)
{
    return QStringLiteral("%1 writes, p50 %2 ms, p99 %3 ms, max %4 ms%5")
        .arg(r.samples)
        .arg(r.p50, 0, 'f', 2)
        .arg(r.p99, 0, 'f', 2)
        .arg(r.max, 0, 'f', 1)
        .arg(r.failed ? QStringLiteral(", %1 failed").arg(r.failed) : QString());
}

} // namespace OpsDeck::Bench
