// Tests for the query-line proxy: filtering, sorting by raw values, errors, and live batches.
#include "models/filterproxymodel.h"

#include "core/resourcekind.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStringListModel>
#include <QTest>

#include <algorithm>

using namespace OpsDeck;

namespace {

const qint64 kNow = *parseTimestamp(u"2026-11-29T12:00:00.000Z");

QJsonObject instance(qint64 id, const QString &name, const QString &status, qint64 provider, const QString &created,
                     qint64 version = 1)
{
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("name"), name},
                       {QStringLiteral("organization_id"), 1},
                       {QStringLiteral("provider_id"), provider},
                       {QStringLiteral("application"), QStringLiteral("wiki")},
                       {QStringLiteral("owner"), QStringLiteral("alice")},
                       {QStringLiteral("status"), status},
                       {QStringLiteral("version"), version},
                       {QStringLiteral("created_at"), created},
                       {QStringLiteral("updated_at"), created}};
}

QList<QJsonObject> fixture()
{
    return {instance(1, QStringLiteral("billing"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-29T11:50:00Z")),
            instance(2, QStringLiteral("Alpha wiki"), QStringLiteral("STOPPED"), 7, QStringLiteral("2026-11-28T09:00:00Z")),
            instance(10, QStringLiteral("crm"), QStringLiteral("PENDING"), 8, QStringLiteral("2026-11-29T08:00:00Z")),
            instance(3, QStringLiteral("payroll"), QStringLiteral("RUNNING"), 8, QStringLiteral("2026-11-20T00:00:00Z"))};
}

QList<qint64> proxyIds(const QAbstractItemModel &proxy)
{
    QList<qint64> ids;
    for (int row = 0; row < proxy.rowCount(); ++row)
        ids << proxy.index(row, 0).data(ResourceModel::IdRole).toLongLong();
    return ids;
}

struct Fixture
{
    Fixture()
        : model(*resourceKindByName(u"instances"))
    {
        proxy.setSourceModel(&model);
        proxy.setClock([] { return kNow; });
        proxy.setReferenceLookup([](const QString &kind, qint64 id) {
            if (kind != QLatin1String("providers"))
                return QString();
            return id == 7 ? QStringLiteral("Acme") : QStringLiteral("Globex");
        });
        model.replaceAll(fixture());
    }
    ResourceModel model;
    FilterProxyModel proxy;
};

} // namespace

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
    void typingEqualsBruteForce_data();
    void typingEqualsBruteForce();
    void narrowingTestsOnlyShownRows();
    void batchesWhileFilteredEqualBruteForce();
    void selectionFollowsItsRow();
    void sourceDestroyedLeavesNoRows();
};

namespace {

const QStringList kNames{QStringLiteral("dataviz-acme"), QStringLiteral("Dataviz-Globex"), QStringLiteral("crm-acme"),
                         QStringLiteral("wiki-ÄRGER"), QStringLiteral("billing"), QStringLiteral("KELVIN-\u212A")};
const QStringList kStates{QStringLiteral("RUNNING"), QStringLiteral("STOPPED"), QStringLiteral("FAILED"),
                          QStringLiteral("PENDING")};

QJsonObject generated(qint64 id, int salt)
{
    return instance(id, kNames.at((id + salt) % kNames.size()) + QString::number(id % 7),
                    kStates.at((id * 3 + salt) % kStates.size()), 7 + (id % 2),
                    QStringLiteral("2026-11-2%1T10:00:00Z").arg(id % 9 + 1), 1 + salt);
}

// The rows a query must show, in source-id order, by the generic matcher on each row's object.
QList<qint64> bruteForce(const ResourceModel &model, const QString &text)
{
    const QueryParse parsed = parseQuery(text, model.kind());
    QList<qint64> ids;
    for (int r = 0; r < model.rowCount(); ++r) {
        const QJsonObject object = model.objectAt(r);
        if (matches(parsed.query, JsonQueryRow(model.kind(), object), kNow))
            ids << model.idAt(r);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

QList<qint64> sortedIds(const QAbstractItemModel &proxy)
{
    QList<qint64> ids = proxyIds(proxy);
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace

void tst_FilterProxyModel::typingEqualsBruteForce_data()
{
    QTest::addColumn<QString>("query");

    QTest::newRow("state and words") << "state:running dataviz-ac";
    QTest::newRow("negated word") << "-acme crm";
    QTest::newRow("negated state grows") << "-state:fa dataviz";
    QTest::newRow("alternatives") << "state:run,sto acme";
    QTest::newRow("name term") << "name:viz-gl";
    QTest::newRow("non-ascii word") << "ärger";
    QTest::newRow("kelvin folds to k") << "kelvin-k";
    QTest::newRow("id digits") << "1 4";
    QTest::newRow("provider and age") << "provider:8 age>1d";
}

void tst_FilterProxyModel::typingEqualsBruteForce()
{
    QFETCH(QString, query);
    Fixture f;
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= 300; ++id)
        rows << generated(id, 0);
    f.model.replaceAll(rows);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    // Typed and erased one character at a time, as the query line sends it.
    QList<QString> keystrokes;
    for (qsizetype n = 1; n <= query.size(); ++n)
        keystrokes << query.left(n);
    for (qsizetype n = query.size() - 1; n >= 0; --n)
        keystrokes << query.left(n);
    QString lastGood;
    for (const QString &text : std::as_const(keystrokes)) {
        if (f.proxy.setQuery(text))
            lastGood = text;
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
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
        QList<QJsonObject> batch;
        for (qint64 id = round; id <= 200; id += 3)
            batch << generated(id, round);
        for (qint64 id = 200 + round * 10; id < 200 + round * 10 + 10; ++id)
            batch << generated(id, round);
        f.model.upsert(batch);
        QList<qint64> removed;
        for (qint64 id = round * 7; id <= 200; id += 17)
            removed << id;
        f.model.remove(removed);
        f.model.flush();
        QTRY_VERIFY(!f.model.hasPendingChanges());
        QTRY_COMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
        // Still in name order, descending, ties by id.
        for (int r = 1; r < f.proxy.rowCount(); ++r) {
            const QString a = f.proxy.index(r - 1, 1).data(ResourceModel::SortRole).toString();
            const QString b = f.proxy.index(r, 1).data(ResourceModel::SortRole).toString();
            QVERIFY2(a.compare(b, Qt::CaseInsensitive) >= 0, qPrintable(a + QLatin1String(" before ") + b));
        }
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
