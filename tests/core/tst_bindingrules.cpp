// The binding decision table of spec §5, cell by cell, for app bindings and keys alike.
#include "core/bindingrules.h"

#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::BindingRules;

namespace {

const QList<Condition> &allConditions()
{
    static const QList<Condition> all{Condition::None,         Condition::CreateSucceeded,
                                      Condition::CreateInProgress, Condition::CreateFailed,
                                      Condition::DeleteFailed,  Condition::DeleteInProgress};
    return all;
}

} // namespace

class tst_BindingRules final : public QObject
{
    Q_OBJECT

private slots:
    void everyCell_data();
    void everyCell();
    void conditionOfLastOperation_data();
    void conditionOfLastOperation();
    void decidesFromLastOperation();
    void alreadyBoundDiffersFromBeingDeleted();
    void keyDetailNamesTheKey();
    void agreesWithTheMachine_data();
    void agreesWithTheMachine();
    void namesAreDistinct();
};

void tst_BindingRules::everyCell_data()
{
    QTest::addColumn<Request>("request");
    QTest::addColumn<Condition>("condition");
    QTest::addColumn<Outcome>("outcome");
    QTest::addColumn<int>("status");   // 0 when not refused
    QTest::addColumn<QString>("code"); // empty when not refused

    struct Cell
    {
        Request request;
        Condition condition;
        Outcome outcome;
        int status;
        QString code;
    };
    // The spec's table, row by row, then the "no binding" column the spec leaves to the operator's
    // expectation.
    const QList<Cell> cells{
        // create app binding / key (POST /bindings)
        {Request::Create, Condition::CreateSucceeded, Outcome::Refuse, 422, AlreadyBoundCode},
        {Request::Create, Condition::CreateInProgress, Outcome::Refuse, 422, AlreadyBoundCode},
        {Request::Create, Condition::CreateFailed, Outcome::Recreate, 0, {}},
        {Request::Create, Condition::DeleteFailed, Outcome::Refuse, 422, BeingDeletedCode},
        {Request::Create, Condition::DeleteInProgress, Outcome::Refuse, 422, BeingDeletedCode},
        {Request::Create, Condition::None, Outcome::Create, 0, {}},
        // delete (DELETE /bindings/:id)
        {Request::Delete, Condition::CreateSucceeded, Outcome::Accept, 0, {}},
        {Request::Delete, Condition::CreateInProgress, Outcome::AcceptHaltingCreation, 0, {}},
        {Request::Delete, Condition::CreateFailed, Outcome::Accept, 0, {}},
        {Request::Delete, Condition::DeleteFailed, Outcome::Accept, 0, {}},
        {Request::Delete, Condition::DeleteInProgress, Outcome::Refuse, 409, OperationInProgressCode},
        {Request::Delete, Condition::None, Outcome::Refuse, 404, NotFoundCode},
        // app environment (GET /apps/:id/env)
        {Request::AppEnvironment, Condition::CreateSucceeded, Outcome::Include, 0, {}},
        {Request::AppEnvironment, Condition::CreateInProgress, Outcome::Omit, 0, {}},
        {Request::AppEnvironment, Condition::CreateFailed, Outcome::Omit, 0, {}},
        {Request::AppEnvironment, Condition::DeleteFailed, Outcome::Omit, 0, {}},
        {Request::AppEnvironment, Condition::DeleteInProgress, Outcome::Omit, 0, {}},
        {Request::AppEnvironment, Condition::None, Outcome::Omit, 0, {}},
        // key details (GET /bindings/:id/details)
        {Request::KeyDetails, Condition::CreateSucceeded, Outcome::Credentials, 0, {}},
        {Request::KeyDetails, Condition::CreateInProgress, Outcome::Refuse, 404, CreationInProgressCode},
        {Request::KeyDetails, Condition::CreateFailed, Outcome::Refuse, 404, CreationFailedCode},
        {Request::KeyDetails, Condition::DeleteFailed, Outcome::Refuse, 404, DeletionFailedCode},
        {Request::KeyDetails, Condition::DeleteInProgress, Outcome::Refuse, 404, DeletionInProgressCode},
        {Request::KeyDetails, Condition::None, Outcome::Refuse, 404, NotFoundCode},
        // push with manifest (POST /apps/:id/apply-manifest)
        {Request::ApplyManifest, Condition::CreateSucceeded, Outcome::Keep, 0, {}},
        {Request::ApplyManifest, Condition::CreateInProgress, Outcome::Refuse, 422, NotSynchronousCode},
        {Request::ApplyManifest, Condition::CreateFailed, Outcome::Recreate, 0, {}},
        {Request::ApplyManifest, Condition::DeleteFailed, Outcome::Refuse, 422, BeingDeletedCode},
        {Request::ApplyManifest, Condition::DeleteInProgress, Outcome::Refuse, 422, BeingDeletedCode},
        {Request::ApplyManifest, Condition::None, Outcome::Create, 0, {}},
    };
    QCOMPARE(cells.size(), 5 * allConditions().size());
    for (const Cell &c : cells) {
        const QByteArray name = (requestName(c.request) + QStringLiteral(" | ") + conditionName(c.condition)).toUtf8();
        QTest::newRow(name.constData()) << c.request << c.condition << c.outcome << c.status << c.code;
    }
}

void tst_BindingRules::everyCell()
{
    QFETCH(Request, request);
    QFETCH(Condition, condition);
    QFETCH(Outcome, outcome);
    QFETCH(int, status);
    QFETCH(QString, code);

    // Apps and keys share the table; only the wording of (A) differs.
    for (Binding::Type type : {Binding::Type::App, Binding::Type::Key}) {
        const Decision d = decide(request, condition, type, QStringLiteral("mykey"));
        QCOMPARE(outcomeName(d.outcome), outcomeName(outcome));
        QCOMPARE(d.refused(), outcome == Outcome::Refuse);
        QCOMPARE(d.problem.isNull(), !d.refused());
        if (!d.refused())
            continue;
        QCOMPARE(d.problem.status, status);
        QCOMPARE(d.problem.code, code);
        QVERIFY(!d.problem.title.isEmpty());
        QVERIFY(!d.problem.detail.isEmpty());
    }
}

void tst_BindingRules::conditionOfLastOperation_data()
{
    QTest::addColumn<bool>("present");
    QTest::addColumn<OperationType>("type");
    QTest::addColumn<OperationState>("state");
    QTest::addColumn<Condition>("condition");

    QTest::newRow("no operation") << false << OperationType::Create << OperationState::Initial << Condition::None;
    QTest::newRow("create initial") << true << OperationType::Create << OperationState::Initial
                                    << Condition::CreateInProgress;
    QTest::newRow("create in progress") << true << OperationType::Create << OperationState::InProgress
                                        << Condition::CreateInProgress;
    QTest::newRow("create succeeded") << true << OperationType::Create << OperationState::Succeeded
                                      << Condition::CreateSucceeded;
    QTest::newRow("create failed") << true << OperationType::Create << OperationState::Failed
                                   << Condition::CreateFailed;
    QTest::newRow("delete initial") << true << OperationType::Delete << OperationState::Initial
                                    << Condition::DeleteInProgress;
    QTest::newRow("delete in progress") << true << OperationType::Delete << OperationState::InProgress
                                        << Condition::DeleteInProgress;
    QTest::newRow("delete succeeded is gone") << true << OperationType::Delete << OperationState::Succeeded
                                              << Condition::None;
    QTest::newRow("delete failed") << true << OperationType::Delete << OperationState::Failed
                                   << Condition::DeleteFailed;
    QTest::newRow("update in progress reads as create") << true << OperationType::Update
                                                        << OperationState::InProgress << Condition::CreateInProgress;
    QTest::newRow("update succeeded reads as create") << true << OperationType::Update << OperationState::Succeeded
                                                      << Condition::CreateSucceeded;
    QTest::newRow("update failed reads as create") << true << OperationType::Update << OperationState::Failed
                                                   << Condition::CreateFailed;
}

void tst_BindingRules::conditionOfLastOperation()
{
    QFETCH(bool, present);
    QFETCH(OperationType, type);
    QFETCH(OperationState, state);
    QFETCH(Condition, condition);

    std::optional<LastOperation> op;
    if (present)
        op = LastOperation{type, state, QStringLiteral("broker says"), QDateTime::currentDateTimeUtc()};
    QCOMPARE(conditionName(conditionOf(op)), conditionName(condition));
}

void tst_BindingRules::decidesFromLastOperation()
{
    const LastOperation deleting{OperationType::Delete, OperationState::InProgress, {}, {}};
    QCOMPARE(decide(Request::Delete, deleting, Binding::Type::Key).problem.code, OperationInProgressCode);
    const LastOperation created{OperationType::Create, OperationState::Succeeded, {}, {}};
    QCOMPARE(decide(Request::AppEnvironment, created, Binding::Type::App).outcome, Outcome::Include);
    QCOMPARE(decide(Request::ApplyManifest, std::nullopt, Binding::Type::App).outcome, Outcome::Create);
}

void tst_BindingRules::alreadyBoundDiffersFromBeingDeleted()
{
    // Clients treat (A) as success; a binding whose deletion failed or runs must never read as (A).
    QSet<QString> existingCodes;
    QSet<QString> deletingCodes;
    for (Request r : {Request::Create, Request::ApplyManifest, Request::KeyDetails}) {
        for (Condition c : {Condition::CreateSucceeded, Condition::CreateInProgress})
            existingCodes.insert(decide(r, c, Binding::Type::App).problem.code);
        for (Condition c : {Condition::DeleteFailed, Condition::DeleteInProgress}) {
            const Decision d = decide(r, c, Binding::Type::App);
            QVERIFY(d.refused());
            deletingCodes.insert(d.problem.code);
        }
    }
    QVERIFY(existingCodes.contains(AlreadyBoundCode));
    QVERIFY(!deletingCodes.contains(AlreadyBoundCode));
    QVERIFY(!deletingCodes.contains(QString()));
}

void tst_BindingRules::keyDetailNamesTheKey()
{
    const Decision key = decide(Request::Create, Condition::CreateSucceeded, Binding::Type::Key, QStringLiteral("db-key"));
    QVERIFY(key.problem.detail.contains(QStringLiteral("'db-key'")));
    QVERIFY(key.problem.detail.contains(QStringLiteral("unique")));
    const Decision unnamed = decide(Request::Create, Condition::CreateInProgress, Binding::Type::Key);
    QVERIFY(unnamed.problem.detail.contains(QStringLiteral("unique")));
    const Decision app = decide(Request::Create, Condition::CreateSucceeded, Binding::Type::App, QStringLiteral("x"));
    QCOMPARE(app.problem.detail, QStringLiteral("The app is already bound to the service instance."));
    QCOMPARE(key.problem.code, app.problem.code);
}

void tst_BindingRules::agreesWithTheMachine_data()
{
    QTest::addColumn<Condition>("condition");
    for (Condition c : allConditions()) {
        if (c != Condition::None)
            QTest::newRow(conditionName(c).toUtf8().constData()) << c;
    }
}

void tst_BindingRules::agreesWithTheMachine()
{
    // The console enables Delete and Recreate from Binding::machine(); the server answers from the
    // table. They must never disagree.
    QFETCH(Condition, condition);
    const QString state = conditionName(condition);
    const StateMachine &m = Binding::machine();
    QVERIFY(m.isState(state));
    for (Actor user : {Actor::Owner, Actor::Operator}) {
        const bool deleteAccepted = !decide(Request::Delete, condition, Binding::Type::App).refused();
        QCOMPARE(m.find(state, QStringLiteral("delete"), user).has_value(), deleteAccepted);
        const bool recreates = decide(Request::Create, condition, Binding::Type::App).outcome == Outcome::Recreate;
        QCOMPARE(m.find(state, QStringLiteral("create"), user).has_value(), recreates);
    }
}

void tst_BindingRules::namesAreDistinct()
{
    QSet<QString> conditions;
    for (Condition c : allConditions())
        conditions.insert(conditionName(c));
    QCOMPARE(conditions.size(), allConditions().size());
    QSet<QString> requests;
    for (Request r : {Request::Create, Request::Delete, Request::AppEnvironment, Request::KeyDetails,
                      Request::ApplyManifest})
        requests.insert(requestName(r));
    QCOMPARE(requests.size(), 5);
    QVERIFY(!requests.contains(QString()));
}

QTEST_APPLESS_MAIN(tst_BindingRules)
#include "tst_bindingrules.moc"
