// Creating and revoking tokens with their audit entry and feed event.
#include "tokenactions.h"

#include "core/jsonreader.h"
#include "server/outbox/writetransaction.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QSqlQuery>

namespace OpsDeck {

namespace {

const QString kToken = QStringLiteral("token");

// Token events and entries are the operators' alone.
Audience operatorsOnly()
{
    Audience a;
    a.operatorOnly = true;
    return a;
}

} // namespace

TokenActions::TokenActions(Database &db, Journal &journal, TokenStore &tokens)
    : m_db(db)
    , m_journal(journal)
    , m_tokens(tokens)
{
}

QString TokenActions::subjectProblem(Actor role, const QString &subject)
{
    // An operator's subject is optional, and shown as the actor of what the token does: named as
    // any name is (no control characters, nothing around it), or not at all.
    if (role == Actor::Operator)
        return subject.isEmpty() ? QString() : JsonReader::exactNameError(subject);
    if (subject.trimmed().isEmpty())
        return QStringLiteral("required for the %1 role").arg(actorName(role));
    // An owner is named as instances name it (JsonReader::name()), or the token would match none.
    if (role != Actor::Provider)
        return JsonReader::exactNameError(subject);
    bool ok = false;
    const qint64 id = subject.toLongLong(&ok);
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT 1 FROM providers WHERE id = ?"));
    q.addBindValue(id);
    const bool exists = ok && id > 0 && q.exec() && q.next();
    q.finish();
    return exists && subject == QString::number(id) ? QString() : QStringLiteral("no provider with this id");
}

std::optional<TokenRecord> TokenActions::create(const Caller &who, Actor role, const QString &subject, const QString &name,
                                                const QString &reason, QString *bearer, Problem *error)
{
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        *error = tx.problem();
        return std::nullopt;
    }
    const auto t = m_tokens.create(role, subject, name, bearer, error);
    if (!t || !m_journal.audit(who, {QStringLiteral("create"), kToken, t->id, {}, {}, reason}, operatorsOnly(), error)
        || !m_journal.event(kToken, t->id, t->version(), QStringLiteral("created"), t->toJson(), operatorsOnly(), error)
        || !tx.commit(error))
        return std::nullopt;
    return t;
}

std::optional<TokenRecord> TokenActions::revoke(const Caller &who, qint64 id, const QString &reason, bool *already,
                                                Problem *error, const TokenCheck &check)
{
    *already = false;
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        *error = tx.problem();
        return std::nullopt;
    }
    const auto before = m_tokens.find(id, error);
    if (!before)
        return std::nullopt;
    if (check) {
        if (std::optional<Problem> refused = check(*before)) {
            *error = *refused;
            return std::nullopt;
        }
    }
    // Revoked already (a retry, another operator): the same answer, and nothing to record again.
    if (!before->revokedAt.isEmpty()) {
        *already = true;
        return before;
    }
    const auto t = m_tokens.revoke(id, error);
    if (!t || !m_journal.audit(who, {QStringLiteral("revoke"), kToken, t->id, {}, {}, reason}, operatorsOnly(), error)
        || !m_journal.event(kToken, t->id, t->version(), QStringLiteral("updated"), t->toJson(), operatorsOnly(), error)
        || !tx.commit(error))
        return std::nullopt;
    return t;
}

} // namespace OpsDeck
