// opsdeck-bench-console: initial sync vs curl, first paint with a full vs an empty cache, filter keystroke latency, event-loop stalls under a burst of change events, and model memory per row.
#include "core/resourcekind.h"
#include "models/apiclient.h"
#include "models/cache.h"
#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"
#include "server/controlplane.h"
#include "server/demoseeder.h"
#include "server/feed/changefeed.h"
#include "server/outbox/outboxservice.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"
#include "server/storage/transaction.h"
#include "ui/consoleconnection.h"
#include "ui/mainwindow.h"
#include "ui/resourceview.h"

#include <QAbstractItemView>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QHeaderView>
#include <QTableView>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QUrlQuery>

#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

using namespace OpsDeck;

namespace {

// Every wait of the benchmark ends by itself: a stuck step aborts the run instead of hanging.
void waitUntil(const std::function<bool()> &done, int timeoutMs, const char *what)
{
    if (done())
        return;
    QEventLoop loop;
    QTimer poll;
    poll.setInterval(5);
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done())
            loop.quit();
    });
    QTimer deadline;
    deadline.setSingleShot(true);
    QObject::connect(&deadline, &QTimer::timeout, &loop, [&] { loop.quit(); });
    poll.start();
    deadline.start(timeoutMs);
    loop.exec();
    if (!done())
        qFatal("timed out after %d ms waiting for %s", timeoutMs, what);
}

// The control plane in its own thread, as the console's embedded server runs it, so the GUI
// thread's figures do not include the server's work.
class ServerThread
{
public:
    explicit ServerThread(const QString &databaseUrl)
    {
        m_anchor->moveToThread(&m_thread);
        m_thread.start();
        ServerOptions options;
        options.databaseUrl = databaseUrl;
        options.deliveryWorker = false; // the seeded deliveries are rows to list, not work to do
        options.feedRetention = 1000000;
        onServer([&] {
            m_plane = new ControlPlane(options);
            Problem problem;
            if (!m_plane->start(&problem))
                qFatal("server did not start: %s", qPrintable(problem.detail));
            m_token = m_plane->createToken(QStringLiteral("operator"), {}, QStringLiteral("bench"));
            m_base = m_plane->baseUrl();
        });
    }
    ~ServerThread()
    {
        onServer([&] { delete m_plane; });
        m_anchor->deleteLater();
        m_thread.quit();
        m_thread.wait();
    }
    ServerThread(const ServerThread &) = delete;
    ServerThread &operator=(const ServerThread &) = delete;

    void onServer(const std::function<void()> &work)
    {
        QMetaObject::invokeMethod(m_anchor, work, Qt::BlockingQueuedConnection);
    }
    void onServerLater(std::function<void()> work)
    {
        QMetaObject::invokeMethod(m_anchor, std::move(work), Qt::QueuedConnection);
    }
    ControlPlane *plane() const { return m_plane; } // only to be used on the server thread
    // CPU time the server thread has used so far.
    double cpuSeconds()
    {
        timespec ts{};
        onServer([&ts] { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); });
        return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
    }
    QUrl baseUrl() const { return m_base; }
    QString token() const { return m_token; }

private:
    QThread m_thread;
    QObject *m_anchor = new QObject; // lives in m_thread; deleted there
    ControlPlane *m_plane = nullptr; // owned; created and deleted on m_thread
    QUrl m_base;
    QString m_token;
};

void seedDatabase(const QString &url, int instances, int deliveries)
{
    Database db(url);
    Problem problem;
    if (!db.open(&problem) || !db.migrate(&problem) || !OutboxService::prepare(db, &problem))
        qFatal("database: %s", qPrintable(problem.detail));
    DemoSeeder seeder(db);
    if (!seeder.seed(instances, &problem))
        qFatal("seed: %s", qPrintable(problem.detail));
    // Bindings do not exist yet: the second kind is callback deliveries, one per instance.
    const QString now = nowTimestamp();
    db.begin();
    QSqlQuery q(db.connection());
    q.prepare(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                             " VALUES (1, 'http://127.0.0.1:9/hook', 'ACTIVE', 1, ?, ?)"));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec())
        qFatal("endpoint: %s", qPrintable(Database::sqlProblem(q).detail));
    QSqlQuery d(db.connection());
    d.prepare(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version)"
        " SELECT 'msg_bench_' || CAST(id AS TEXT), 'instance.status_changed', id, provider_id,"
        " (SELECT MIN(id) FROM endpoints), 'DELIVERED', '{\"type\":\"instance.status_changed\"}', 1, updated_at,"
        " created_at, updated_at, 1 FROM instances WHERE id <= ?"));
    d.addBindValue(deliveries);
    if (!d.exec())
        qFatal("deliveries: %s", qPrintable(Database::sqlProblem(d).detail));
    db.commit();
    db.close();
}

// The list pages a full sync reads, walked once with their real cursors.
QStringList pageUrls(ApiClient &client, const QStringList &kinds, int pageSize)
{
    QStringList urls;
    for (const QString &kind : kinds) {
        QString cursor;
        for (;;) {
            QString path = QStringLiteral("/%1?limit=%2").arg(kind).arg(pageSize);
            if (!cursor.isEmpty())
                path += QStringLiteral("&cursor=") + QString::fromLatin1(QUrl::toPercentEncoding(cursor));
            urls << client.urlFor(path).toString(QUrl::FullyEncoded);
            ApiReply *reply = client.get(path);
            std::optional<ApiResult> result;
            QObject::connect(reply, &ApiReply::finished, reply, [&](const ApiResult &r) { result = r; });
            waitUntil([&] { return result.has_value(); }, 60000, "a list page");
            if (!result->ok())
                qFatal("listing %s failed: %d", qPrintable(kind), result->status);
            const QJsonObject page = result->object();
            cursor = page.value(QLatin1String("next")).toString();
            if (cursor.isEmpty() || page.value(QLatin1String("items")).toArray().isEmpty())
                break;
        }
    }
    return urls;
}

// curl fetching the same pages one after the other on one keep-alive connection.
double curlSeconds(const QStringList &urls, const QString &token, const QString &dir)
{
    QFile config(dir + QStringLiteral("/curl.conf"));
    if (!config.open(QIODevice::WriteOnly | QIODevice::Truncate))
        qFatal("cannot write the curl config");
    config.write(QStringLiteral("header = \"Authorization: Bearer %1\"\nsilent\nfail\n").arg(token).toUtf8());
    for (const QString &url : urls)
        config.write(QStringLiteral("url = \"%1\"\noutput = \"/dev/null\"\n").arg(url).toUtf8());
    config.close();
    QProcess curl;
    QElapsedTimer clock;
    clock.start();
    curl.start(QStringLiteral("curl"), {QStringLiteral("-K"), config.fileName()});
    if (!curl.waitForFinished(300000) || curl.exitCode() != 0)
        qFatal("curl failed: %s", curl.readAllStandardError().constData());
    return clock.nsecsElapsed() / 1e9;
}

double cpuSeconds(clockid_t clock)
{
    timespec ts{};
    clock_gettime(clock, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

struct SyncRun
{
    double seconds = 0;
    double consoleCpu = 0; // every thread of this process but the server's
    double serverCpu = 0;  // the server thread
};

// One initial sync (list every page of kinds, then watch) from start() to synced() with every
// row applied to the models.
SyncRun syncRun(ServerThread &server, ApiClient &client, const QStringList &kinds, Cache *cache, int instances,
                int deliveries)
{
    SyncEngine engine(&client, cache);
    engine.setKinds(kinds);
    engine.setPageSize(1000);
    bool synced = false;
    QObject::connect(&engine, &SyncEngine::synced, &engine, [&] { synced = true; });
    const double serverBefore = server.cpuSeconds();
    const double processBefore = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    QElapsedTimer clock;
    clock.start();
    engine.start();
    waitUntil([&] { return synced; }, 600000, "the initial sync");
    for (ResourceModel *model : engine.models())
        model->flush();
    SyncRun run;
    run.seconds = clock.nsecsElapsed() / 1e9;
    const double process = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - processBefore;
    run.serverCpu = server.cpuSeconds() - serverBefore;
    run.consoleCpu = process - run.serverCpu;
    if (engine.model(QStringLiteral("instances"))->rowCount() != instances
        || engine.model(QStringLiteral("deliveries"))->rowCount() != deliveries)
        qFatal("the sync did not load every row");
    engine.stop();
    return run;
}

double percentile(std::vector<double> values, double p)
{
    std::sort(values.begin(), values.end());
    const auto at = std::min(values.size() - 1, size_t(p * double(values.size() - 1) + 0.5));
    return values.at(at);
}

// Time from MainWindow's construction to the first paint of the instances table showing rows.
struct PaintProbe final : QObject
{
    QTableView *table = nullptr; // not owned
    bool painted = false;
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (!painted && table && watched == table->viewport() && event->type() == QEvent::Paint
            && table->model() && table->model()->rowCount() > 0)
            painted = true;
        return false;
    }
};

struct FirstPaint
{
    double ms = 0;
    int rowsAtPaint = 0;
    double cacheOpenedMs = -1; // the cache file was opened and checked
    double firstRowsMs = -1;   // the instances model first had rows
};

FirstPaint firstPaint(const ConsoleConnection &connection, std::unique_ptr<MainWindow> *keep)
{
    PaintProbe probe;
    qApp->installEventFilter(&probe);
    QElapsedTimer clock;
    clock.start();
    auto window = std::make_unique<MainWindow>();
    probe.table = window->resourceView(QStringLiteral("instances"))->table();
    window->connectTo(connection);
    FirstPaint result;
    QMetaObject::Connection opened;
    if (auto *cache = window->findChild<Cache *>()) {
        opened = QObject::connect(cache, &Cache::opened, window.get(), [&result, &clock] {
            if (result.cacheOpenedMs < 0)
                result.cacheOpenedMs = clock.nsecsElapsed() / 1e6;
        });
    }
    ResourceModel *rows = window->resourceModel(QStringLiteral("instances"));
    const QMetaObject::Connection applied = QObject::connect(
        rows, &ResourceModel::batchApplied, window.get(), [&result, &clock](int inserted, int, int) {
        if (result.firstRowsMs < 0 && inserted > 0)
            result.firstRowsMs = clock.nsecsElapsed() / 1e6;
    });
    window->showView(QStringLiteral("instances"));
    window->resize(1400, 900);
    window->show();
    waitUntil([&] { return probe.painted; }, 120000, "the first painted rows");
    result.ms = clock.nsecsElapsed() / 1e6;
    result.rowsAtPaint = probe.table->model()->rowCount();
    qApp->removeEventFilter(&probe);
    QObject::disconnect(opened); // both lambdas refer to this frame
    QObject::disconnect(applied);
    *keep = std::move(window);
    return result;
}

SyncEngine *syncEngineOf(MainWindow &window)
{
    auto *engine = window.findChild<SyncEngine *>(QStringLiteral("syncEngine"));
    if (!engine)
        qFatal("the main window has no sync engine");
    return engine;
}

// Measures the longest gap between turns of the GUI event loop with a 1 ms heartbeat.
class StallMeter final : public QObject
{
    Q_DISABLE_COPY_MOVE(StallMeter)

public:
    explicit StallMeter(QObject *parent = nullptr)
        : QObject(parent)
    {
        m_timer.setTimerType(Qt::PreciseTimer);
        m_timer.setInterval(1);
        connect(&m_timer, &QTimer::timeout, this, [this] {
            const double ms = m_clock.nsecsElapsed() / 1e6;
            m_longest = std::max(m_longest, ms);
            m_gaps.push_back(ms);
            m_clock.restart();
        });
    }
    void start()
    {
        m_longest = 0;
        m_gaps.clear();
        m_clock.start();
        m_timer.start();
    }
    void stop() { m_timer.stop(); }
    double longestMs() const { return m_longest; }
    double p99Ms() const { return m_gaps.empty() ? 0 : percentile(m_gaps, 0.99); }

private:
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_longest = 0;
    std::vector<double> m_gaps;
};

// Until the proxy shows what it was last asked for: a filter or sort order computed on a worker
// is published later (filterPublished()).
void waitForFilter(QAbstractItemModel *model)
{
    auto *proxy = qobject_cast<FilterProxyModel *>(model);
    if (!proxy || !proxy->isFiltering())
        return;
    QEventLoop loop;
    QObject::connect(proxy, &FilterProxyModel::filterPublished, &loop, [proxy, &loop] {
        if (!proxy->isFiltering())
            loop.quit();
    });
    QTimer deadline;
    deadline.setSingleShot(true);
    QObject::connect(&deadline, &QTimer::timeout, &loop, &QEventLoop::quit);
    deadline.start(60000);
    loop.exec();
    if (proxy->isFiltering())
        qFatal("the filter was not published within 60 s");
}

struct Keystrokes
{
    std::vector<double> shown; // from the keystroke until its result is painted
    std::vector<double> gui;   // the longest the GUI thread was busy for it in one go
};

// Each keystroke costs the GUI thread twice at most: applying it (parse, the filter when it is
// answered at once, the repaint) and, when a worker computed the result, publishing it (the
// layout change and the repaint that shows it). In between the GUI thread is free.
Keystrokes typeQueries(ResourceView *view)
{
    const QStringList typed{QStringLiteral("status:running acme"), QStringLiteral("-status:failed provider:north"),
                            QStringLiteral("status:stopped age>1h")};
    Keystrokes result;
    QAbstractItemModel *model = view->table()->model();
    QElapsedTimer publishing;
    QObject::connect(model, &QAbstractItemModel::layoutAboutToBeChanged, view, [&publishing] { publishing.start(); });
    const auto key = [&](const QString &text) {
        QElapsedTimer clock;
        clock.start();
        publishing.invalidate();
        view->setQueryText(text);
        view->table()->viewport()->repaint();
        double gui = clock.nsecsElapsed() / 1e6;
        auto *proxy = qobject_cast<FilterProxyModel *>(model);
        if (proxy && proxy->isFiltering()) {
            publishing.invalidate();
            waitForFilter(model);
            view->table()->viewport()->repaint();
            if (publishing.isValid())
                gui = std::max(gui, publishing.nsecsElapsed() / 1e6);
        }
        result.shown.push_back(clock.nsecsElapsed() / 1e6);
        result.gui.push_back(gui);
    };
    for (const QString &query : typed) {
        for (qsizetype n = 1; n <= query.size(); ++n)
            key(query.left(n));
        for (qsizetype n = query.size() - 1; n >= 0; --n) // and erased again
            key(query.left(n));
    }
    QObject::disconnect(model, &QAbstractItemModel::layoutAboutToBeChanged, view, nullptr);
    return result;
}

// What the dashboard does on each refresh: count every row's state through data().
double dashboardCountMs(const QList<QAbstractItemModel *> &models, const QList<int> &columns)
{
    QElapsedTimer clock;
    clock.start();
    qsizetype distinct = 0;
    for (qsizetype m = 0; m < models.size(); ++m) {
        QHash<QString, int> counts;
        for (int r = 0; r < models.at(m)->rowCount(); ++r)
            ++counts[models.at(m)->index(r, columns.at(m)).data().toString()];
        distinct += counts.size();
    }
    if (distinct == 0)
        qFatal("no states counted");
    return clock.nsecsElapsed() / 1e6;
}

size_t heapInUse()
{
    malloc_trim(0);
    return mallinfo2().uordblks;
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckBench"));
    QCoreApplication::setApplicationName(QStringLiteral("opsdeck-bench-console"));
    QStandardPaths::setTestModeEnabled(true); // window layout and settings stay out of the user's own

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Console benchmark on loopback: initial sync / curl, first paint with a full / an empty cache,\n"
        "filter keystroke latency, longest event-loop stall during a burst of change events, memory per row."));
    parser.addHelpOption();
    parser.addOptions({
        {QStringLiteral("instances"), QStringLiteral("Seeded instances (default 250000)."), QStringLiteral("N"), QStringLiteral("250000")},
        {QStringLiteral("deliveries"), QStringLiteral("Seeded deliveries, the second kind (default 50000)."), QStringLiteral("N"), QStringLiteral("50000")},
        {QStringLiteral("events"), QStringLiteral("Change events in the burst (default 10000)."), QStringLiteral("N"), QStringLiteral("10000")},
        {QStringLiteral("database"), QStringLiteral("Database URL (default: a SQLite file in a temporary directory)."), QStringLiteral("URL")},
        {QStringLiteral("sync-runs"), QStringLiteral("Runs of (a), each SyncEngine then curl (default 3)."), QStringLiteral("N"), QStringLiteral("3")},
        {QStringLiteral("sync-only"), QStringLiteral("Measure (a) only.")},
    });
    parser.process(app);
    const int instances = parser.value(QStringLiteral("instances")).toInt();
    const int deliveries = std::min(instances, parser.value(QStringLiteral("deliveries")).toInt());
    const int events = std::min(instances, parser.value(QStringLiteral("events")).toInt());
    const int syncRuns = std::max(1, parser.value(QStringLiteral("sync-runs")).toInt());

    QTemporaryDir dir;
    const QString url = parser.isSet(QStringLiteral("database"))
        ? parser.value(QStringLiteral("database"))
        : QStringLiteral("sqlite://") + dir.filePath(QStringLiteral("server.db"));
    QElapsedTimer clock;
    clock.start();
    seedDatabase(url, instances, deliveries);
    std::printf("seeded %d instances + %d deliveries in %.1f s (%s)\n", instances, deliveries, clock.nsecsElapsed() / 1e9,
                qPrintable(url.section(QLatin1Char(':'), 0, 0)));
    std::fflush(stdout);

    ServerThread server(url);

    // (a) Initial sync: SyncEngine listing every page into the models, next to curl reading them,
    // alternately, so both see the same machine; the ratio is the median of the runs' ratios.
    {
        const QStringList kinds{QStringLiteral("instances"), QStringLiteral("deliveries")};
        ApiClient client;
        client.setBaseUrl(server.baseUrl());
        client.setToken(server.token());
        const QStringList urls = pageUrls(client, kinds, 1000);
        curlSeconds(urls, server.token(), dir.path()); // warms the server's page cache for both
        std::vector<double> engineRuns;
        std::vector<double> curlRuns;
        std::vector<double> ratios;
        std::vector<double> consoleCpu;
        std::vector<double> serverCpu;
        for (int run = 0; run < syncRuns; ++run) {
            const SyncRun sync = syncRun(server, client, kinds, nullptr, instances, deliveries);
            engineRuns.push_back(sync.seconds);
            consoleCpu.push_back(sync.consoleCpu);
            serverCpu.push_back(sync.serverCpu);
            curlRuns.push_back(curlSeconds(urls, server.token(), dir.path()));
            ratios.push_back(engineRuns.back() / curlRuns.back());
            std::printf("    run %d: SyncEngine %.2f s (CPU: console %.2f s, server thread %.2f s), curl %.2f s -> %.2fx\n",
                        run + 1, sync.seconds, sync.consoleCpu, sync.serverCpu, curlRuns.back(), ratios.back());
            std::fflush(stdout);
        }
        std::printf("(a) initial sync of %d pages (%d rows), median of %d runs: SyncEngine %.2f s, curl %.2f s -> %.2fx"
                    " (goal <= 1.5)\n",
                    int(urls.size()), instances + deliveries, syncRuns, percentile(engineRuns, 0.5),
                    percentile(curlRuns, 0.5), percentile(ratios, 0.5));
        std::printf("    CPU per page: console %.2f ms, server thread %.2f ms\n",
                    percentile(consoleCpu, 0.5) * 1000 / double(urls.size()),
                    percentile(serverCpu, 0.5) * 1000 / double(urls.size()));
        // What the console itself does: the same sync writing every row to a fresh cache file as
        // well (the cache's worker shares the machine's cores with the decode and the server).
        {
            QElapsedTimer written;
            written.start();
            SyncRun withCache;
            {
                Cache cache(dir.filePath(QStringLiteral("sync-cache.sqlite")));
                withCache = syncRun(server, client, kinds, &cache, instances, deliveries);
            } // ~Cache() returns once every queued write is in the file
            const double writtenSeconds = written.nsecsElapsed() / 1e9;
            std::printf("    with a cache file: SyncEngine %.2f s (console CPU %.2f s) -> %.2fx the median curl;"
                        " every row in the file after %.2f s\n",
                        withCache.seconds, withCache.consoleCpu, withCache.seconds / percentile(curlRuns, 0.5),
                        writtenSeconds);
        }
        std::fflush(stdout);
    }
    if (parser.isSet(QStringLiteral("sync-only")))
        return 0;

    // (b) First painted rows with an empty cache, then again with the cache that run filled.
    ConsoleConnection connection;
    connection.baseUrl = server.baseUrl();
    connection.token = server.token();
    connection.profile = QStringLiteral("bench");
    connection.cachePath = dir.filePath(QStringLiteral("cache.sqlite"));
    std::unique_ptr<MainWindow> window;
    const FirstPaint cold = firstPaint(connection, &window);
    {
        SyncEngine *engine = syncEngineOf(*window);
        waitUntil([&] { return engine->status()->isLive(); }, 900000, "the console's first full sync");
    }
    window.reset(); // the cache finishes writing before it closes
    const FirstPaint warm = firstPaint(connection, &window);
    std::printf("(b) first painted table: empty cache %.0f ms (%d rows), full cache %.0f ms (%d rows) -> %.2fx (goal <= 1.5)\n",
                cold.ms, cold.rowsAtPaint, warm.ms, warm.rowsAtPaint, warm.ms / cold.ms);
    std::printf("    empty cache: opened at %.0f ms, first rows at %.0f ms; full cache: opened at %.0f ms, first rows at %.0f ms\n",
                cold.cacheOpenedMs, cold.firstRowsMs, warm.cacheOpenedMs, warm.firstRowsMs);
    std::fflush(stdout);

    ResourceModel *instancesModel = window->resourceModel(QStringLiteral("instances"));
    waitUntil([&] { return instancesModel->rowCount() == instances && syncEngineOf(*window)->status()->isLive(); },
              900000, "every cached row and a live feed");

    // (c) Typing queries into the instances view, without the view's deliberate typing debounce:
    // how long the GUI thread is busy in one go for a keystroke (applying it and repainting, then,
    // when a worker computed the result, publishing and repainting it), and how long until the
    // result is painted. Then the same keystrokes with the table unsorted, to show what the sort
    // costs.
    {
        ResourceView *view = window->resourceView(QStringLiteral("instances"));
        const Keystrokes sorted = typeQueries(view);
        std::printf("(c) filter keystroke on %d rows: %d keystrokes, GUI thread busy p50 %.1f ms, p99 %.1f ms, max %.1f ms "
                    "(goal p99 < 16 ms)\n",
                    instancesModel->rowCount(), int(sorted.gui.size()), percentile(sorted.gui, 0.5),
                    percentile(sorted.gui, 0.99), *std::max_element(sorted.gui.begin(), sorted.gui.end()));
        std::printf("    until the result is painted: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", percentile(sorted.shown, 0.5),
                    percentile(sorted.shown, 0.99), *std::max_element(sorted.shown.begin(), sorted.shown.end()));
        const int column = view->table()->horizontalHeader()->sortIndicatorSection();
        const Qt::SortOrder order = view->table()->horizontalHeader()->sortIndicatorOrder();
        view->table()->model()->sort(-1);
        waitForFilter(view->table()->model());
        const Keystrokes unsorted = typeQueries(view);
        view->table()->sortByColumn(column, order);
        waitForFilter(view->table()->model());
        std::printf("    the same keystrokes with the table unsorted: GUI thread busy p50 %.1f ms, p99 %.1f ms; "
                    "until painted p50 %.1f ms, p99 %.1f ms\n",
                    percentile(unsorted.gui, 0.5), percentile(unsorted.gui, 0.99), percentile(unsorted.shown, 0.5),
                    percentile(unsorted.shown, 0.99));
        std::fflush(stdout);
    }

    // (d) A burst of change events (new versions of existing instances, committed 1000 per
    // transaction back to back) arriving over the live feed; a 1 ms heartbeat measures the GUI
    // thread's longest gap between event-loop turns.
    {
        QList<QJsonObject> changed;
        changed.reserve(events);
        const QString now = nowTimestamp();
        for (int row = 0; row < events; ++row) {
            QJsonObject object = instancesModel->objectAt(row * (instances / events));
            object.insert(QLatin1String("version"), object.value(QLatin1String("version")).toInteger() + 1);
            object.insert(QLatin1String("updated_at"), now);
            changed << object;
        }
        SyncEngine *engine = syncEngineOf(*window);
        int applied = 0;
        const QMetaObject::Connection counting = QObject::connect(engine, &SyncEngine::eventsApplied, engine,
                                                                  [&applied](int count, qint64) { applied += count; });
        StallMeter meter;
        meter.start();
        clock.restart();
        server.onServerLater([&server, changed] {
            ControlPlane *plane = server.plane();
            Journal journal(plane->database());
            for (qsizetype from = 0; from < changed.size(); from += 1000) {
                Transaction tx(plane->database());
                for (qsizetype i = from; i < std::min(changed.size(), from + 1000); ++i) {
                    const QJsonObject &o = changed.at(i);
                    Problem problem;
                    if (!journal.event(QStringLiteral("instance"), o.value(QLatin1String("id")).toInteger(),
                                                         o.value(QLatin1String("version")).toInteger(),
                                                         QStringLiteral("updated"), o, Audience{}, &problem))
                        qFatal("event: %s", qPrintable(problem.detail));
                }
                if (!tx.commit())
                    qFatal("event commit failed");
                plane->feed().notifyAppended();
            }
        });
        waitUntil([&] { return applied >= events && !instancesModel->hasPendingChanges(); }, 300000, "the burst to be applied");
        const double burstSeconds = clock.nsecsElapsed() / 1e9;
        meter.stop();
        QObject::disconnect(counting); // `applied` ends with this block
        std::printf("(d) %d change events applied in %.2f s: longest event-loop stall %.1f ms, p99 gap %.1f ms (goal < 50 ms)\n",
                    events, burstSeconds, meter.longestMs(), meter.p99Ms());
        // Two candidates for the longest turn, timed alone: the dashboard's state count over
        // every row, and one flush of kRowsPerTurn changed rows.
        ResourceModel *deliveriesModel = window->resourceModel(QStringLiteral("deliveries"));
        const double countMs = dashboardCountMs(
            {instancesModel, deliveriesModel},
            {instancesModel->kind().fieldIndex(instancesModel->kind().stateField),
             deliveriesModel->kind().fieldIndex(deliveriesModel->kind().stateField)});
        QList<QJsonObject> turn;
        for (qsizetype i = 0; i < std::min(changed.size(), ResourceModel::kRowsPerTurn); ++i) {
            QJsonObject object = changed.at(i);
            object.insert(QLatin1String("version"), object.value(QLatin1String("version")).toInteger() + 1);
            turn << object;
        }
        QElapsedTimer flushClock;
        flushClock.start();
        instancesModel->upsert(turn);
        instancesModel->flush();
        std::printf("    alone: the dashboard's state count over %d rows %.1f ms; one flush of %d changed rows %.1f ms\n",
                    instancesModel->rowCount() + deliveriesModel->rowCount(), countMs, int(turn.size()),
                    flushClock.nsecsElapsed() / 1e6);
        std::fflush(stdout);
    }

    // (e) Heap held by a ResourceModel for the instances, the objects themselves kept alive
    // across both readings so only the model's own rows count.
    {
        QList<QJsonObject> objects;
        objects.reserve(instancesModel->rowCount());
        for (int row = 0; row < instancesModel->rowCount(); ++row)
            objects << instancesModel->objectAt(row);
        const size_t before = heapInUse();
        auto model = std::make_unique<ResourceModel>(*resourceKindByName(u"instances"));
        model->replaceAll(objects);
        model->flush();
        const size_t after = heapInUse();
        std::printf("(e) ResourceModel with %d rows: %.0f bytes/row by mallinfo2 (model's own count %.0f bytes/row) (goal <= 300)\n",
                    model->rowCount(), double(after - before) / model->rowCount(),
                    double(model->memoryUsage()) / model->rowCount());
        std::fflush(stdout);
    }

    window.reset();
    return 0;
}
