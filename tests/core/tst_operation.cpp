// last_operation: wire names, the composite machine states, and the strict wire form.
#include "core/binding.h"
#include "core/operation.h"
#include "core/serviceinstance.h"

#include <QtTest>

using namespace OpsDeck;

class tst_Operation final : public QObject
{
    Q_OBJECT

private slots:
    void names_data();
    void names();
    void unknownNames();
    void machineStates_data();
    void machineStates();
    void roundTrip();
    void readRejects_data();
    void readRejects();
};

void tst_Operation::names_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("isType");
    QTest::newRow("create") << QStringLiteral("create") << true;
    QTest::newRow("update") << QStringLiteral("update") << true;
    QTest::newRow("delete") << QStringLiteral("delete") << true;
    QTest::newRow("initial") << QStringLiteral("initial") << false;
    QTest::newRow("in progress") << QStringLiteral("in progress") << false;
    QTest::newRow("succeeded") << QStringLiteral("succeeded") << false;
    QTest::newRow("failed") << QStringLiteral("failed") << false;
}

void tst_Operation::names()
{
    QFETCH(QString, name);
    QFETCH(bool, isType);
    if (isType) {
        const auto t = operationTypeFromName(name);
        QVERIFY(t);
        QCOMPARE(operationTypeName(*t), name);
        QVERIFY(!operationStateFromName(name));
    } else {
        const auto s = operationStateFromName(name);
        QVERIFY(s);
        QCOMPARE(operationStateName(*s), name);
        QVERIFY(!operationTypeFromName(name));
    }
}

void tst_Operation::unknownNames()
{
    QVERIFY(!operationTypeFromName(QStringLiteral("Create")));
    QVERIFY(!operationStateFromName(QStringLiteral("in_progress")));
    QVERIFY(!operationStateFromName(QString()));
    QVERIFY(!Binding::typeFromName(QStringLiteral("route")));
    QCOMPARE(Binding::typeFromName(QStringLiteral("key")), Binding::Type::Key);
    QCOMPARE(Binding::typeName(Binding::Type::App), QStringLiteral("app"));
}

void tst_Operation::machineStates_data()
{
    QTest::addColumn<OperationType>("type");
    QTest::addColumn<OperationState>("state");
    QTest::addColumn<QString>("machineState");
    QTest::addColumn<bool>("pending");

    QTest::newRow("create initial") << OperationType::Create << OperationState::Initial
                                    << QStringLiteral("create in progress") << true;
    QTest::newRow("create in progress") << OperationType::Create << OperationState::InProgress
                                        << QStringLiteral("create in progress") << true;
    QTest::newRow("create succeeded") << OperationType::Create << OperationState::Succeeded
                                      << QStringLiteral("create succeeded") << false;
    QTest::newRow("update failed") << OperationType::Update << OperationState::Failed
                                   << QStringLiteral("update failed") << false;
    QTest::newRow("delete initial") << OperationType::Delete << OperationState::Initial
                                    << QStringLiteral("delete in progress") << true;
    QTest::newRow("delete succeeded") << OperationType::Delete << OperationState::Succeeded
                                      << QStringLiteral("delete succeeded") << false;
}

void tst_Operation::machineStates()
{
    QFETCH(OperationType, type);
    QFETCH(OperationState, state);
    QFETCH(QString, machineState);
    QFETCH(bool, pending);
    const LastOperation op{type, state, {}, {}};
    QCOMPARE(op.machineState(), machineState);
    QCOMPARE(op.isPending(), pending);
    // Every last_operation a service instance can carry is a state of its machine.
    QVERIFY(ServiceInstance::machine().isState(machineState));
    if (type != OperationType::Update)
        QVERIFY(Binding::machine().isState(machineState));
}

void tst_Operation::roundTrip()
{
    const LastOperation op{OperationType::Delete, OperationState::Failed, QStringLiteral("broker said 500"),
                           QDateTime(QDate(2026, 11, 29), QTime(21, 30, 0, 123), Qt::UTC)};
    const QJsonObject json = op.toJson();
    QCOMPARE(json.value(QStringLiteral("type")).toString(), QStringLiteral("delete"));
    QCOMPARE(json.value(QStringLiteral("state")).toString(), QStringLiteral("failed"));
    QCOMPARE(json.value(QStringLiteral("updated_at")).toString(), QStringLiteral("2026-11-29T21:30:00.123Z"));

    JsonReader reader(json);
    const LastOperation back = LastOperation::read(reader);
    QVERIFY2(reader.ok(), qPrintable(reader.problem().detail));
    QCOMPARE(back.type, op.type);
    QCOMPARE(back.state, op.state);
    QCOMPARE(back.description, op.description);
    QCOMPARE(back.updatedAt, op.updatedAt);

    const QJsonObject noTime = LastOperation{}.toJson();
    QVERIFY(noTime.value(QStringLiteral("updated_at")).isNull());
    JsonReader again(noTime);
    const LastOperation fresh = LastOperation::read(again);
    QVERIFY(again.ok());
    QVERIFY(!fresh.updatedAt.isValid());
    QCOMPARE(fresh.state, OperationState::Initial);
}

void tst_Operation::readRejects_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("error");

    QTest::newRow("missing type") << QByteArray(R"({"state": "failed"})") << QStringLiteral("/type: required: one of create, update, delete");
    QTest::newRow("bad state") << QByteArray(R"({"type": "create", "state": "in_progress"})")
                               << QStringLiteral("/state: expected one of initial, in progress, succeeded, failed");
    QTest::newRow("bad time") << QByteArray(R"({"type": "create", "state": "failed", "updated_at": "yesterday"})")
                              << QStringLiteral("/updated_at: expected an RFC 3339 timestamp");
    QTest::newRow("unknown field") << QByteArray(R"({"type": "create", "state": "failed", "colour": 1})")
                                   << QStringLiteral("/colour: unknown field");
}

void tst_Operation::readRejects()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, error);
    JsonReader reader(body);
    LastOperation::read(reader);
    QVERIFY(!reader.ok());
    QCOMPARE(reader.errors().first().toString(), error);
}

QTEST_APPLESS_MAIN(tst_Operation)
#include "tst_operation.moc"
