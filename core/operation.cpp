// The Open Service Broker "last_operation": names, composite machine states, wire form.
#include "operation.h"

namespace OpsDeck {

namespace {

const QString CreateName = QStringLiteral("create");
const QString UpdateName = QStringLiteral("update");
const QString DeleteName = QStringLiteral("delete");
const QString InitialName = QStringLiteral("initial");
const QString InProgressName = QStringLiteral("in progress");
const QString SucceededName = QStringLiteral("succeeded");
const QString FailedName = QStringLiteral("failed");

} // namespace

QString operationTypeName(OperationType type)
{
    switch (type) {
    case OperationType::Create: return CreateName;
    case OperationType::Update: return UpdateName;
    case OperationType::Delete: return DeleteName;
    }
    return {};
}

std::optional<OperationType> operationTypeFromName(const QString &name)
{
    for (OperationType t : {OperationType::Create, OperationType::Update, OperationType::Delete}) {
        if (operationTypeName(t) == name)
            return t;
    }
    return std::nullopt;
}

QString operationStateName(OperationState state)
{
    switch (state) {
    case OperationState::Initial: return InitialName;
    case OperationState::InProgress: return InProgressName;
    case OperationState::Succeeded: return SucceededName;
    case OperationState::Failed: return FailedName;
    }
    return {};
}

std::optional<OperationState> operationStateFromName(const QString &name)
{
    for (OperationState s : {OperationState::Initial, OperationState::InProgress, OperationState::Succeeded,
                             OperationState::Failed}) {
        if (operationStateName(s) == name)
            return s;
    }
    return std::nullopt;
}

QString operationMachineState(OperationType type, OperationState state)
{
    const OperationState shown = state == OperationState::Initial ? OperationState::InProgress : state;
    return operationTypeName(type) + QLatin1Char(' ') + operationStateName(shown);
}

QString LastOperation::machineState() const
{
    return operationMachineState(type, state);
}

QJsonObject LastOperation::toJson() const
{
    return {
        {QStringLiteral("type"), operationTypeName(type)},
        {QStringLiteral("state"), operationStateName(state)},
        {QStringLiteral("description"), description},
        {QStringLiteral("updated_at"),
         updatedAt.isValid() ? QJsonValue(updatedAt.toUTC().toString(Qt::ISODateWithMs)) : QJsonValue()},
    };
}

LastOperation LastOperation::read(JsonReader &reader)
{
    LastOperation op;
    const QString type = reader.oneOf(QStringLiteral("type"), {CreateName, UpdateName, DeleteName});
    op.type = operationTypeFromName(type).value_or(OperationType::Create);
    const QString state =
        reader.oneOf(QStringLiteral("state"), {InitialName, InProgressName, SucceededName, FailedName});
    op.state = operationStateFromName(state).value_or(OperationState::Initial);
    op.description = reader.optString(QStringLiteral("description"), 10000).value_or(QString());
    if (const auto at = reader.optString(QStringLiteral("updated_at"), 64)) {
        op.updatedAt = QDateTime::fromString(*at, Qt::ISODateWithMs);
        if (!op.updatedAt.isValid())
            reader.addError(QStringLiteral("updated_at"), QStringLiteral("expected an RFC 3339 timestamp"));
        else
            op.updatedAt = op.updatedAt.toUTC();
    }
    reader.rejectUnknown();
    return op;
}

} // namespace OpsDeck
