// The demo provider's receiver: verifies signatures, records requests and answers per fault mode.
#include "providerserver.h"

#include "httpconnection.h"

#include "core/webhooksignature.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QTimer>

#include <algorithm>

namespace OpsDeck::DemoProvider {

namespace {

const QList<QPair<ProviderServer::Mode, QString>> &modeTable()
{
    using Mode = ProviderServer::Mode;
    static const QList<QPair<Mode, QString>> table = {
        {Mode::Ok, QStringLiteral("ok")},
        {Mode::Fail, QStringLiteral("fail")},
        {Mode::Gone, QStringLiteral("gone")},
        {Mode::Throttle, QStringLiteral("throttle")},
        {Mode::Unavailable, QStringLiteral("unavailable")},
        {Mode::Hang, QStringLiteral("hang")},
        {Mode::Slow, QStringLiteral("slow")},
        {Mode::Redirect, QStringLiteral("redirect")},
        {Mode::Flaky, QStringLiteral("flaky")},
        {Mode::HangAfter, QStringLiteral("hang-after")},
    };
    return table;
}

// Notification bodies nest their fields in different ways ({"data": {"instance": {...}}},
// {"instance": {...}} or flat), so look in each place in turn.
QJsonValue findField(const QJsonObject &root, const QString &key, const QString &instanceKey = {})
{
    const QJsonObject data = root.value(QLatin1String("data")).toObject();
    const QJsonObject candidates[] = {root, data};
    for (const QJsonObject &object : candidates) {
        if (object.contains(key))
            return object.value(key);
        const QJsonObject instance = object.value(QLatin1String("instance")).toObject();
        const QString nestedKey = instanceKey.isEmpty() ? key : instanceKey;
        if (instance.contains(nestedKey))
            return instance.value(nestedKey);
    }
    return QJsonValue::Null;
}

QJsonValue headerValue(const HttpRequest &request, const QByteArray &name)
{
    const QByteArray value = request.header(name);
    return value.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(QString::fromUtf8(value));
}

} // namespace

std::optional<ProviderServer::Mode> ProviderServer::modeFromName(const QString &name)
{
    for (const auto &[mode, text] : modeTable()) {
        if (text == name)
            return mode;
    }
    return std::nullopt;
}

QString ProviderServer::modeName(Mode mode)
{
    for (const auto &[candidate, text] : modeTable()) {
        if (candidate == mode)
            return text;
    }
    return {};
}

QStringList ProviderServer::modeNames()
{
    QStringList names;
    for (const auto &entry : modeTable())
        names.append(entry.second);
    return names;
}

ProviderServer::ProviderServer(Options options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
{
}

QString ProviderServer::start()
{
    for (const QByteArray &secret : std::as_const(m_options.secrets)) {
        const WebhookSignature::DecodedSecret decoded = WebhookSignature::decodeSecret(QString::fromLatin1(secret));
        if (!decoded.ok())
            return QStringLiteral("--secret %1: %2").arg(QString::fromLatin1(secret), decoded.error);
        m_keys.append(decoded.key);
    }
    if (!m_options.logPath.isEmpty()) {
        const QString error = m_log.open(m_options.logPath, m_options.flushIntervalMs);
        if (!error.isEmpty())
            return error;
    }
    return {};
}

quint16 ProviderServer::listen(const QHostAddress &address, quint16 port, QString *error)
{
    auto *server = new QTcpServer(this);
    // Benchmarks open hundreds of connections at once.
    server->setListenBacklogSize(1024);
    server->setMaxPendingConnections(1024);
    connect(server, &QTcpServer::newConnection, this, [this, server] { accept(server); });
    if (!server->listen(address, port)) {
        *error = QStringLiteral("cannot listen on %1:%2: %3").arg(address.toString()).arg(port).arg(server->errorString());
        delete server;
        return 0;
    }
    return server->serverPort();
}

void ProviderServer::accept(QTcpServer *server)
{
    while (QTcpSocket *socket = server->nextPendingConnection()) {
        auto *connection = new HttpConnection(socket, this);
        connect(connection, &HttpConnection::requestReceived, this,
                [this, connection](const HttpRequest &request) { handle(connection, request); });
        connect(connection, &HttpConnection::malformedRequest, this, [this](int status, const QString &reason) {
            ++m_malformed;
            QJsonObject entry;
            entry.insert(QLatin1String("received_at"),
                         QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
            entry.insert(QLatin1String("malformed"), reason);
            entry.insert(QLatin1String("answered"), status);
            m_log.append(QJsonDocument(entry).toJson(QJsonDocument::Compact));
        });
    }
}

ProviderServer::Route ProviderServer::routeFor(const QByteArray &path) const
{
    Route route;
    route.mode = m_options.defaultMode;
    const QList<QByteArray> segments = path.mid(1).split('/');
    const std::optional<Mode> mode = modeFromName(QString::fromLatin1(segments.first()));
    if (!mode)
        return route;
    route.mode = *mode;
    route.isDefault = false;
    if (segments.size() > 1) {
        bool ok = false;
        const int value = segments.at(1).toInt(&ok);
        if (ok && value >= 0)
            route.parameter = value;
    }
    if (route.parameter >= 0 && segments.size() > 2) {
        bool ok = false;
        const int value = segments.at(2).toInt(&ok);
        if (ok && value >= 0)
            route.second = value;
    }
    return route;
}

void ProviderServer::handle(HttpConnection *connection, const HttpRequest &request)
{
    const QByteArray json = "application/json";
    if (request.method == "GET" && request.path == "/stats") {
        connection->respond(200, statsJson(), {{"Content-Type", json}, {"Cache-Control", "no-store"}});
        return;
    }

    const QDateTime now = QDateTime::currentDateTimeUtc();
    QJsonObject entry;
    entry.insert(QLatin1String("received_at"), now.toString(Qt::ISODateWithMs));
    entry.insert(QLatin1String("method"), QString::fromLatin1(request.method));
    entry.insert(QLatin1String("path"), QString::fromUtf8(request.target));
    entry.insert(QLatin1String("webhook_id"), headerValue(request, "webhook-id"));
    entry.insert(QLatin1String("webhook_timestamp"), headerValue(request, "webhook-timestamp"));

    // Signature: Standard Webhooks when its header is there (or nothing is), else X-Hub-Signature.
    QJsonValue signatureValid = QJsonValue::Null;
    if (!m_options.secrets.isEmpty()) {
        const QByteArray standard = request.header("webhook-signature");
        const QByteArray hub = request.header("x-hub-signature");
        QString error;
        if (!standard.isEmpty() || hub.isEmpty()) {
            const WebhookSignature::Verification verification = WebhookSignature::verify(
                request.header("webhook-id"), request.header("webhook-timestamp"), standard, request.body, m_keys,
                now, std::chrono::seconds(m_options.toleranceSecs));
            signatureValid = verification.ok();
            error = verification.message;
            entry.insert(QLatin1String("signature_scheme"), QLatin1String("standard-webhooks"));
            if (verification.ok())
                entry.insert(QLatin1String("signatures"), standard.simplified().count(' ') + 1);
        } else {
            const bool valid = WebhookSignature::verifyHubSignature(request.body, hub, m_options.secrets);
            signatureValid = valid;
            if (!valid)
                error = QStringLiteral("X-Hub-Signature does not match");
            entry.insert(QLatin1String("signature_scheme"), QLatin1String("x-hub-signature"));
        }
        if (!error.isEmpty())
            entry.insert(QLatin1String("signature_error"), error);
    }
    entry.insert(QLatin1String("signature_valid"), signatureValid);

    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (!request.body.isEmpty() && (parseError.error != QJsonParseError::NoError || !document.isObject()))
        entry.insert(QLatin1String("body_error"), parseError.error != QJsonParseError::NoError
                                                      ? parseError.errorString()
                                                      : QStringLiteral("not a JSON object"));
    const QJsonObject body = document.object();
    QJsonValue type = findField(body, QStringLiteral("type"));
    if (type.isNull())
        type = findField(body, QStringLiteral("event_type"));
    entry.insert(QLatin1String("type"), type);
    entry.insert(QLatin1String("instance_id"), findField(body, QStringLiteral("instance_id"), QStringLiteral("id")));
    entry.insert(QLatin1String("status"), findField(body, QStringLiteral("status")));
    entry.insert(QLatin1String("version"), findField(body, QStringLiteral("version")));

    // The answer.
    const Route route = routeFor(request.path);
    int status = 200;
    int delayMs = 0;
    bool hang = false;
    HttpConnection::Headers headers = {{"Content-Type", json}};
    auto retryAfter = [&] {
        return QByteArray::number(route.parameter >= 0 ? route.parameter : m_options.retryAfterSecs);
    };
    if (m_options.rejectInvalid && signatureValid == QJsonValue(false)) {
        status = 401;
    } else {
        switch (route.mode) {
        case Mode::Ok:
            break;
        case Mode::Fail:
            status = 500;
            break;
        case Mode::Gone:
            status = 410;
            break;
        case Mode::Throttle:
            status = 429;
            headers.append({"Retry-After", retryAfter()});
            break;
        case Mode::Unavailable:
            status = 503;
            headers.append({"Retry-After", retryAfter()});
            break;
        case Mode::Hang:
            hang = true;
            break;
        case Mode::Slow:
            delayMs = route.parameter >= 0 ? route.parameter : m_options.delayMs;
            break;
        case Mode::Redirect: {
            status = 302;
            const QByteArray host = request.header("host");
            headers.append({"Location", host.isEmpty() ? QByteArray("/ok/redirected")
                                                       : "http://" + host + "/ok/redirected"});
            break;
        }
        case Mode::HangAfter:
            // Counted per path: each instance URL of a provider host that stops answering.
            hang = ++m_pathRequests[request.path] > (route.parameter >= 0 ? route.parameter : 100);
            delayMs = std::max(0, route.second);
            break;
        case Mode::Flaky: {
            const int percent = route.parameter >= 0 ? route.parameter : 50;
            if (int(QRandomGenerator::global()->bounded(100)) < percent)
                status = 500;
            break;
        }
        }
        if (route.isDefault && status == 200 && m_options.failPercent > 0
            && int(QRandomGenerator::global()->bounded(100)) < m_options.failPercent)
            status = 500;
    }

    // Statistics and the log line, written when the request arrives so a hang is recorded too.
    ++m_received;
    if (signatureValid.isNull())
        ++m_unsigned;
    else if (signatureValid.toBool())
        ++m_valid;
    else
        ++m_invalid;
    const QByteArray webhookId = request.header("webhook-id");
    if (!webhookId.isEmpty()) {
        if (m_webhookIds.contains(webhookId))
            ++m_duplicates;
        else
            m_webhookIds.insert(webhookId);
    }
    const QString modeText = modeName(route.mode);
    ++m_byMode[modeText];
    ++m_byStatus[hang ? QStringLiteral("none") : QString::number(status)];
    entry.insert(QLatin1String("mode"), modeText);
    entry.insert(QLatin1String("answered"), hang ? QJsonValue(QJsonValue::Null) : QJsonValue(status));
    m_log.append(QJsonDocument(entry).toJson(QJsonDocument::Compact));

    if (hang) {
        ++m_hanging;
        connect(connection, &QObject::destroyed, this, [this] { --m_hanging; });
        return;
    }
    const QByteArray answer = "{\"mode\":\"" + modeText.toLatin1() + "\",\"status\":" + QByteArray::number(status) + '}';
    if (delayMs > 0) {
        QTimer::singleShot(delayMs, connection, [connection, status, answer, headers] {
            connection->respond(status, answer, headers);
        });
        return;
    }
    connection->respond(status, answer, headers);
}

QByteArray ProviderServer::statsJson() const
{
    QJsonObject byStatus;
    for (auto it = m_byStatus.cbegin(); it != m_byStatus.cend(); ++it)
        byStatus.insert(it.key(), it.value());
    QJsonObject byMode;
    for (auto it = m_byMode.cbegin(); it != m_byMode.cend(); ++it)
        byMode.insert(it.key(), it.value());
    QJsonObject stats;
    stats.insert(QLatin1String("received"), m_received);
    stats.insert(QLatin1String("valid"), m_valid);
    stats.insert(QLatin1String("invalid"), m_invalid);
    stats.insert(QLatin1String("unsigned"), m_unsigned);
    stats.insert(QLatin1String("malformed"), m_malformed);
    stats.insert(QLatin1String("unique_webhook_ids"), qint64(m_webhookIds.size()));
    stats.insert(QLatin1String("duplicates"), m_duplicates);
    stats.insert(QLatin1String("hanging"), m_hanging);
    stats.insert(QLatin1String("by_status"), byStatus);
    stats.insert(QLatin1String("by_mode"), byMode);
    return QJsonDocument(stats).toJson(QJsonDocument::Compact);
}

} // namespace OpsDeck::DemoProvider
