// Callback deliveries (spec §3): one outbox row per notification, sent until delivered, superseded or given up.
#pragma once

#include "statemachine.h"

namespace OpsDeck::Delivery {

inline const QString Pending = QStringLiteral("PENDING");
inline const QString Delivered = QStringLiteral("DELIVERED");
inline const QString Failed = QStringLiteral("FAILED");         // the retry schedule is exhausted
inline const QString Superseded = QStringLiteral("SUPERSEDED"); // a newer one for the same instance and kind says everything
inline const QString Cancelled = QStringLiteral("CANCELLED");

// delivery worker (controller):
//   deliver:   PENDING -> DELIVERED              [a 2xx within the timeout]
//   exhaust:   PENDING -> FAILED                 [the last scheduled attempt failed; an alert is raised]
//   supersede: PENDING | FAILED -> SUPERSEDED    [a newer notification for the same instance and kind]
// operator, provider (its own deliveries):
//   retry:     PENDING -> PENDING                [attempt now instead of at next_attempt_at]
//              FAILED | CANCELLED -> PENDING     [send again, with a fresh schedule]
//   cancel:    PENDING -> CANCELLED
// Failed attempts do not change the state: they count, and move next_attempt_at. A paused or
// disabled endpoint keeps its deliveries PENDING; nothing is dropped.
const StateMachine &machine();

} // namespace OpsDeck::Delivery
