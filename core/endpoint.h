// Callback endpoints (spec §3): a provider's URL, paused when failing for too long, disabled by 410 Gone.
#pragma once

#include "statemachine.h"

namespace OpsDeck::Endpoint {

inline const QString Active = QStringLiteral("ACTIVE");
inline const QString Paused = QStringLiteral("PAUSED");
inline const QString Disabled = QStringLiteral("DISABLED");

// pause:   ACTIVE -> PAUSED    (operator, provider; the system after the auto-pause window)
// resume:  PAUSED -> ACTIVE    (operator, provider)
// disable: ACTIVE -> DISABLED  (controller: the endpoint answered 410 Gone)
// enable:  DISABLED -> ACTIVE  (operator, provider: the URL works again)
// Deliveries to a paused or disabled endpoint wait; they are sent once it is active again.
const StateMachine &machine();

} // namespace OpsDeck::Endpoint
