// A state machine as data: the states, the transitions and who may take each. Server (to refuse),
// console (to enable actions and draw the diagram) and tests (to enumerate) read the same table.
#pragma once

#include "actor.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace OpsDeck {

struct Transition
{
    QString from;    // state name as on the wire; composite states are written "STARTING+ERROR"
    QString action;  // verb as on the wire: "start", "stop", "retry", "register", ...
    QString to;
    Actors actors;   // who may take it
    QString label;   // human label for buttons and the diagram, e.g. "Stop"
};

// Why a transition was refused; becomes a 409 "invalid-transition" (or 403 when only the actor is wrong).
struct Refusal
{
    QString code;        // "invalid-transition" or "forbidden-transition"
    QString message;     // "cannot stop an instance in state PENDING; allowed: register"
    QStringList allowed; // actions allowed from the current state for this actor
};

class StateMachine final
{
public:
    StateMachine(QString kind, QStringList states, QList<Transition> transitions);

    const QString &kind() const { return m_kind; }
    const QStringList &states() const { return m_states; }
    const QList<Transition> &transitions() const { return m_transitions; }

    // Transitions leaving `state` that `actor` may take, in table order.
    QList<Transition> allowed(const QString &state, Actor actor) const;
    QStringList allowedActions(const QString &state, Actor actor) const;
    // Leaving `state` by `action` as `actor`: the transition, or why not.
    std::optional<Transition> find(const QString &state, const QString &action, Actor actor,
                                   Refusal *refusal = nullptr) const;
    bool isState(const QString &state) const { return m_states.contains(state); }

private:
    QString m_kind;
    QStringList m_states;
    QList<Transition> m_transitions;
};

} // namespace OpsDeck
