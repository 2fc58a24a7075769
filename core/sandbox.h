// Sandboxes (spec §4): IDLE -> STARTING -> RUNNING -> STOPPING -> IDLE, with an error on the two moving states.
#pragma once

#include "statemachine.h"

namespace OpsDeck::Sandbox {

// The stored state (wire field "state").
inline const QString Idle = QStringLiteral("IDLE");
inline const QString Starting = QStringLiteral("STARTING");
inline const QString Running = QStringLiteral("RUNNING");
inline const QString Stopping = QStringLiteral("STOPPING");
// The machine's composite states: the stored state with a non-null "error".
inline const QString StartingError = QStringLiteral("STARTING+ERROR");
inline const QString StoppingError = QStringLiteral("STOPPING+ERROR");

// Wire field "error_kind". Transient errors (timeouts, resources) are retried by the controller
// with backoff; permanent ones (bad image, bad command) wait for the user.
inline const QString TransientError = QStringLiteral("transient");
inline const QString PermanentError = QStringLiteral("permanent");

// user (owner, operator):
//   start:    IDLE -> STARTING
//   retry:    STARTING+ERROR -> STARTING, STOPPING+ERROR -> STOPPING   [also the controller, transient errors only]
//   stop:     RUNNING -> STOPPING                                      [keeps the uncommitted changes]
//   commit:   RUNNING -> STOPPING                                      [stores a new revision while stopping]
//   rollback: RUNNING -> STOPPING                                      [drops the uncommitted changes]
// controller:
//   started:  STARTING -> RUNNING        fail: STARTING -> STARTING+ERROR
//   stopped:  STOPPING -> IDLE           fail: STOPPING -> STOPPING+ERROR
// Commit and rollback are stops with a different side effect, so the spec's state graph is unchanged;
// the server keeps which stop was asked for so that a retry finishes the same one.
const StateMachine &machine();

// "STARTING" + error -> "STARTING+ERROR"; an error on IDLE or RUNNING has no composite state and
// yields the stored state unchanged.
QString machineState(const QString &state, bool hasError);
// "STARTING+ERROR" -> "STARTING".
QString storedState(const QString &machineState);
bool hasError(const QString &machineState);

// "sandbox" names the sandbox's own image tag, so no version may be called that.
inline const QString ReservedVersionName = QStringLiteral("sandbox");
bool isReservedVersionName(const QString &name);

} // namespace OpsDeck::Sandbox
