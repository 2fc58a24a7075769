// The retry schedule a control plane's options ask for, shared by the API and the delivery worker.
#include "deliveryschedule.h"

namespace OpsDeck {

std::optional<RetrySchedule> retryScheduleFor(const ServerOptions &options, QString *error)
{
    if (options.retrySchedule.trimmed().isEmpty())
        return RetrySchedule();
    const auto parsed = RetrySchedule::parseDelays(options.retrySchedule);
    if (!parsed.ok() || parsed.delays.isEmpty()) {
        if (error)
            *error = QStringLiteral("invalid retry schedule \"%1\": %2")
                         .arg(options.retrySchedule, parsed.ok() ? QStringLiteral("no delays") : parsed.error);
        return std::nullopt;
    }
    return RetrySchedule(parsed.delays);
}

} // namespace OpsDeck
