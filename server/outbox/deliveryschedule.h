// The retry schedule a control plane's options ask for, shared by the API and the delivery worker.
#pragma once

#include "core/retryschedule.h"
#include "server/serveroptions.h"

#include <QString>

#include <optional>

namespace OpsDeck {

// An empty ServerOptions::retrySchedule means the default schedule; text that is not a schedule
// gives nullopt and, in `error`, why (the server refuses to start rather than guess).
std::optional<RetrySchedule> retryScheduleFor(const ServerOptions &options, QString *error = nullptr);

} // namespace OpsDeck
