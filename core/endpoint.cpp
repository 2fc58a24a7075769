// The callback endpoint state machine of spec §3.
#include "endpoint.h"

namespace OpsDeck::Endpoint {

const StateMachine &machine()
{
    static const Actors people = Actors(Actor::Operator) | Actor::Provider;
    static const StateMachine m(
        QStringLiteral("endpoint"), {Active, Paused, Disabled},
        {
            {Active, QStringLiteral("pause"), Paused, people | Actor::System, QStringLiteral("Pause")},
            {Paused, QStringLiteral("resume"), Active, people, QStringLiteral("Resume")},
            {Active, QStringLiteral("disable"), Disabled, Actor::Controller, QStringLiteral("Disable")},
            {Disabled, QStringLiteral("enable"), Active, people, QStringLiteral("Enable")},
        });
    return m;
}

} // namespace OpsDeck::Endpoint
