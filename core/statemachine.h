// A state machine as data: the states, the transitions and who may take each. Server (to refuse),
// console (to enable actions and draw the diagram) and tests (to enumerate) read the same table.
#pragma once

#include "actor.h"
#include "problem.h"

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
    QString label;   // human label for buttons and the diagram, e.g. "Stop"; English, marked for translation
};

// The label in the user's language (the console's buttons and diagram), the action when it has none.
QString transitionLabel(const Transition &transition);

// Why a transition was refused; becomes a 409 "invalid-transition" (or 403 when only the actor is wrong).
struct Refusal
{
    QString code;        // "invalid-transition" or "forbidden-transition"
    QString message;     // "cannot stop an instance in state PENDING; allowed: register"
    QStringList allowed; // actions allowed from the current state for this actor

    // 409 invalid-transition or 403 forbidden-transition, with "allowed": [actions].
    Problem toProblem() const;
    // Other allowed actions than the machine's (as the API's routes name them, or fewer where the
    // object holds some back): the list and the message's "allowed: ..." both.
    void setAllowed(const QStringList &actions);
};

inline const QString InvalidTransitionCode = QStringLiteral("invalid-transition");
inline const QString ForbiddenTransitionCode = QStringLiteral("forbidden-transition");

class StateMachine final
{
public:
    // The table is checked once (Q_ASSERT): every from/to is a listed state and no (from, action, to)
    // appears twice.
    StateMachine(QString kind, QStringList states, QList<Transition> transitions);

    const QString &kind() const { return m_kind; }
    const QStringList &states() const { return m_states; }
    const QList<Transition> &transitions() const { return m_transitions; }

    // Every distinct action of the table, in table order: the console's action buttons.
    QStringList actions() const;
    // No transition leaves it, whoever asks.
    bool isTerminal(const QString &state) const;

    // Transitions leaving `state` that `actor` may take, in table order.
    QList<Transition> allowed(const QString &state, Actor actor) const;
    QStringList allowedActions(const QString &state, Actor actor) const;
    // Leaving `state` by `action` as `actor`: the transition, or why not. When one action leads
    // to several states (register as RUNNING or as STOPPED), the first in table order.
    std::optional<Transition> find(const QString &state, const QString &action, Actor actor,
                                   Refusal *refusal = nullptr) const;
    // The same, for the transition of `action` that ends in `to`.
    std::optional<Transition> find(const QString &state, const QString &action, const QString &to, Actor actor,
                                   Refusal *refusal = nullptr) const;
    bool isState(const QString &state) const { return m_states.contains(state); }

private:
    std::optional<Transition> findImpl(const QString &state, const QString &action, const QString *to,
                                       Actor actor, Refusal *refusal) const;
    QString article() const;

    QString m_kind;
    QStringList m_states;
    QList<Transition> m_transitions;
};

} // namespace OpsDeck
