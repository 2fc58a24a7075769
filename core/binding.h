// Service bindings and keys (spec §5): their states, read from last_operation, and who moves them.
#pragma once

#include "operation.h"
#include "statemachine.h"

namespace OpsDeck::Binding {

// Wire field "type": bound to an app, or a named service key.
enum class Type { App, Key };
QString typeName(Type type); // "app", "key"
std::optional<Type> typeFromName(const QString &name);

// Machine states: last_operation's type and state ("initial" reads as "in progress").
inline const QString CreateInProgress = QStringLiteral("create in progress");
inline const QString CreateSucceeded = QStringLiteral("create succeeded");
inline const QString CreateFailed = QStringLiteral("create failed");
inline const QString DeleteInProgress = QStringLiteral("delete in progress");
inline const QString DeleteFailed = QStringLiteral("delete failed");
inline const QString DeleteSucceeded = QStringLiteral("delete succeeded"); // gone; kept for the diagram and feed

// user (owner, operator):
//   create:  create failed -> create in progress          [recreate; a new binding starts in create in progress]
//   delete:  create succeeded | create in progress | create failed | delete failed -> delete in progress
//            (from create in progress it halts the creation, as the OSB spec requires)
// broker worker (controller):
//   succeed: create in progress -> create succeeded,  delete in progress -> delete succeeded
//   fail:    create in progress -> create failed,     delete in progress -> delete failed
//            (also the system: an operation a crash left pending fails once the broker timeout passed)
//   delete:  create failed | delete failed -> delete in progress   [orphan mitigation, until it is gone]
// Deleting during delete in progress is refused (409 operation-in-progress). What each request does
// in each state is core/bindingrules.h; this machine agrees with it.
const StateMachine &machine();

} // namespace OpsDeck::Binding
