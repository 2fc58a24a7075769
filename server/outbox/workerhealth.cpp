// Whether the delivery worker is getting through to storage, for /healthz and /metrics.
#include "workerhealth.h"

#include "server/storage/timestamps.h"

namespace OpsDeck {

namespace {

QJsonValue timeOrNull(const QDateTime &at)
{
    return at.isValid() ? QJsonValue(timestamp(at)) : QJsonValue();
}

} // namespace

void WorkerHealth::setEnabled(bool enabled)
{
    if (!enabled)
        m_status = Status::Disabled;
    else if (m_status == Status::Disabled)
        m_status = Status::Ok;
}

void WorkerHealth::recordFailure(const QString &detail, const QDateTime &at)
{
    if (m_status != Status::Failing)
        m_since = at;
    m_status = Status::Failing;
    m_lastError = detail;
    m_lastErrorAt = at;
    ++m_failures;
}

void WorkerHealth::recordRecovery()
{
    if (m_status == Status::Failing)
        m_status = Status::Ok;
    m_since = QDateTime();
}

QJsonObject WorkerHealth::toJson() const
{
    const QString status = m_status == Status::Failing ? QStringLiteral("failing")
                           : m_status == Status::Ok    ? QStringLiteral("ok")
                                                       : QStringLiteral("disabled");
    const auto byBudget = [](int answering, int all) {
        return QJsonObject{{QStringLiteral("answering"), answering}, {QStringLiteral("probing"), all - answering}};
    };
    // The last error stays visible after a recovery, for the post-mortem.
    return {{QStringLiteral("status"), status},
            {QStringLiteral("last_error"), m_lastError.isEmpty() ? QJsonValue() : QJsonValue(m_lastError)},
            {QStringLiteral("last_error_at"), timeOrNull(m_lastErrorAt)},
            {QStringLiteral("since"), timeOrNull(m_status == Status::Failing ? m_since : QDateTime())},
            {QStringLiteral("failures"), qint64(m_failures)},
            {QStringLiteral("attempts_in_flight"), byBudget(m_load.inFlightAnswering, m_load.inFlight)},
            {QStringLiteral("attempts_waiting"), byBudget(m_load.waitingAnswering, m_load.waiting)},
            {QStringLiteral("endpoints_known"), byBudget(m_load.endpointsAnswering, m_load.endpoints)}};
}

QByteArray WorkerHealth::metrics() const
{
    QByteArray out;
    out += "# HELP opsdeck_delivery_worker_failing 1 while the delivery worker's storage work fails, else 0.\n"
           "# TYPE opsdeck_delivery_worker_failing gauge\nopsdeck_delivery_worker_failing "
           + QByteArray(m_status == Status::Failing ? "1" : "0") + '\n';
    out += "# HELP opsdeck_delivery_worker_failures_total Storage failures the delivery worker reported.\n"
           "# TYPE opsdeck_delivery_worker_failures_total counter\nopsdeck_delivery_worker_failures_total "
           + QByteArray::number(m_failures) + '\n';
    const double since = m_status == Status::Failing && m_since.isValid() ? double(m_since.toMSecsSinceEpoch()) / 1000.0 : 0.0;
    out += "# HELP opsdeck_delivery_worker_failing_since_timestamp_seconds Start of the current failure streak (0 when none).\n"
           "# TYPE opsdeck_delivery_worker_failing_since_timestamp_seconds gauge\n"
           "opsdeck_delivery_worker_failing_since_timestamp_seconds "
           + QByteArray::number(since, 'f', 3) + '\n';
    // Split by budget: endpoints that answer well share --delivery-concurrency, the others get
    // one attempt each from a budget of their own.
    const auto byBudget = [&out](const char *name, const char *help, int answering, int all) {
        out += QByteArray("# HELP ") + name + ' ' + help + "\n# TYPE " + name + " gauge\n";
        out += QByteArray(name) + "{endpoints=\"answering\"} " + QByteArray::number(answering) + '\n';
        out += QByteArray(name) + "{endpoints=\"probing\"} " + QByteArray::number(all - answering) + '\n';
    };
    byBudget("opsdeck_delivery_attempts_in_flight", "Callback attempts on the wire, at the worker's last poll.",
             m_load.inFlightAnswering, m_load.inFlight);
    byBudget("opsdeck_delivery_attempts_waiting",
             "Claimed callback attempts waiting for a slot of their endpoint, at the worker's last poll.",
             m_load.waitingAnswering, m_load.waiting);
    byBudget("opsdeck_delivery_endpoints_known",
             "Endpoints the delivery worker keeps state for (sent to lately): answering = answered well last.",
             m_load.endpointsAnswering, m_load.endpoints);
    return out;
}

} // namespace OpsDeck
