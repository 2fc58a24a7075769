// Tests for the proxy's filters, sorts and relists on its worker: batches meanwhile, stable sorts, selection.
#include "models/filterproxymodel.h"

#include "core/resourcekind.h"
#include "proxyfixture.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

#include <algorithm>
#include <utility>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_FilterProxyWorker final : public QObject
{
    Q_OBJECT

private slots:
    void batchesDuringAsyncFilterAreKept_data();
    void batchesDuringAsyncFilterAreKept();
    void asyncSortEqualsStableSort_data();
    void asyncSortEqualsStableSort();
    void selectionFollowsAsyncResult();
    void relistOnWorkersEqualsBruteForce_data();
    void relistOnWorkersEqualsBruteForce();
    void scatteredRemovalsEqualBruteForce();
};

namespace {

// The proxy's rows in its order.
QList<qint64> orderedIds(const QAbstractItemModel &proxy)
{
    return proxyIds(proxy);
}

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

void tst_FilterProxyWorker::batchesDuringAsyncFilterAreKept_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<bool>("removals");

    QTest::newRow("changes and inserts") << "state:running,pending acme" << false;
    QTest::newRow("with removals") << "state:running,pending acme" << true;
    QTest::newRow("words only, removals") << "-globex 1" << true;
}

void tst_FilterProxyWorker::batchesDuringAsyncFilterAreKept()
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

void tst_FilterProxyWorker::asyncSortEqualsStableSort_data()
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

void tst_FilterProxyWorker::asyncSortEqualsStableSort()
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

void tst_FilterProxyWorker::selectionFollowsAsyncResult()
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

void tst_FilterProxyWorker::relistOnWorkersEqualsBruteForce_data()
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

void tst_FilterProxyWorker::relistOnWorkersEqualsBruteForce()
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

void tst_FilterProxyWorker::scatteredRemovalsEqualBruteForce()
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

QTEST_GUILESS_MAIN(tst_FilterProxyWorker)
#include "tst_filterproxyworker.moc"
