// The app instance state machine of spec §2.
#include "instance.h"

namespace OpsDeck::Instance {

const StateMachine &machine()
{
    static const Actors users = Actors(Actor::Operator) | Actor::Owner;
    static const Actors registrars = Actors(Actor::Operator) | Actor::Provider;
    static const StateMachine m(
        QStringLiteral("instance"), {Pending, Running, Stopped, Destroyed},
        {
            {Pending, QStringLiteral("register"), Running, registrars, QStringLiteral("Register")},
            {Pending, QStringLiteral("register"), Stopped, registrars, QStringLiteral("Register as stopped")},
            {Pending, QStringLiteral("stop"), Stopped, users, QStringLiteral("Stop")},
            {Running, QStringLiteral("stop"), Stopped, users, QStringLiteral("Stop")},
            {Stopped, QStringLiteral("start"), Running, users, QStringLiteral("Start")},
            {Stopped, QStringLiteral("destroy"), Destroyed, Actor::System, QStringLiteral("Destroy")},
        });
    return m;
}

} // namespace OpsDeck::Instance
