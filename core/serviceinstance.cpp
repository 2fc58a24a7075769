// The service instance state machine of spec §5.
#include "serviceinstance.h"

namespace OpsDeck::ServiceInstance {

const StateMachine &machine()
{
    static const Actors users = Actors(Actor::Operator) | Actor::Owner;
    static const Actors worker = Actor::Controller;
    static const Actors failers = worker | Actor::System;
    static const Actors cleaners = users | Actor::Controller;
    const QString update = QStringLiteral("update");
    const QString del = QStringLiteral("delete");
    const QString succeed = QStringLiteral("succeed");
    const QString fail = QStringLiteral("fail");
    static const StateMachine m(
        QStringLiteral("service instance"),
        {CreateInProgress, CreateSucceeded, CreateFailed, UpdateInProgress, UpdateSucceeded, UpdateFailed,
         DeleteInProgress, DeleteFailed, DeleteSucceeded},
        {
            {CreateSucceeded, update, UpdateInProgress, users, QStringLiteral("Update")},
            {UpdateSucceeded, update, UpdateInProgress, users, QStringLiteral("Update")},
            {UpdateFailed, update, UpdateInProgress, users, QStringLiteral("Update")},
            {CreateInProgress, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {CreateSucceeded, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {CreateFailed, del, DeleteInProgress, cleaners, QStringLiteral("Delete")},
            {UpdateSucceeded, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {UpdateFailed, del, DeleteInProgress, users, QStringLiteral("Delete")},
            {DeleteFailed, del, DeleteInProgress, cleaners, QStringLiteral("Delete")},
            {CreateInProgress, succeed, CreateSucceeded, worker, QStringLiteral("Created")},
            {CreateInProgress, fail, CreateFailed, failers, QStringLiteral("Creation failed")},
            {UpdateInProgress, succeed, UpdateSucceeded, worker, QStringLiteral("Updated")},
            {UpdateInProgress, fail, UpdateFailed, failers, QStringLiteral("Update failed")},
            {DeleteInProgress, succeed, DeleteSucceeded, worker, QStringLiteral("Deleted")},
            {DeleteInProgress, fail, DeleteFailed, failers, QStringLiteral("Deletion failed")},
        });
    return m;
}

} // namespace OpsDeck::ServiceInstance
