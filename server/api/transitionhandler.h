// A kind's state change as a description, and the one sequence every kind's transition route runs.
#pragma once

#include "apicontext.h"

#include "core/problem.h"
#include "core/statemachine.h"
#include "server/http/request.h"
#include "server/http/response.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

namespace OpsDeck {

// What a description's hooks see of the change under way.
struct TransitionStep
{
    const Request &request;
    QString action; // the machine's: the route's, or the alternative the machine took
    QString reason;
    QJsonObject before;    // the object as `load` found it
    Transition transition; // what the machine allows from before's state
    QJsonObject answerExtra; // fields `write` adds to the answer besides the object (a new secret)
};

// What differs between kinds; runTransition() holds what does not. A new kind's transitions are a
// new description, not a copy of the sequence. Every description runs in a WriteTransaction: a
// failed commit answers with its storage problem, which the router runs again when it is a conflict.
struct TransitionSpec
{
    QString kind; // "instance": in problems and audit rows
    // Not owned; a static table from core/. None for a change that is no move between states (a
    // secret's rotation): If-Match alone guards it, and the step's transition stays in its state.
    const StateMachine *machine = nullptr;
    QString stateField = QStringLiteral("status");
    // The state the action must end in when the machine lists several (register as RUNNING or as
    // STOPPED): the machine is asked for that one. Any when empty.
    QString target;
    // Machine actions the route's action also stands for, tried in order when the machine refuses
    // it (an endpoint's resume is the machine's enable from DISABLED); the refusal stays the route's.
    QStringList alternatives;
    // Runs first inside the transaction, before the object is read (a PostgreSQL row lock); none when empty.
    std::function<std::optional<Problem>(qint64 id)> lock;
    // The object as `who` may see it, or the problem (404 for one that is not there or not theirs).
    std::function<std::optional<QJsonObject>(const Caller &who, qint64 id, Problem *error)> load;
    // Rewrites the machine's refusal of an action on `object` before it becomes the problem (its
    // allowed actions as the API's routes name them, without those the object holds back); none
    // when empty.
    std::function<void(Refusal *refusal, const QJsonObject &object)> refused;
    // Refusals of the kind's own once If-Match and the machine agreed; none when empty.
    std::function<std::optional<Problem>(const TransitionStep &step)> check;
    // The new state, its audit row, feed event and side effects, inside the transaction; the
    // object as it is now in *after.
    std::function<bool(TransitionStep &step, QJsonObject *after, Problem *error)> write;
};

// Reason, transaction, lock, load, If-Match, machine, check, write, commit, feed notification,
// then 200 with the object (and the step's answerExtra) and its ETag. `reason` is the one the
// caller read with the rest of its body; without it the body may hold nothing but a reason.
Response runTransition(const ApiContext &context, const Request &request, const TransitionSpec &spec, const QString &action,
                       const std::optional<QString> &reason = std::nullopt);

} // namespace OpsDeck
