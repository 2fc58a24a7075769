// The delivery worker's watch on endpoints that answered well and then fell silent with attempts out.
#include "deliveryworker.h"

#include "outboxstore.h"

#include <QDateTime>
#include <QSet>

#include <algorithm>

namespace OpsDeck {

void DeliveryWorker::checkStalls()
{
    if (m_inFlight.isEmpty()) {
        m_stallTimer.stop();
        return;
    }
    // A provider whose host stops answering (every instance URL of it at once, say) would keep
    // each of its endpoints' attempts in flight until they time out, up to the whole budget of
    // the endpoints that answer well: they would wait that long. Silence ends that; an endpoint
    // that is only busy keeps answering one attempt or another meanwhile, and a slow one is
    // given time in proportion. The attempts it has out stay out (an answer to one of them proves
    // it again) and count as probes.
    // What was claimed for a silent endpoint and waits for one of its slots goes back, whether it
    // was proven or not (a claim answered after the demotion may have brought it, or it waited
    // behind a new endpoint's first attempt): it is due again, and claims leave the endpoint out
    // while it is busy, so it no longer holds leases and budget until the attempts out time out.
    const qint64 now = m_clock.elapsed();
    QList<qint64> released;
    QList<qint64> silent; // taken for silent now, having answered well until then
    QSet<QString> silentHosts;
    for (auto it = m_lastAnswer.cbegin(); it != m_lastAnswer.cend(); ++it) {
        if (now - it.value() < stallAfterMs(it.key()))
            continue;
        if (m_proven.remove(it.key())) {
            silent.append(it.key());
            silentHosts.insert(m_known.value(it.key()).host);
        }
        released += takeQueued(it.key());
    }
    if (silent.isEmpty()) {
        if (!released.isEmpty())
            m_store->release(released);
        return;
    }
    // Shown on the endpoints (and their feed events) at once, well before the attempts out time
    // out and are logged as failures.
    m_store->recordSilence(silent, QDateTime::currentDateTimeUtc(), this, [this](const Problem &problem) {
        if (!m_running)
            return;
        if (!problem.isNull())
            reportFailure(problem.detail);
        else
            Q_EMIT committed();
    });
    // Silence is what a host that stops answering shows, and its other endpoints would be taken
    // for silent one after another, each after holding its share of the budget for the stall
    // time: they start over too, one attempt each until they answer well (at once, if they do),
    // and what waits here for them goes back like a silent endpoint's.
    for (const QString &host : std::as_const(silentHosts)) {
        for (const qint64 endpointId : m_hostEndpoints.value(host)) {
            if (m_proven.remove(endpointId))
                released += takeQueued(endpointId);
        }
    }
    if (!released.isEmpty())
        m_store->release(released);
    m_mayHaveWork = true;
    schedulePump();
}

void DeliveryWorker::forgetIdleEndpoints()
{
    const qint64 now = m_clock.elapsed();
    const qint64 idle = m_options.outboxForgetIdleAfter.count();
    if (now - m_lastForget < std::min<qint64>(idle, 60000))
        return;
    m_lastForget = now;
    for (auto it = m_known.begin(); it != m_known.end();) {
        const qint64 endpointId = it.key();
        if (now - it->lastSent < idle || m_inFlight.contains(endpointId) || m_queued.contains(endpointId)) {
            ++it;
            continue;
        }
        const auto host = m_hostEndpoints.find(it->host);
        if (host != m_hostEndpoints.end()) {
            host->remove(endpointId);
            if (host->isEmpty())
                m_hostEndpoints.erase(host);
        }
        m_proven.remove(endpointId);
        m_slowAnswer.remove(endpointId);
        m_wanting.remove(endpointId);
        it = m_known.erase(it);
    }
}

qint64 DeliveryWorker::stallAfterMs(qint64 endpointId) const
{
    // Never under twice its slowest recent good answer, even above the cap: an endpoint that
    // always takes longer than that is slow, not silent.
    const qint64 cap = m_options.endpointStallAfter.count();
    const auto slowest = m_slowAnswer.constFind(endpointId);
    if (slowest == m_slowAnswer.cend())
        return cap;
    return std::max(std::min(cap, std::max(StallFloorMs, StallFactor * *slowest)), 2 * *slowest);
}

} // namespace OpsDeck
