// The Open Service Broker "last_operation" of service instances and bindings (spec §5).
#pragma once

#include "jsonreader.h"

#include <QDateTime>
#include <QJsonObject>
#include <QString>

#include <optional>

namespace OpsDeck {

enum class OperationType { Create, Update, Delete };
enum class OperationState { Initial, InProgress, Succeeded, Failed };

// Wire names: "create", "update", "delete"; "initial", "in progress", "succeeded", "failed".
QString operationTypeName(OperationType type);
std::optional<OperationType> operationTypeFromName(const QString &name);
QString operationStateName(OperationState state);
std::optional<OperationState> operationStateFromName(const QString &name);

struct LastOperation
{
    OperationType type = OperationType::Create;
    OperationState state = OperationState::Initial;
    QString description; // the broker's or the platform's words, shown to the user verbatim
    QDateTime updatedAt;

    // Initial (accepted, not yet sent) behaves like in progress everywhere: the outcome is unknown.
    bool isPending() const { return state == OperationState::Initial || state == OperationState::InProgress; }

    // The state in the resource's machine: "create in progress", "delete failed", ...
    // ("create initial" reads as "create in progress").
    QString machineState() const;

    // {"type", "state", "description", "updated_at"}
    QJsonObject toJson() const;
    // Reads the object `reader` stands on; errors land in the reader with their paths.
    static LastOperation read(JsonReader &reader);
};

// "create" + "in progress" -> "create in progress": the composite states of the machines of
// service instances and bindings.
QString operationMachineState(OperationType type, OperationState state);

} // namespace OpsDeck
