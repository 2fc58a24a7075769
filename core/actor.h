// Who acts on a resource: the three user roles of spec §1 and the server's own workers.
#pragma once

#include <QFlags>
#include <QString>

#include <optional>

namespace OpsDeck {

enum class Actor {
    Operator = 0x1,
    Provider = 0x2,
    Owner = 0x4,
    Controller = 0x8, // the sandbox controller, the delivery and broker workers
    System = 0x10,    // timers: retention purge, lease expiry
};
Q_DECLARE_FLAGS(Actors, Actor)
Q_DECLARE_OPERATORS_FOR_FLAGS(Actors)

// "operator", "provider", "owner", "controller", "system"
QString actorName(Actor actor);
std::optional<Actor> actorFromName(const QString &name);
// Only the three roles a token can carry (operator, provider, owner).
std::optional<Actor> roleFromName(const QString &name);

constexpr Actors kUserRoles = Actors(Actor::Operator) | Actor::Provider | Actor::Owner;

} // namespace OpsDeck
