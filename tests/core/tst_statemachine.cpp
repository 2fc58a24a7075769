// The state machine engine: lookups by state, action and actor, and the refusals the server sends.
#include "core/statemachine.h"

#include <QtTest>

using namespace OpsDeck;

namespace {

// A small machine with every shape the engine must handle: a shared action, one action with two
// targets, a composite state, a self-loop and a terminal state.
const StateMachine &door()
{
    static const StateMachine m(
        QStringLiteral("door"), {QStringLiteral("SHUT"), QStringLiteral("OPEN"), QStringLiteral("SHUT+ERROR"),
                                 QStringLiteral("GONE")},
        {
            {QStringLiteral("SHUT"), QStringLiteral("open"), QStringLiteral("OPEN"),
             Actors(Actor::Owner) | Actor::Operator, QStringLiteral("Open")},
            {QStringLiteral("SHUT"), QStringLiteral("open"), QStringLiteral("SHUT+ERROR"), Actor::Controller,
             QStringLiteral("Jam")},
            {QStringLiteral("SHUT"), QStringLiteral("knock"), QStringLiteral("SHUT"), Actor::Provider,
             QStringLiteral("Knock")},
            {QStringLiteral("OPEN"), QStringLiteral("shut"), QStringLiteral("SHUT"), Actor::Owner,
             QStringLiteral("Shut")},
            {QStringLiteral("SHUT+ERROR"), QStringLiteral("retry"), QStringLiteral("SHUT"), Actor::Owner,
             QStringLiteral("Retry")},
            {QStringLiteral("OPEN"), QStringLiteral("remove"), QStringLiteral("GONE"), Actor::System,
             QStringLiteral("Remove")},
        });
    return m;
}

} // namespace

class tst_StateMachine final : public QObject
{
    Q_OBJECT

private slots:
    void describesItself();
    void allowed_data();
    void allowed();
    void find_data();
    void find();
    void findWithTarget();
    void articleFollowsKind();
    void refusalProblem_data();
    void refusalProblem();
};

void tst_StateMachine::describesItself()
{
    const StateMachine &m = door();
    QCOMPARE(m.kind(), QStringLiteral("door"));
    QCOMPARE(m.states().size(), 4);
    QCOMPARE(m.transitions().size(), 6);
    QCOMPARE(m.actions(), (QStringList{QStringLiteral("open"), QStringLiteral("knock"), QStringLiteral("shut"),
                                       QStringLiteral("retry"), QStringLiteral("remove")}));
    QVERIFY(m.isState(QStringLiteral("SHUT+ERROR")));
    QVERIFY(!m.isState(QStringLiteral("shut")));
    QVERIFY(m.isTerminal(QStringLiteral("GONE")));
    QVERIFY(!m.isTerminal(QStringLiteral("OPEN")));
    QVERIFY(m.isTerminal(QStringLiteral("NOWHERE")));
}

void tst_StateMachine::allowed_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<Actor>("actor");
    QTest::addColumn<QStringList>("actions");
    QTest::addColumn<QStringList>("targets");

    QTest::newRow("owner at SHUT") << QStringLiteral("SHUT") << Actor::Owner << QStringList{QStringLiteral("open")}
                                   << QStringList{QStringLiteral("OPEN")};
    QTest::newRow("controller at SHUT")
        << QStringLiteral("SHUT") << Actor::Controller << QStringList{QStringLiteral("open")}
        << QStringList{QStringLiteral("SHUT+ERROR")};
    QTest::newRow("provider at SHUT") << QStringLiteral("SHUT") << Actor::Provider
                                      << QStringList{QStringLiteral("knock")} << QStringList{QStringLiteral("SHUT")};
    QTest::newRow("operator at OPEN") << QStringLiteral("OPEN") << Actor::Operator << QStringList{} << QStringList{};
    QTest::newRow("owner at OPEN") << QStringLiteral("OPEN") << Actor::Owner << QStringList{QStringLiteral("shut")}
                                   << QStringList{QStringLiteral("SHUT")};
    QTest::newRow("system at OPEN") << QStringLiteral("OPEN") << Actor::System
                                    << QStringList{QStringLiteral("remove")} << QStringList{QStringLiteral("GONE")};
    QTest::newRow("owner at GONE") << QStringLiteral("GONE") << Actor::Owner << QStringList{} << QStringList{};
    QTest::newRow("unknown state") << QStringLiteral("AJAR") << Actor::Owner << QStringList{} << QStringList{};
}

void tst_StateMachine::allowed()
{
    QFETCH(QString, state);
    QFETCH(Actor, actor);
    QFETCH(QStringList, actions);
    QFETCH(QStringList, targets);
    QCOMPARE(door().allowedActions(state, actor), actions);
    QStringList gotTargets;
    for (const Transition &t : door().allowed(state, actor)) {
        QCOMPARE(t.from, state);
        gotTargets << t.to;
    }
    QCOMPARE(gotTargets, targets);
}

void tst_StateMachine::find_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("action");
    QTest::addColumn<Actor>("actor");
    QTest::addColumn<QString>("to");           // empty: refused
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QStringList>("allowed");

    QTest::newRow("taken") << QStringLiteral("SHUT") << QStringLiteral("open") << Actor::Operator
                           << QStringLiteral("OPEN") << QString() << QString() << QStringList();
    QTest::newRow("same action, other actor, other target")
        << QStringLiteral("SHUT") << QStringLiteral("open") << Actor::Controller << QStringLiteral("SHUT+ERROR")
        << QString() << QString() << QStringList();
    QTest::newRow("self-loop") << QStringLiteral("SHUT") << QStringLiteral("knock") << Actor::Provider
                               << QStringLiteral("SHUT") << QString() << QString() << QStringList();
    QTest::newRow("composite state") << QStringLiteral("SHUT+ERROR") << QStringLiteral("retry") << Actor::Owner
                                     << QStringLiteral("SHUT") << QString() << QString() << QStringList();
    QTest::newRow("wrong state") << QStringLiteral("OPEN") << QStringLiteral("open") << Actor::Owner << QString()
                                 << InvalidTransitionCode
                                 << QStringLiteral("cannot open a door in state OPEN; allowed: shut")
                                 << QStringList{QStringLiteral("shut")};
    QTest::newRow("wrong actor") << QStringLiteral("OPEN") << QStringLiteral("shut") << Actor::Operator << QString()
                                 << ForbiddenTransitionCode
                                 << QStringLiteral("operator may not shut a door in state OPEN; allowed: none")
                                 << QStringList();
    QTest::newRow("wrong actor, others allowed")
        << QStringLiteral("SHUT") << QStringLiteral("knock") << Actor::Owner << QString() << ForbiddenTransitionCode
        << QStringLiteral("owner may not knock a door in state SHUT; allowed: open")
        << QStringList{QStringLiteral("open")};
    QTest::newRow("unknown action") << QStringLiteral("SHUT") << QStringLiteral("paint") << Actor::Owner
                                    << QString() << InvalidTransitionCode
                                    << QStringLiteral("cannot paint a door in state SHUT; allowed: open")
                                    << QStringList{QStringLiteral("open")};
    QTest::newRow("terminal") << QStringLiteral("GONE") << QStringLiteral("open") << Actor::Owner << QString()
                              << InvalidTransitionCode
                              << QStringLiteral("cannot open a door in state GONE; allowed: none") << QStringList();
    QTest::newRow("unknown state") << QStringLiteral("AJAR") << QStringLiteral("open") << Actor::Owner << QString()
                                   << InvalidTransitionCode
                                   << QStringLiteral("cannot open a door in unknown state AJAR") << QStringList();
    QTest::newRow("case matters") << QStringLiteral("shut") << QStringLiteral("open") << Actor::Owner << QString()
                                  << InvalidTransitionCode
                                  << QStringLiteral("cannot open a door in unknown state shut") << QStringList();
}

void tst_StateMachine::find()
{
    QFETCH(QString, state);
    QFETCH(QString, action);
    QFETCH(Actor, actor);
    QFETCH(QString, to);
    QFETCH(QString, code);
    QFETCH(QString, message);
    QFETCH(QStringList, allowed);

    Refusal refusal;
    const std::optional<Transition> t = door().find(state, action, actor, &refusal);
    QCOMPARE(t.has_value(), !to.isEmpty());
    // Without a refusal to fill the answer is the same.
    QCOMPARE(door().find(state, action, actor).has_value(), !to.isEmpty());
    if (t) {
        QCOMPARE(t->from, state);
        QCOMPARE(t->action, action);
        QCOMPARE(t->to, to);
        QVERIFY(t->actors.testFlag(actor));
        QVERIFY(refusal.code.isEmpty());
        return;
    }
    QCOMPARE(refusal.code, code);
    QCOMPARE(refusal.message, message);
    QCOMPARE(refusal.allowed, allowed);
}

void tst_StateMachine::findWithTarget()
{
    Refusal refusal;
    const auto jam = door().find(QStringLiteral("SHUT"), QStringLiteral("open"), QStringLiteral("SHUT+ERROR"),
                                 Actor::Controller, &refusal);
    QVERIFY(jam);
    QCOMPARE(jam->label, QStringLiteral("Jam"));

    // The owner may open, but not into the error state.
    QVERIFY(!door().find(QStringLiteral("SHUT"), QStringLiteral("open"), QStringLiteral("SHUT+ERROR"),
                         Actor::Owner, &refusal));
    QCOMPARE(refusal.code, ForbiddenTransitionCode);
    QCOMPARE(refusal.message,
             QStringLiteral("owner may not open a door in state SHUT as SHUT+ERROR; allowed: open"));

    QVERIFY(!door().find(QStringLiteral("SHUT"), QStringLiteral("open"), QStringLiteral("GONE"), Actor::Owner,
                         &refusal));
    QCOMPARE(refusal.code, InvalidTransitionCode);
    QCOMPARE(refusal.message, QStringLiteral("cannot open a door in state SHUT as GONE; allowed: open"));
}

void tst_StateMachine::articleFollowsKind()
{
    // The "a"/"an" of the message follows the kind.
    const StateMachine egg(QStringLiteral("egg"), {QStringLiteral("RAW")}, {});
    Refusal refusal;
    QVERIFY(!egg.find(QStringLiteral("RAW"), QStringLiteral("boil"), Actor::Owner, &refusal));
    QCOMPARE(refusal.message, QStringLiteral("cannot boil an egg in state RAW; allowed: none"));
    QVERIFY(egg.actions().isEmpty());
}

void tst_StateMachine::refusalProblem_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("action");
    QTest::addColumn<Actor>("actor");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QStringList>("allowed");

    QTest::newRow("invalid") << QStringLiteral("OPEN") << QStringLiteral("open") << Actor::Owner << 409
                             << InvalidTransitionCode << QStringList{QStringLiteral("shut")};
    QTest::newRow("forbidden") << QStringLiteral("SHUT") << QStringLiteral("knock") << Actor::Owner << 403
                               << ForbiddenTransitionCode << QStringList{QStringLiteral("open")};
    QTest::newRow("nothing allowed") << QStringLiteral("GONE") << QStringLiteral("open") << Actor::Owner << 409
                                     << InvalidTransitionCode << QStringList();
}

void tst_StateMachine::refusalProblem()
{
    QFETCH(QString, state);
    QFETCH(QString, action);
    QFETCH(Actor, actor);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QStringList, allowed);

    Refusal refusal;
    QVERIFY(!door().find(state, action, actor, &refusal));
    const Problem p = refusal.toProblem();
    QCOMPARE(p.status, status);
    QCOMPARE(p.code, code);
    QCOMPARE(p.detail, refusal.message);
    QVERIFY(!p.title.isEmpty());
    const QJsonValue allowedJson = p.toJson().value(QStringLiteral("allowed"));
    QVERIFY(allowedJson.isArray());
    QStringList got;
    for (const QJsonValue &v : allowedJson.toArray())
        got << v.toString();
    QCOMPARE(got, allowed);
    // What the client decodes is what the server meant.
    const Problem back = Problem::fromJson(status, p.toBytes());
    QCOMPARE(back.code, code);
    QCOMPARE(back.status, status);
}

QTEST_APPLESS_MAIN(tst_StateMachine)
#include "tst_statemachine.moc"
