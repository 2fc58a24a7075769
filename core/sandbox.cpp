// The sandbox state machine of spec §4 and its composite error states.
#include "sandbox.h"

namespace OpsDeck::Sandbox {

namespace {

const QString ErrorSuffix = QStringLiteral("+ERROR");

} // namespace

const StateMachine &machine()
{
    static const Actors users = Actors(Actor::Operator) | Actor::Owner;
    // The controller may retry too, but only transient errors; that guard needs the row's error_kind.
    static const Actors retriers = users | Actor::Controller;
    static const StateMachine m(
        QStringLiteral("sandbox"), {Idle, Starting, StartingError, Running, Stopping, StoppingError},
        {
            {Idle, QStringLiteral("start"), Starting, users, QStringLiteral("Start")},
            {StartingError, QStringLiteral("retry"), Starting, retriers, QStringLiteral("Retry start")},
            {Running, QStringLiteral("stop"), Stopping, users, QStringLiteral("Stop")},
            {Running, QStringLiteral("commit"), Stopping, users, QStringLiteral("Commit")},
            {Running, QStringLiteral("rollback"), Stopping, users, QStringLiteral("Roll back")},
            {StoppingError, QStringLiteral("retry"), Stopping, retriers, QStringLiteral("Retry stop")},
            {Starting, QStringLiteral("started"), Running, Actor::Controller, QStringLiteral("Started")},
            {Starting, QStringLiteral("fail"), StartingError, Actor::Controller, QStringLiteral("Start failed")},
            {Stopping, QStringLiteral("stopped"), Idle, Actor::Controller, QStringLiteral("Stopped")},
            {Stopping, QStringLiteral("fail"), StoppingError, Actor::Controller, QStringLiteral("Stop failed")},
        });
    return m;
}

QString machineState(const QString &state, bool hasError)
{
    if (hasError && (state == Starting || state == Stopping))
        return state + ErrorSuffix;
    return state;
}

QString storedState(const QString &machineState)
{
    if (machineState.endsWith(ErrorSuffix))
        return machineState.chopped(ErrorSuffix.size());
    return machineState;
}

bool hasError(const QString &machineState)
{
    return machineState.endsWith(ErrorSuffix);
}

bool isReservedVersionName(const QString &name)
{
    return name.compare(ReservedVersionName, Qt::CaseInsensitive) == 0;
}

} // namespace OpsDeck::Sandbox
