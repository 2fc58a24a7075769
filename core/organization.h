// Organizations (spec §2): AVAILABLE -> DELETED (restorable) -> purged.
#pragma once

#include "statemachine.h"

namespace OpsDeck::Organization {

inline const QString Available = QStringLiteral("AVAILABLE");
inline const QString Deleted = QStringLiteral("DELETED");

// delete: AVAILABLE -> DELETED (operator); restore: DELETED -> AVAILABLE (operator).
// Purging after retention removes the row; it is not a state. Guards that depend on other rows (instances not STOPPED, provides applications) are the
// server's, with the codes below.
const StateMachine &machine();

inline const QString HasInstancesCode = QStringLiteral("organization-has-instances");
inline const QString ProvidesApplicationsCode = QStringLiteral("organization-provides-applications");

} // namespace OpsDeck::Organization
