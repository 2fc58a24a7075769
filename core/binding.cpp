// The service binding state machine of spec §5.
#include "binding.h"

namespace OpsDeck::Binding {

QString typeName(Type type)
{
    switch (type) {
    case Type::App: return QStringLiteral("app");
    case Type::Key: return QStringLiteral("key");
    }
    return {};
}

std::optional<Type> typeFromName(const QString &name)
{
    for (Type t : {Type::App, Type::Key}) {
        if (typeName(t) == name)
            return t;
    }
    return std::nullopt;
}

const StateMachine &machine()
{
    static const Actors users = Actors(Actor::Operator) | Actor::Owner;
    static const Actors worker = Actor::Controller;
    static const Actors failers = worker | Actor::System;
    static const Actors cleaners = users | Actor::Controller;
    const QString del = QStringLiteral("delete");
    const QString succeed = QStringLiteral("succeed");
    const QString fail = QStringLiteral("fail");
    static const StateMachine m(
        QStringLiteral("binding"),
        {CreateInProgress, CreateSucceeded, CreateFailed, DeleteInProgress, DeleteFailed, DeleteSucceeded},
        {
            {CreateFailed, QStringLiteral("create"), CreateInProgress, users, QStringLiteral("Recreate")},
            {CreateSucceeded, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {CreateInProgress, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {CreateFailed, del, DeleteInProgress, cleaners, QStringLiteral("Delete")},
            {DeleteFailed, del, DeleteInProgress, cleaners, QStringLiteral("Delete")},
            {CreateInProgress, succeed, CreateSucceeded, worker, QStringLiteral("Created")},
            {CreateInProgress, fail, CreateFailed, failers, QStringLiteral("Creation failed")},
            {DeleteInProgress, succeed, DeleteSucceeded, worker, QStringLiteral("Deleted")},
            {DeleteInProgress, fail, DeleteFailed, failers, QStringLiteral("Deletion failed")},
        });
    return m;
}

} // namespace OpsDeck::Binding
