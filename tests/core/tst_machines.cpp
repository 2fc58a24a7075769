// Every domain state machine against the spec, cell by cell: each state × action × actor is either
// the transition the spec names or a refusal with the right code.
#include "core/binding.h"
#include "core/delivery.h"
#include "core/endpoint.h"
#include "core/instance.h"
#include "core/organization.h"
#include "core/sandbox.h"
#include "core/serviceinstance.h"

#include <QtTest>

using namespace OpsDeck;

namespace {

struct Cell
{
    QString from;
    QString action;
    QString to;
    QString actors; // "operator owner"
};

struct Expected
{
    const StateMachine *machine;
    QString initial;
    QStringList states;
    QStringList terminal;
    QList<Cell> cells;
};

const QList<Actor> &allActors()
{
    static const QList<Actor> all{Actor::Operator, Actor::Provider, Actor::Owner, Actor::Controller, Actor::System};
    return all;
}

bool cellAllows(const Cell &c, Actor actor)
{
    return c.actors.split(QLatin1Char(' ')).contains(actorName(actor));
}

// The spec restated independently of core/, so a slip in either shows up as a failing cell.
const QList<Expected> &expectations()
{
    static const QList<Expected> all{
        {&Organization::machine(), QStringLiteral("AVAILABLE"),
         {QStringLiteral("AVAILABLE"), QStringLiteral("DELETED")},
         {},
         {
             {QStringLiteral("AVAILABLE"), QStringLiteral("delete"), QStringLiteral("DELETED"), QStringLiteral("operator")},
             {QStringLiteral("DELETED"), QStringLiteral("restore"), QStringLiteral("AVAILABLE"), QStringLiteral("operator")},
         }},
        {&Instance::machine(), QStringLiteral("PENDING"),
         {QStringLiteral("PENDING"), QStringLiteral("RUNNING"), QStringLiteral("STOPPED"), QStringLiteral("DESTROYED")},
         {QStringLiteral("DESTROYED")},
         {
             {QStringLiteral("PENDING"), QStringLiteral("register"), QStringLiteral("RUNNING"), QStringLiteral("operator provider")},
             {QStringLiteral("PENDING"), QStringLiteral("register"), QStringLiteral("STOPPED"), QStringLiteral("operator provider")},
             {QStringLiteral("PENDING"), QStringLiteral("stop"), QStringLiteral("STOPPED"), QStringLiteral("operator owner")},
             {QStringLiteral("RUNNING"), QStringLiteral("stop"), QStringLiteral("STOPPED"), QStringLiteral("operator owner")},
             {QStringLiteral("STOPPED"), QStringLiteral("start"), QStringLiteral("RUNNING"), QStringLiteral("operator owner")},
             {QStringLiteral("STOPPED"), QStringLiteral("destroy"), QStringLiteral("DESTROYED"), QStringLiteral("system")},
         }},
        {&Sandbox::machine(), QStringLiteral("IDLE"),
         {QStringLiteral("IDLE"), QStringLiteral("STARTING"), QStringLiteral("STARTING+ERROR"), QStringLiteral("RUNNING"),
          QStringLiteral("STOPPING"), QStringLiteral("STOPPING+ERROR")},
         {},
         {
             // user (API)
             {QStringLiteral("IDLE"), QStringLiteral("start"), QStringLiteral("STARTING"), QStringLiteral("operator owner")},
             {QStringLiteral("STARTING+ERROR"), QStringLiteral("retry"), QStringLiteral("STARTING"), QStringLiteral("operator owner controller")},
             {QStringLiteral("RUNNING"), QStringLiteral("stop"), QStringLiteral("STOPPING"), QStringLiteral("operator owner")},
             {QStringLiteral("RUNNING"), QStringLiteral("commit"), QStringLiteral("STOPPING"), QStringLiteral("operator owner")},
             {QStringLiteral("RUNNING"), QStringLiteral("rollback"), QStringLiteral("STOPPING"), QStringLiteral("operator owner")},
             {QStringLiteral("STOPPING+ERROR"), QStringLiteral("retry"), QStringLiteral("STOPPING"), QStringLiteral("operator owner controller")},
             // controller
             {QStringLiteral("STARTING"), QStringLiteral("started"), QStringLiteral("RUNNING"), QStringLiteral("controller")},
             {QStringLiteral("STARTING"), QStringLiteral("fail"), QStringLiteral("STARTING+ERROR"), QStringLiteral("controller")},
             {QStringLiteral("STOPPING"), QStringLiteral("stopped"), QStringLiteral("IDLE"), QStringLiteral("controller")},
             {QStringLiteral("STOPPING"), QStringLiteral("fail"), QStringLiteral("STOPPING+ERROR"), QStringLiteral("controller")},
         }},
        {&Delivery::machine(), QStringLiteral("PENDING"),
         {QStringLiteral("PENDING"), QStringLiteral("DELIVERED"), QStringLiteral("FAILED"), QStringLiteral("SUPERSEDED"),
          QStringLiteral("CANCELLED")},
         {QStringLiteral("DELIVERED")},
         {
             {QStringLiteral("PENDING"), QStringLiteral("deliver"), QStringLiteral("DELIVERED"), QStringLiteral("controller")},
             {QStringLiteral("CANCELLED"), QStringLiteral("deliver"), QStringLiteral("DELIVERED"), QStringLiteral("controller")},
             // An attempt on the wire when a newer notification came, acknowledged.
             {QStringLiteral("SUPERSEDED"), QStringLiteral("deliver"), QStringLiteral("DELIVERED"), QStringLiteral("controller")},
             {QStringLiteral("PENDING"), QStringLiteral("exhaust"), QStringLiteral("FAILED"), QStringLiteral("controller")},
             {QStringLiteral("PENDING"), QStringLiteral("supersede"), QStringLiteral("SUPERSEDED"), QStringLiteral("controller")},
             {QStringLiteral("FAILED"), QStringLiteral("supersede"), QStringLiteral("SUPERSEDED"), QStringLiteral("controller")},
             {QStringLiteral("PENDING"), QStringLiteral("retry"), QStringLiteral("PENDING"), QStringLiteral("operator provider")},
             {QStringLiteral("FAILED"), QStringLiteral("retry"), QStringLiteral("PENDING"), QStringLiteral("operator provider")},
             {QStringLiteral("CANCELLED"), QStringLiteral("retry"), QStringLiteral("PENDING"), QStringLiteral("operator provider")},
             {QStringLiteral("PENDING"), QStringLiteral("cancel"), QStringLiteral("CANCELLED"), QStringLiteral("operator provider")},
         }},
        {&Endpoint::machine(), QStringLiteral("ACTIVE"),
         {QStringLiteral("ACTIVE"), QStringLiteral("PAUSED"), QStringLiteral("DISABLED")},
         {},
         {
             {QStringLiteral("ACTIVE"), QStringLiteral("pause"), QStringLiteral("PAUSED"), QStringLiteral("operator provider system")},
             {QStringLiteral("PAUSED"), QStringLiteral("resume"), QStringLiteral("ACTIVE"), QStringLiteral("operator provider")},
             {QStringLiteral("ACTIVE"), QStringLiteral("disable"), QStringLiteral("DISABLED"), QStringLiteral("controller")},
             {QStringLiteral("DISABLED"), QStringLiteral("enable"), QStringLiteral("ACTIVE"), QStringLiteral("operator provider")},
         }},
        {&Binding::machine(), QStringLiteral("create in progress"),
         {QStringLiteral("create in progress"), QStringLiteral("create succeeded"), QStringLiteral("create failed"),
          QStringLiteral("delete in progress"), QStringLiteral("delete failed"), QStringLiteral("delete succeeded")},
         {QStringLiteral("delete succeeded")},
         {
             {QStringLiteral("create failed"), QStringLiteral("create"), QStringLiteral("create in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create succeeded"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create in progress"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create failed"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner controller")},
             {QStringLiteral("delete failed"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner controller")},
             {QStringLiteral("create in progress"), QStringLiteral("succeed"), QStringLiteral("create succeeded"), QStringLiteral("controller")},
             {QStringLiteral("create in progress"), QStringLiteral("fail"), QStringLiteral("create failed"), QStringLiteral("controller system")},
             {QStringLiteral("delete in progress"), QStringLiteral("succeed"), QStringLiteral("delete succeeded"), QStringLiteral("controller")},
             {QStringLiteral("delete in progress"), QStringLiteral("fail"), QStringLiteral("delete failed"), QStringLiteral("controller system")},
         }},
        {&ServiceInstance::machine(), QStringLiteral("create in progress"),
         {QStringLiteral("create in progress"), QStringLiteral("create succeeded"), QStringLiteral("create failed"),
          QStringLiteral("update in progress"), QStringLiteral("update succeeded"), QStringLiteral("update failed"),
          QStringLiteral("delete in progress"), QStringLiteral("delete failed"), QStringLiteral("delete succeeded")},
         {QStringLiteral("delete succeeded")},
         {
             {QStringLiteral("create succeeded"), QStringLiteral("update"), QStringLiteral("update in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("update succeeded"), QStringLiteral("update"), QStringLiteral("update in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("update failed"), QStringLiteral("update"), QStringLiteral("update in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create in progress"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create succeeded"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("create failed"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner controller")},
             {QStringLiteral("update succeeded"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("update failed"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner")},
             {QStringLiteral("delete failed"), QStringLiteral("delete"), QStringLiteral("delete in progress"), QStringLiteral("operator owner controller")},
             {QStringLiteral("create in progress"), QStringLiteral("succeed"), QStringLiteral("create succeeded"), QStringLiteral("controller")},
             {QStringLiteral("create in progress"), QStringLiteral("fail"), QStringLiteral("create failed"), QStringLiteral("controller system")},
             {QStringLiteral("update in progress"), QStringLiteral("succeed"), QStringLiteral("update succeeded"), QStringLiteral("controller")},
             {QStringLiteral("update in progress"), QStringLiteral("fail"), QStringLiteral("update failed"), QStringLiteral("controller system")},
             {QStringLiteral("delete in progress"), QStringLiteral("succeed"), QStringLiteral("delete succeeded"), QStringLiteral("controller")},
             {QStringLiteral("delete in progress"), QStringLiteral("fail"), QStringLiteral("delete failed"), QStringLiteral("controller system")},
         }},
    };
    return all;
}

QStringList actionsOf(const Expected &e)
{
    QStringList out;
    for (const Cell &c : e.cells) {
        if (!out.contains(c.action))
            out.append(c.action);
    }
    return out;
}

} // namespace

class tst_Machines final : public QObject
{
    Q_OBJECT

private slots:
    void shape_data();
    void shape();
    void everyCell_data();
    void everyCell();
    void sandboxCompositeStates_data();
    void sandboxCompositeStates();
    void reservedVersionName();
    void stoppingNeverWaitsForTheProvider();
};

void tst_Machines::shape_data()
{
    QTest::addColumn<int>("index");
    for (int i = 0; i < expectations().size(); ++i)
        QTest::newRow(expectations().at(i).machine->kind().toUtf8().constData()) << i;
}

void tst_Machines::shape()
{
    QFETCH(int, index);
    const Expected &e = expectations().at(index);
    const StateMachine &m = *e.machine;

    QCOMPARE(m.states(), e.states);
    // One transition per cell, and none the spec does not name.
    QCOMPARE(m.transitions().size(), e.cells.size());
    QCOMPARE(m.actions(), actionsOf(e));

    QStringList terminal;
    for (const QString &s : m.states()) {
        if (m.isTerminal(s))
            terminal << s;
    }
    QCOMPARE(terminal, e.terminal);

    for (const Transition &t : m.transitions()) {
        QVERIFY2(!t.label.isEmpty(), qPrintable(t.from + QLatin1Char(' ') + t.action));
        QVERIFY(t.actors);
    }

    // Every state is reachable from where a new object starts.
    QStringList seen{e.initial};
    for (int i = 0; i < seen.size(); ++i) {
        for (const Transition &t : m.transitions()) {
            if (t.from == seen.at(i) && !seen.contains(t.to))
                seen.append(t.to);
        }
    }
    seen.sort();
    QStringList all = m.states();
    all.sort();
    QCOMPARE(seen, all);
}

void tst_Machines::everyCell_data()
{
    QTest::addColumn<int>("index");
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("action");
    QTest::addColumn<Actor>("actor");

    for (int i = 0; i < expectations().size(); ++i) {
        const Expected &e = expectations().at(i);
        const QStringList actions = actionsOf(e) << QStringLiteral("explode");
        for (const QString &state : e.states) {
            for (const QString &action : actions) {
                for (Actor actor : allActors()) {
                    const QString name = QStringLiteral("%1: %2 %3 by %4")
                                             .arg(e.machine->kind(), state, action, actorName(actor));
                    QTest::newRow(name.toUtf8().constData()) << i << state << action << actor;
                }
            }
        }
    }
}

void tst_Machines::everyCell()
{
    QFETCH(int, index);
    QFETCH(QString, state);
    QFETCH(QString, action);
    QFETCH(Actor, actor);
    const Expected &e = expectations().at(index);
    const StateMachine &m = *e.machine;

    QStringList targets;          // where the spec lets this actor go
    bool someoneElseMay = false;  // decides 403 against 409
    for (const Cell &c : e.cells) {
        if (c.from != state || c.action != action)
            continue;
        if (cellAllows(c, actor))
            targets << c.to;
        else
            someoneElseMay = true;
    }

    Refusal refusal;
    const std::optional<Transition> t = m.find(state, action, actor, &refusal);
    QCOMPARE(m.allowedActions(state, actor).contains(action), !targets.isEmpty());
    if (!targets.isEmpty()) {
        QVERIFY(t);
        QCOMPARE(t->to, targets.first());
        for (const QString &to : targets) {
            const auto exact = m.find(state, action, to, actor);
            QVERIFY(exact);
            QCOMPARE(exact->to, to);
        }
        return;
    }
    QVERIFY(!t);
    QCOMPARE(refusal.code, someoneElseMay ? ForbiddenTransitionCode : InvalidTransitionCode);
    QVERIFY(refusal.message.contains(state));
    QCOMPARE(refusal.allowed, m.allowedActions(state, actor));
    QCOMPARE(refusal.toProblem().status, someoneElseMay ? 403 : 409);
}

void tst_Machines::sandboxCompositeStates_data()
{
    QTest::addColumn<QString>("stored");
    QTest::addColumn<bool>("error");
    QTest::addColumn<QString>("machineState");

    QTest::newRow("idle") << Sandbox::Idle << false << QStringLiteral("IDLE");
    QTest::newRow("starting") << Sandbox::Starting << false << QStringLiteral("STARTING");
    QTest::newRow("starting with error") << Sandbox::Starting << true << QStringLiteral("STARTING+ERROR");
    QTest::newRow("running") << Sandbox::Running << false << QStringLiteral("RUNNING");
    QTest::newRow("stopping") << Sandbox::Stopping << false << QStringLiteral("STOPPING");
    QTest::newRow("stopping with error") << Sandbox::Stopping << true << QStringLiteral("STOPPING+ERROR");
}

void tst_Machines::sandboxCompositeStates()
{
    QFETCH(QString, stored);
    QFETCH(bool, error);
    QFETCH(QString, machineState);
    QCOMPARE(Sandbox::machineState(stored, error), machineState);
    QVERIFY(Sandbox::machine().isState(machineState));
    QCOMPARE(Sandbox::storedState(machineState), stored);
    QCOMPARE(Sandbox::hasError(machineState), error);
}

void tst_Machines::reservedVersionName()
{
    QVERIFY(Sandbox::isReservedVersionName(QStringLiteral("sandbox")));
    QVERIFY(Sandbox::isReservedVersionName(QStringLiteral("Sandbox")));
    QVERIFY(!Sandbox::isReservedVersionName(QStringLiteral("1.0")));
    QVERIFY(!Sandbox::isReservedVersionName(QStringLiteral("sandbox2")));
}

void tst_Machines::stoppingNeverWaitsForTheProvider()
{
    // Spec §2: no failure of a provider may block a user from stopping. Stopping depends on nothing
    // the provider does: it is allowed from every state a live instance can be in.
    for (const QString &state : {Instance::Pending, Instance::Running}) {
        for (Actor user : {Actor::Owner, Actor::Operator}) {
            const auto t = Instance::machine().find(state, QStringLiteral("stop"), user);
            QVERIFY(t);
            QCOMPARE(t->to, Instance::Stopped);
        }
    }
    // Destruction, by contrast, is only the system's, after the provider acknowledged.
    Refusal refusal;
    QVERIFY(!Instance::machine().find(Instance::Stopped, QStringLiteral("destroy"), Actor::Operator, &refusal));
    QCOMPARE(refusal.code, ForbiddenTransitionCode);
}

QTEST_APPLESS_MAIN(tst_Machines)
#include "tst_machines.moc"
