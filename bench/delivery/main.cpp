// opsdeck-bench-delivery: callback deliveries/s and commit-to-first-attempt latency, next to the demo provider's own accept rate.
#include "core/webhooksignature.h"
#include "server/controlplane.h"
#include "server/outbox/outboxservice.h"
#include "server/outbox/outboxstore.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"
#include "server/storage/walcheckpointer.h"

#include "apiprobe.h"
#include "cpuclocks.h"
#include "throughput.h"
#include "idleupkeep.h"
#include "providers.h"
#include "rundatabase.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QThread>
#include <QTimer>
#include <QUrl>
#include <QUuid>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>

using namespace OpsDeck;
using namespace OpsDeck::Bench;

namespace {

struct Endpoint
{
    QString url;
    bool hanging = false;
};

QString g_providerBinary;
QString g_secret;
QTemporaryDir *g_work = nullptr;
int g_concurrency = 0;         // 0: the server's default
int g_endpointConcurrency = 0; // 0: the server's default
int g_recordPacing = -1;        // ms; -1: the server's default
int g_stallAfter = -1;          // ms; -1: the server's default; at or above the delivery timeout only timeouts demote
int g_replicas = 1;             // --replicas: servers on the one database (PostgreSQL)
bool g_pollSending = false;    // --poll-sending: the sending thread on Qt's poll()-based loop
int g_history = 0;             // delivered notifications each instance already has before a run
QString g_postgres;            // --database: a PostgreSQL cluster's URL; empty for SQLite files in g_work
QString g_dropIndex;           // --drop-index: an index dropped after the schema is created
const std::vector<std::unique_ptr<Provider>> *g_providers = nullptr; // the provider processes of the throughput runs

void wait(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

// A provider process with the run's secret, logging what it receives when `withLog`.
std::unique_ptr<Provider> startProvider(bool withLog)
{
    return Bench::startProvider(g_providerBinary, g_secret,
                                withLog ? g_work->filePath(QUuid::createUuid().toString(QUuid::Id128) + QStringLiteral(".jsonl"))
                                        : QString());
}

QByteArray sampleBody(qint64 instance)
{
    return QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("instance.status_changed")},
                                     {QStringLiteral("instance_id"), instance},
                                     {QStringLiteral("status"), QStringLiteral("STOPPED")},
                                     {QStringLiteral("previous_status"), QStringLiteral("RUNNING")},
                                     {QStringLiteral("version"), 2},
                                     {QStringLiteral("changed_at"), nowTimestamp()},
                                     {QStringLiteral("organization_id"), 1}})
        .toJson(QJsonDocument::Compact);
}

// Organization, provider, the endpoints, one RUNNING registered instance per delivery and (when
// `deliveries`) one PENDING status notification each, spread round-robin over the endpoints.
// With --history N each instance first gets N DELIVERED notifications, older than its PENDING
// one and interleaved across instances as a long-lived installation's would be.
QList<qint64> seed(const QString &url, const QList<Endpoint> &endpoints, int count, bool deliveries)
{
    Database db(url);
    Problem problem;
    if (!db.open(&problem) || !db.migrate(&problem) || !OutboxService::prepare(db, &problem))
        qFatal("%s", qPrintable(problem.detail));
    if (!g_dropIndex.isEmpty() && !db.exec(QStringLiteral("DROP INDEX IF EXISTS ") + g_dropIndex, &problem))
        qFatal("%s", qPrintable(problem.detail));
    const QString now = nowTimestamp();
    db.begin();
    QSqlQuery q(db.connection());
    q.exec(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at) VALUES ('bench', 'AVAILABLE', 1, '%1', '%1')").arg(now));
    q.exec(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                          " VALUES ('receiver', 1, '[\"app\"]', 1, '%1', '%1')").arg(now));
    for (const Endpoint &e : endpoints) {
        QSqlQuery ins(db.connection());
        ins.prepare(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at) VALUES (1, ?, 'ACTIVE', 1, ?, ?)"));
        ins.addBindValue(e.url);
        ins.addBindValue(now);
        ins.addBindValue(now);
        ins.exec();
    }
    QSqlQuery inst(db.connection());
    inst.prepare(QStringLiteral(
        "INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at, updated_at,"
        " status_changed_at, callback_url, callback_signing, secret) VALUES (?, 1, 1, 'app', 'owner', 'RUNNING', 1, ?, ?, ?, ?,"
        " 'standard-webhooks', ?) RETURNING id"));
    QList<qint64> ids;
    for (int i = 0; i < count; ++i) {
        const int e = i % int(endpoints.size());
        inst.addBindValue(QStringLiteral("i%1").arg(i));
        inst.addBindValue(now);
        inst.addBindValue(now);
        inst.addBindValue(now);
        inst.addBindValue(endpoints.at(e).url);
        inst.addBindValue(g_secret);
        if (!inst.exec() || !inst.next())
            qFatal("seeding failed");
        ids.append(inst.value(0).toLongLong());
        inst.finish();
    }
    if (deliveries && g_history > 0) {
        // One statement for all of it: round k of every instance, then round k + 1.
        QSqlQuery past(db.connection());
        past.prepare(QStringLiteral(
            "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < ?)"
            " INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
            " last_status, created_at, updated_at, version)"
            " SELECT 'msg_h' || i.id || '_' || n.k, 'instance.status_changed', i.id, 1, (i.id - ?) % ? + 1, 'DELIVERED', ?, 1,"
            " 200, ?, ?, 2 FROM n, instances i WHERE i.id BETWEEN ? AND ? ORDER BY n.k, i.id"));
        past.addBindValue(g_history);
        past.addBindValue(ids.value(0));
        past.addBindValue(int(endpoints.size()));
        past.addBindValue(QString::fromUtf8(sampleBody(ids.value(0))));
        past.addBindValue(now);
        past.addBindValue(now);
        past.addBindValue(ids.value(0));
        past.addBindValue(ids.value(ids.size() - 1));
        if (!past.exec())
            qFatal("seeding the history failed");
    }
    QSqlQuery del(db.connection());
    del.prepare(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts, next_attempt_at,"
        " created_at, updated_at, version) VALUES (?, 'instance.status_changed', ?, 1, ?, 'PENDING', ?, 0, ?, ?, ?, 1)"));
    for (int i = 0; deliveries && i < count; ++i) {
        del.addBindValue(QStringLiteral("msg_") + QUuid::createUuid().toString(QUuid::Id128));
        del.addBindValue(ids.at(i));
        del.addBindValue(i % int(endpoints.size()) + 1);
        del.addBindValue(QString::fromUtf8(sampleBody(ids.at(i))));
        del.addBindValue(now);
        del.addBindValue(now);
        del.addBindValue(now);
        del.exec();
    }
    db.commit();
    // A long-lived installation's planner has statistics; a database seeded a moment ago has none.
    if (db.backend() == Database::Backend::Postgres && !db.exec(QStringLiteral("ANALYZE"), &problem))
        qFatal("%s", qPrintable(problem.detail));
    return ids;
}

qint64 scalar(Database &db, const QString &sql)
{
    QSqlQuery q(db.connection());
    return q.exec(sql) && q.next() ? q.value(0).toLongLong() : -1;
}

struct StoreRun
{
    double cpuPerDelivery = 0;
    double backendCpuPerDelivery = -1; // PostgreSQL only: the database backend's CPU
    qint64 updates = -1; // PostgreSQL only: updates of deliveries rows during the run
    qint64 heapOnly = -1; // and how many of them were heap-only (wrote no index entry)
};

// The outbox store's work alone, in this thread: claims of 256 and their attempts recorded as
// delivered in groups of 32, the way the worker drives it, without sending anything. The CPU
// per delivery of this thread is the store thread's share of a delivery, which the machine's
// load moves far less than the end-to-end runs.
StoreRun storeRun(const QString &name, int endpointCount, int count)
{
    const RunDatabase database(name, g_postgres, g_work->path());
    const QString &url = database.url();
    QList<Endpoint> endpoints;
    for (int e = 0; e < endpointCount; ++e)
        endpoints.append(Endpoint{QStringLiteral("http://127.0.0.1:9/e%1").arg(e), false});
    seed(url, endpoints, count, true);
    const auto updateCounts = [&url] {
        Database db(url);
        db.open();
        return std::pair{scalar(db, QStringLiteral("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'")),
                         scalar(db, QStringLiteral("SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'"))};
    };
    const bool postgres = url.startsWith(QLatin1String("postgres"));
    const auto before = postgres ? updateCounts() : std::pair<qint64, qint64>{};
    ServerOptions options;
    options.databaseUrl = url;
    // On SQLite the log is copied beside the store as in the server (ControlPlane).
    std::optional<WalCheckpointer> checkpointer;
    Problem problem;
    if (!postgres) {
        checkpointer.emplace(url, std::chrono::milliseconds(100));
        if (!checkpointer->start(&problem))
            qFatal("%s", qPrintable(problem.detail));
    }
    // Claimed as a worker claims once every endpoint has answered well: one row each for any other.
    EndpointFilter proven;
    proven.oneEachExcept.emplace();
    {
        Database db(url);
        db.open();
        QSqlQuery q(db.connection());
        if (!q.exec(QStringLiteral("SELECT id FROM endpoints")))
            qFatal("%s", qPrintable(q.lastError().text()));
        while (q.next())
            proven.oneEachExcept->append(q.value(0).toLongLong());
    }
    OutboxStore store(options, QStringLiteral("bench-store"));
    if (!store.open(&problem))
        qFatal("%s", qPrintable(problem.detail));
    QObject context;
    QEventLoop loop;
    int recorded = 0;
    std::optional<Database> probe;
    qint64 backendAtStart = 0;
    if (postgres) {
        probe.emplace(url);
        probe->open();
        backendAtStart = backendCpuMicros(*probe);
    }
    const qint64 cpuAtStart = threadCpuMicros();
    std::function<void()> claimNext = [&] {
        const QDateTime now = QDateTime::currentDateTimeUtc();
        store.claim(now, now.addSecs(60), 256, proven, OutboxStore::ClaimMode::Round, &context, [&, now](const QList<DeliveryTarget> &targets, bool, const Problem &p) {
            if (!p.isNull())
                qFatal("%s", qPrintable(p.detail));
            if (targets.isEmpty()) {
                loop.quit();
                return;
            }
            for (qsizetype first = 0; first < targets.size(); first += 32) {
                QList<AttemptRecord> records;
                for (qsizetype i = first; i < std::min<qsizetype>(first + 32, targets.size()); ++i) {
                    AttemptRecord r;
                    r.target = targets.at(i);
                    r.attempt.at = now;
                    r.attempt.requestHeaders = {{"webhook-id", r.target.webhookId.toUtf8()}};
                    r.attempt.requestBody = r.target.body;
                    r.attempt.status = 200;
                    r.attempt.latencyMs = 1;
                    r.outcome.verdict = AttemptOutcome::Verdict::Delivered;
                    records.append(r);
                }
                store.record(records, &context, [&](const QList<AttemptRecord> &done, const Problem &p) {
                    if (!p.isNull())
                        qFatal("%s", qPrintable(p.detail));
                    recorded += int(done.size());
                });
            }
            claimNext();
        });
    };
    claimNext();
    loop.exec();
    const qint64 cpu = threadCpuMicros() - cpuAtStart;
    const qint64 backendCpu = postgres ? backendCpuMicros(*probe) - backendAtStart : 0;
    probe.reset();
    store.close();
    if (recorded != count)
        qFatal("the store recorded %d of %d deliveries", recorded, count);
    StoreRun run;
    run.cpuPerDelivery = double(cpu) / count;
    if (postgres) {
        // A backend reports its counts to the statistics when it exits, a moment after the store
        // closed its connection: each delivery is updated at least twice (claimed, recorded).
        QElapsedTimer clock;
        clock.start();
        auto after = updateCounts();
        while (after.first - before.first < 2 * qint64(count) && clock.elapsed() < 10000) {
            wait(100);
            after = updateCounts();
        }
        run.updates = after.first - before.first;
        run.heapOnly = after.second - before.second;
        run.backendCpuPerDelivery = double(backendCpu) / count;
    }
    return run;
}

Throughput deliverAll(const QString &name, const QList<Endpoint> &endpoints, int count, bool probeApi = false)
{
    const RunDatabase database(name, g_postgres, g_work->path());
    const QString &url = database.url();
    seed(url, endpoints, count, true);
    QStringList healthy;
    for (int e = 0; e < endpoints.size(); ++e)
        if (!endpoints.at(e).hanging)
            healthy.append(QString::number(e + 1));
    const QString healthyFilter = QStringLiteral("endpoint_id IN (%1)").arg(healthy.join(QLatin1Char(',')));
    const qint64 healthyCount = [&] {
        Database db(url);
        db.open();
        return scalar(db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND ") + healthyFilter);
    }();

    ServerOptions options;
    options.databaseUrl = url;
    options.allowPrivateCallbacks = true;
    if (g_concurrency > 0)
        options.deliveryConcurrency = g_concurrency;
    if (g_endpointConcurrency > 0)
        options.endpointConcurrency = g_endpointConcurrency;
    if (g_recordPacing >= 0)
        options.outboxRecordPacing = std::chrono::milliseconds(g_recordPacing);
    if (g_stallAfter > 0)
        options.endpointStallAfter = std::chrono::milliseconds(g_stallAfter);
    options.epollSending = !g_pollSending;
    // Replicas share the database as they would in production, each with its own worker.
    std::vector<std::unique_ptr<ControlPlane>> replicas;
    for (int r = 0; r < std::max(1, g_replicas); ++r)
        replicas.push_back(std::make_unique<ControlPlane>(options));
    ControlPlane &server = *replicas.front();
    Database probe(url);
    probe.open();
    const QMap<QString, qint64> threadsAtStart = threadCpuByName();
    QElapsedTimer clock;
    clock.start();
    const qint64 cpuAtStart = processCpuMicros();
    const qint64 providersAtStart = providersCpuMicros(*g_providers);
    Problem problem;
    for (auto &replica : replicas)
        if (!replica->start(&problem))
            qFatal("%s", qPrintable(problem.detail));
    std::unique_ptr<ApiProbe> api;
    if (probeApi) {
        api = std::make_unique<ApiProbe>(server.baseUrl(), server.createToken(QStringLiteral("operator"), {}), 10);
        api->start();
    }
    // The steady rate is taken between 10% and 90% delivered, without start-up and tail. Counting
    // DELIVERED rows is a scan; every 5 ms it would take a good part of a core from the server on a
    // small machine. The feed's newest seq (an index lookup) only grows as attempts are recorded
    // (one delivery event each, and a few endpoint events), so it says when to count.
    const QString progress = QStringLiteral("SELECT COALESCE(MAX(seq), 0) FROM events");
    const qint64 base = scalar(probe, progress);
    qint64 at10 = -1;
    qint64 at90 = -1;
    for (;;) {
        const qint64 next = at10 < 0 ? (healthyCount + 9) / 10 : at90 < 0 ? (healthyCount * 9 + 9) / 10 : healthyCount;
        if (scalar(probe, progress) - base >= next || clock.elapsed() > 600000) {
            // What is still PENDING, through the partial index of due rows: counting DELIVERED ones
            // would read the seeded history too.
            const qint64 done = healthyCount - scalar(probe, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND ") + healthyFilter);
            if (at10 < 0 && done * 10 >= healthyCount)
                at10 = clock.elapsed();
            if (at90 < 0 && done * 10 >= healthyCount * 9)
                at90 = clock.elapsed();
            if (done >= healthyCount || clock.elapsed() > 600000)
                break;
        }
        wait(5);
    }
    Throughput t;
    if (api) {
        api->stop();
        wait(200); // the last answers
        t.api = api->result();
    }
    const qint64 serverCpu = processCpuMicros() - cpuAtStart;
    const qint64 providersCpu = providersCpuMicros(*g_providers) - providersAtStart;
    t.cpuPerDelivery = double(serverCpu) / double(std::max<qint64>(1, healthyCount));
    t.providerCpu = double(providersCpu) / double(std::max<qint64>(1, healthyCount));
    t.busyCores = double(serverCpu + providersCpu) / 1000.0 / double(std::max<qint64>(1, clock.elapsed()));
    const QMap<QString, qint64> threads = threadCpuByName();
    const auto perDelivery = [&](const QString &name) {
        return double(threads.value(name) - threadsAtStart.value(name)) / double(std::max<qint64>(1, healthyCount));
    };
    t.sendCpu = perDelivery(QStringLiteral("opsdeck-send"));
    t.storeCpu = perDelivery(QStringLiteral("opsdeck-store"));
    t.seconds = clock.elapsed() / 1000.0;
    t.healthyRate = at90 > at10 ? 0.8 * double(healthyCount) * 1000.0 / double(at90 - at10) : healthyCount / t.seconds;
    t.rate = double(count - scalar(probe, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING'"))) / t.seconds;
    for (auto &replica : replicas)
        replica->stop();
    return t;
}

// The same writes through the API on a server with nothing to deliver, for `seconds`.
ApiProbe::Result apiWritesIdle(int seconds)
{
    const RunDatabase database(QStringLiteral("api-idle"), g_postgres, g_work->path());
    seed(database.url(), {Endpoint{g_providers->front()->base + QStringLiteral("/ok/idle"), false}}, 1, false);
    ServerOptions options;
    options.databaseUrl = database.url();
    options.allowPrivateCallbacks = true;
    ControlPlane server(options);
    Problem problem;
    if (!server.start(&problem))
        qFatal("%s", qPrintable(problem.detail));
    ApiProbe api(server.baseUrl(), server.createToken(QStringLiteral("operator"), {}), 10);
    api.start();
    wait(seconds * 1000);
    api.stop();
    wait(200);
    server.stop();
    return api.result();
}

struct Latency
{
    double p50 = 0;
    double p99 = 0;
    int samples = 0;
};

// Stops instances one by one through the API (each stop commits its notification) and measures
// from the delivery's commit to the provider receiving it.
Latency commitToFirstAttempt(int count, int paceMs)
{
    auto provider = startProvider(true);
    const QString url = QStringLiteral("sqlite://") + g_work->filePath(QStringLiteral("latency.db"));
    const QList<qint64> ids = seed(url, {Endpoint{provider->base + QStringLiteral("/ok/latency"), false}}, count, false);
    ServerOptions options;
    options.databaseUrl = url;
    options.allowPrivateCallbacks = true;
    ControlPlane server(options);
    Problem problem;
    if (!server.start(&problem))
        qFatal("%s", qPrintable(problem.detail));
    const QString token = server.createToken(QStringLiteral("operator"), {});
    QNetworkAccessManager nam;
    for (qint64 id : ids) {
        QNetworkRequest req(QUrl(server.baseUrl().toString() + QStringLiteral("/api/v1/instances/%1/stop").arg(id)));
        req.setRawHeader("Authorization", "Bearer " + token.toUtf8());
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
        QNetworkReply *reply = nam.post(req, QByteArray("{}"));
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        reply->deleteLater();
        wait(paceMs);
    }
    Database probe(url);
    probe.open();
    QElapsedTimer clock;
    clock.start();
    while (scalar(probe, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")) < count && clock.elapsed() < 60000)
        wait(20);
    QHash<QString, QDateTime> created;
    QSqlQuery q(probe.connection());
    q.exec(QStringLiteral("SELECT webhook_id, created_at FROM deliveries"));
    while (q.next())
        created.insert(q.value(0).toString(), *parseTimestamp(q.value(1).toString()));
    server.stop();
    stopProvider(*provider);
    QFile log(provider->log);
    log.open(QIODevice::ReadOnly);
    QList<qint64> ms;
    for (const QByteArray &line : log.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(line).object();
        const QString id = o.value(QStringLiteral("webhook_id")).toString();
        const auto at = parseTimestamp(o.value(QStringLiteral("received_at")).toString());
        if (created.contains(id) && at)
            ms.append(created.value(id).msecsTo(*at));
    }
    std::sort(ms.begin(), ms.end());
    Latency l;
    l.samples = int(ms.size());
    if (!ms.isEmpty()) {
        l.p50 = double(ms.at(ms.size() / 2));
        l.p99 = double(ms.at(std::min<qsizetype>(ms.size() - 1, (ms.size() * 99) / 100)));
    }
    return l;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Callback delivery benchmark on loopback: deliveries/s to the demo provider with 1 and with 100 endpoints,\n"
        "the same with half of the endpoints hanging from the start or from a fifth of the run on, the provider's own accept rate measured with wrk in the\n"
        "same run, commit-to-first-attempt latency, and the CPU of an idle server holding a backlog (idle). SQLite\n"
        "storage in a temporary directory, or with --database a fresh PostgreSQL database per run (the latency\n"
        "run always uses SQLite)."));
    parser.addHelpOption();
    parser.addOptions({{QStringLiteral("deliveries"), QStringLiteral("Deliveries per throughput run (default 20000)."), QStringLiteral("N"), QStringLiteral("20000")},
                       {QStringLiteral("provider"), QStringLiteral("Path of opsdeck-demo-provider."), QStringLiteral("FILE")},
                       {QStringLiteral("wrk-seconds"), QStringLiteral("Duration of the wrk run (default 10)."), QStringLiteral("S"), QStringLiteral("10")},
                       {QStringLiteral("concurrency"), QStringLiteral("Attempts in flight per process (default: the server's)."), QStringLiteral("N"), QStringLiteral("0")},
                       {QStringLiteral("endpoint-concurrency"), QStringLiteral("Attempts in flight per endpoint (default: the server's)."), QStringLiteral("N"), QStringLiteral("0")},
                       {QStringLiteral("history"), QStringLiteral("Delivered notifications each instance already has before a throughput or store run (default 0): a long-lived installation."), QStringLiteral("N"), QStringLiteral("0")},
                       {QStringLiteral("latency-samples"), QStringLiteral("Stops for the latency run (default 300)."), QStringLiteral("N"), QStringLiteral("300")},
                       {QStringLiteral("only"), QStringLiteral("Run only these parts, comma-separated: store, wrk, one, hundred, hundred-one-host, half, turning, api, latency, idle (for profiling one of them)."),
                        QStringLiteral("PARTS")},
                       {QStringLiteral("database"), QStringLiteral("postgresql://user@host:port/db: create a database per run on that cluster and drop it after"
                                                               " (default: SQLite files in a temporary directory)."),
                        QStringLiteral("URL")}});
    // For measuring what one index costs: dropped right after the schema is created.
    QCommandLineOption dropIndex(QStringLiteral("drop-index"), QStringLiteral("Drop this index after migrating."), QStringLiteral("NAME"));
    dropIndex.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(dropIndex);
    QCommandLineOption recordPacing(QStringLiteral("record-pacing"), QStringLiteral("outboxRecordPacing in ms."), QStringLiteral("MS"), QStringLiteral("-1"));
    recordPacing.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(recordPacing);
    QCommandLineOption stallAfter(QStringLiteral("endpoint-stall-after"), QStringLiteral("endpointStallAfter in ms."), QStringLiteral("MS"), QStringLiteral("-1"));
    stallAfter.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(stallAfter);
    parser.addOption({QStringLiteral("replicas"), QStringLiteral("Servers delivering from the one database in the throughput runs (default 1; more need --database)."),
                      QStringLiteral("N"), QStringLiteral("1")});
    QCommandLineOption pollSending(QStringLiteral("poll-sending"), QStringLiteral("The sending thread on Qt's own (poll) event loop."));
    pollSending.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(pollSending);
    parser.process(app);
    g_postgres = parser.value(QStringLiteral("database"));
    if (!g_postgres.isEmpty() && !g_postgres.startsWith(QLatin1String("postgres")))
        qFatal("--database takes a postgresql:// URL");
    g_dropIndex = parser.value(dropIndex);
    g_recordPacing = parser.value(recordPacing).toInt();
    g_stallAfter = parser.value(stallAfter).toInt();
    g_pollSending = parser.isSet(pollSending);
    g_replicas = parser.value(QStringLiteral("replicas")).toInt();
    if (g_replicas < 1 || (g_replicas > 1 && g_postgres.isEmpty()))
        qFatal("--replicas takes a number from 1, above 1 with --database");
    g_providerBinary = parser.isSet(QStringLiteral("provider"))
                           ? parser.value(QStringLiteral("provider"))
                           : QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("../../tools/opsdeck-demo-provider/opsdeck-demo-provider"));
    g_secret = WebhookSignature::generateSecret();
    QTemporaryDir work;
    g_work = &work;
    const int n = parser.value(QStringLiteral("deliveries")).toInt();
    g_concurrency = parser.value(QStringLiteral("concurrency")).toInt();
    g_endpointConcurrency = parser.value(QStringLiteral("endpoint-concurrency")).toInt();
    g_history = parser.value(QStringLiteral("history")).toInt();
    const QStringList only = parser.value(QStringLiteral("only")).split(QLatin1Char(','), Qt::SkipEmptyParts);
    const auto runs = [&only](const char *part) { return only.isEmpty() || only.contains(QLatin1String(part)); };

    // The provider processes stand for provider hosts: the 100 endpoints live on 10 of them, each
    // endpoint with connections of its own (as many as the per-endpoint concurrency).
    std::vector<std::unique_ptr<Provider>> providers;
    for (int i = 0; i < 10; ++i)
        providers.push_back(startProvider(false));
    g_providers = &providers;

    if (runs("store")) {
        const StoreRun one = storeRun(QStringLiteral("store-one"), 1, n);
        const StoreRun hundred = storeRun(QStringLiteral("store-hundred"), 100, n);
        std::printf("store alone (claims and recording, no sending): %.1f us CPU per delivery to 1 endpoint, %.1f us to 100\n",
                    one.cpuPerDelivery, hundred.cpuPerDelivery);
        if (one.updates >= 0)
            std::printf("  PostgreSQL backend: %.1f us CPU per delivery to 1 endpoint, %.1f us to 100; updates of deliveries rows,"
                        " heap-only of them: %lld / %lld to 1 endpoint, %lld / %lld to 100\n",
                        one.backendCpuPerDelivery, hundred.backendCpuPerDelivery, one.updates, one.heapOnly, hundred.updates,
                        hundred.heapOnly);
        std::fflush(stdout);
    }

    const WrkRun wrkRun = runs("wrk") ? wrkRate(*providers.front(), sampleBody(1), g_secret, g_work->filePath(QStringLiteral("post.lua")),
                                                parser.value(QStringLiteral("wrk-seconds")).toInt(), 64)
                                      : WrkRun();
    const double wrk = wrkRun.rate;
    if (runs("wrk")) {
        std::printf("provider accept rate (wrk -t2 -c64, one provider process): %.0f req/s; CPU per request: provider %.1f us,"
                    " wrk %.1f us\n",
                    wrk, wrkRun.providerCpu, wrkRun.wrkCpu);
        // For reference, not the goal's measure: wrk at the attempts one endpoint has in flight.
        // It records nothing, so it is what any client at that concurrency could reach here.
        const int perEndpoint = g_endpointConcurrency > 0 ? g_endpointConcurrency : ServerOptions().endpointConcurrency;
        const WrkRun same = wrkRate(*providers.front(), sampleBody(1), g_secret, g_work->filePath(QStringLiteral("post.lua")),
                                    parser.value(QStringLiteral("wrk-seconds")).toInt(), perEndpoint);
        std::printf("  wrk -t2 -c%d (one endpoint's attempts in flight): %.0f req/s (%.2fx); CPU per request: provider %.1f us,"
                    " wrk %.1f us\n",
                    perEndpoint, same.rate, wrk > 0 ? same.rate / wrk : 0.0, same.providerCpu, same.wrkCpu);
        std::fflush(stdout);
    }

    if (runs("one")) {
        const Throughput one = deliverAll(QStringLiteral("one"), {Endpoint{providers.front()->base + QStringLiteral("/ok/one"), false}}, n);
        std::printf("1 endpoint:   %d deliveries in %.1f s = %.0f/s, steady %.0f/s (%.2fx the provider's accept rate),"
                    " %.0f us server CPU per delivery %s\n",
                    n, one.seconds, one.rate, one.healthyRate, wrk > 0 ? one.healthyRate / wrk : 0.0, one.cpuPerDelivery,
                    qPrintable(threadShare(one)));
        std::printf("  %s\n", qPrintable(coreShare(one, wrk)));
        std::fflush(stdout);
    }

    QList<Endpoint> hundred;
    QList<Endpoint> halfHanging;
    for (int e = 0; e < 100; ++e) {
        const QString base = providers.at(size_t(e % 10))->base;
        hundred.append(Endpoint{base + QStringLiteral("/ok/e%1").arg(e), false});
        // Hanging endpoints live on their own hosts (providers 0-4), as they would in the field.
        const bool hang = e % 10 < 5;
        halfHanging.append(Endpoint{base + (hang ? QStringLiteral("/hang/e%1") : QStringLiteral("/ok/e%1")).arg(e), hang});
    }
    Throughput all;
    if (runs("hundred")) {
        all = deliverAll(QStringLiteral("hundred"), hundred, n);
        std::printf("100 endpoints: %d deliveries in %.1f s = %.0f/s, steady %.0f/s (%.2fx the provider's accept rate),"
                    " %.0f us server CPU per delivery %s\n",
                    n, all.seconds, all.rate, all.healthyRate, wrk > 0 ? all.healthyRate / wrk : 0.0, all.cpuPerDelivery,
                    qPrintable(threadShare(all)));
        std::printf("  %s\n", qPrintable(coreShare(all, wrk)));
        std::fflush(stdout);
    }
    if (runs("hundred-one-host")) {
        // The same 100 endpoints on the one provider process wrk measured: its cost per request is
        // then the one wrk saw. Ten processes on a small machine each answer fewer requests per
        // wake-up, and the providers' share of the cores grows.
        QList<Endpoint> oneHost;
        for (int e = 0; e < 100; ++e)
            oneHost.append(Endpoint{providers.front()->base + QStringLiteral("/ok/h%1").arg(e), false});
        const Throughput t = deliverAll(QStringLiteral("hundred-one-host"), oneHost, n);
        std::printf("100 endpoints on one provider process: %d deliveries in %.1f s = %.0f/s, steady %.0f/s (%.2fx the provider's"
                    " accept rate), %.0f us server CPU per delivery %s\n",
                    n, t.seconds, t.rate, t.healthyRate, wrk > 0 ? t.healthyRate / wrk : 0.0, t.cpuPerDelivery,
                    qPrintable(threadShare(t)));
        std::printf("  %s\n", qPrintable(coreShare(t, wrk)));
        std::fflush(stdout);
    }
    if (runs("half")) {
        // The same healthy half alone (same hosts, same deliveries) isolates what the hanging half costs.
        QList<Endpoint> healthyHalf;
        for (const Endpoint &e : std::as_const(halfHanging))
            if (!e.hanging)
                healthyHalf.append(e);
        const Throughput alone = deliverAll(QStringLiteral("alone"), healthyHalf, n / 2);
        std::printf("50 endpoints (the healthy half alone): %d deliveries in %.1f s, steady %.0f/s, %.0f us server CPU per delivery %s\n",
                    n / 2, alone.seconds, alone.healthyRate, alone.cpuPerDelivery, qPrintable(threadShare(alone)));
        std::fflush(stdout);
        const Throughput half = deliverAll(QStringLiteral("half"), halfHanging, n);
        std::printf("100 endpoints, 50 hanging: healthy done in %.1f s, steady %.0f/s (%.2fx the healthy half alone, %.2fx all 100 healthy),"
                    " %.0f us server CPU per healthy delivery %s\n",
                    half.seconds, half.healthyRate, alone.healthyRate > 0 ? half.healthyRate / alone.healthyRate : 0.0,
                    all.healthyRate > 0 ? half.healthyRate / all.healthyRate : 0.0, half.cpuPerDelivery, qPrintable(threadShare(half)));
        std::fflush(stdout);
    }
    if (runs("turning")) {
        // The hanging half again, but its endpoints first answer a fifth of their deliveries, then
        // nothing: their provider hosts stop answering mid-run, after each endpoint has proven
        // itself and holds as many attempts as an endpoint that answers well may.
        const int answered = std::max(1, n / 100 / 5);
        QList<Endpoint> turning;
        for (const Endpoint &e : std::as_const(halfHanging)) {
            turning.append(e);
            if (e.hanging)
                turning.last().url.replace(QLatin1String("/hang/"), QStringLiteral("/hang-after/%1/").arg(answered));
        }
        const Throughput t = deliverAll(QStringLiteral("turning"), turning, n);
        std::printf("100 endpoints, 50 stop answering after %d deliveries each: healthy done in %.1f s, steady %.0f/s (%.2fx all 100"
                    " healthy), %.0f us server CPU per healthy delivery %s\n",
                    answered, t.seconds, t.healthyRate, all.healthyRate > 0 ? t.healthyRate / all.healthyRate : 0.0,
                    t.cpuPerDelivery, qPrintable(threadShare(t)));
        std::fflush(stdout);
    }
    if (runs("api")) {
        // An operator's writes while a backlog is delivered: the HTTP thread's transactions wait
        // for the store's write lock.
        const ApiProbe::Result idle = apiWritesIdle(3);
        std::printf("API writes (POST /organizations every 10 ms), server idle: %s\n", qPrintable(apiLine(idle)));
        const Throughput t = deliverAll(QStringLiteral("api"), {Endpoint{providers.front()->base + QStringLiteral("/ok/api"), false}}, n,
                                        true);
        std::printf("  the same while delivering to 1 endpoint (steady %.0f/s): %s\n", t.healthyRate, qPrintable(apiLine(t.api)));
        std::fflush(stdout);
    }
    for (auto &p : providers)
        stopProvider(*p);

    if (runs("latency")) {
        const Latency l = commitToFirstAttempt(parser.value(QStringLiteral("latency-samples")).toInt(), 20);
        std::printf("commit to first attempt (%d stops, one every ~20 ms): p50 %.0f ms, p99 %.0f ms\n", l.samples, l.p50, l.p99);
    }
    if (runs("idle")) {
        const RunDatabase database(QStringLiteral("idle"), g_postgres, g_work->path());
        // 60 s after the first 5: the supersede pass's minute, once.
        const IdleUpkeep u = idleUpkeep(database.url(), n, 5, 60);
        std::printf("idle with %d notifications waiting for a retry: %.0f ms CPU in the first 5 s, then %.1f ms per second over 60 s\n",
                    n, u.startMs, u.perSecondMs);
        if (u.backendPerSecondMs >= 0)
            std::printf("  PostgreSQL backends: %.0f ms in the first 5 s, then %.1f ms per second over 60 s\n", u.backendStartMs,
                        u.backendPerSecondMs);
    }
    return 0;
}
