// The binding decision table of spec §5, one switch per request so every cell is written out.
#include "bindingrules.h"

namespace OpsDeck::BindingRules {

namespace {

Decision allow(Outcome outcome)
{
    return {outcome, {}};
}

Decision refuse(int status, const QString &code, const QString &title, const QString &detail)
{
    return {Outcome::Refuse, Problem::make(status, code, title, detail)};
}

// (A): clients (like the cf CLI) read it as "done", so it is only for bindings that exist or will.
Decision alreadyBound(Binding::Type type, const QString &name)
{
    const QString detail = type == Binding::Type::App
        ? QStringLiteral("The app is already bound to the service instance.")
        : name.isEmpty()
            ? QStringLiteral("The service instance already has a key of this name; key names must be unique.")
            : QStringLiteral("The service instance already has a key named '%1'; key names must be unique.").arg(name);
    return refuse(422, AlreadyBoundCode, QStringLiteral("Already bound"), detail);
}

// (1) and (2): a deletion that failed or still runs will be finished by orphan mitigation, so the
// binding must neither be reported as existing nor handed out.
Decision beingDeleted(Condition condition)
{
    const QString detail = condition == Condition::DeleteFailed
        ? QStringLiteral("The previous deletion of this binding failed; it is being removed. Try again later.")
        : QStringLiteral("An existing binding is being deleted. Try again later.");
    return refuse(422, BeingDeletedCode, QStringLiteral("Binding being deleted"), detail);
}

Decision notFound()
{
    return refuse(404, NotFoundCode, QStringLiteral("Not found"), QStringLiteral("No such binding."));
}

Decision decideCreate(Condition condition, Binding::Type type, const QString &name)
{
    switch (condition) {
    case Condition::None: return allow(Outcome::Create);
    case Condition::CreateSucceeded: return alreadyBound(type, name);
    case Condition::CreateInProgress: return alreadyBound(type, name);
    case Condition::CreateFailed: return allow(Outcome::Recreate);
    case Condition::DeleteFailed: return beingDeleted(condition);
    case Condition::DeleteInProgress: return beingDeleted(condition);
    }
    Q_UNREACHABLE();
    return {};
}

Decision decideDelete(Condition condition)
{
    switch (condition) {
    case Condition::None: return notFound();
    case Condition::CreateSucceeded: return allow(Outcome::Accept);
    case Condition::CreateInProgress: return allow(Outcome::AcceptHaltingCreation);
    case Condition::CreateFailed: return allow(Outcome::Accept);
    case Condition::DeleteFailed: return allow(Outcome::Accept);
    case Condition::DeleteInProgress:
        return refuse(409, OperationInProgressCode, QStringLiteral("Operation in progress"),
                      QStringLiteral("There is an operation in progress for the service binding."));
    }
    Q_UNREACHABLE();
    return {};
}

Decision decideEnvironment(Condition condition)
{
    switch (condition) {
    case Condition::None: return allow(Outcome::Omit);
    case Condition::CreateSucceeded: return allow(Outcome::Include);
    case Condition::CreateInProgress: return allow(Outcome::Omit);
    case Condition::CreateFailed: return allow(Outcome::Omit);
    case Condition::DeleteFailed: return allow(Outcome::Omit);
    case Condition::DeleteInProgress: return allow(Outcome::Omit);
    }
    Q_UNREACHABLE();
    return {};
}

Decision decideDetails(Condition condition)
{
    switch (condition) {
    case Condition::None: return notFound();
    case Condition::CreateSucceeded: return allow(Outcome::Credentials);
    case Condition::CreateInProgress:
        return refuse(404, CreationInProgressCode, QStringLiteral("Creation in progress"),
                      QStringLiteral("Creation of the binding is in progress; it has no credentials yet."));
    case Condition::CreateFailed:
        return refuse(404, CreationFailedCode, QStringLiteral("Creation failed"),
                      QStringLiteral("Creation of the binding failed; it has no credentials."));
    case Condition::DeleteFailed:
        return refuse(404, DeletionFailedCode, QStringLiteral("Deletion failed"),
                      QStringLiteral("Deletion of the binding failed; its credentials may no longer work."));
    case Condition::DeleteInProgress:
        return refuse(404, DeletionInProgressCode, QStringLiteral("Deletion in progress"),
                      QStringLiteral("The binding is being deleted; its credentials may no longer work."));
    }
    Q_UNREACHABLE();
    return {};
}

Decision decideManifest(Condition condition)
{
    switch (condition) {
    case Condition::None: return allow(Outcome::Create);
    case Condition::CreateSucceeded: return allow(Outcome::Keep);
    case Condition::CreateInProgress:
        // The app would otherwise start with the empty, still-creating binding in its environment.
        return refuse(422, NotSynchronousCode, QStringLiteral("Binding must be synchronous"),
                      QStringLiteral("Bindings made by a manifest must be synchronous, and this binding's "
                                     "creation is still in progress. Try again when it has finished."));
    case Condition::CreateFailed: return allow(Outcome::Recreate);
    case Condition::DeleteFailed: return beingDeleted(condition);
    case Condition::DeleteInProgress: return beingDeleted(condition);
    }
    Q_UNREACHABLE();
    return {};
}

} // namespace

Condition conditionOf(const std::optional<LastOperation> &lastOperation)
{
    if (!lastOperation)
        return Condition::None;
    const bool pending = lastOperation->isPending();
    const OperationState state = lastOperation->state;
    switch (lastOperation->type) {
    case OperationType::Create:
    case OperationType::Update:
        if (pending)
            return Condition::CreateInProgress;
        return state == OperationState::Succeeded ? Condition::CreateSucceeded : Condition::CreateFailed;
    case OperationType::Delete:
        if (pending)
            return Condition::DeleteInProgress;
        return state == OperationState::Succeeded ? Condition::None : Condition::DeleteFailed;
    }
    Q_UNREACHABLE();
    return Condition::None;
}

Decision decide(Request request, Condition condition, Binding::Type type, const QString &name)
{
    switch (request) {
    case Request::Create: return decideCreate(condition, type, name);
    case Request::Delete: return decideDelete(condition);
    case Request::AppEnvironment: return decideEnvironment(condition);
    case Request::KeyDetails: return decideDetails(condition);
    case Request::ApplyManifest: return decideManifest(condition);
    }
    Q_UNREACHABLE();
    return {};
}

Decision decide(Request request, const std::optional<LastOperation> &lastOperation, Binding::Type type,
                const QString &name)
{
    return decide(request, conditionOf(lastOperation), type, name);
}

QString requestName(Request request)
{
    switch (request) {
    case Request::Create: return QStringLiteral("create");
    case Request::Delete: return QStringLiteral("delete");
    case Request::AppEnvironment: return QStringLiteral("app-environment");
    case Request::KeyDetails: return QStringLiteral("key-details");
    case Request::ApplyManifest: return QStringLiteral("apply-manifest");
    }
    return {};
}

QString conditionName(Condition condition)
{
    switch (condition) {
    case Condition::None: return QStringLiteral("none");
    case Condition::CreateSucceeded: return Binding::CreateSucceeded;
    case Condition::CreateInProgress: return Binding::CreateInProgress;
    case Condition::CreateFailed: return Binding::CreateFailed;
    case Condition::DeleteFailed: return Binding::DeleteFailed;
    case Condition::DeleteInProgress: return Binding::DeleteInProgress;
    }
    return {};
}

QString outcomeName(Outcome outcome)
{
    switch (outcome) {
    case Outcome::Create: return QStringLiteral("create");
    case Outcome::Recreate: return QStringLiteral("recreate");
    case Outcome::Refuse: return QStringLiteral("refuse");
    case Outcome::Accept: return QStringLiteral("accept");
    case Outcome::AcceptHaltingCreation: return QStringLiteral("accept-halting-creation");
    case Outcome::Include: return QStringLiteral("include");
    case Outcome::Omit: return QStringLiteral("omit");
    case Outcome::Credentials: return QStringLiteral("credentials");
    case Outcome::Keep: return QStringLiteral("keep");
    }
    return {};
}

} // namespace OpsDeck::BindingRules
