// A kind's state change as a description, and the one sequence every kind's transition route runs.
#include "transitionhandler.h"

#include "apisupport.h"
#include "server/feed/changefeed.h"
#include "server/outbox/writetransaction.h"

#include <utility>

namespace OpsDeck {

namespace {

// What the caller's If-Match and the machine (when there is one) say about taking `action` from the object's state:
// the transition, or the problem (412, 409 or 403).
std::optional<Transition> allowedTransition(const Request &req, const QJsonObject &object, const TransitionSpec &spec,
                                            const QString &action, Problem *error)
{
    if (auto p = ApiSupport::checkIfMatch(req, object.value(QStringLiteral("version")).toInteger())) {
        *error = *p;
        return std::nullopt;
    }
    const QString from = object.value(spec.stateField).toString();
    if (!spec.machine)
        return Transition{from, action, from, {}, {}};
    const auto find = [&](const QString &a, Refusal *why) {
        return spec.target.isEmpty() ? spec.machine->find(from, a, req.who().role, why)
                                     : spec.machine->find(from, a, spec.target, req.who().role, why);
    };
    Refusal why;
    if (auto t = find(action, &why))
        return t;
    for (const QString &alternative : spec.alternatives) {
        if (auto t = find(alternative, nullptr))
            return t;
    }
    if (spec.refused)
        spec.refused(&why, object);
    *error = ApiSupport::refusal(why, spec.kind, from, action);
    return std::nullopt;
}

} // namespace

Response runTransition(const ApiContext &ctx, const Request &req, const TransitionSpec &spec, const QString &action,
                       const std::optional<QString> &reason)
{
    Q_ASSERT(spec.load && spec.write);
    QString why = reason.value_or(QString());
    if (!reason) {
        if (auto p = ApiSupport::readReasonOnly(req, &why))
            return Response::problem(*p);
    }
    WriteTransaction tx(ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    if (spec.lock) {
        if (auto p = spec.lock(req.id()))
            return Response::problem(*p);
    }
    Problem problem;
    auto before = spec.load(req.who(), req.id(), &problem);
    if (!before)
        return Response::problem(problem);
    auto t = allowedTransition(req, *before, spec, action, &problem);
    if (!t)
        return Response::problem(problem);
    TransitionStep step{req, t->action, std::move(why), std::move(*before), std::move(*t), {}};
    if (spec.check) {
        if (auto p = spec.check(step))
            return Response::problem(*p);
    }
    QJsonObject after;
    if (!spec.write(step, &after, &problem) || !tx.commit(&problem))
        return Response::problem(ApiSupport::storageFailed(problem));
    ctx.feed.notifyAppended();
    for (auto it = step.answerExtra.constBegin(); it != step.answerExtra.constEnd(); ++it)
        after.insert(it.key(), it.value());
    return ApiSupport::objectResponse(after, problem);
}

} // namespace OpsDeck
