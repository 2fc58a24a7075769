// Whether the delivery worker is getting through to storage, for /healthz and /metrics.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>

namespace OpsDeck {

// Lives in the HTTP thread; the worker's reports reach it by queued signals through the
// OutboxService. "since" is the first failure of the current streak, so an operator sees how
// long deliveries have been stuck, not only the newest message.
class WorkerHealth final
{
public:
    enum class Status { Disabled, Ok, Failing };

    void setEnabled(bool enabled);
    void recordFailure(const QString &detail, const QDateTime &at);
    void recordRecovery();

    // What the worker reported at its last poll (DeliveryWorker::load()).
    struct Load
    {
        int inFlight = 0;
        int inFlightAnswering = 0; // of inFlight, to endpoints that answer well
        int waiting = 0;           // claimed, waiting for a slot of their endpoint
        int waitingAnswering = 0;
        int endpoints = 0; // endpoints the worker keeps state for
        int endpointsAnswering = 0;
    };
    void recordLoad(const Load &load) { m_load = load; }

    Status status() const { return m_status; }
    QString lastError() const { return m_lastError; }
    QDateTime since() const { return m_since; }
    quint64 failures() const { return m_failures; }

    // {"status": "ok"|"failing"|"disabled", "last_error", "last_error_at", "since", "failures",
    //  "attempts_in_flight", "attempts_waiting", "endpoints_known": {"answering", "probing"}}
    QJsonObject toJson() const;
    // Prometheus lines (HELP/TYPE included) for the /metrics gauges.
    QByteArray metrics() const;

private:
    Status m_status = Status::Disabled;
    QString m_lastError;
    QDateTime m_lastErrorAt;
    QDateTime m_since;
    quint64 m_failures = 0;
    Load m_load;
};

} // namespace OpsDeck
