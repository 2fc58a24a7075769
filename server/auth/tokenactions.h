// Creating and revoking tokens with their audit entry and feed event: the API's and the command
// line's one way to do it.
#pragma once

#include "tokenstore.h"

#include "core/problem.h"
#include "server/http/caller.h"

#include <QString>

#include <functional>
#include <optional>

namespace OpsDeck {

class Database;
class Journal;

class TokenActions final
{
public:
    // None is owned; all must outlive this object.
    TokenActions(Database &db, Journal &journal, TokenStore &tokens);

    // Why `subject` cannot be the subject of a `role` token, or empty: required for providers
    // (an existing provider's id) and owners.
    QString subjectProblem(Actor role, const QString &subject);
    // In one transaction: the token, its audit entry (by `who`) and its feed event. The bearer
    // text is returned once in *bearer.
    std::optional<TokenRecord> create(const Caller &who, Actor role, const QString &subject, const QString &name,
                                      const QString &reason, QString *bearer, Problem *error);
    // The revoked record, with its audit entry and feed event in one transaction; a token revoked
    // before is answered as it is and nothing is recorded again (*already). nullopt with a null
    // *error: no such token. `check`, when given, sees the token as it is inside the transaction
    // first and may refuse (an If-Match that no longer holds): nullopt with its problem.
    using TokenCheck = std::function<std::optional<Problem>(const TokenRecord &token)>;
    std::optional<TokenRecord> revoke(const Caller &who, qint64 id, const QString &reason, bool *already, Problem *error,
                                      const TokenCheck &check = {});

private:
    Database &m_db;
    Journal &m_journal;
    TokenStore &m_tokens;
};

} // namespace OpsDeck
