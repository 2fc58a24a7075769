// Who is calling: the role and subject of the bearer token that authenticated a request.
#pragma once

#include "core/actor.h"

#include <QString>

namespace OpsDeck {

struct Caller
{
    Actor role = Actor::Operator;
    QString subject; // provider id for a provider, owner name for an owner
    qint64 tokenId = 0;

    bool isOperator() const { return role == Actor::Operator; }
    // Stable text identifying the caller, for idempotency keys and the audit trail.
    QString key() const { return actorName(role) + QLatin1Char(':') + subject; }
};

} // namespace OpsDeck
