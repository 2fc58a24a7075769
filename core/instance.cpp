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
            {Pending, QStringLiteral("register"), Running, registrars,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Register"))},
            {Pending, QStringLiteral("register"), Stopped, registrars,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Register as stopped"))},
            {Pending, QStringLiteral("stop"), Stopped, users,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Stop"))},
            {Running, QStringLiteral("stop"), Stopped, users,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Stop"))},
            {Stopped, QStringLiteral("start"), Running, users,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Start"))},
            {Stopped, QStringLiteral("destroy"), Destroyed, Actor::System,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Destroy"))},
        });
    return m;
}

bool stoppedUnregistered(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("status")).toString() == Stopped
           && !instance.value(QStringLiteral("callback")).isObject();
}

bool destructionIssued(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("status")).toString() == Stopped
           && instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("event_type")).toString()
                  == DestroyedEvent;
}

QStringList heldActions(const QJsonObject &instance)
{
    if (stoppedUnregistered(instance) || destructionIssued(instance))
        return {QStringLiteral("start")};
    return {};
}

} // namespace OpsDeck::Instance
