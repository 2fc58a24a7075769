// App instances (spec §2): PENDING -> RUNNING|STOPPED, RUNNING <-> STOPPED, STOPPED -> DESTROYED.
#pragma once

#include "statemachine.h"

#include <QJsonObject>

namespace OpsDeck::Instance {

inline const QString Pending = QStringLiteral("PENDING");
inline const QString Running = QStringLiteral("RUNNING");
inline const QString Stopped = QStringLiteral("STOPPED");
inline const QString Destroyed = QStringLiteral("DESTROYED");

// register: PENDING -> RUNNING (provider, operator)   [the provider registers the instance]
//           PENDING -> STOPPED (provider, operator)   [registered with "status": "STOPPED"]
// stop:     RUNNING -> STOPPED (operator, owner)
// start:    STOPPED -> RUNNING (operator, owner)
// destroy:  STOPPED -> DESTROYED (system)             [after retention and provider acknowledgement]
// Also: PENDING -> STOPPED by stop (operator, owner): a pending instance can be stopped.
// DESTROYED is terminal. The provider never stops or starts: it is told, it does not decide.
const StateMachine &machine();

// STOPPED before its provider registered it (it has no "callback"): it may not start, since
// RUNNING would be told to no provider. The server refuses it, the console holds Start back.
bool stoppedUnregistered(const QJsonObject &instance);
// STOPPED with its destruction callback issued, delivered or not (retention over, the STOPPED
// notification acknowledged): the provider may have deleted it already, so it may not start
// again. It becomes DESTROYED once the provider acknowledges. Its awaiting_ack names the callback.
bool destructionIssued(const QJsonObject &instance);
// What the machine allows from the instance's state that the instance itself holds back (start,
// for the two above): refused by the server, and left out of a refusal's "allowed".
QStringList heldActions(const QJsonObject &instance);

// Callback body types (spec §2).
inline const QString StatusChangedEvent = QStringLiteral("instance.status_changed");
inline const QString DestroyedEvent = QStringLiteral("instance.destroyed");

} // namespace OpsDeck::Instance
