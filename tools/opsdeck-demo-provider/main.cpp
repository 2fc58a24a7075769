// opsdeck-demo-provider: a provider's webhook receiver with fault modes, for demos, tests and benchmarks.
#include "providerserver.h"
#include "signalwatcher.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <cstdio>

using namespace OpsDeck::DemoProvider;

namespace {

const char Description[] = R"(A provider's webhook receiver for OpsDeck demos, tests and benchmarks.

It verifies Standard Webhooks signatures (webhook-id, webhook-timestamp, webhook-signature)
or the legacy X-Hub-Signature (sha1, keyed with the --secret text) when --secret is given,
records every request as one JSON line in --log, and answers according to a fault mode.
On start it prints exactly one line, "listening on http://HOST:PORT", on stdout, per --listen
(repeat --listen to serve many host:port endpoints from one process, as several provider
hosts would be).

Fault modes, chosen per path by the first segment (so one process serves many endpoints),
or for every other path by --mode:
  /ok/...                 200
  /fail/...               500
  /gone/...               410 Gone (the sender should disable the endpoint)
  /throttle[/<s>]/...     429 with Retry-After: <s> (default --retry-after)
  /unavailable[/<s>]/...  503 with Retry-After: <s> (default --retry-after)
  /hang/...               never answers; the connection stays open
  /slow[/<ms>]/...        200 after <ms> milliseconds (default --delay-ms)
  /redirect/...           302 Found to /ok/redirected (a sender must not follow it)
  /flaky[/<percent>]/...  500 for <percent>% of requests at random (default 50), else 200
  /hang-after[/<n>[/<ms>]]/...
                          200 to the first <n> requests on the path (default 100), after
                          <ms> milliseconds when given, then never answers (a provider
                          host that stops answering)
--fail-percent applies to paths that use the default mode only.

GET /stats answers JSON counts: received, valid, invalid, unsigned (no --secret), malformed,
unique_webhook_ids, duplicates, hanging (connections held open now), by_status (the key
"none" counts hangs) and by_mode.

Log lines carry: received_at, method, path, webhook_id, webhook_timestamp, type, instance_id,
status, version (read from the body, top level or under "data"/"instance"), signature_valid
(true/false, null without --secret), signature_error, mode and answered (null for a hang).
The log is buffered and written every --flush-ms and on SIGTERM/SIGINT.

Examples:
  opsdeck-demo-provider --listen 127.0.0.1:8090 --secret whsec_... --log received.jsonl
  opsdeck-demo-provider --listen 0.0.0.0:0 --mode fail
  opsdeck-demo-provider --listen 127.0.0.1:0 --listen 127.0.0.1:0 --listen 127.0.0.1:0
  opsdeck-demo-provider --fail-percent 20 --retry-after 30
  curl -s http://127.0.0.1:8090/stats)";

bool parseListen(const QString &text, QHostAddress *address, quint16 *port)
{
    QString host = QStringLiteral("127.0.0.1");
    QString portText = text;
    const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
    if (colon >= 0) {
        host = text.left(colon);
        portText = text.mid(colon + 1);
        if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
            host = host.mid(1, host.size() - 2);
        if (host.isEmpty())
            host = QStringLiteral("127.0.0.1");
    }
    bool ok = false;
    const uint value = portText.toUInt(&ok);
    if (!ok || value > 65535)
        return false;
    if (host == QLatin1String("localhost"))
        host = QStringLiteral("127.0.0.1");
    if (!address->setAddress(host))
        return false;
    *port = quint16(value);
    return true;
}

int readInt(const QCommandLineParser &parser, const QString &name, int min, int max, bool *ok)
{
    bool valid = false;
    const int value = parser.value(name).toInt(&valid);
    if (!valid || value < min || value > max) {
        std::fprintf(stderr, "--%s must be a number from %d to %d\n", qPrintable(name), min, max);
        *ok = false;
    }
    return value;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("opsdeck-demo-provider"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QString::fromLatin1(Description));
    parser.addHelpOption();
    const QString listenOption = QStringLiteral("listen");
    const QString secretOption = QStringLiteral("secret");
    const QString logOption = QStringLiteral("log");
    const QString failOption = QStringLiteral("fail-percent");
    const QString modeOption = QStringLiteral("mode");
    const QString retryOption = QStringLiteral("retry-after");
    const QString delayOption = QStringLiteral("delay-ms");
    const QString toleranceOption = QStringLiteral("tolerance");
    const QString rejectOption = QStringLiteral("reject-invalid");
    const QString flushOption = QStringLiteral("flush-ms");
    parser.addOptions({
        {listenOption, QStringLiteral("Address to listen on (repeatable; default 127.0.0.1:0); port 0 picks a free one."),
         QStringLiteral("host:port")},
        {secretOption, QStringLiteral("Signing secret (whsec_...); repeat during a rotation."), QStringLiteral("secret")},
        {logOption, QStringLiteral("Append one JSON line per request to this file."), QStringLiteral("file")},
        {failOption, QStringLiteral("Answer 500 to this percentage of default-mode requests."), QStringLiteral("n"),
         QStringLiteral("0")},
        {modeOption, QStringLiteral("Mode for paths without a mode segment: %1.")
                         .arg(ProviderServer::modeNames().join(QLatin1Char('|'))),
         QStringLiteral("mode"), QStringLiteral("ok")},
        {retryOption, QStringLiteral("Retry-After seconds for throttle and unavailable."), QStringLiteral("s"),
         QStringLiteral("5")},
        {delayOption, QStringLiteral("Delay of the slow mode."), QStringLiteral("ms"), QStringLiteral("1000")},
        {toleranceOption, QStringLiteral("Accepted webhook-timestamp skew."), QStringLiteral("s"),
         QStringLiteral("300")},
        {rejectOption, QStringLiteral("Answer 401 to requests whose signature does not verify.")},
        {flushOption, QStringLiteral("How often the log buffer is written."), QStringLiteral("ms"),
         QStringLiteral("200")},
    });
    parser.process(app);

    QStringList listens = parser.values(listenOption);
    if (listens.isEmpty())
        listens.append(QStringLiteral("127.0.0.1:0"));
    QList<QPair<QHostAddress, quint16>> endpoints;
    for (const QString &listen : std::as_const(listens)) {
        QHostAddress address;
        quint16 port = 0;
        if (!parseListen(listen, &address, &port)) {
            std::fprintf(stderr, "--listen expects HOST:PORT, e.g. 127.0.0.1:8090\n");
            return 2;
        }
        endpoints.append({address, port});
    }
    const std::optional<ProviderServer::Mode> mode = ProviderServer::modeFromName(parser.value(modeOption));
    if (!mode) {
        std::fprintf(stderr, "--mode must be one of %s\n",
                     qPrintable(ProviderServer::modeNames().join(QLatin1String(", "))));
        return 2;
    }

    bool ok = true;
    ProviderServer::Options options;
    options.defaultMode = *mode;
    options.failPercent = readInt(parser, failOption, 0, 100, &ok);
    options.retryAfterSecs = readInt(parser, retryOption, 0, 86400, &ok);
    options.delayMs = readInt(parser, delayOption, 0, 3600 * 1000, &ok);
    options.toleranceSecs = readInt(parser, toleranceOption, 0, 365 * 86400, &ok);
    options.flushIntervalMs = readInt(parser, flushOption, 1, 60 * 1000, &ok);
    options.rejectInvalid = parser.isSet(rejectOption);
    options.logPath = parser.value(logOption);
    for (const QString &secret : parser.values(secretOption))
        options.secrets.append(secret.toLatin1());
    if (!ok)
        return 2;

    ProviderServer server(options);
    QString error = server.start();
    QStringList lines;
    for (const auto &[address, requestedPort] : std::as_const(endpoints)) {
        if (!error.isEmpty())
            break;
        const quint16 port = server.listen(address, requestedPort, &error);
        const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                                 ? QLatin1Char('[') + address.toString() + QLatin1Char(']')
                                 : address.toString();
        lines.append(QStringLiteral("listening on http://%1:%2\n").arg(host).arg(port));
    }
    if (!error.isEmpty()) {
        std::fprintf(stderr, "%s\n", qPrintable(error));
        return 1;
    }

    SignalWatcher signalWatcher;
    QObject::connect(&signalWatcher, &SignalWatcher::terminationRequested, &app, [&server] {
        server.flushLog();
        QCoreApplication::quit();
    });

    // Only once every listener is up, so a reader of the first line can connect to all.
    for (const QString &line : std::as_const(lines))
        std::fputs(qPrintable(line), stdout);
    std::fflush(stdout);

    const int result = QCoreApplication::exec();
    server.flushLog();
    return result;
}
