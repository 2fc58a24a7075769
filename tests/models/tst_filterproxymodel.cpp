// Tests for the query-line proxy: filtering, sorting by raw values, errors, and live batches.
#include "models/filterproxymodel.h"

#include "core/resourcekind.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStringListModel>
#include <QTest>
#include <QThreadPool>

#include <algorithm>
#include <utility>

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

QString providerName(const QString &kind, qint64 id)
{
    if (kind != QLatin1String("providers"))
        return QString();
    return id == 7 ? QStringLiteral("Acme") : QStringLiteral("Globex");
}

// A row read from its object, naming providers as the fixture's lookup does.
class NamedRow final : public QueryRow
{
public:
    NamedRow(const ResourceKind &kind, const QJsonObject &object)
        : m_row(kind, object)
    {
    }
    QVariant value(int field) const override { return m_row.value(field); }
    QString referenceName(const QString &kind, qint64 id) const override { return providerName(kind, id); }

private:
    JsonQueryRow m_row;
};

struct Fixture
{
    Fixture()
        : model(*resourceKindByName(u"instances"))
    {
        proxy.setSourceModel(&model);
        proxy.setClock([] { return kNow; });
        proxy.setReferenceLookup(&providerName);
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
    void asyncTypingEqualsBruteForce_data();
    void asyncTypingEqualsBruteForce();
    void fastTypingShowsTheLastQuery();
    void batchesDuringAsyncFilterAreKept_data();
    void batchesDuringAsyncFilterAreKept();
    void asyncSortEqualsStableSort_data();
    void asyncSortEqualsStableSort();
    void selectionFollowsAsyncResult();
    void fullScanOnTwoThreadsEqualsBruteForce_data();
    void fullScanOnTwoThreadsEqualsBruteForce();
    void helpedJobEqualsJobAlone_data();
    void helpedJobEqualsJobAlone();
    void overtakenJobStopsAndLetsGo();
    void relistOnWorkersEqualsBruteForce_data();
    void relistOnWorkersEqualsBruteForce();
    void scatteredRemovalsEqualBruteForce();
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
        if (matches(parsed.query, NamedRow(model.kind(), object), kNow))
            ids << model.idAt(r);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

// One batch over rows 1..rows, applied at once: every changeStep-th row from `round` changed (new
// states and names), ten new rows, and with removeStep > 0 every removeStep-th row from removeFrom
// removed.
void applyBatch(ResourceModel &model, int round, qint64 rows, qint64 changeStep, qint64 removeFrom, qint64 removeStep)
{
    QList<QJsonObject> batch;
    for (qint64 id = round; id <= rows; id += changeStep)
        batch << generated(id, round);
    for (qint64 id = rows + round * 10; id < rows + round * 10 + 10; ++id)
        batch << generated(id, round);
    model.upsert(batch);
    QList<qint64> removed;
    for (qint64 id = removeFrom; removeStep > 0 && id <= rows; id += removeStep)
        removed << id;
    model.remove(removed);
    model.flush();
}

// Whether the proxy's rows are in name order (column 1), case-insensitively; `why` names a pair out of order.
bool inNameOrder(const QAbstractItemModel &proxy, Qt::SortOrder order, QString *why)
{
    for (int r = 1; r < proxy.rowCount(); ++r) {
        const QString a = proxy.index(r - 1, 1).data(ResourceModel::SortRole).toString();
        const QString b = proxy.index(r, 1).data(ResourceModel::SortRole).toString();
        const int c = a.compare(b, Qt::CaseInsensitive);
        if (order == Qt::AscendingOrder ? c > 0 : c < 0) {
            *why = a + QLatin1String(" before ") + b;
            return false;
        }
    }
    return true;
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

namespace {

QList<QJsonObject> generatedRows(qint64 count, int salt)
{
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= count; ++id)
        rows << generated(id, salt);
    return rows;
}

// The proxy's rows in its order.
QList<qint64> orderedIds(const QAbstractItemModel &proxy)
{
    return proxyIds(proxy);
}

} // namespace

void tst_FilterProxyModel::asyncTypingEqualsBruteForce_data()
{
    typingEqualsBruteForce_data();
    QTest::newRow("provider by name") << "-state:failed provider:acm";
}

void tst_FilterProxyModel::asyncTypingEqualsBruteForce()
{
    QFETCH(QString, query);
    Fixture f;
    f.proxy.setAsyncThreshold(0); // every filter and sort on the worker
    f.model.replaceAll(generatedRows(400, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    QVERIFY(f.proxy.isFiltering());
    QTRY_COMPARE(published.count(), 1);
    QVERIFY(!f.proxy.isFiltering());
    QString lastGood;
    auto key = [&](const QString &text) {
        if (f.proxy.setQuery(text))
            lastGood = text;
    };
    for (qsizetype n = 1; n <= query.size(); ++n) {
        key(query.left(n));
        QTRY_VERIFY(!f.proxy.isFiltering());
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
    for (qsizetype n = query.size() - 1; n >= 0; --n) {
        key(query.left(n));
        QTRY_VERIFY(!f.proxy.isFiltering());
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, lastGood));
    }
}

void tst_FilterProxyModel::fastTypingShowsTheLastQuery()
{
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    f.model.replaceAll(generatedRows(3000, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"), Qt::DescendingOrder);
    // Every keystroke without waiting: older jobs are overtaken and their results dropped.
    const QString query = QStringLiteral("-state:fa dataviz-ac");
    for (qsizetype n = 1; n <= query.size(); ++n)
        f.proxy.setQuery(query.left(n)); // "-" alone is an error: the last good query stays asked for
    QVERIFY(f.proxy.isFiltering());
    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    QTRY_VERIFY(!f.proxy.isFiltering());
    QCOMPARE(published.count(), 1); // only the newest result is shown
    QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
    QCOMPARE(f.proxy.sortColumn(), f.model.kind().fieldIndex(u"name"));
    QString why;
    QVERIFY2(inNameOrder(f.proxy, Qt::DescendingOrder, &why), qPrintable(why));
}

void tst_FilterProxyModel::batchesDuringAsyncFilterAreKept_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<bool>("removals");

    QTest::newRow("changes and inserts") << "state:running,pending acme" << false;
    QTest::newRow("with removals") << "state:running,pending acme" << true;
    QTest::newRow("words only, removals") << "-globex 1" << true;
}

void tst_FilterProxyModel::batchesDuringAsyncFilterAreKept()
{
    QFETCH(QString, query);
    QFETCH(bool, removals);
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    f.model.replaceAll(generatedRows(600, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    QTRY_VERIFY(!f.proxy.isFiltering());
    for (int round = 1; round <= 4; ++round) {
        // A new query goes to the worker; the batch lands before its result can.
        QVERIFY(f.proxy.setQuery(round % 2 ? query : query + QStringLiteral(" ")));
        if (round % 2 == 0)
            QVERIFY(f.proxy.setQuery(query.left(query.size() - 1)));
        QVERIFY(f.proxy.isFiltering());
        applyBatch(f.model, round, 600, 5, round * 3, removals ? 23 : 0);
        QTRY_VERIFY(!f.proxy.isFiltering());
        QTRY_VERIFY(!f.model.hasPendingChanges());
        const QString shown = round % 2 ? query : query.left(query.size() - 1);
        QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, shown));
        QString why;
        QVERIFY2(inNameOrder(f.proxy, Qt::AscendingOrder, &why), qPrintable(why));
    }
}

void tst_FilterProxyModel::asyncSortEqualsStableSort_data()
{
    QTest::addColumn<QString>("key");
    QTest::addColumn<int>("order");

    QTest::newRow("name") << "name" << int(Qt::AscendingOrder);
    QTest::newRow("name descending") << "name" << int(Qt::DescendingOrder);
    QTest::newRow("status") << "status" << int(Qt::AscendingOrder);
    QTest::newRow("created") << "created_at" << int(Qt::AscendingOrder);
    QTest::newRow("provider") << "provider_id" << int(Qt::DescendingOrder);
    QTest::newRow("all null") << "destroy_after" << int(Qt::AscendingOrder);
}

void tst_FilterProxyModel::asyncSortEqualsStableSort()
{
    QFETCH(QString, key);
    QFETCH(int, order);
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    const QList<QJsonObject> objects = generatedRows(700, 3);
    f.model.replaceAll(objects);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const int column = f.model.kind().fieldIndex(key);
    f.proxy.sort(column, Qt::SortOrder(order));
    QTRY_VERIFY(!f.proxy.isFiltering());

    // The reference: objects by id, then a stable sort by the raw value (texts ignoring case,
    // nulls after values); descending reverses the whole comparison, ties by id included.
    QList<QJsonObject> reference = objects;
    std::sort(reference.begin(), reference.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return a.value(QStringLiteral("id")).toInteger() < b.value(QStringLiteral("id")).toInteger();
    });
    const FieldSpec &spec = f.model.kind().fields.at(column);
    auto compare = [&](const QJsonObject &a, const QJsonObject &b) {
        const QVariant x = fieldRawValue(spec.type, jsonValueAt(a, spec.key));
        const QVariant y = fieldRawValue(spec.type, jsonValueAt(b, spec.key));
        if (!x.isValid() || !y.isValid())
            return x.isValid() ? -1 : (y.isValid() ? 1 : 0);
        if (x.userType() == QMetaType::QString)
            return QString::compare(x.toString(), y.toString(), Qt::CaseInsensitive);
        return x.toLongLong() < y.toLongLong() ? -1 : (y.toLongLong() < x.toLongLong() ? 1 : 0);
    };
    if (order == Qt::AscendingOrder) {
        std::stable_sort(reference.begin(), reference.end(), [&](const QJsonObject &a, const QJsonObject &b) { return compare(a, b) < 0; });
    } else {
        // Descending reverses ties by id too: sort by id descending first.
        std::reverse(reference.begin(), reference.end());
        std::stable_sort(reference.begin(), reference.end(), [&](const QJsonObject &a, const QJsonObject &b) { return compare(a, b) > 0; });
    }
    QList<qint64> expected;
    for (const QJsonObject &o : std::as_const(reference))
        expected << o.value(QStringLiteral("id")).toInteger();
    QCOMPARE(orderedIds(f.proxy), expected);
}

void tst_FilterProxyModel::selectionFollowsAsyncResult()
{
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    f.model.replaceAll(generatedRows(500, 0));
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    QTRY_VERIFY(!f.proxy.isFiltering());
    const qint64 id = f.proxy.index(10, 0).data(ResourceModel::IdRole).toLongLong();
    const QString state = f.model.cellText(f.model.rowOfId(id), f.model.kind().fieldIndex(u"status"));
    const QPersistentModelIndex current(f.proxy.index(10, 0));
    QVERIFY(f.proxy.setQuery(QStringLiteral("state:") + state));
    QCOMPARE(current.row(), 10); // nothing changes until the result is published
    QTRY_VERIFY(!f.proxy.isFiltering());
    QVERIFY(current.isValid());
    QCOMPARE(current.data(ResourceModel::IdRole).toLongLong(), id);
    QVERIFY(f.proxy.setQuery(QStringLiteral("-state:") + state));
    QTRY_VERIFY(!f.proxy.isFiltering());
    QVERIFY(!current.isValid());
}

namespace {

// Rows with unique names (not interned, searched byte by byte), short and long (over 32 bytes), a
// few with non-ASCII letters, more rows than one chunk of a worker.
QList<QJsonObject> uniqueNamedRows(qint64 count)
{
    const QStringList suffixes{QString(), QStringLiteral("-eu-west-and-a-long-tail"), QStringLiteral("-ÄRGER"),
                               QStringLiteral("-\u212A"), QStringLiteral("-Globex-Initech")};
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= count; ++id) {
        const QString name = kNames.at(id % kNames.size()) + QLatin1Char('-') + QString::number(id)
            + suffixes.at((id / 3) % suffixes.size());
        rows << instance(id, name, kStates.at((id * 7) % kStates.size()), 7 + (id % 2),
                         QStringLiteral("2026-11-2%1T10:00:00Z").arg(id % 9 + 1));
    }
    return rows;
}

} // namespace

void tst_FilterProxyModel::fullScanOnTwoThreadsEqualsBruteForce_data()
{
    QTest::addColumn<QString>("query");

    QTest::newRow("word in names") << "acme";
    QTest::newRow("word across the dash") << "ME-12";
    QTest::newRow("long tail") << "a-long-tail";
    QTest::newRow("non-ascii word") << "ärger";
    QTest::newRow("kelvin folds to k") << "-k";
    QTest::newRow("digits: ids and names") << "1234";
    QTest::newRow("state and word") << "state:running,stopped globex";
    QTest::newRow("negated word and provider") << "-initech provider:acm";
    QTest::newRow("nothing matches") << "zzz";
}

void tst_FilterProxyModel::fullScanOnTwoThreadsEqualsBruteForce()
{
    QFETCH(QString, query);
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    f.model.replaceAll(uniqueNamedRows(30000));
    f.model.flush(); // a relist this large is encoded on a worker
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    QVERIFY(!f.model.store().isInterned(f.model.kind().fieldIndex(u"name")));
    QVERIFY(f.proxy.setQuery(query));
    QVERIFY(f.proxy.isFiltering());
    QTRY_VERIFY(!f.proxy.isFiltering());
    QCOMPARE(f.proxy.lastTestedRows(), qsizetype(30000));
    QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
}

void tst_FilterProxyModel::helpedJobEqualsJobAlone_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<bool>("narrowing");

    QTest::newRow("every row") << "acme" << false;
    QTest::newRow("every row, terms and words") << "state:running -globex 2" << false;
    QTest::newRow("shown rows only") << "acme-1" << true;
}

void tst_FilterProxyModel::helpedJobEqualsJobAlone()
{
    QFETCH(QString, query);
    QFETCH(bool, narrowing);
    ResourceModel model(*resourceKindByName(u"instances"));
    model.replaceAll(uniqueNamedRows(30000));
    model.flush(); // a relist this large is encoded on a worker
    const Query parsed = parseQuery(query, model.kind()).query;
    std::vector<quint8> base;
    if (narrowing) {
        for (int r = 0; r < model.rowCount(); ++r)
            base.push_back(r % 2 == 1 ? 1 : 0);
    }
    auto makeJob = [&] {
        FilterJob job;
        job.store = model.snapshot();
        job.filter = true;
        job.matcher = RowMatcher(parsed, kNow, {});
        job.base = base;
        return job;
    };
    const FilterResult alone = FilterJob::run(makeJob());
    QVERIFY(!alone.cancelled);
    QCOMPARE(alone.tested, narrowing ? qsizetype(15000) : qsizetype(30000));
    QVERIFY(std::count(alone.accepted.cbegin(), alone.accepted.cend(), quint8(1)) > 0);

    // A helper that runs before the job's thread gets to it tests every row; one on another thread
    // shares them; one after the job finds nothing left. The answers are the same.
    FilterJob first = makeJob();
    first.share()();
    const FilterResult helpedFirst = FilterJob::run(std::move(first));

    QThreadPool pool;
    pool.setMaxThreadCount(1);
    FilterJob parallel = makeJob();
    pool.start(parallel.share());
    const FilterResult helpedAlongside = FilterJob::run(std::move(parallel));

    FilterJob late = makeJob();
    const std::function<void()> lateHelp = late.share();
    const FilterResult helpedLate = FilterJob::run(std::move(late));
    lateHelp();
    pool.waitForDone();

    for (const FilterResult *result : {&helpedFirst, &helpedAlongside, &helpedLate}) {
        QVERIFY(!result->cancelled);
        QCOMPARE(result->tested, alone.tested);
        QVERIFY(result->accepted == alone.accepted);
    }
    QVERIFY(!model.store().hasReaders()); // no helper keeps the snapshot
}

void tst_FilterProxyModel::overtakenJobStopsAndLetsGo()
{
    ResourceModel model(*resourceKindByName(u"instances"));
    model.replaceAll(uniqueNamedRows(30000));
    model.flush(); // a relist this large is encoded on a worker
    auto latest = std::make_shared<std::atomic<quint64>>(2); // a newer keystroke was submitted
    FilterJob job;
    job.generation = 1;
    job.latest = latest;
    job.store = model.snapshot();
    job.filter = true;
    job.matcher = RowMatcher(parseQuery(u"acme", model.kind()).query, kNow, {});
    const std::function<void()> help = job.share();
    const FilterResult result = FilterJob::run(std::move(job));
    QVERIFY(result.cancelled);
    QCOMPARE(result.tested, qsizetype(0)); // stale before its first chunk
    help(); // after the job: touches nothing
    QVERIFY(!model.store().hasReaders());
}

namespace {

// Every relist, filter and sort of f on the workers, starting from `rows` generated rows.
void onWorkers(Fixture &f, int rows)
{
    f.proxy.setAsyncThreshold(0);
    f.model.setAsyncThreshold(0);
    f.model.replaceAll(generatedRows(rows, 0));
    f.model.flush();
}

// What arrives while a relist is on its way: while the model encodes its rows, or once the model
// was reset and the proxy's worker filters and sorts them.
enum class During { Nothing, Batch, Keystroke, NewerRelist, SortClick };

} // namespace

void tst_FilterProxyModel::relistOnWorkersEqualsBruteForce_data()
{
    QTest::addColumn<int>("during");
    QTest::addColumn<bool>("whileEncoding");

    QTest::newRow("relist alone") << int(During::Nothing) << false;
    QTest::newRow("feed batch while encoding") << int(During::Batch) << true;
    QTest::newRow("feed batch while sorting") << int(During::Batch) << false;
    QTest::newRow("keystroke while encoding") << int(During::Keystroke) << true;
    QTest::newRow("keystroke while sorting") << int(During::Keystroke) << false;
    QTest::newRow("newer relist while encoding") << int(During::NewerRelist) << true;
    QTest::newRow("newer relist while sorting") << int(During::NewerRelist) << false;
    QTest::newRow("header click while encoding") << int(During::SortClick) << true;
    QTest::newRow("header click while sorting") << int(During::SortClick) << false;
}

void tst_FilterProxyModel::relistOnWorkersEqualsBruteForce()
{
    QFETCH(int, during);
    QFETCH(bool, whileEncoding);
    Fixture f;
    onWorkers(f, 600);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    const int name = f.model.kind().fieldIndex(u"name");
    f.proxy.sort(name, Qt::DescendingOrder);
    QString query = QStringLiteral("state:running,pending acme");
    QVERIFY(f.proxy.setQuery(query));
    QTRY_VERIFY(!f.proxy.isFiltering());
    const QList<qint64> shownBefore = proxyIds(f.proxy);
    QVERIFY(!shownBefore.isEmpty());

    Qt::SortOrder order = Qt::DescendingOrder;
    int expectedRows = 900;
    auto arrive = [&] {
        switch (During(during)) {
        case During::Nothing:
            break;
        case During::Batch: { // queued: applied once the relist's rows are in
            QList<QJsonObject> batch;
            for (qint64 id = 3; id <= 900; id += 7)
                batch << generated(id, 5);
            batch << generated(950, 5);
            f.model.upsert(batch);
            f.model.remove({4, 11, 400});
            expectedRows = 900 + 1 - 3;
            break;
        }
        case During::Keystroke:
            query = QStringLiteral("-state:failed dataviz");
            QVERIFY(f.proxy.setQuery(query));
            break;
        case During::NewerRelist:
            f.model.replaceAll(generatedRows(700, 2));
            expectedRows = 700;
            break;
        case During::SortClick:
            order = Qt::AscendingOrder;
            f.proxy.sort(name, order);
            break;
        }
    };

    QSignalSpy reset(&f.proxy, &QAbstractItemModel::modelReset);
    QSignalSpy filtering(&f.proxy, &FilterProxyModel::filteringChanged);
    bool filteringAfterReset = false;
    bool firstReset = true;
    QList<qint64> shownAfterReset;
    QList<qint64> shownBeforeReset; // a keystroke's result may have been shown meanwhile
    connect(&f.model, &QAbstractItemModel::modelAboutToBeReset, &f.proxy, [&] {
        if (firstReset)
            shownBeforeReset = proxyIds(f.proxy);
    });
    connect(&f.model, &QAbstractItemModel::modelReset, &f.proxy, [&] {
        // The proxy handled the reset first (it connected first).
        if (!std::exchange(firstReset, false))
            return; // the newer relist's own reset
        filteringAfterReset = f.proxy.isFiltering();
        shownAfterReset = proxyIds(f.proxy);
        if (!whileEncoding)
            arrive();
    });
    f.model.replaceAll(generatedRows(900, 1));
    // Returned at once: the rows shown are the previous ones, as they were.
    QVERIFY(f.model.isReplacing());
    QCOMPARE(reset.count(), 0);
    QCOMPARE(proxyIds(f.proxy), shownBefore);
    if (whileEncoding)
        arrive();
    QTRY_VERIFY(reset.count() > 0);
    // Until the worker answers, the rows shown before stay (found again by id), marked as filtering.
    QVERIFY(filteringAfterReset);
    QVERIFY(!shownBeforeReset.isEmpty());
    QVERIFY(!filtering.isEmpty());
    QCOMPARE(filtering.first().at(0).toBool(), true);
    QCOMPARE(shownAfterReset, shownBeforeReset); // every id is in the relist too
    QTRY_VERIFY(!f.proxy.isFiltering() && !f.model.isReplacing() && !f.model.hasPendingChanges());
    // A view's "filtering…" went on with the relist and off with its answer, never twice in a row.
    QCOMPARE(filtering.last().at(0).toBool(), false);
    for (qsizetype i = 1; i < filtering.size(); ++i)
        QVERIFY(filtering.at(i).at(0).toBool() != filtering.at(i - 1).at(0).toBool());
    QCOMPARE(f.model.rowCount(), expectedRows);
    QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
    QCOMPARE(f.proxy.rowCount() == 0, bruteForce(f.model, query).isEmpty());
    QString why;
    QVERIFY2(inNameOrder(f.proxy, order, &why), qPrintable(why));
}

void tst_FilterProxyModel::scatteredRemovalsEqualBruteForce()
{
    Fixture f;
    onWorkers(f, 3000);
    QAbstractItemModelTester tester(&f.proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    f.proxy.sort(f.model.kind().fieldIndex(u"name"));
    const QString query = QStringLiteral("-state:failed acme");
    QVERIFY(f.proxy.setQuery(query));
    QTRY_VERIFY(!f.proxy.isFiltering());
    QSignalSpy reset(&f.proxy, &QAbstractItemModel::modelReset);
    QList<qint64> vanished;
    for (qint64 id = 2; id <= 3000; id += 5)
        vanished << id;
    f.model.remove(vanished);
    QList<QJsonObject> changed;
    for (qint64 id = 1; id <= 3000; id += 11) {
        if (id % 5 != 2) // a vanished row's newer version would bring it back
            changed << generated(id, 4);
    }
    f.model.upsert(changed);
    QTRY_VERIFY(!f.model.isReplacing() && !f.model.hasPendingChanges() && !f.proxy.isFiltering());
    QCOMPARE(reset.count(), 1); // one reset, not a removal per gap
    QCOMPARE(f.model.rowCount(), 3000 - int(vanished.size()));
    QCOMPARE(sortedIds(f.proxy), bruteForce(f.model, query));
    QString why;
    QVERIFY2(inNameOrder(f.proxy, Qt::AscendingOrder, &why), qPrintable(why));
}

QTEST_GUILESS_MAIN(tst_FilterProxyModel)
#include "tst_filterproxymodel.moc"
