// App instances (spec §2): PENDING -> RUNNING|STOPPED, RUNNING <-> STOPPED, STOPPED -> DESTROYED.
#pragma once

#include "statemachine.h"

namespace OpsDeck::Instance {

inline const QString Pending = QStringLiteral("PENDING");
inline const QString Running = QStringLiteral("RUNNING");
inline const QString Stopped = QStringLiteral("STOPPED");
inline const QString Destroyed = QStringLiteral("DESTROYED");

// register: PENDING -> RUNNING (provider, operator)   [the provider registers the instance]
//           PENDING -> STOPPED (provider, operator)   [registered with "status": "STOPPED"]
// stop:     RUNNING -> STOPPED (operator, owner)
// start:    STOPPED -> RUNNING (operator, owner)
// destroy:  STOPPED -> DESTROYED (system)             [after retention and provider acknowledgement]
// Also: PENDING -> STOPPED by stop (operator, owner): a pending instance can be stopped.
// DESTROYED is terminal. The provider never stops or starts: it is told, it does not decide.
const StateMachine &machine();

// Callback body types (spec §2).
inline const QString StatusChangedEvent = QStringLiteral("instance.status_changed");
inline const QString DestroyedEvent = QStringLiteral("instance.destroyed");

} // namespace OpsDeck::Instance
