// Service instances (spec §5): their states, read from last_operation, and who moves them.
#pragma once

#include "operation.h"
#include "statemachine.h"

namespace OpsDeck::ServiceInstance {

inline const QString CreateInProgress = QStringLiteral("create in progress");
inline const QString CreateSucceeded = QStringLiteral("create succeeded");
inline const QString CreateFailed = QStringLiteral("create failed");
inline const QString UpdateInProgress = QStringLiteral("update in progress");
inline const QString UpdateSucceeded = QStringLiteral("update succeeded");
inline const QString UpdateFailed = QStringLiteral("update failed");
inline const QString DeleteInProgress = QStringLiteral("delete in progress");
inline const QString DeleteFailed = QStringLiteral("delete failed");
inline const QString DeleteSucceeded = QStringLiteral("delete succeeded"); // gone; kept for the diagram and feed

// user (owner, operator):
//   update:  create succeeded | update succeeded | update failed -> update in progress
//            (a failed update leaves the instance usable with its previous parameters)
//   delete:  every state but update/delete in progress -> delete in progress
//            (from create in progress it halts the provisioning, as the OSB spec requires)
// broker worker (controller): succeed / fail out of each "in progress"; the system fails an
// operation a crash left pending once the broker timeout passed; the controller deletes
// create failed (orphan mitigation) and retries delete failed.
// Anything else, e.g. deleting during an update, is refused (409 invalid-transition).
const StateMachine &machine();

} // namespace OpsDeck::ServiceInstance
