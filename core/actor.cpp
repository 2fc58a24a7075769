// Who acts on a resource.
#include "actor.h"

namespace OpsDeck {

QString actorName(Actor actor)
{
    switch (actor) {
    case Actor::Operator: return QStringLiteral("operator");
    case Actor::Provider: return QStringLiteral("provider");
    case Actor::Owner: return QStringLiteral("owner");
    case Actor::Controller: return QStringLiteral("controller");
    case Actor::System: return QStringLiteral("system");
    }
    return {};
}

std::optional<Actor> actorFromName(const QString &name)
{
    for (Actor a : {Actor::Operator, Actor::Provider, Actor::Owner, Actor::Controller, Actor::System}) {
        if (actorName(a) == name)
            return a;
    }
    return std::nullopt;
}

std::optional<Actor> roleFromName(const QString &name)
{
    const auto a = actorFromName(name);
    if (a && kUserRoles.testFlag(*a))
        return a;
    return std::nullopt;
}

} // namespace OpsDeck
