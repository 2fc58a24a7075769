// opsdeck-bench-sender: callback attempts/s through CallbackSender to the demo provider, next to its wrk rate.
#include "core/webhooksignature.h"
#include "server/delivery/callbacksender.h"
#include "server/delivery/epolleventdispatcher.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/resource.h>

using namespace OpsDeck;

namespace {

const QByteArray Secret = QByteArrayLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray Body = QByteArrayLiteral(
    R"({"type":"instance.status_changed","data":{"instance":{"id":"inst-1","status":"STOPPED","version":4}}})");

struct Options
{
    int requests = 20000;
    int inFlight = 256;
    int endpoints = 100;
    int hosts = 10;
    int connectionsPerPool = 0; // 0: the sender's default
    int wrkSeconds = 5;
};

// One provider process serving `hosts` loopback ports; returns their base URLs.
QStringList startProvider(QProcess *process, int hosts)
{
    QStringList args{QStringLiteral("--secret"), QString::fromLatin1(Secret)};
    for (int i = 0; i < hosts; ++i)
        args << QStringLiteral("--listen") << QStringLiteral("127.0.0.1:0");
    process->setProgram(QCoreApplication::applicationDirPath()
                        + QStringLiteral("/../../tools/opsdeck-demo-provider/opsdeck-demo-provider"));
    process->setArguments(args);
    process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    process->start();
    if (!process->waitForStarted(10000))
        qFatal("cannot start %s", qPrintable(process->program()));
    QStringList bases;
    while (bases.size() < hosts) {
        if (!process->canReadLine() && !process->waitForReadyRead(10000))
            qFatal("the provider printed no address");
        while (process->canReadLine())
            bases.append(QString::fromUtf8(process->readLine()).trimmed().mid(int(qstrlen("listening on "))));
    }
    return bases;
}

// The provider's own accept rate: wrk posting one validly signed notification as fast as it can.
double wrkRate(const QString &url, int seconds, const QTemporaryDir &work)
{
    const qint64 timestamp = QDateTime::currentSecsSinceEpoch();
    const QByteArray signature =
        WebhookSignature::signatureHeader("msg_wrk", timestamp, Body, {WebhookSignature::decodeSecret(QString::fromLatin1(Secret)).key});
    QFile script(work.filePath(QStringLiteral("post.lua")));
    if (!script.open(QIODevice::WriteOnly))
        return 0;
    script.write("wrk.method = \"POST\"\nwrk.body = '" + Body + "'\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
                 "wrk.headers[\"webhook-id\"] = \"msg_wrk\"\nwrk.headers[\"webhook-timestamp\"] = \""
                 + QByteArray::number(timestamp) + "\"\nwrk.headers[\"webhook-signature\"] = \"" + signature + "\"\n");
    script.close();
    QProcess wrk;
    wrk.start(QStringLiteral("wrk"), {QStringLiteral("-t2"), QStringLiteral("-c64"), QStringLiteral("-d%1s").arg(seconds),
                                      QStringLiteral("-s"), script.fileName(), url});
    if (!wrk.waitForStarted(5000) || !wrk.waitForFinished((seconds + 30) * 1000))
        return 0;
    const auto match = QRegularExpression(QStringLiteral("Requests/sec:\\s+([0-9.]+)"))
                           .match(QString::fromUtf8(wrk.readAllStandardOutput()));
    return match.hasMatch() ? match.captured(1).toDouble() : 0;
}

struct Run
{
    int delivered = 0;
    int failed = 0;
    double seconds = 0;
    double cpuSeconds = 0; // this process, every thread (the provider is another process)
};

// User + system CPU time of this process so far; the machine's load moves it far less than a rate.
double processCpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
           + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Sends `options.requests` attempts round-robin over `urls` (one isolation key per URL, as the
// delivery worker does per endpoint), keeping `options.inFlight` in flight.
Run run(const QStringList &urls, const Options &options)
{
    CallbackSender sender{CallbackUrlGuard(true)};
    if (options.connectionsPerPool > 0)
        sender.setMaxConnectionsPerPool(options.connectionsPerPool);
    Run result;
    int sent = 0;
    int done = 0;
    QEventLoop loop;
    QElapsedTimer timer;
    const auto sendNext = [&] {
        CallbackRequest request;
        const int endpoint = sent % int(urls.size());
        request.url = QUrl(urls.at(endpoint));
        request.isolationKey = QString::number(endpoint);
        request.webhookId = "msg_bench_" + QByteArray::number(sent);
        request.body = Body;
        request.secrets = {Secret};
        ++sent;
        sender.send(request);
    };
    QObject::connect(&sender, &CallbackSender::finished, &loop, [&](quint64, const AttemptResult &attempt) {
        ++done;
        (attempt.delivered ? result.delivered : result.failed)++;
        if (sent < options.requests)
            sendNext();
        else if (done == options.requests)
            loop.quit();
    });
    const double cpuBefore = processCpuSeconds();
    timer.start();
    for (int i = 0; i < qMin(options.inFlight, options.requests); ++i)
        sendNext();
    loop.exec();
    result.seconds = double(timer.nsecsElapsed()) / 1e9;
    result.cpuSeconds = processCpuSeconds() - cpuBefore;
    return result;
}

} // namespace

int main(int argc, char *argv[])
{
    // The server's sending thread runs on EpollEventDispatcher; --poll-loop keeps Qt's own. Read
    // before the application exists, which is when a dispatcher can be chosen.
    const bool pollLoop = std::any_of(argv + 1, argv + argc, [](const char *arg) { return std::strcmp(arg, "--poll-loop") == 0; });
    if (!pollLoop)
        EpollEventDispatcher::install();
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Callback attempts/s through CallbackSender to the demo provider."));
    parser.addHelpOption();
    const QCommandLineOption requestsOption(QStringLiteral("requests"), QStringLiteral("Attempts per scenario."), QStringLiteral("n"), QStringLiteral("20000"));
    const QCommandLineOption inFlightOption(QStringLiteral("in-flight"), QStringLiteral("Attempts in flight at once."), QStringLiteral("n"), QStringLiteral("256"));
    const QCommandLineOption endpointsOption(QStringLiteral("endpoints"), QStringLiteral("Endpoints (paths, one isolation key each) of the many-endpoint scenario."), QStringLiteral("n"), QStringLiteral("100"));
    const QCommandLineOption hostsOption(QStringLiteral("hosts"), QStringLiteral("Provider host:ports the endpoints are spread over."), QStringLiteral("n"), QStringLiteral("10"));
    const QCommandLineOption connectionsOption(QStringLiteral("connections"), QStringLiteral("Connections per pool (setMaxConnectionsPerPool; 0: default)."), QStringLiteral("n"), QStringLiteral("0"));
    const QCommandLineOption wrkOption(QStringLiteral("wrk-seconds"), QStringLiteral("wrk duration; 0 skips it."), QStringLiteral("s"), QStringLiteral("5"));
    const QCommandLineOption pollLoopOption(QStringLiteral("poll-loop"), QStringLiteral("Run on Qt's own poll()-based event loop, not on epoll as the server's sending thread does."));
    parser.addOptions({requestsOption, inFlightOption, endpointsOption, hostsOption, connectionsOption, wrkOption, pollLoopOption});
    parser.process(app);
    Options options;
    options.requests = qMax(1, parser.value(requestsOption).toInt());
    options.inFlight = qMax(1, parser.value(inFlightOption).toInt());
    options.endpoints = qMax(1, parser.value(endpointsOption).toInt());
    options.hosts = qMax(1, parser.value(hostsOption).toInt());
    options.connectionsPerPool = parser.value(connectionsOption).toInt();
    options.wrkSeconds = parser.value(wrkOption).toInt();

    QProcess provider;
    const QStringList bases = startProvider(&provider, options.hosts);
    QTemporaryDir work;

    QStringList many;
    for (int i = 0; i < options.endpoints; ++i)
        many.append(bases.at(i % bases.size()) + QStringLiteral("/ok/endpoint-%1").arg(i));
    const struct
    {
        const char *name;
        QStringList urls;
    } scenarios[] = {{"1 endpoint", {bases.first() + QStringLiteral("/ok/endpoint")}}, {"many endpoints", many}};

    std::printf("CallbackSender on %s, %d attempts per scenario, %d in flight, connections per pool: %s\n",
                pollLoop ? "Qt's poll() loop" : "epoll", options.requests,
                options.inFlight, options.connectionsPerPool > 0 ? qPrintable(QString::number(options.connectionsPerPool)) : "default");
    const double wrk = options.wrkSeconds > 0 ? wrkRate(bases.first() + QStringLiteral("/ok/wrk"), options.wrkSeconds, work) : 0;
    if (wrk > 0)
        std::printf("%-34s %10.0f req/s\n", "provider accept rate (wrk -t2 -c64)", wrk);
    else if (options.wrkSeconds > 0)
        std::printf("wrk did not run (not installed?)\n");
    for (const auto &scenario : scenarios) {
        const Run result = run(scenario.urls, options);
        const QString label = QStringLiteral("%1 (%2 on %3 hosts)")
                                  .arg(QLatin1String(scenario.name))
                                  .arg(scenario.urls.size())
                                  .arg(qMin(scenario.urls.size(), bases.size()));
        std::printf("%-34s %10.0f req/s", qPrintable(label), result.delivered / result.seconds);
        if (wrk > 0)
            std::printf("  (%.2fx wrk)", result.delivered / result.seconds / wrk);
        std::printf("  %.1f us CPU/request", result.cpuSeconds * 1e6 / qMax(1, result.delivered + result.failed));
        std::printf("  delivered %d, failed %d, %.2f s\n", result.delivered, result.failed, result.seconds);
        std::fflush(stdout);
    }
    provider.terminate();
    provider.waitForFinished(10000);
    return 0;
}
