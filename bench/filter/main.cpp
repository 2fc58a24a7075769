// opsdeck-bench-filter: GUI-thread time per keystroke of the console's query filter on synthetic rows.
#include "core/query.h"
#include "core/resourcekind.h"
#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDateTime>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QHeaderView>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTableView>
#include <QThreadPool>
#include <QTimer>
#include <QWindow>

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

using namespace OpsDeck;

namespace {

double percentile(std::vector<double> values, double p)
{
    std::sort(values.begin(), values.end());
    const size_t i = std::min(values.size() - 1, size_t(p * double(values.size() - 1) + 0.5));
    return values[i];
}

QList<QJsonObject> syntheticInstances(int count)
{
    // Names are unique (as in the demo data) so no per-text memo can help the free-text search.
    const QStringList teams{QStringLiteral("dataviz"), QStringLiteral("billing"), QStringLiteral("crm"),
                            QStringLiteral("search"), QStringLiteral("payroll"), QStringLiteral("wiki"),
                            QStringLiteral("ledger"), QStringLiteral("Analytics")};
    const QStringList customers{QStringLiteral("acme"), QStringLiteral("globex"), QStringLiteral("initech"),
                                QStringLiteral("umbrella"), QStringLiteral("hooli"), QStringLiteral("vandelay")};
    const QStringList states{QStringLiteral("RUNNING"), QStringLiteral("RUNNING"), QStringLiteral("RUNNING"),
                             QStringLiteral("STOPPED"), QStringLiteral("FAILED"), QStringLiteral("PENDING"),
                             QStringLiteral("PROVISIONING"), QStringLiteral("DESTROYED")};
    const QStringList owners{QStringLiteral("alice"), QStringLiteral("bob"), QStringLiteral("carol"),
                             QStringLiteral("dave")};
    QRandomGenerator random(42);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<QJsonObject> objects;
    objects.reserve(count);
    for (int i = 0; i < count; ++i) {
        const QString created = QDateTime::fromMSecsSinceEpoch(now - random.bounded(30 * 86400) * 1000LL, Qt::UTC)
                                    .toString(Qt::ISODateWithMs);
        objects << QJsonObject{
            {QStringLiteral("id"), i + 1},
            {QStringLiteral("name"), QStringLiteral("%1-%2-%3").arg(teams.at(random.bounded(int(teams.size()))),
                                                                   customers.at(random.bounded(int(customers.size()))))
                                         .arg(i, 6, 10, QLatin1Char('0'))},
            {QStringLiteral("organization_id"), 1 + random.bounded(20)},
            {QStringLiteral("provider_id"), 1 + random.bounded(10)},
            {QStringLiteral("application"), teams.at(random.bounded(int(teams.size())))},
            {QStringLiteral("owner"), owners.at(random.bounded(int(owners.size())))},
            {QStringLiteral("status"), states.at(random.bounded(int(states.size())))},
            {QStringLiteral("version"), 1 + random.bounded(5)},
            {QStringLiteral("created_at"), created},
            {QStringLiteral("updated_at"), created}};
    }
    return objects;
}

// What the previous proxy ran per row: the generic matcher over QVariant values and copied texts.
class GenericRow final : public QueryRow
{
public:
    GenericRow(const ResourceModel &model, int row)
        : m_model(model), m_row(row)
    {
    }
    QVariant value(int field) const override { return m_model.rawValue(m_row, field); }
    QString text(int field) const override { return m_model.cellText(m_row, field); }

private:
    const ResourceModel &m_model;
    int m_row;
};

struct Typing
{
    std::vector<double> ms;        // the GUI thread's time per keystroke
    std::vector<double> publishMs; // until the result is shown (the same when computed at once)
    std::vector<double> cpuMs;     // the GUI thread's CPU time per keystroke
    std::vector<double> filterMs;  // the GUI thread's time without painting: parse, filter or submit, publish
    qsizetype tested = 0;
};

// The GUI thread's share of an asynchronous result: applying it, publishing it, repainting; in
// wall time and in the thread's CPU time (which other processes on a busy machine do not stretch).
double g_publishGuiMs = 0;
double g_publishCpuMs = 0;
double g_publishModelMs = 0; // without the repaint

double threadCpuMs()
{
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// Runs the event loop until the proxy shows the result of what it was asked last; the time from
// `clock`'s start until then, repaint included.
double untilPublished(FilterProxyModel *proxy, QTableView *view, const QElapsedTimer &clock)
{
    g_publishGuiMs = 0;
    g_publishCpuMs = 0;
    g_publishModelMs = 0;
    if (proxy->isFiltering()) {
        QEventLoop loop;
        QElapsedTimer publishing;
        double cpuStart = 0;
        // The result arrives as a queued signal; the layout change is the first thing it does.
        QObject::connect(proxy, &QAbstractItemModel::layoutAboutToBeChanged, &loop, [&] {
            if (!publishing.isValid()) {
                publishing.start();
                cpuStart = threadCpuMs();
            }
        });
        QObject::connect(proxy, &FilterProxyModel::filterPublished, &loop, [&] {
            g_publishModelMs = publishing.isValid() ? publishing.nsecsElapsed() / 1e6 : 0;
            loop.quit();
        });
        loop.exec();
        view->viewport()->repaint();
        g_publishGuiMs = publishing.isValid() ? publishing.nsecsElapsed() / 1e6 : 0;
        g_publishCpuMs = publishing.isValid() ? threadCpuMs() - cpuStart : 0;
    }
    return clock.nsecsElapsed() / 1e6;
}

// The console benchmark's reading (uordblks) misses blocks malloc maps directly (hblkhd): big
// vectors in a process whose mmap threshold was never raised. Both are printed.
std::pair<size_t, size_t> heapInUse()
{
    malloc_trim(0);
    const struct mallinfo2 info = mallinfo2();
    return {info.uordblks, info.uordblks + info.hblkhd};
}

Typing typeAndErase(FilterProxyModel *proxy, QTableView *view, const QStringList &queries, bool verbose)
{
    Typing result;
    const auto key = [&](const QString &text) {
        QElapsedTimer clock;
        clock.start();
        const double cpuStart = threadCpuMs();
        proxy->setQuery(text);
        const double setQueryMs = clock.nsecsElapsed() / 1e6;
        view->viewport()->repaint(); // the table shows the previous rows or already the new ones
        const double submitMs = clock.nsecsElapsed() / 1e6;
        const double submitCpuMs = threadCpuMs() - cpuStart;
        result.publishMs.push_back(untilPublished(proxy, view, clock));
        result.ms.push_back(submitMs + g_publishGuiMs);
        result.cpuMs.push_back(submitCpuMs + g_publishCpuMs);
        result.filterMs.push_back(setQueryMs + g_publishModelMs);
        if (verbose)
            std::printf("  '%s' GUI %.2f ms (CPU %.2f ms; setQuery %.2f, repaint %.2f, publish %.2f, repaint %.2f), shown "
                        "after %.2f ms, %lld rows tested, %d shown\n",
                        qPrintable(text), result.ms.back(), result.cpuMs.back(), setQueryMs, submitMs - setQueryMs,
                        g_publishModelMs, g_publishGuiMs - g_publishModelMs, result.publishMs.back(),
                        qlonglong(proxy->lastTestedRows()), proxy->rowCount());
        result.tested += proxy->lastTestedRows();
    };
    for (const QString &query : queries) {
        for (qsizetype n = 1; n <= query.size(); ++n)
            key(query.left(n));
        for (qsizetype n = query.size() - 1; n >= 0; --n)
            key(query.left(n));
    }
    return result;
}

// The worker's share of a keystroke that must test every row: FilterJob::run over a snapshot, run
// here as the proxy's worker runs it, alone or with a helper thread as the proxy runs it; the median
// of `runs` in wall and in this thread's CPU time.
void printWorkerScan(const ResourceModel &model, const QString &text, int runs, bool helped, const ReferenceLookup &lookup)
{
    const QueryParse parsed = parseQuery(text, model.kind());
    QThreadPool helpers;
    helpers.setMaxThreadCount(1);
    std::vector<double> wall;
    std::vector<double> cpu;
    int accepted = 0;
    for (int i = 0; i < runs; ++i) {
        FilterJob job;
        job.store = model.snapshot();
        job.filter = true;
        // As the proxy submits it: referenced names looked up here, none on the worker.
        job.matcher = RowMatcher(parsed.query, QDateTime::currentMSecsSinceEpoch(), lookup);
        job.matcher.resolveReferences([&store = *job.store](int field) {
            QSet<qint64> ids;
            for (int r = 0; r < store.rowCount(); ++r) {
                if (const RowStore::Cell id = store.cell(r, field); id != RowStore::kNull)
                    ids.insert(qint64(id));
            }
            return ids;
        });
        job.matcher.setReferenceLookup({});
        const std::function<void()> help = helped ? job.share() : std::function<void()>();
        QElapsedTimer clock;
        clock.start();
        const double cpuStart = threadCpuMs();
        if (help)
            helpers.start(help);
        const FilterResult result = FilterJob::run(std::move(job));
        cpu.push_back(threadCpuMs() - cpuStart);
        wall.push_back(clock.nsecsElapsed() / 1e6);
        accepted = int(std::count(result.accepted.cbegin(), result.accepted.cend(), quint8(1)));
    }
    std::printf("worker, every row tested, '%s', %s: p50 %.2f ms (this thread's CPU p50 %.2f ms), min %.2f ms; %d rows "
                "match\n",
                qPrintable(text), helped ? "with a helper thread" : "one thread", percentile(wall, 0.5), percentile(cpu, 0.5),
                *std::min_element(wall.begin(), wall.end()), accepted);
    std::fflush(stdout);
}

void printTyping(const char *what, const Typing &t, int rows)
{
    std::printf("%s: %d keystrokes, GUI-thread time without painting (parse + filter or submit + publish) p50 %.2f ms, "
                "p99 %.2f ms, max %.2f ms; with the repaints p50 %.2f ms, "
                "p99 %.2f ms, max %.2f ms (its CPU time p50 %.2f ms, p99 %.2f ms); until shown p50 %.2f ms, p99 %.2f ms, "
                "max %.2f ms; %.0f rows tested per keystroke on average of %d\n",
                what, int(t.ms.size()), percentile(t.filterMs, 0.5), percentile(t.filterMs, 0.99),
                *std::max_element(t.filterMs.begin(), t.filterMs.end()), percentile(t.ms, 0.5), percentile(t.ms, 0.99),
                *std::max_element(t.ms.begin(), t.ms.end()), percentile(t.cpuMs, 0.5), percentile(t.cpuMs, 0.99),
                percentile(t.publishMs, 0.5), percentile(t.publishMs, 0.99),
                *std::max_element(t.publishMs.begin(), t.publishMs.end()), double(t.tested) / double(t.ms.size()), rows);
    std::fflush(stdout);
}

// The GUI thread while `start` runs and the event loop turns until `done`: the longest time the
// loop did not turn (a 1 ms heartbeat: applying, publishing and repainting included) in wall time
// and in the GUI thread's CPU time (which other processes on a busy machine do not stretch), its
// CPU time in all, and the time until done.
struct Turns
{
    double startMs = 0;
    double longestMs = 0;
    double longestCpuMs = 0;
    double cpuMs = 0;
    double doneMs = 0;
};

Turns measureTurns(const std::function<void()> &start, const std::function<bool()> &done)
{
    Turns turns;
    QEventLoop loop;
    QElapsedTimer beat;
    const double cpuStart = threadCpuMs();
    double beatCpu = cpuStart;
    auto tick = [&] {
        turns.longestMs = std::max(turns.longestMs, beat.nsecsElapsed() / 1e6);
        beat.restart();
        const double cpu = threadCpuMs();
        turns.longestCpuMs = std::max(turns.longestCpuMs, cpu - beatCpu);
        beatCpu = cpu;
    };
    QTimer heartbeat;
    heartbeat.setTimerType(Qt::PreciseTimer);
    heartbeat.setInterval(1);
    QObject::connect(&heartbeat, &QTimer::timeout, &loop, [&] {
        tick();
        if (done())
            loop.quit();
    });
    QElapsedTimer clock;
    clock.start();
    beat.start();
    heartbeat.start();
    start();
    turns.startMs = clock.nsecsElapsed() / 1e6;
    loop.exec();
    tick();
    turns.doneMs = clock.nsecsElapsed() / 1e6;
    turns.cpuMs = threadCpuMs() - cpuStart;
    return turns;
}

// A relist of every row (what a relist of a kind amounts to), with the table sorted and filtered:
// how long replaceAll() keeps the GUI thread, the turns until the new rows are shown filtered and
// sorted (measureTurns()); the median of `runs`.
void printRelist(ResourceModel *model, FilterProxyModel *proxy, int rows, int runs)
{
    QList<QJsonObject> objects = syntheticInstances(rows);
    std::vector<double> callMs;
    std::vector<double> stallMs;
    std::vector<double> stallCpuMs;
    std::vector<double> cpuMs;
    std::vector<double> shownMs;
    for (int run = 0; run < runs; ++run) {
        for (QJsonObject &object : objects) // a newer version of every row, as after a gap in the feed
            object.insert(QStringLiteral("version"), object.value(QStringLiteral("version")).toInteger() + 1);
        bool reset = false;
        QObject context;
        QObject::connect(model, &QAbstractItemModel::modelReset, &context, [&reset] { reset = true; });
        const Turns turns = measureTurns([&] { model->replaceAll(objects); },
                                         [&] { return reset && !proxy->isFiltering(); });
        callMs.push_back(turns.startMs);
        stallMs.push_back(turns.longestMs);
        stallCpuMs.push_back(turns.longestCpuMs);
        cpuMs.push_back(turns.cpuMs);
        shownMs.push_back(turns.doneMs);
        if (model->rowCount() != rows)
            qFatal("the relist did not load every row");
    }
    std::printf("relist of %d rows ('%s', sorted by name), median of %d: replaceAll() %.1f ms on the GUI thread, "
                "longest event-loop stall %.1f ms (max %.1f), in GUI-thread CPU %.1f ms (max %.1f); GUI-thread CPU in "
                "all %.1f ms; shown after %.1f ms; %d rows shown\n",
                rows, qPrintable(proxy->queryText()), runs, percentile(callMs, 0.5), percentile(stallMs, 0.5),
                *std::max_element(stallMs.begin(), stallMs.end()), percentile(stallCpuMs, 0.5),
                *std::max_element(stallCpuMs.begin(), stallCpuMs.end()), percentile(cpuMs, 0.5), percentile(shownMs, 0.5),
                proxy->rowCount());
    std::fflush(stdout);
}

// What ends a relist after a gap in the feed: the rows the server no longer lists, scattered over
// the table, removed in one batch (measureTurns()).
void printVanished(ResourceModel *model, FilterProxyModel *proxy, int vanished)
{
    const int rows = model->rowCount();
    QList<qint64> ids;
    for (int i = 0; i < vanished; ++i)
        ids << model->idAt(int(qint64(i) * rows / vanished));
    const Turns turns = measureTurns([&] { model->remove(ids); }, [&] {
        return !model->hasPendingChanges() && !model->isReplacing() && !proxy->isFiltering();
    });
    if (model->rowCount() != rows - vanished)
        qFatal("the vanished rows were not removed");
    std::printf("%d vanished rows removed from %d: longest event-loop stall %.1f ms (in GUI-thread CPU %.1f ms), done "
                "after %.1f ms\n",
                vanished, rows, turns.longestMs, turns.longestCpuMs, turns.doneMs);
    std::fflush(stdout);
}

// A first load as the sync engine lists a kind into an empty model: one page of `pageSize` rows per
// event-loop turn, with the table sorted and filtered (measureTurns()).
void printListing(const QList<QJsonObject> &objects, const QString &query, int nameColumn, int pageSize)
{
    ResourceModel model(*resourceKindByName(u"instances"));
    FilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setQuery(query);
    proxy.sort(nameColumn);
    QTableView view;
    view.setModel(&proxy);
    view.resize(1200, 800);
    view.show();
    qsizetype next = 0;
    QTimer pages;
    pages.setInterval(0);
    QObject::connect(&pages, &QTimer::timeout, &model, [&] {
        model.upsert(objects.mid(next, pageSize));
        next += pageSize;
        if (next >= objects.size())
            pages.stop();
    });
    const Turns turns = measureTurns([&] { pages.start(); }, [&] {
        return next >= objects.size() && !model.hasPendingChanges() && !proxy.isFiltering();
    });
    std::printf("first load of %d rows in pages of %d ('%s', sorted by name): longest event-loop stall %.1f ms (in "
                "GUI-thread CPU %.1f ms); GUI-thread CPU in all %.0f ms; done after %.0f ms\n",
                int(objects.size()), pageSize, qPrintable(query), turns.longestMs, turns.longestCpuMs, turns.cpuMs,
                turns.doneMs);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Filter keystroke latency of the console's instances table."));
    parser.addHelpOption();
    parser.addOption({QStringLiteral("rows"), QStringLiteral("Synthetic instances (default 250000)."), QStringLiteral("N"),
                      QStringLiteral("250000")});
    parser.addOption({QStringLiteral("verbose"), QStringLiteral("Print every keystroke's time.")});
    parser.addOption({QStringLiteral("worker-only"), QStringLiteral("Only time the worker's scans (no window, no typing).")});
    parser.addOption({QStringLiteral("relist-only"), QStringLiteral("Only time relists of every row (sorted, filtered).")});
    parser.process(app);
    const bool verbose = parser.isSet(QStringLiteral("verbose"));
    const int rows = std::max(1, parser.value(QStringLiteral("rows")).toInt());

    const ResourceKind &kind = *resourceKindByName(u"instances");
    // Providers 1-10 are named as another model would name them ("north-3", "south-4", ...).
    const ReferenceLookup providerNames = [](const QString &kindName, qint64 id) {
        return kindName == QLatin1String("providers")
            ? QStringLiteral("%1-%2").arg(id % 2 ? QStringLiteral("north") : QStringLiteral("south")).arg(id)
            : QString();
    };
    {
        // As the console benchmark's (e): heap around replaceAll() + flush(), objects kept alive.
        const QList<QJsonObject> objects = syntheticInstances(rows);
        const auto before = heapInUse();
        auto measured = std::make_unique<ResourceModel>(kind);
        measured->replaceAll(objects);
        measured->flush();
        const auto after = heapInUse();
        const double n = measured->rowCount();
        std::printf("model memory: %.0f bytes/row by mallinfo2 uordblks + hblkhd (uordblks alone %.0f; the model's own "
                    "count %.0f)\n",
                    double(after.second - before.second) / n, double(after.first - before.first) / n,
                    double(measured->memoryUsage()) / n);
    }
    ResourceModel model(kind);
    model.replaceAll(syntheticInstances(rows));
    model.flush(); // the rows are in before the table is shown
    const QStringList scanned{QStringLiteral("dataviz-ac"), QStringLiteral("acme"), QStringLiteral("-status:failed a"), QStringLiteral("s"),
                              QStringLiteral("state:stopped")};
    if (parser.isSet(QStringLiteral("worker-only"))) {
        for (const QString &text : scanned) {
            printWorkerScan(model, text, 15, false, providerNames);
            printWorkerScan(model, text, 15, true, providerNames);
        }
        return 0;
    }
    FilterProxyModel proxy;
    proxy.setSourceModel(&model);
    proxy.setReferenceLookup(providerNames);
    QTableView view;
    view.setSortingEnabled(true);
    view.setModel(&proxy);
    view.resize(1200, 800);
    view.show();
    {
        // Paint events reach a window only once it is exposed, which takes a turn of the event
        // loop: without it every repaint() below would paint nothing.
        QEventLoop loop;
        QTimer::singleShot(200, &loop, &QEventLoop::quit);
        loop.exec();
        if (!view.windowHandle() || !view.windowHandle()->isExposed())
            qFatal("the table's window was not exposed");
    }

    const int nameColumn = kind.fieldIndex(u"name");
    QElapsedTimer clock;
    clock.start();
    view.sortByColumn(nameColumn, Qt::AscendingOrder);
    view.viewport()->repaint();
    double sortGuiMs = clock.nsecsElapsed() / 1e6;
    const double sortShownMs = untilPublished(&proxy, &view, clock);
    sortGuiMs += g_publishGuiMs;
    std::printf("rows %d\n", model.rowCount());
    {
        // What every keystroke pays at least: one repaint of the table as it is.
        std::vector<double> paints;
        for (int i = 0; i < 20; ++i) {
            QElapsedTimer paint;
            paint.start();
            view.viewport()->update();
            view.viewport()->repaint();
            paints.push_back(paint.nsecsElapsed() / 1e6);
        }
        std::printf("one repaint of the unchanged table: p50 %.2f ms\n", percentile(paints, 0.5));
    }
    std::printf("sort by name (once, on a header click): GUI thread %.1f ms, shown after %.1f ms\n", sortGuiMs, sortShownMs);

    proxy.setQuery(QStringLiteral("state:running"));
    untilPublished(&proxy, &view, clock);
    printRelist(&model, &proxy, rows, 5);
    printVanished(&model, &proxy, 1000);
    printListing(syntheticInstances(rows), QStringLiteral("state:running"), nameColumn, 1000);
    if (parser.isSet(QStringLiteral("relist-only")))
        return 0;
    proxy.setQuery(QString());
    untilPublished(&proxy, &view, clock);

    // The per-row matcher the previous proxy ran for every row on every keystroke (no sort, no view).
    for (const QString &text : {QStringLiteral("state:running"), QStringLiteral("dataviz-ac")}) {
        const QueryParse parsed = parseQuery(text, kind);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QueryTextMemo memo;
        clock.restart();
        int accepted = 0;
        for (int r = 0; r < model.rowCount(); ++r)
            accepted += matches(parsed.query, GenericRow(model, r), now, &memo) ? 1 : 0;
        std::printf("previous per-row matcher, every row, '%s': %.1f ms (%d rows match)\n", qPrintable(text),
                    clock.nsecsElapsed() / 1e6, accepted);
    }

    for (const QString &text : scanned) {
        printWorkerScan(model, text, 15, false, providerNames);
        printWorkerScan(model, text, 15, true, providerNames);
    }

    const Typing stateAndWords = typeAndErase(&proxy, &view, {QStringLiteral("state:running dataviz-ac")}, verbose);
    printTyping("typing and erasing 'state:running dataviz-ac', sorted by name", stateAndWords, rows);
    const Typing wordsOnly = typeAndErase(&proxy, &view, {QStringLiteral("dataviz-ac"), QStringLiteral("-state:failed hooli")}, verbose);
    printTyping("typing and erasing 'dataviz-ac', '-state:failed hooli', sorted by name", wordsOnly, rows);
    const Typing console = typeAndErase(&proxy, &view,
                                        {QStringLiteral("status:running acme"), QStringLiteral("-status:failed provider:north"),
                                         QStringLiteral("status:stopped age>1h")},
                                        verbose);
    printTyping("typing and erasing the console benchmark's (c) queries, sorted by name", console, rows);
    view.sortByColumn(-1, Qt::AscendingOrder);
    untilPublished(&proxy, &view, clock);
    const Typing unsorted = typeAndErase(&proxy, &view, {QStringLiteral("state:running dataviz-ac")}, verbose);
    printTyping("typing and erasing 'state:running dataviz-ac', unsorted", unsorted, rows);
    view.sortByColumn(nameColumn, Qt::AscendingOrder);
    untilPublished(&proxy, &view, clock);

    // A flush of changed rows while a filter is active: what the proxy adds to a feed batch.
    proxy.setQuery(QStringLiteral("state:running"));
    untilPublished(&proxy, &view, clock);
    QList<QJsonObject> changed;
    for (int r = 0; r < std::min(rows, int(ResourceModel::kRowsPerTurn)); ++r) {
        QJsonObject object = model.objectAt(r * std::max(1, rows / int(ResourceModel::kRowsPerTurn)));
        object.insert(QStringLiteral("version"), object.value(QStringLiteral("version")).toInteger() + 10);
        object.insert(QStringLiteral("status"), QStringLiteral("STOPPED"));
        changed << object;
    }
    model.upsert(changed);
    clock.restart();
    model.flush();
    view.viewport()->repaint();
    std::printf("one flush of %d changed rows with 'state:running' active, sorted by name: %.1f ms (model + proxy + repaint)\n",
                int(changed.size()), clock.nsecsElapsed() / 1e6);
    return 0;
}
