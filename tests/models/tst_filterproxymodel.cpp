// Tests for the query-line proxy on the GUI thread: filtering, sorting by raw values, errors, live batches.
#include "models/filterproxymodel.h"

#include "proxyfixture.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStringListModel>
#include <QTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_FilterProxyModel final : public QObject
{
    Q_OBJECT

private slots:
    void filters_data();
    void filters();
    void sortsByRawValue_data();
    void sortsByRawValue();
    void badQueryKeepsFilterAndReportsError();
    void liveBatchesFollowFilter();
    void completions();
    void nonResourceSourcePassesAll();
    void wordsStayRightAcrossResets();
    void wordsSearchReferencedNames_data();
    void wordsSearchReferencedNames();
    void narrowingTestsOnlyShownRows();
    void batchesWhileFilteredEqualBruteForce();
    void selectionFollowsItsRow();
    void sourceDestroyedLeavesNoRows();
};

void tst_FilterProxyModel::filters_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<QList<qint64>>("ids");

    QTest::newRow("empty") << "" << QList<qint64>{1, 2, 10, 3};
    QTest::newRow("state") << "state:running" << QList<qint64>{1, 3};
    QTest::newRow("negated state") << "-status:running" << QList<qint64>{2, 10};
    QTest::newRow("provider by name") << "provider:acme" << QList<qint64>{1, 2};
    QTest::newRow("provider by id") << "provider:8" << QList<qint64>{10, 3};
    QTest::newRow("age") << "age>1h" << QList<qint64>{2, 10, 3};
    QTest::newRow("age and state") << "age>1h state:running" << QList<qint64>{3};
    QTest::newRow("free text") << "wiki" << QList<qint64>{1, 2, 10, 3}; // the application is wiki
    QTest::newRow("free text in name") << "alpha" << QList<qint64>{2};
    QTest::newRow("id list") << "id:1,3" << QList<qint64>{1, 3};
    QTest::newRow("nothing") << "state:destroyed" << QList<qint64>{};
}

void tst_FilterProxyModel::filters()
{
    QFETCH(QString, query);
    QFETCH(QList<qint64>, ids);
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QVERIFY(f.proxy.setQuery(query));
    QCOMPARE(proxyIds(f.proxy), ids);
}

void tst_FilterProxyModel::sortsByRawValue_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<int>("order");
    QTest::addColumn<QList<qint64>>("ids");

    // Ids sort as numbers (10 after 3), names case-insensitively, timestamps by time.
    QTest::newRow("id ascending") << "id" << int(Qt::AscendingOrder) << QList<qint64>{1, 2, 3, 10};
    QTest::newRow("id descending") << "id" << int(Qt::DescendingOrder) << QList<qint64>{10, 3, 2, 1};
    QTest::newRow("name") << "name" << int(Qt::AscendingOrder) << QList<qint64>{2, 1, 10, 3};
    QTest::newRow("created") << "created_at" << int(Qt::AscendingOrder) << QList<qint64>{3, 2, 10, 1};
    QTest::newRow("state, ties by id") << "status" << int(Qt::AscendingOrder) << QList<qint64>{10, 1, 3, 2};
    QTest::newRow("all null, ties by id") << "destroy_after" << int(Qt::AscendingOrder) << QList<qint64>{1, 2, 3, 10};
}

void tst_FilterProxyModel::sortsByRawValue()
{
    QFETCH(QString, key);
    QFETCH(int, order);
    QFETCH(QList<qint64>, ids);
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(key), Qt::SortOrder(order));
    QCOMPARE(proxyIds(f.proxy), ids);
}

void tst_FilterProxyModel::badQueryKeepsFilterAndReportsError()
{
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy errors(&f.proxy, &FilterProxyModel::errorChanged);
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    QCOMPARE(errors.count(), 0);
    QVERIFY(!f.proxy.setQuery(QStringLiteral("state:running age>soon")));
    QCOMPARE(errors.count(), 1);
    QCOMPARE(errors.first().at(0).toString(), QStringLiteral("age needs a duration like 1h, 30m, 2d"));
    QCOMPARE(errors.first().at(1).toInt(), 18);
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{1, 3})); // the last good filter stays
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running age>1h")));
    QCOMPARE(errors.count(), 2);
    QCOMPARE(errors.last().at(0).toString(), QString());
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{3}));
}

void tst_FilterProxyModel::liveBatchesFollowFilter()
{
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    f.proxy.sort(0);
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{1, 3}));
    // 2 starts running, 1 stops, 20 arrives running, 3 is deleted: one batch.
    f.model.upsert({instance(2, QStringLiteral("Alpha wiki"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-28T09:00:00Z"), 2),
                    instance(1, QStringLiteral("billing"), QStringLiteral("STOPPED"), 7, QStringLiteral("2026-11-29T11:50:00Z"), 2),
                    instance(20, QStringLiteral("new"), QStringLiteral("RUNNING"), 8, QStringLiteral("2026-11-29T11:59:00Z"))});
    f.model.remove({3});
    QTRY_COMPARE(proxyIds(f.proxy), (QList<qint64>{2, 20}));
}

void tst_FilterProxyModel::completions()
{
    Fixture f;
    QCOMPARE(f.proxy.completions(QStringLiteral("state:ru")), QStringList{QStringLiteral("state:running")});
    FilterProxyModel empty;
    QCOMPARE(empty.completions(QStringLiteral("state:ru")), QStringList());
}

void tst_FilterProxyModel::nonResourceSourcePassesAll()
{
    QStringListModel list({QStringLiteral("a"), QStringLiteral("b")});
    FilterProxyModel proxy;
    proxy.setSourceModel(&list);
    QVERIFY(proxy.setQuery(QStringLiteral("anything")));
    QCOMPARE(proxy.rowCount(), 2);
}

void tst_FilterProxyModel::wordsStayRightAcrossResets()
{
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QVERIFY(f.proxy.setQuery(QStringLiteral("alpha")));
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{2});
    // The same texts at other places: remembered answers must not follow the old numbering.
    f.model.replaceAll({instance(7, QStringLiteral("crm"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-29T11:50:00Z")),
                        instance(8, QStringLiteral("Alpha two"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-29T11:50:00Z"))});
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{8});
    // New texts arriving in a batch are tested too.
    f.model.upsert({instance(9, QStringLiteral("alphabet"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-29T11:50:00Z"))});
    QTRY_COMPARE(proxyIds(f.proxy), (QList<qint64>{8, 9}));
    QVERIFY(f.proxy.setQuery(QStringLiteral("-alpha")));
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{7});
}

void tst_FilterProxyModel::wordsSearchReferencedNames_data()
{
    QTest::addColumn<bool>("worker");
    QTest::newRow("on this thread") << false;
    QTest::newRow("on a worker") << true;
}

void tst_FilterProxyModel::wordsSearchReferencedNames()
{
    // The table shows the provider's name in its column: a word finds it there.
    QFETCH(bool, worker);
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    if (worker)
        f.proxy.setAsyncThreshold(0);
    QHash<qint64, QString> names{{7, QStringLiteral("Acme")}};
    f.proxy.setReferenceLookup([&names](const QString &kind, qint64 id) {
        return kind == QLatin1String("providers") ? names.value(id) : QString();
    });
    QVERIFY(f.proxy.setQuery(QStringLiteral("globex")));
    QTRY_VERIFY(!f.proxy.isFiltering());
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{}); // provider 8's name is not known yet
    // Its name comes with the providers' rows, after these: the filter reads it again.
    names.insert(8, QStringLiteral("Globex Corp"));
    f.proxy.referencedNamesChanged();
    QTRY_COMPARE(proxyIds(f.proxy), (QList<qint64>{10, 3}));
    // A new row naming a provider no row named when the filter ran is tested by that name too.
    names.insert(9, QStringLiteral("GLOBEX West"));
    f.model.upsert({instance(11, QStringLiteral("zzz"), QStringLiteral("RUNNING"), 9, QStringLiteral("2026-11-29T11:50:00Z"))});
    QTRY_COMPARE(proxyIds(f.proxy), (QList<qint64>{10, 3, 11}));
    // Excluded by the name as well.
    QVERIFY(f.proxy.setQuery(QStringLiteral("-acme")));
    QTRY_VERIFY(!f.proxy.isFiltering());
    QTRY_COMPARE(proxyIds(f.proxy), (QList<qint64>{10, 3, 11}));
}

void tst_FilterProxyModel::narrowingTestsOnlyShownRows()
{
    Fixture f;
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    QCOMPARE(f.proxy.lastTestedRows(), 4);
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running bil")));
    QCOMPARE(f.proxy.lastTestedRows(), 2); // the two running rows only
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{1});
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running bil ")));
    QCOMPARE(f.proxy.lastTestedRows(), 0); // the same query
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running bi")));
    QCOMPARE(f.proxy.lastTestedRows(), 4); // wider: every row again
    QCOMPARE(proxyIds(f.proxy), QList<qint64>{1});
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    QCOMPARE(f.proxy.lastTestedRows(), 0); // erased back to a remembered query
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{1, 3}));
    // Changed rows make remembered results useless.
    f.model.upsert({instance(2, QStringLiteral("Alpha wiki"), QStringLiteral("RUNNING"), 7,
                             QStringLiteral("2026-11-28T09:00:00Z"), 2)});
    f.model.flush();
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{1, 2, 3}));
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running bil")));
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    QCOMPARE(f.proxy.lastTestedRows(), 4);
    QCOMPARE(proxyIds(f.proxy), (QList<qint64>{1, 2, 3}));
}

void tst_FilterProxyModel::batchesWhileFilteredEqualBruteForce()
{
    Fixture f;
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= 200; ++id)
        rows << generated(id, 0);
    f.model.replaceAll(rows);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"), Qt::DescendingOrder);
    const QString query = QStringLiteral("state:running,pending acme");
    QVERIFY(f.proxy.setQuery(query));
    for (int round = 1; round <= 5; ++round) {
        // Changed rows (new states and names), new rows, and scattered removals in one batch.
        applyBatch(f.model, round, 200, 3, round * 7, 17);
        QTRY_VERIFY(!f.model.hasPendingChanges());
        QTRY_COMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
        // Still in name order, descending, ties by id.
        QString why;
        QVERIFY2(inNameOrder(f.proxy, Qt::DescendingOrder, &why), qPrintable(why));
    }
}

void tst_FilterProxyModel::selectionFollowsItsRow()
{
    Fixture f;
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    const QPersistentModelIndex payroll(f.proxy.index(3, 0)); // Alpha wiki, billing, crm, payroll
    QCOMPARE(payroll.data(ResourceModel::IdRole).toLongLong(), 3);
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:running")));
    QVERIFY(payroll.isValid());
    QCOMPARE(payroll.row(), 1);
    QCOMPARE(payroll.data(ResourceModel::IdRole).toLongLong(), 3);
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:stopped")));
    QVERIFY(!payroll.isValid());
}

void tst_FilterProxyModel::sourceDestroyedLeavesNoRows()
{
    FilterProxyModel proxy;
    {
        ResourceModel model(*resourceKindByName(u"instances"));
        model.replaceAll(fixture());
        proxy.setSourceModel(&model);
        QCOMPARE(proxy.rowCount(), 4);
    }
    QCOMPARE(proxy.rowCount(), 0);
}

QTEST_GUILESS_MAIN(tst_FilterProxyModel)
#include "tst_filterproxymodel.moc"
