// The binding decision table of spec §5: what each request does in each state of an existing binding.
#pragma once

#include "binding.h"
#include "operation.h"
#include "problem.h"

#include <optional>

namespace OpsDeck::BindingRules {

enum class Request {
    Create,         // POST /bindings (an app binding or a key)
    Delete,         // DELETE /bindings/:id
    AppEnvironment, // GET /apps/:id/env
    KeyDetails,     // GET /bindings/:id/details
    ApplyManifest,  // POST /apps/:id/apply-manifest
};

// The existing binding's state: the table's columns, plus None when there is no binding (or
// its deletion succeeded, so it no longer exists).
enum class Condition { None, CreateSucceeded, CreateInProgress, CreateFailed, DeleteFailed, DeleteInProgress };

enum class Outcome {
    Create,                // no binding: create one
    Recreate,              // replace the failed binding by a new one
    Refuse,                // answer Decision::problem
    Accept,                // start the deletion
    AcceptHaltingCreation, // start the deletion, which halts the creation still in progress
    Include,               // put the binding's credentials in the app's environment
    Omit,                  // leave the binding out of the app's environment
    Credentials,           // hand out the key's credentials
    Keep,                  // the manifest's binding exists and works: skip it
};

struct Decision
{
    Outcome outcome = Outcome::Refuse;
    Problem problem; // set exactly when outcome is Refuse

    bool refused() const { return outcome == Outcome::Refuse; }
};

// No last operation, or a succeeded delete, is None. "initial" counts as in progress. Bindings
// have no update; one is read like a create of the same state.
Condition conditionOf(const std::optional<LastOperation> &lastOperation);

// `name` is the key's name, quoted in the "already bound" detail of a key.
Decision decide(Request request, Condition condition, Binding::Type type, const QString &name = {});
Decision decide(Request request, const std::optional<LastOperation> &lastOperation, Binding::Type type,
                const QString &name = {});

// The codes of the table's refusals. AlreadyBound is the one clients treat as success, so every
// "it exists but must not be used" case has a code of its own.
inline const QString AlreadyBoundCode = QStringLiteral("binding-already-bound");          // 422 (A)
inline const QString BeingDeletedCode = QStringLiteral("binding-being-deleted");          // 422 (1), (2)
inline const QString OperationInProgressCode = QStringLiteral("operation-in-progress");   // 409
inline const QString NotSynchronousCode = QStringLiteral("binding-not-synchronous");      // 422
inline const QString CreationInProgressCode = QStringLiteral("binding-creation-in-progress"); // 404
inline const QString CreationFailedCode = QStringLiteral("binding-creation-failed");          // 404
inline const QString DeletionFailedCode = QStringLiteral("binding-deletion-failed");          // 404
inline const QString DeletionInProgressCode = QStringLiteral("binding-deletion-in-progress"); // 404
inline const QString NotFoundCode = QStringLiteral("not-found");                              // 404

// Wire-ish names for logs, tests and the console's explanation: "create", "app-environment", ...;
// "none", "create succeeded", ...; "recreate", "accept-halting-creation", ...
QString requestName(Request request);
QString conditionName(Condition condition);
QString outcomeName(Outcome outcome);

} // namespace OpsDeck::BindingRules
