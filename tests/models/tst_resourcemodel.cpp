// Tests for the generic resource model: batched inserts, updates and removals under the model tester.
#include "models/resourcemodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using namespace OpsDeck;

namespace {

QJsonObject instance(qint64 id, const QString &status = QStringLiteral("RUNNING"), qint64 version = 1,
                     qint64 provider = 7)
{
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("name"), QStringLiteral("app-%1").arg(id)},
                       {QStringLiteral("organization_id"), 1},
                       {QStringLiteral("provider_id"), provider},
                       {QStringLiteral("application"), QStringLiteral("wiki")},
                       {QStringLiteral("owner"), QStringLiteral("alice")},
                       {QStringLiteral("status"), status},
                       {QStringLiteral("version"), version},
                       {QStringLiteral("created_at"), QStringLiteral("2026-11-29T10:00:00.000Z")},
                       {QStringLiteral("updated_at"), QStringLiteral("2026-11-29T11:00:00.000Z")},
                       {QStringLiteral("status_changed_at"), QStringLiteral("2026-11-29T11:00:00.000Z")},
                       {QStringLiteral("callback"), QJsonValue::Null},
                       {QStringLiteral("awaiting_ack"), QJsonValue::Null},
                       {QStringLiteral("destroy_after"), QJsonValue::Null}};
}

QList<QJsonObject> instances(qint64 from, qint64 to)
{
    QList<QJsonObject> out;
    for (qint64 id = from; id <= to; ++id)
        out << instance(id);
    return out;
}

const ResourceKind &instancesKind()
{
    return *resourceKindByName(u"instances");
}

int column(const char *key)
{
    return instancesKind().fieldIndex(QString::fromLatin1(key));
}

} // namespace

class tst_ResourceModel final : public QObject
{
    Q_OBJECT

private slots:
    void emptyModel();
    void batchedInsertIsOneInsert();
    void burstSpreadOverTurns();
    void updatesSignalChangedRowsOnly();
    void manyUpdatesSignalOneRange();
    void staleVersionIgnored();
    void removalsInRanges();
    void upsertThenRemoveInOneTurn();
    void replaceAllResets();
    void relistEncodedOnWorker();
    void changesDuringRelistFollowIt();
    void newerRelistWins();
    void flushWaitsForRelist();
    void scatteredRemovalsCompactedOnWorker();
    void roles_data();
    void roles();
    void objectRoundTrip();
    void referenceNames();
    void stateNotes();
    void referencesNamedByTheRow();
    void headers();
    void compareRowsNullsLast();
    void memoryPerRowIsCompact();
    void uniqueTextsAreNotInterned();
    void unchangedNameKeepsItsText();
    void snapshotStaysAsTaken();
};

void tst_ResourceModel::emptyModel()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.columnCount(), int(instancesKind().fields.size()));
    QCOMPARE(model.rowOfId(1), -1);
    QVERIFY(model.objectAt(0).isEmpty());
}

void tst_ResourceModel::batchedInsertIsOneInsert()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy batches(&model, &ResourceModel::batchApplied);
    model.upsert(instances(1, 50));
    model.upsert(instances(51, 120));
    QCOMPARE(model.rowCount(), 0); // queued until the event loop turns
    QTRY_COMPARE(model.rowCount(), 120);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.first().at(1).toInt(), 0);
    QCOMPARE(inserted.first().at(2).toInt(), 119);
    QCOMPARE(batches.count(), 1);
    QCOMPARE(batches.first().at(0).toInt(), 120);
    QCOMPARE(model.rowOfId(77), 76);
    QCOMPARE(model.idAt(76), 77);
}

void tst_ResourceModel::burstSpreadOverTurns()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    const int burst = int(ResourceModel::kRowsPerTurn) * 2 + 10;
    model.upsert(instances(1, burst));
    QTRY_COMPARE(model.rowCount(), burst);
    QCOMPARE(inserted.count(), 3); // one insert per turn, at most kRowsPerTurn rows each
    QCOMPARE(inserted.at(0).at(2).toInt(), int(ResourceModel::kRowsPerTurn) - 1);
    QCOMPARE(model.idAt(burst - 1), burst);

    // flush() applies everything at once.
    ResourceModel direct(instancesKind());
    QSignalSpy directInserted(&direct, &QAbstractItemModel::rowsInserted);
    direct.upsert(instances(1, burst));
    direct.flush();
    QCOMPARE(direct.rowCount(), burst);
    QCOMPARE(directInserted.count(), 1);
}

void tst_ResourceModel::updatesSignalChangedRowsOnly()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 20));
    model.flush();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    model.upsert({instance(3, QStringLiteral("STOPPED"), 2), instance(4, QStringLiteral("STOPPED"), 2),
                  instance(10, QStringLiteral("STOPPED"), 2), instance(21)});
    QTRY_COMPARE(model.rowCount(), 21);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(changed.count(), 2); // rows 2-3 and row 9
    QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 2);
    QCOMPARE(changed.at(0).at(1).toModelIndex().row(), 3);
    QCOMPARE(changed.at(1).at(0).toModelIndex().row(), 9);
    QCOMPARE(changed.at(1).at(1).toModelIndex().column(), model.columnCount() - 1);
    const auto roles = changed.at(0).at(2).value<QList<int>>();
    QVERIFY(roles.contains(Qt::DisplayRole));
    QVERIFY(roles.contains(ResourceModel::ToneRole));
    QCOMPARE(model.index(9, column("status")).data().toString(), QStringLiteral("STOPPED"));
}

void tst_ResourceModel::manyUpdatesSignalOneRange()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 10));
    model.flush();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    QList<QJsonObject> updates;
    for (qint64 id : {1, 3, 5, 7, 9, 10})
        updates << instance(id, QStringLiteral("STOPPED"), 2);
    model.upsert(updates);
    model.flush();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().row(), 0);
    QCOMPARE(changed.first().at(1).toModelIndex().row(), 9);
}

void tst_ResourceModel::staleVersionIgnored()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert({instance(1, QStringLiteral("STOPPED"), 5)});
    model.flush();
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.upsert({instance(1, QStringLiteral("RUNNING"), 4)});
    model.upsert({instance(1, QStringLiteral("PENDING"), 5)}); // same version: a replay
    model.flush();
    QCOMPARE(changed.count(), 0);
    QCOMPARE(model.index(0, column("status")).data(ResourceModel::StateRole).toString(), QStringLiteral("STOPPED"));
    model.upsert({instance(1, QStringLiteral("RUNNING"), 6)});
    model.flush();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.versionAt(0), 6);
}

void tst_ResourceModel::removalsInRanges()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 10));
    model.flush();
    QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
    model.remove({2, 3, 4, 8, 99});
    QTRY_COMPARE(model.rowCount(), 6);
    QCOMPARE(removed.count(), 2);
    QCOMPARE(model.ids(), (QList<qint64>{1, 5, 6, 7, 9, 10}));
    for (int row = 0; row < model.rowCount(); ++row)
        QCOMPARE(model.rowOfId(model.idAt(row)), row);
    QCOMPARE(model.rowOfId(3), -1);
}

void tst_ResourceModel::upsertThenRemoveInOneTurn()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 3));
    model.remove({2});
    model.upsert({instance(4)});
    model.flush();
    QCOMPARE(model.ids(), (QList<qint64>{1, 3, 4}));
    model.remove({1});
    model.upsert({instance(1, QStringLiteral("STOPPED"), 9)}); // the later change wins
    model.flush();
    QCOMPARE(model.objectById(1).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QVERIFY(!model.hasPendingChanges());
}

void tst_ResourceModel::replaceAllResets()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 5));
    model.flush();
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.upsert({instance(6)}); // dropped: the relist replaces everything
    model.replaceAll(instances(10, 12));
    QCOMPARE(reset.count(), 1);
    QCOMPARE(model.ids(), (QList<qint64>{10, 11, 12}));
    model.flush();
    QCOMPARE(model.rowCount(), 3);
}

void tst_ResourceModel::relistEncodedOnWorker()
{
    ResourceModel model(instancesKind());
    model.setAsyncThreshold(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert(instances(1, 5));
    model.flush();
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy batches(&model, &ResourceModel::batchApplied);
    model.replaceAll(instances(10, 2000));
    // Returned before the rows were encoded: the previous ones are still shown.
    QVERIFY(model.isReplacing());
    QCOMPARE(reset.count(), 0);
    QCOMPARE(model.ids(), (QList<qint64>{1, 2, 3, 4, 5}));
    QTRY_COMPARE(reset.count(), 1);
    QVERIFY(!model.isReplacing());
    QCOMPARE(model.rowCount(), 1991);
    QCOMPARE(model.rowOfId(10), 0);
    QCOMPARE(model.rowOfId(2000), 1990);
    QCOMPARE(model.rowOfId(3), -1);
    QCOMPARE(model.objectById(1234), instance(1234));
    QCOMPARE(batches.count(), 1);
    QCOMPARE(batches.first().at(0).toInt(), 1991);
}

void tst_ResourceModel::changesDuringRelistFollowIt()
{
    ResourceModel model(instancesKind());
    model.setAsyncThreshold(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert({instance(4000)}); // queued before the relist: its rows replace it
    model.replaceAll(instances(1, 1000));
    // The feed goes on while the rows are encoded: newer than the relist, applied after it.
    model.upsert({instance(5, QStringLiteral("STOPPED"), 2), instance(1500), instance(8, QStringLiteral("FAILED"), 1)});
    model.remove({7});
    QCOMPARE(model.rowCount(), 0);
    QTRY_VERIFY(!model.isReplacing() && !model.hasPendingChanges());
    QCOMPARE(model.rowCount(), 1000);
    QCOMPARE(model.objectById(5).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QCOMPARE(model.objectById(8).value(QStringLiteral("status")).toString(), QStringLiteral("RUNNING")); // same version
    QCOMPARE(model.rowOfId(7), -1);
    QCOMPARE(model.rowOfId(1500), 999);
    QCOMPARE(model.rowOfId(4000), -1);
}

void tst_ResourceModel::newerRelistWins()
{
    ResourceModel model(instancesKind());
    model.setAsyncThreshold(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.replaceAll(instances(1, 20000));
    model.replaceAll(instances(30001, 30100));
    QTRY_VERIFY(!model.isReplacing());
    QCOMPARE(reset.count(), 1); // the older one was never shown
    QCOMPARE(model.rowCount(), 100);
    QCOMPARE(model.idAt(0), 30001);
}

void tst_ResourceModel::flushWaitsForRelist()
{
    ResourceModel model(instancesKind());
    model.setAsyncThreshold(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    model.replaceAll(instances(1, 3000));
    model.upsert({instance(2, QStringLiteral("STOPPED"), 2)});
    model.flush();
    QCOMPARE(reset.count(), 1);
    QVERIFY(!model.isReplacing());
    QCOMPARE(model.rowCount(), 3000);
    QCOMPARE(model.objectById(2).value(QStringLiteral("status")).toString(), QStringLiteral("STOPPED"));
    QVERIFY(!model.hasPendingChanges());
}

void tst_ResourceModel::scatteredRemovalsCompactedOnWorker()
{
    ResourceModel model(instancesKind());
    model.setAsyncThreshold(0);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.replaceAll(instances(1, 3000));
    model.flush();
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    QSignalSpy removedRows(&model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy batches(&model, &ResourceModel::batchApplied);
    // What a relist after a gap in the feed ends with: rows the server no longer lists, all over the table.
    QList<qint64> vanished;
    for (qint64 id = 3; id <= 3000; id += 7)
        vanished << id;
    // The rows stay shown until the rows left are copied: nothing is removed before the reset.
    // (Read at the reset, not by polling isReplacing(): on a busy machine the worker can finish
    // between two polls.)
    int rowsAtReset = -1;
    connect(&model, &QAbstractItemModel::modelAboutToBeReset, this, [&] { rowsAtReset = model.rowCount(); });
    model.remove(vanished);
    model.upsert({instance(11, QStringLiteral("STOPPED"), 2), instance(3001)});
    QTRY_VERIFY(!model.isReplacing() && !model.hasPendingChanges());
    QCOMPARE(reset.count(), 1);
    QCOMPARE(rowsAtReset, 3000);
    QCOMPARE(removedRows.count(), 0);
    QCOMPARE(batches.first().at(2).toInt(), int(vanished.size()));
    QCOMPARE(model.rowCount(), 3000 - int(vanished.size()) + 1);
    for (qint64 id = 1; id <= 3001; ++id) {
        const int row = model.rowOfId(id);
        if (vanished.contains(id)) {
            QCOMPARE(row, -1);
            continue;
        }
        QVERIFY(row >= 0);
        QCOMPARE(model.idAt(row), id);
        const QJsonObject expected = id == 11 ? instance(11, QStringLiteral("STOPPED"), 2) : instance(id);
        QCOMPARE(model.objectAt(row), expected);
    }
    QVERIFY(model.idAt(0) < model.idAt(1)); // the rows left keep their order
}

void tst_ResourceModel::roles_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<int>("role");
    QTest::addColumn<QVariant>("expected");

    QTest::newRow("id display") << "id" << int(Qt::DisplayRole) << QVariant(QStringLiteral("5"));
    QTest::newRow("id sort is a number") << "id" << int(ResourceModel::SortRole) << QVariant::fromValue<qint64>(5);
    QTest::newRow("name display") << "name" << int(Qt::DisplayRole) << QVariant(QStringLiteral("app-5"));
    QTest::newRow("state role on any column") << "name" << int(ResourceModel::StateRole)
                                              << QVariant(QStringLiteral("PENDING"));
    QTest::newRow("tone") << "status" << int(ResourceModel::ToneRole) << QVariant(int(StateTone::Busy));
    QTest::newRow("a state is read as words") << "status" << int(Qt::AccessibleTextRole) << QVariant(QStringLiteral("pending"));
    QTest::newRow("other cells are read as shown") << "name" << int(Qt::AccessibleTextRole) << QVariant();
    QTest::newRow("id role") << "owner" << int(ResourceModel::IdRole) << QVariant::fromValue<qint64>(5);
    QTest::newRow("version role") << "owner" << int(ResourceModel::VersionRole) << QVariant::fromValue<qint64>(3);
    QTest::newRow("timestamp sort is ms") << "created_at" << int(ResourceModel::SortRole)
                                          << QVariant::fromValue<qint64>(1795946400000);
    QTest::newRow("timestamp tooltip is UTC") << "created_at" << int(Qt::ToolTipRole)
                                              << QVariant(QStringLiteral("2026-11-29T10:00:00.000Z"));
    QTest::newRow("null display") << "destroy_after" << int(Qt::DisplayRole) << QVariant(QString());
    QTest::newRow("null sort") << "destroy_after" << int(ResourceModel::SortRole) << QVariant();
    QTest::newRow("nested null") << "callback.url" << int(Qt::DisplayRole) << QVariant(QString());
}

void tst_ResourceModel::roles()
{
    QFETCH(QString, key);
    QFETCH(int, role);
    QFETCH(QVariant, expected);
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert({instance(5, QStringLiteral("PENDING"), 3)});
    model.flush();
    const QModelIndex index = model.index(0, instancesKind().fieldIndex(key));
    QVERIFY(index.isValid());
    QCOMPARE(index.data(role), expected);
}

void tst_ResourceModel::objectRoundTrip()
{
    ResourceModel model(instancesKind());
    QJsonObject withCallback = instance(8);
    withCallback.insert(QStringLiteral("callback"),
                        QJsonObject{{QStringLiteral("url"), QStringLiteral("https://p.example/cb")},
                                    {QStringLiteral("signing"), QStringLiteral("standard-webhooks")}});
    model.upsert({instance(7), withCallback});
    model.flush();
    QCOMPARE(model.objectById(7), instance(7));
    QCOMPARE(model.index(1, 0).data(ResourceModel::ObjectRole).toJsonObject(), withCallback);

    ResourceModel providers(*resourceKindByName(u"providers"));
    const QJsonObject provider{{QStringLiteral("id"), 7},
                               {QStringLiteral("name"), QStringLiteral("Acme")},
                               {QStringLiteral("organization_id"), 1},
                               {QStringLiteral("applications"), QJsonArray{QStringLiteral("wiki"), QStringLiteral("crm")}},
                               {QStringLiteral("version"), 1},
                               {QStringLiteral("created_at"), QStringLiteral("2026-11-29T10:00:00.000Z")},
                               {QStringLiteral("updated_at"), QStringLiteral("2026-11-29T10:00:00.000Z")}};
    providers.upsert({provider});
    providers.flush();
    QCOMPARE(providers.objectById(7), provider);
    QCOMPARE(providers.index(0, 3).data().toString(), QStringLiteral("[\"wiki\",\"crm\"]"));
}

void tst_ResourceModel::referenceNames()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert({instance(1, QStringLiteral("RUNNING"), 1, 7), instance(2, QStringLiteral("RUNNING"), 1, 8)});
    model.flush();
    const int providerColumn = column("provider_id");
    QCOMPARE(model.index(0, providerColumn).data().toString(), QStringLiteral("7"));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    model.setReferenceLookup([](const QString &kind, qint64 id) {
        return kind == QLatin1String("providers") && id == 7 ? QStringLiteral("Acme") : QString();
    });
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(0, providerColumn).data().toString(), QStringLiteral("Acme"));
    QCOMPARE(model.index(0, providerColumn).data(Qt::ToolTipRole).toString(), QStringLiteral("Acme #7"));
    QCOMPARE(model.index(1, providerColumn).data().toString(), QStringLiteral("8"));
    QCOMPARE(model.index(0, providerColumn).data(ResourceModel::SortRole).toLongLong(), 7);
    QCOMPARE(model.nameOfId(2), QStringLiteral("app-2"));
}

void tst_ResourceModel::stateNotes()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.upsert({instance(1, QStringLiteral("PENDING")), instance(2, QStringLiteral("RUNNING"))});
    model.flush();
    const int status = column("status");
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    // What the lookup reads lies outside the model (here: which ids are held).
    QSet<qint64> held{1};
    model.setStateNoteLookup([&model, &held](int row) -> ResourceModel::StateNote {
        if (!held.contains(model.idAt(row)))
            return {};
        return {QStringLiteral("held"), QStringLiteral("Its endpoint is paused.")};
    });
    const int pending = model.rowOfId(1);
    const int running = model.rowOfId(2);
    QCOMPARE(model.index(pending, status).data(ResourceModel::StateNoteRole).toString(), QStringLiteral("held"));
    QCOMPARE(model.index(pending, status).data(Qt::ToolTipRole).toString(), QStringLiteral("Its endpoint is paused."));
    QCOMPARE(model.index(pending, status).data(Qt::AccessibleTextRole).toString(), QStringLiteral("pending, held"));
    QCOMPARE(model.index(pending, status).data().toString(), QStringLiteral("PENDING")); // the badge's text is the state
    QCOMPARE(model.index(running, status).data(ResourceModel::StateNoteRole), QVariant());
    QCOMPARE(model.index(running, status).data(Qt::AccessibleTextRole).toString(), QStringLiteral("running"));
    QCOMPARE(model.index(pending, column("name")).data(ResourceModel::StateNoteRole), QVariant()); // the state column's only
    // Setting it, and each later change, is one signal for the state column, none for the order.
    QCOMPARE(changed.count(), 1);
    const QList<QVariant> args = changed.takeFirst();
    QCOMPARE(args.at(0).toModelIndex().column(), status);
    QCOMPARE(args.at(1).toModelIndex().column(), status);
    QCOMPARE(args.at(1).toModelIndex().row(), model.rowCount() - 1);
    QVERIFY(!args.at(2).value<QList<int>>().contains(ResourceModel::SortRole));
    held = {2};
    model.stateNotesChanged();
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(pending, status).data(ResourceModel::StateNoteRole), QVariant());
    QCOMPARE(model.index(pending, status).data(Qt::AccessibleTextRole).toString(), QStringLiteral("pending"));
    QCOMPARE(model.index(running, status).data(Qt::AccessibleTextRole).toString(), QStringLiteral("running, held"));
}

void tst_ResourceModel::referencesNamedByTheRow()
{
    // An audit entry's object is of the kind its "kind" names; a provider acts under its id.
    const ResourceKind &audit = *resourceKindByName(u"audit");
    ResourceModel model(audit);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const auto entry = [](qint64 id, const char *role, const char *subject, const char *kind, qint64 object) {
        return QJsonObject{{QStringLiteral("id"), id},
                           {QStringLiteral("at"), QStringLiteral("2026-11-29T10:00:00.000Z")},
                           {QStringLiteral("actor"), QJsonObject{{QStringLiteral("role"), QLatin1String(role)},
                                                                 {QStringLiteral("subject"), QLatin1String(subject)}}},
                           {QStringLiteral("action"), QStringLiteral("retry")},
                           {QStringLiteral("kind"), QLatin1String(kind)},
                           {QStringLiteral("object_id"), object}};
    };
    model.upsert({entry(1, "provider", "1", "delivery", 7), entry(2, "operator", "console", "instance", 29),
                  entry(3, "owner", "12", "weird", 5), entry(4, "provider", "01", "instance", 30)});
    model.flush();
    const int actor = audit.fieldIndex(u"actor.subject");
    const int object = audit.fieldIndex(u"object_id");
    const auto text = [&](qint64 id, int field, int role = Qt::DisplayRole) {
        return model.index(model.rowOfId(id), field).data(role).toString();
    };
    QCOMPARE(text(1, actor), QStringLiteral("1")); // no names known yet
    QCOMPARE(text(2, object), QStringLiteral("29"));
    model.setReferenceLookup([](const QString &kind, qint64 id) {
        if (kind == QLatin1String("providers") && id == 1)
            return QStringLiteral("Medisys");
        if (kind == QLatin1String("instances"))
            return QStringLiteral("app-%1").arg(id);
        if (kind == QLatin1String("organizations"))
            return QStringLiteral("org-%1").arg(id); // never asked: an owner is no organization
        return QString();
    });
    QCOMPARE(text(1, actor), QStringLiteral("Medisys"));
    QCOMPARE(text(1, actor, Qt::ToolTipRole), QStringLiteral("Medisys #1"));
    QCOMPARE(text(1, object), QStringLiteral("7")); // a delivery has no name: its id
    QCOMPARE(text(2, actor), QStringLiteral("console"));
    QCOMPARE(text(2, object), QStringLiteral("app-29"));
    QCOMPARE(text(2, object, Qt::ToolTipRole), QStringLiteral("app-29 #29"));
    QCOMPARE(text(3, actor), QStringLiteral("12"));
    QCOMPARE(text(3, object), QStringLiteral("5")); // a kind the console does not know
    QCOMPARE(text(4, actor), QStringLiteral("01")); // not an id as the server writes one
    QCOMPARE(text(4, object), QStringLiteral("app-30"));
    // Names read as text, left-aligned; the sort stays by id.
    QCOMPARE(model.index(0, object).data(Qt::TextAlignmentRole), QVariant());
    QCOMPARE(model.index(model.rowOfId(2), object).data(ResourceModel::SortRole).toLongLong(), 29);
}

void tst_ResourceModel::headers()
{
    ResourceModel model(instancesKind());
    QCOMPARE(model.headerData(0, Qt::Horizontal).toString(), QStringLiteral("ID"));
    QCOMPARE(model.headerData(column("callback.url"), Qt::Horizontal, Qt::ToolTipRole).toString(),
             QStringLiteral("callback.url"));
    QCOMPARE(model.headerData(model.columnCount(), Qt::Horizontal), QVariant());
}

void tst_ResourceModel::compareRowsNullsLast()
{
    ResourceModel model(instancesKind());
    QJsonObject later = instance(2);
    later.insert(QStringLiteral("destroy_after"), QStringLiteral("2026-12-01T00:00:00Z"));
    QJsonObject sooner = instance(3);
    sooner.insert(QStringLiteral("destroy_after"), QStringLiteral("2026-11-30T00:00:00Z"));
    model.replaceAll({instance(1), later, sooner});
    const int destroyAfter = column("destroy_after");
    QVERIFY(model.compareRows(2, 1, destroyAfter) < 0);
    QVERIFY(model.compareRows(1, 0, destroyAfter) < 0); // null after any time
    QVERIFY(model.compareRows(0, 1, destroyAfter) > 0);
    QCOMPARE(model.compareRows(0, 0, destroyAfter), 0);
    QVERIFY(model.compareRows(0, 1, column("name")) < 0);  // app-1 < app-2
    QCOMPARE(model.compareRows(0, 1, column("status")), 0);
    QVERIFY(model.compareRows(1, 0, 0) > 0);               // ids as numbers
}

void tst_ResourceModel::memoryPerRowIsCompact()
{
    ResourceModel model(instancesKind());
    const int rows = 20000;
    model.replaceAll(instances(1, rows));
    model.flush(); // a relist this large is encoded on a worker
    QCOMPARE(model.rowCount(), rows);
    const double perRow = double(model.memoryUsage()) / rows;
    QVERIFY2(perRow <= 300, qPrintable(QStringLiteral("%1 bytes per row").arg(perRow)));
}

void tst_ResourceModel::uniqueTextsAreNotInterned()
{
    ResourceModel model(instancesKind());
    model.replaceAll(instances(1, 5000));
    const RowStore &store = model.store();
    // Every name differs: after a probe the field stops being interned; states repeat and stay.
    QVERIFY(!store.isInterned(column("name")));
    QVERIFY(store.isInterned(column("status")));
    QVERIFY(store.isInterned(column("application")));
    QCOMPARE(model.textIdAt(0, column("status")), model.textIdAt(4999, column("status")));
    QVERIFY(model.textIdAt(0, column("name")) != model.textIdAt(4999, column("name")));
    QCOMPARE(model.textOfId(model.textIdAt(4999, column("name"))), QStringLiteral("app-5000"));
    // A later row with a name seen before still reads right, only without sharing its text.
    QJsonObject twin = instance(6000);
    twin.insert(QStringLiteral("name"), QStringLiteral("app-17"));
    model.upsert({twin});
    model.flush();
    QCOMPARE(model.cellText(model.rowOfId(6000), column("name")), QStringLiteral("app-17"));
    QCOMPARE(model.compareRows(model.rowOfId(6000), model.rowOfId(17), column("name")), 0);
}

void tst_ResourceModel::unchangedNameKeepsItsText()
{
    ResourceModel model(instancesKind());
    model.replaceAll(instances(1, 3000));
    const quint32 texts = model.store().texts().size();
    const int nameId = model.textIdAt(model.rowOfId(42), column("name"));
    // New versions with other states but the same names: no text is added again.
    QList<QJsonObject> changed;
    for (qint64 id = 1; id <= 3000; ++id)
        changed << instance(id, QStringLiteral("STOPPED"), 2);
    model.upsert(changed);
    model.flush();
    QCOMPARE(model.store().texts().size(), texts + 1); // "STOPPED" only
    QCOMPARE(model.textIdAt(model.rowOfId(42), column("name")), nameId);
    QCOMPARE(model.cellText(model.rowOfId(42), column("status")), QStringLiteral("STOPPED"));
}

void tst_ResourceModel::snapshotStaysAsTaken()
{
    ResourceModel model(instancesKind());
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.replaceAll(instances(1, 10));
    const std::shared_ptr<const RowStore> snapshot = model.snapshot();
    model.upsert({instance(3, QStringLiteral("FAILED"), 2), instance(11)});
    model.remove({1});
    model.flush();
    // The model moved on; the snapshot still holds the ten rows as they were.
    QCOMPARE(model.rowCount(), 10);
    QCOMPARE(model.cellText(model.rowOfId(3), column("status")), QStringLiteral("FAILED"));
    QCOMPARE(snapshot->rowCount(), 10);
    QCOMPARE(snapshot->raw(2, column("status")).toString(), QStringLiteral("RUNNING"));
    QCOMPARE(snapshot->raw(0, 0).toLongLong(), 1);
    QCOMPARE(snapshot->texts().text(quint32(snapshot->textId(9, column("name")))), QStringLiteral("app-10"));
}

QTEST_GUILESS_MAIN(tst_ResourceModel)
#include "tst_resourcemodel.moc"
