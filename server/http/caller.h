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
    QString tokenName; // as given when the token was made; may be empty

    bool isOperator() const { return role == Actor::Operator; }
    // Stable text identifying the caller, for idempotency keys: the subject, or for a token that
    // speaks for none (an operator's, usually) the token itself, so two operators' keys never meet.
    QString key() const
    {
        return actorName(role) + QLatin1Char(':')
               + (subject.isEmpty() && tokenId > 0 ? QStringLiteral("#%1").arg(tokenId) : subject);
    }
    // Who the audit trail names: the subject, else the token's name, else its number.
    QString auditSubject() const
    {
        if (!subject.isEmpty() || tokenId <= 0)
            return subject;
        return tokenName.isEmpty() ? QStringLiteral("token #%1").arg(tokenId)
                                   : QStringLiteral("%1 (token #%2)").arg(tokenName).arg(tokenId);
    }
};

} // namespace OpsDeck
