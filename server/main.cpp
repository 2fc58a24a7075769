// opsdeck-server: the control plane's command line (serve, migrate, token, seed).
#include "server/auth/tokenactions.h"
#include "server/auth/tokenstore.h"
#include "server/storage/journal.h"
#include "server/controlplane.h"
#include "server/demoseeder.h"
#include "server/storage/database.h"

#include "core/jsonreader.h"
#include "core/retryschedule.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTextStream>
#include <QTimer>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>

using namespace OpsDeck;

namespace {

volatile std::sig_atomic_t g_stopRequested = 0;

void onSignal(int)
{
    g_stopRequested = 1;
}

constexpr int kUsage = 2;
constexpr int kFailure = 1;

int fail(int code, const QString &message)
{
    QTextStream(stderr) << "opsdeck-server: " << message << Qt::endl;
    return code;
}

const char *const kUsageText =
    "usage: opsdeck-server serve [--listen HOST:PORT] [--database URL] [--config FILE]\n"
    "                            [--tls-cert F --tls-key F] [--allow-private-callbacks]\n"
    "                            [--retry-schedule LIST] [--delivery-timeout SECONDS]\n"
    "                            [--instance-retention DURATION] [--auto-pause-window DURATION]\n"
    "                            [--delivery-concurrency N] [--endpoint-concurrency N]\n"
    "                            [--endpoint-stall-after DURATION] [--feed-retention N]\n"
    "                            [--idle-timeout DURATION]\n"
    "       opsdeck-server migrate --database URL\n"
    "       opsdeck-server token create --database URL --role operator|provider|owner [--subject ID] [--name TEXT]\n"
    "       opsdeck-server token list --database URL\n"
    "       opsdeck-server token revoke ID --database URL\n"
    "       opsdeck-server seed --database URL --demo [--instances N]\n"
    "URL: sqlite:///abs/path.db (default: under the XDG data directory) or postgresql://user[:pass]@host[:port]/db\n"
    "LIST: delays between attempts, e.g. 5s,5m,30m,2h,5h,10h,14h,20h,24h (units ms, s, m, h, d)\n"
    "DURATION: a number with a unit ms, s, m, h or d (plain number: seconds), e.g. 7d, 36h, 90s\n";

// The delivery settings: each a command-line flag and the same setting as a --config key.
struct Setting
{
    QString flag;
    QString key;
};

const QList<Setting> &deliverySettings()
{
    static const QList<Setting> settings = {
        {QStringLiteral("retry-schedule"), QStringLiteral("retry_schedule")},
        {QStringLiteral("delivery-timeout"), QStringLiteral("delivery_timeout")},
        {QStringLiteral("instance-retention"), QStringLiteral("instance_retention")},
        {QStringLiteral("auto-pause-window"), QStringLiteral("auto_pause_window")},
        {QStringLiteral("delivery-concurrency"), QStringLiteral("delivery_concurrency")},
        {QStringLiteral("endpoint-concurrency"), QStringLiteral("endpoint_concurrency")},
        {QStringLiteral("endpoint-stall-after"), QStringLiteral("endpoint_stall_after")},
        {QStringLiteral("feed-retention"), QStringLiteral("feed_retention")},
        {QStringLiteral("idle-timeout"), QStringLiteral("idle_timeout")},
    };
    return settings;
}

// "90", "90s", "500ms", "5m", "36h", "7d"; nullopt unless positive and at most ten years.
std::optional<std::chrono::milliseconds> parseDuration(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^(\\d+(?:\\.\\d+)?)\\s*(ms|s|m|h|d)?$"));
    const QRegularExpressionMatch m = re.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    const QString unit = m.captured(2);
    const double perUnit = unit == QLatin1String("ms") ? 1.0
                           : unit == QLatin1String("m") ? 60e3
                           : unit == QLatin1String("h") ? 3600e3
                           : unit == QLatin1String("d") ? 86400e3
                                                        : 1e3;
    const double ms = m.captured(1).toDouble() * perUnit;
    if (!(ms >= 1.0) || ms > 3650.0 * 86400e3)
        return std::nullopt;
    return std::chrono::milliseconds(qint64(ms));
}

std::optional<int> parseCount(const QString &text, int max)
{
    bool ok = false;
    const int n = text.trimmed().toInt(&ok);
    return ok && n >= 1 && n <= max ? std::optional<int>(n) : std::nullopt;
}

// Applies one delivery setting given as text; false with a message naming `label` when the value
// is not one the server can use (the caller exits with the usage code rather than guessing).
bool applySetting(const QString &flag, const QString &label, const QString &value, ServerOptions *options, QString *error)
{
    if (flag == QLatin1String("retry-schedule")) {
        const auto parsed = RetrySchedule::parseDelays(value);
        if (!parsed.ok()) {
            *error = QStringLiteral("%1 expects delays like 5s,5m,30m,2h: %2").arg(label, parsed.error);
            return false;
        }
        options->retrySchedule = value;
        return true;
    }
    if (flag == QLatin1String("delivery-timeout")) {
        bool ok = false;
        const double seconds = value.trimmed().toDouble(&ok);
        if (!ok || !(seconds >= 0.001) || seconds > 3600) {
            *error = QStringLiteral("%1 expects seconds, more than 0 and at most 3600, got \"%2\"").arg(label, value);
            return false;
        }
        options->deliveryTimeout = std::chrono::milliseconds(qint64(seconds * 1000));
        return true;
    }
    if (flag == QLatin1String("instance-retention") || flag == QLatin1String("auto-pause-window")
        || flag == QLatin1String("endpoint-stall-after") || flag == QLatin1String("idle-timeout")) {
        const auto d = parseDuration(value);
        if (!d) {
            *error = QStringLiteral("%1 expects a duration like 90s, 36h or 7d, got \"%2\"").arg(label, value);
            return false;
        }
        if (flag == QLatin1String("auto-pause-window")) {
            options->autoPauseWindow = *d;
        } else if (flag == QLatin1String("endpoint-stall-after")) {
            // Under the stall floor it would demote every endpoint as soon as it has an attempt out.
            if (d->count() < 250) {
                *error = QStringLiteral("%1 is at least 250ms, got \"%2\"").arg(label, value);
                return false;
            }
            options->endpointStallAfter = *d;
        } else if (flag == QLatin1String("idle-timeout")) {
            if (d->count() < 1000 || *d > std::chrono::hours(24)) {
                *error = QStringLiteral("%1 is from 1s to 1d, got \"%2\"").arg(label, value);
                return false;
            }
            options->idleTimeout = *d;
        } else if (d->count() < 1000) {
            *error = QStringLiteral("%1 is counted in whole seconds; at least 1s, got \"%2\"").arg(label, value);
            return false;
        } else {
            options->instanceRetention = std::chrono::duration_cast<std::chrono::seconds>(*d);
        }
        return true;
    }
    const int max = flag == QLatin1String("feed-retention") ? 1000000000 : 100000;
    const auto n = parseCount(value, max);
    if (!n) {
        *error = QStringLiteral("%1 expects a whole number from 1 to %2, got \"%3\"").arg(label).arg(max).arg(value);
        return false;
    }
    if (flag == QLatin1String("delivery-concurrency"))
        options->deliveryConcurrency = *n;
    else if (flag == QLatin1String("endpoint-concurrency"))
        options->endpointConcurrency = *n;
    else
        options->feedRetention = *n;
    return true;
}

bool openDatabase(Database &db, QString *message)
{
    Problem p;
    if (!db.open(&p) || !db.migrate(&p)) {
        *message = p.detail.isEmpty() ? p.title : p.detail;
        return false;
    }
    return true;
}

// "HOST:PORT" (an IPv6 host in brackets); false when it is not that.
bool parseListen(const QString &listen, QString *host, quint16 *port)
{
    bool ok = false;
    const uint number = listen.section(QLatin1Char(':'), -1).toUInt(&ok);
    if (!listen.contains(QLatin1Char(':')) || !ok || number > 65535)
        return false;
    *host = listen.section(QLatin1Char(':'), 0, -2);
    if (host->startsWith(QLatin1Char('[')) && host->endsWith(QLatin1Char(']')))
        *host = host->mid(1, host->size() - 2);
    *port = quint16(number);
    return true;
}

// The options of a --config file into *options: 0, or the exit code with *message. Every key must
// be known and its value usable: a typo or a wrong type is refused, never replaced by a default.
int readConfig(const QString &path, ServerOptions *options, QString *message)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *message = QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString());
        return kFailure;
    }
    QJsonParseError err{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &err);
    if (err.error != QJsonParseError::NoError) {
        *message = QStringLiteral("%1 is not JSON: %2").arg(file.fileName(), err.errorString());
        return kUsage;
    }
    if (!document.isObject()) {
        *message = QStringLiteral("%1 must hold one JSON object of options").arg(file.fileName());
        return kUsage;
    }
    const QJsonObject c = document.object();
    const auto label = [&](const QString &key) { return QStringLiteral("%1: \"%2\"").arg(file.fileName(), key); };
    static const QStringList texts{QStringLiteral("listen"), QStringLiteral("database"), QStringLiteral("tls_cert"),
                                   QStringLiteral("tls_key")};
    QStringList known = texts;
    known << QStringLiteral("allow_private_callbacks") << QStringLiteral("instance_retention_seconds");
    for (const Setting &setting : deliverySettings())
        known << setting.key;
    for (auto it = c.constBegin(); it != c.constEnd(); ++it) {
        if (!known.contains(it.key())) {
            *message = QStringLiteral("%1 is no option (known: %2)").arg(label(it.key()), known.join(QStringLiteral(", ")));
            return kUsage;
        }
        if (texts.contains(it.key()) && (!it->isString() || it->toString().isEmpty())) {
            *message = QStringLiteral("%1 expects a non-empty string").arg(label(it.key()));
            return kUsage;
        }
    }
    if (c.contains(QStringLiteral("listen"))
        && !parseListen(c.value(QStringLiteral("listen")).toString(), &options->host, &options->port)) {
        *message = QStringLiteral("%1 expects HOST:PORT, got %2").arg(label(QStringLiteral("listen")), c.value(QStringLiteral("listen")).toString());
        return kUsage;
    }
    options->databaseUrl = c.value(QStringLiteral("database")).toString();
    options->tlsCert = c.value(QStringLiteral("tls_cert")).toString();
    options->tlsKey = c.value(QStringLiteral("tls_key")).toString();
    if (c.contains(QStringLiteral("allow_private_callbacks"))) {
        const QJsonValue allow = c.value(QStringLiteral("allow_private_callbacks"));
        if (!allow.isBool()) {
            *message = QStringLiteral("%1 expects true or false").arg(label(QStringLiteral("allow_private_callbacks")));
            return kUsage;
        }
        options->allowPrivateCallbacks = allow.toBool();
    }
    // The older spelling of instance_retention, in whole seconds.
    QList<std::pair<QString, QString>> settings;
    if (c.contains(QStringLiteral("instance_retention_seconds")))
        settings.append({QStringLiteral("instance-retention"), QStringLiteral("instance_retention_seconds")});
    for (const Setting &setting : deliverySettings())
        if (c.contains(setting.key))
            settings.append({setting.flag, setting.key});
    for (const auto &[flag, key] : std::as_const(settings)) {
        const QJsonValue v = c.value(key);
        if (!v.isString() && !v.isDouble()) {
            *message = QStringLiteral("%1 expects a string or a number").arg(label(key));
            return kUsage;
        }
        const QString text = v.isString() ? v.toString() : QString::number(v.toDouble(), 'g', 17);
        if (!applySetting(flag, label(key), text, options, message))
            return kUsage;
    }
    return 0;
}

int serve(const QCommandLineParser &parser)
{
    ServerOptions options;
    if (parser.isSet(QStringLiteral("config"))) {
        QString message;
        if (const int rc = readConfig(parser.value(QStringLiteral("config")), &options, &message))
            return fail(rc, message);
    }
    for (const Setting &setting : deliverySettings()) {
        if (!parser.isSet(setting.flag))
            continue;
        QString message;
        if (!applySetting(setting.flag, QStringLiteral("--") + setting.flag, parser.value(setting.flag), &options, &message))
            return fail(kUsage, message);
    }
    if (parser.isSet(QStringLiteral("listen"))) {
        const QString listen = parser.value(QStringLiteral("listen"));
        if (!parseListen(listen, &options.host, &options.port))
            return fail(kUsage, QStringLiteral("--listen expects HOST:PORT, got %1").arg(listen));
    }
    if (parser.isSet(QStringLiteral("database")))
        options.databaseUrl = parser.value(QStringLiteral("database"));
    if (parser.isSet(QStringLiteral("allow-private-callbacks")))
        options.allowPrivateCallbacks = true;
    if (parser.isSet(QStringLiteral("tls-cert")))
        options.tlsCert = parser.value(QStringLiteral("tls-cert"));
    if (parser.isSet(QStringLiteral("tls-key")))
        options.tlsKey = parser.value(QStringLiteral("tls-key"));
    if (options.tlsCert.isEmpty() != options.tlsKey.isEmpty())
        return fail(kUsage, QStringLiteral("--tls-cert and --tls-key go together"));

    ControlPlane server(options);
    Problem problem;
    if (!server.start(&problem))
        return fail(kFailure, problem.detail.isEmpty() ? problem.title : problem.detail);
    std::printf("listening on %s\n", qPrintable(server.baseUrl().toString()));
    std::fflush(stdout);

    std::signal(SIGTERM, onSignal);
    std::signal(SIGINT, onSignal);
    // Signal handlers may only set a flag; the event loop notices it here.
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &server, [] {
        if (g_stopRequested)
            QCoreApplication::quit();
    });
    poll.start(100);
    const int rc = QCoreApplication::exec();
    server.stop();
    return rc;
}

// Who the audit trail names for what the command line does: an operator at the server's host.
Caller commandLine()
{
    return Caller{Actor::Operator, QStringLiteral("command line"), 0, {}};
}

int token(const QCommandLineParser &parser, const QStringList &args)
{
    if (args.size() < 2)
        return fail(kUsage, QStringLiteral("token needs create, list or revoke\n") + QLatin1String(kUsageText));
    Database db(parser.value(QStringLiteral("database")));
    QString message;
    const QString verb = args.at(1);
    if (verb == QLatin1String("create")) {
        const auto role = roleFromName(parser.value(QStringLiteral("role")));
        if (!role)
            return fail(kUsage, QStringLiteral("--role must be operator, provider or owner"));
        const QString subject = parser.value(QStringLiteral("subject"));
        if (*role != Actor::Operator && subject.isEmpty())
            return fail(kUsage, QStringLiteral("--subject is required for the %1 role").arg(actorName(*role)));
        const QString name = parser.isSet(QStringLiteral("name")) ? parser.value(QStringLiteral("name")).trimmed() : actorName(*role);
        if (const QString why = JsonReader::nameError(name); !why.isEmpty())
            return fail(kUsage, QStringLiteral("--name: %1").arg(why));
        if (!openDatabase(db, &message))
            return fail(kFailure, message);
        Journal journal(db);
        TokenStore store(db);
        TokenActions actions(db, journal, store);
        if (const QString why = actions.subjectProblem(*role, subject); !why.isEmpty())
            return fail(kUsage, QStringLiteral("--subject %1: %2").arg(subject, why));
        Problem p;
        QString bearer;
        if (!actions.create(commandLine(), *role, subject, name, QStringLiteral("opsdeck-server token create"), &bearer, &p))
            return fail(kFailure, p.detail);
        std::printf("%s\n", qPrintable(bearer));
        return 0;
    }
    if (verb == QLatin1String("list")) {
        if (!openDatabase(db, &message))
            return fail(kFailure, message);
        Problem p;
        QTextStream out(stdout);
        out << "ID\tROLE\tSUBJECT\tNAME\tCREATED\tREVOKED\n";
        qint64 after = 0;
        for (;;) {
            const auto page = TokenStore(db).list(after, 1000, &p);
            if (!p.isNull())
                return fail(kFailure, p.detail);
            for (const TokenRecord &t : page)
                out << t.id << '\t' << t.role << '\t' << t.subject << '\t' << t.name << '\t' << t.createdAt << '\t'
                    << (t.revokedAt.isEmpty() ? QStringLiteral("-") : t.revokedAt) << '\n';
            if (page.size() < 1000)
                break;
            after = page.last().id;
        }
        return 0;
    }
    if (verb == QLatin1String("revoke")) {
        bool ok = false;
        const qint64 id = args.value(2).toLongLong(&ok);
        if (!ok || id <= 0)
            return fail(kUsage, QStringLiteral("token revoke needs a token ID"));
        if (!openDatabase(db, &message))
            return fail(kFailure, message);
        Problem p;
        Journal journal(db);
        TokenStore store(db);
        bool already = false;
        const auto t = TokenActions(db, journal, store).revoke(commandLine(), id, QStringLiteral("opsdeck-server token revoke"),
                                                               &already, &p);
        if (!t)
            return fail(kFailure, p.isNull() ? QStringLiteral("no token %1").arg(id) : p.detail);
        std::printf(already ? "token %lld was revoked already\n" : "revoked token %lld\n", static_cast<long long>(id));
        return 0;
    }
    return fail(kUsage, QStringLiteral("unknown token command %1").arg(verb));
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("opsdeck-server"));
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeck"));
    QCoreApplication::setApplicationVersion(QStringLiteral("0.1.0"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("OpsDeck control plane"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOptions({
        {QStringLiteral("listen"), QStringLiteral("Address to listen on (port 0: ephemeral)."), QStringLiteral("HOST:PORT")},
        {QStringLiteral("database"), QStringLiteral("sqlite:///abs/path.db or postgresql://user[:pass]@host[:port]/db."), QStringLiteral("URL")},
        {QStringLiteral("config"), QStringLiteral("JSON configuration file."), QStringLiteral("FILE")},
        {QStringLiteral("tls-cert"), QStringLiteral("PEM certificate for HTTPS."), QStringLiteral("F")},
        {QStringLiteral("tls-key"), QStringLiteral("PEM private key for HTTPS."), QStringLiteral("F")},
        {QStringLiteral("allow-private-callbacks"), QStringLiteral("Allow callback URLs on loopback and private networks.")},
        {QStringLiteral("retry-schedule"), QStringLiteral("Delays between callback attempts, e.g. 5s,5m,30m,2h."), QStringLiteral("LIST")},
        {QStringLiteral("delivery-timeout"), QStringLiteral("Seconds one callback attempt may take (default 15)."), QStringLiteral("SECONDS")},
        {QStringLiteral("instance-retention"), QStringLiteral("How long a STOPPED instance is kept before destruction (default 7d)."), QStringLiteral("DURATION")},
        {QStringLiteral("auto-pause-window"), QStringLiteral("How long an endpoint may fail before it is paused (default 5d)."), QStringLiteral("DURATION")},
        {QStringLiteral("delivery-concurrency"), QStringLiteral("Callback attempts in flight per process to endpoints that answer well (default 256)."), QStringLiteral("N")},
        {QStringLiteral("endpoint-concurrency"), QStringLiteral("Callback attempts in flight per endpoint once it answers well (default 16)."), QStringLiteral("N")},
        {QStringLiteral("endpoint-stall-after"), QStringLiteral("Silence after which an endpoint that answered well, with attempts out, gets one at a time (default 5s)."), QStringLiteral("DURATION")},
        {QStringLiteral("feed-retention"), QStringLiteral("Change-feed events kept (default 100000)."), QStringLiteral("N")},
        {QStringLiteral("idle-timeout"), QStringLiteral("How long a connection may wait for its next whole request (default 75s)."), QStringLiteral("DURATION")},
        {QStringLiteral("role"), QStringLiteral("Token role."), QStringLiteral("operator|provider|owner")},
        {QStringLiteral("subject"), QStringLiteral("Token subject: provider id or owner name."), QStringLiteral("ID")},
        {QStringLiteral("name"), QStringLiteral("Token name."), QStringLiteral("TEXT")},
        {QStringLiteral("demo"), QStringLiteral("Seed the demo data set.")},
        {QStringLiteral("instances"), QStringLiteral("Number of demo instances (default 1000)."), QStringLiteral("N")},
    });
    parser.addPositionalArgument(QStringLiteral("command"), QStringLiteral("serve, migrate, token or seed"));
    if (!parser.parse(QCoreApplication::arguments()))
        return fail(kUsage, parser.errorText() + QLatin1Char('\n') + QLatin1String(kUsageText));
    if (parser.isSet(QStringLiteral("help"))) {
        std::printf("%s", kUsageText);
        return 0;
    }
    if (parser.isSet(QStringLiteral("version"))) {
        std::printf("opsdeck-server %s\n", qPrintable(QCoreApplication::applicationVersion()));
        return 0;
    }
    const QStringList args = parser.positionalArguments();
    const QString command = args.value(0);
    if (command == QLatin1String("serve"))
        return serve(parser);
    if (command == QLatin1String("token"))
        return token(parser, args);
    if (command == QLatin1String("migrate")) {
        if (!parser.isSet(QStringLiteral("database")))
            return fail(kUsage, QStringLiteral("migrate needs --database URL"));
        Database db(parser.value(QStringLiteral("database")));
        QString message;
        if (!openDatabase(db, &message))
            return fail(kFailure, message);
        std::printf("schema at version %d\n", db.schemaVersion());
        return 0;
    }
    if (command == QLatin1String("seed")) {
        if (!parser.isSet(QStringLiteral("demo")))
            return fail(kUsage, QStringLiteral("seed needs --demo"));
        bool ok = true;
        const int n = parser.isSet(QStringLiteral("instances")) ? parser.value(QStringLiteral("instances")).toInt(&ok) : 1000;
        if (!ok || n < 0 || n > 10000000)
            return fail(kUsage, QStringLiteral("--instances expects a number from 0 to 10000000"));
        Database db(parser.value(QStringLiteral("database")));
        QString message;
        if (!openDatabase(db, &message))
            return fail(kFailure, message);
        DemoSeeder seeder(db);
        Problem p;
        if (!seeder.seed(n, &p))
            return fail(kFailure, p.detail);
        std::printf("seeded %d organizations, %d providers, %d instances\n", seeder.counts().organizations,
                    seeder.counts().providers, seeder.counts().instances);
        return 0;
    }
    return fail(kUsage, (command.isEmpty() ? QStringLiteral("missing command\n") : QStringLiteral("unknown command %1\n").arg(command))
                            + QLatin1String(kUsageText));
}
