// Tests for the filter job's full scans: on two threads as on one and as brute force, overtaken jobs stop.
#include "models/filterjob.h"

#include "models/filterproxymodel.h"
#include "proxyfixture.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QTest>
#include <QThreadPool>

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_FilterJob final : public QObject
{
    Q_OBJECT

private slots:
    void fullScanOnTwoThreadsEqualsBruteForce_data();
    void fullScanOnTwoThreadsEqualsBruteForce();
    void helpedJobEqualsJobAlone_data();
    void helpedJobEqualsJobAlone();
    void overtakenJobStopsAndLetsGo();
};

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

void tst_FilterJob::fullScanOnTwoThreadsEqualsBruteForce_data()
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

void tst_FilterJob::fullScanOnTwoThreadsEqualsBruteForce()
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

void tst_FilterJob::helpedJobEqualsJobAlone_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<bool>("narrowing");

    QTest::newRow("every row") << "acme" << false;
    QTest::newRow("every row, terms and words") << "state:running -globex 2" << false;
    QTest::newRow("shown rows only") << "acme-1" << true;
}

void tst_FilterJob::helpedJobEqualsJobAlone()
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

void tst_FilterJob::overtakenJobStopsAndLetsGo()
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

QTEST_GUILESS_MAIN(tst_FilterJob)
#include "tst_filterjob.moc"
