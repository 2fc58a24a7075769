// The callback endpoint state machine of spec §3.
#include "endpoint.h"

namespace OpsDeck::Endpoint {

const StateMachine &machine()
{
    static const Actors people = Actors(Actor::Operator) | Actor::Provider;
    static const StateMachine m(
        QStringLiteral("endpoint"), {Active, Paused, Disabled},
        {
            {Active, QStringLiteral("pause"), Paused, people | Actor::System,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Pause"))},
            {Paused, QStringLiteral("resume"), Active, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Resume"))},
            {Active, QStringLiteral("disable"), Disabled, Actor::Controller,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Disable"))},
            {Disabled, QStringLiteral("enable"), Active, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Enable"))},
        });
    return m;
}

} // namespace OpsDeck::Endpoint
