// A state machine as data: lookups and the refusals the server turns into problems.
#include "statemachine.h"

#include <QCoreApplication>
#include <QJsonArray>

#include <algorithm>

namespace OpsDeck {

void Refusal::setAllowed(const QStringList &actions)
{
    allowed = actions;
    static const QString marker = QStringLiteral("; allowed: ");
    const qsizetype at = message.lastIndexOf(marker);
    if (at >= 0)
        message = message.left(at + marker.size())
                  + (allowed.isEmpty() ? QStringLiteral("none") : allowed.join(QStringLiteral(", ")));
}

Problem Refusal::toProblem() const
{
    const bool forbidden = code == ForbiddenTransitionCode;
    Problem p = Problem::make(forbidden ? 403 : 409, code,
                              forbidden ? QStringLiteral("Transition not allowed for this role")
                                        : QStringLiteral("Invalid transition"),
                              message);
    p.with(QStringLiteral("allowed"), QJsonArray::fromStringList(allowed));
    return p;
}

QString transitionLabel(const Transition &transition)
{
    if (transition.label.isEmpty())
        return transition.action;
    // The tables (instance.cpp, delivery.cpp, ...) mark each label in this context.
    return QCoreApplication::translate("OpsDeck::StateMachine", transition.label.toUtf8().constData());
}

StateMachine::StateMachine(QString kind, QStringList states, QList<Transition> transitions)
    : m_kind(std::move(kind))
    , m_states(std::move(states))
    , m_transitions(std::move(transitions))
{
#ifndef QT_NO_DEBUG
    for (qsizetype i = 0; i < m_transitions.size(); ++i) {
        const Transition &t = m_transitions.at(i);
        Q_ASSERT_X(m_states.contains(t.from), "StateMachine", qPrintable(m_kind + QLatin1Char(' ') + t.from));
        Q_ASSERT_X(m_states.contains(t.to), "StateMachine", qPrintable(m_kind + QLatin1Char(' ') + t.to));
        Q_ASSERT_X(t.actors, "StateMachine", qPrintable(m_kind + QLatin1Char(' ') + t.action));
        for (qsizetype j = 0; j < i; ++j) {
            const Transition &u = m_transitions.at(j);
            Q_ASSERT_X(!(u.from == t.from && u.action == t.action && u.to == t.to), "StateMachine",
                       qPrintable(m_kind + QLatin1Char(' ') + t.from + QLatin1Char(' ') + t.action));
        }
    }
#endif
}

QStringList StateMachine::actions() const
{
    QStringList out;
    for (const Transition &t : m_transitions) {
        if (!out.contains(t.action))
            out.append(t.action);
    }
    return out;
}

bool StateMachine::isTerminal(const QString &state) const
{
    return std::none_of(m_transitions.cbegin(), m_transitions.cend(),
                        [&state](const Transition &t) { return t.from == state; });
}

QList<Transition> StateMachine::allowed(const QString &state, Actor actor) const
{
    QList<Transition> out;
    for (const Transition &t : m_transitions) {
        if (t.from == state && t.actors.testFlag(actor))
            out.append(t);
    }
    return out;
}

QStringList StateMachine::allowedActions(const QString &state, Actor actor) const
{
    QStringList out;
    for (const Transition &t : m_transitions) {
        if (t.from == state && t.actors.testFlag(actor) && !out.contains(t.action))
            out.append(t.action);
    }
    return out;
}

std::optional<Transition> StateMachine::find(const QString &state, const QString &action, Actor actor,
                                             Refusal *refusal) const
{
    return findImpl(state, action, nullptr, actor, refusal);
}

std::optional<Transition> StateMachine::find(const QString &state, const QString &action, const QString &to,
                                             Actor actor, Refusal *refusal) const
{
    return findImpl(state, action, &to, actor, refusal);
}

std::optional<Transition> StateMachine::findImpl(const QString &state, const QString &action, const QString *to,
                                                 Actor actor, Refusal *refusal) const
{
    // Whether someone else could take it decides between 403 (ask someone else) and 409 (nobody can).
    bool existsForSomeone = false;
    for (const Transition &t : m_transitions) {
        if (t.from != state || t.action != action || (to && t.to != *to))
            continue;
        if (t.actors.testFlag(actor))
            return t;
        existsForSomeone = true;
    }
    if (refusal) {
        const QStringList allowedHere = allowedActions(state, actor);
        const QString allowedText = allowedHere.isEmpty() ? QStringLiteral("none")
                                                           : allowedHere.join(QStringLiteral(", "));
        const QString target = to ? QStringLiteral(" as %1").arg(*to) : QString();
        refusal->allowed = allowedHere;
        if (!isState(state)) {
            refusal->code = InvalidTransitionCode;
            refusal->message = QStringLiteral("cannot %1 %2 %3 in unknown state %4")
                                   .arg(action, article(), m_kind, state);
        } else if (existsForSomeone) {
            refusal->code = ForbiddenTransitionCode;
            refusal->message = QStringLiteral("%1 may not %2 %3 %4 in state %5%6; allowed: %7")
                                   .arg(actorName(actor), action, article(), m_kind, state, target, allowedText);
        } else {
            refusal->code = InvalidTransitionCode;
            refusal->message = QStringLiteral("cannot %1 %2 %3 in state %4%5; allowed: %6")
                                   .arg(action, article(), m_kind, state, target, allowedText);
        }
    }
    return std::nullopt;
}

QString StateMachine::article() const
{
    static const QString vowels = QStringLiteral("aeiou");
    return !m_kind.isEmpty() && vowels.contains(m_kind.front().toLower()) ? QStringLiteral("an")
                                                                          : QStringLiteral("a");
}

} // namespace OpsDeck
