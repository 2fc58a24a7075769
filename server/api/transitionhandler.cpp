// A kind's state change as a description, and the one sequence every kind's transition route runs.
#include "transitionhandler.h"

#include "apisupport.h"
#include "server/feed/changefeed.h"
#include "server/outbox/writetransaction.h"
#include "server/storage/transaction.h"

#include <utility>

namespace OpsDeck {

namespace {

// The transaction a description asks for, committed the way that one reports a failure.
class TransitionScope final
{
public:
    TransitionScope(Database &db, TransitionSpec::Scope scope)
    {
        if (scope == TransitionSpec::Scope::WriteTransaction)
            m_write.emplace(db);
        else
            m_plain.emplace(db);
    }

    bool commit(Problem *error) { return m_write ? m_write->commit(error) : m_plain->commit(); }

private:
    std::optional<Transaction> m_plain;
    std::optional<WriteTransaction> m_write;
};

} // namespace

Response runTransition(const ApiContext &ctx, const Request &req, const TransitionSpec &spec, const QString &action,
                       const std::optional<QString> &reason)
{
    Q_ASSERT(spec.machine && spec.load && spec.write);
    QString why = reason.value_or(QString());
    if (!reason) {
        if (auto p = ApiSupport::readReasonOnly(req, &why))
            return Response::problem(*p);
    }
    TransitionScope tx(ctx.db, spec.scope);
    if (spec.lock) {
        if (auto p = spec.lock(req.id()))
            return Response::problem(*p);
    }
    Problem problem;
    auto before = spec.load(req.who(), req.id(), &problem);
    if (!before)
        return Response::problem(problem);
    auto t = ApiSupport::allowedTransition(req, *before, *spec.machine, spec.kind, action, &problem, spec.stateField);
    if (!t)
        return Response::problem(problem);
    TransitionStep step{req, action, std::move(why), std::move(*before), std::move(*t), {}};
    if (spec.check) {
        if (auto p = spec.check(step))
            return Response::problem(*p);
    }
    QJsonObject after;
    if (!spec.write(step, &after, &problem) || !tx.commit(&problem))
        return Response::problem(problem.isNull() ? ApiSupport::internal(QStringLiteral("commit failed")) : problem);
    ctx.feed.notifyAppended();
    for (auto it = step.answerExtra.constBegin(); it != step.answerExtra.constEnd(); ++it)
        after.insert(it.key(), it.value());
    return ApiSupport::objectResponse(after, problem);
}

} // namespace OpsDeck
