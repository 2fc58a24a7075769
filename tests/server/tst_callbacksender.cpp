// The callback sender against the real demo provider: every fault mode's classification,
// signatures seen valid by the receiver, secret rotation, X-Hub-Signature and the URL guard;
// against loopback servers of its own: TLS peer names, connection reuse and caps, bodies that
// stall or never end.
#include "server/delivery/callbacksender.h"

#include "core/webhooksignature.h"
#include "testsupport.h"

#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>

#include <functional>

using namespace OpsDeck;
using namespace std::chrono_literals;

namespace {

const QByteArray SecretA = QByteArrayLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray SecretB = QByteArrayLiteral("whsec_QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=");
const QString ProviderPath = QStringLiteral(OPSDECK_BINARY_DIR "/tools/opsdeck-demo-provider/opsdeck-demo-provider");

// Serves loopback clients: whenever bytes containing `marker` arrive (after they are read),
// `answer` writes to that socket. An empty marker answers any bytes (a TLS hello is not HTTP).
void answerRequests(QTcpServer *server, const QByteArray &marker, const std::function<void(QTcpSocket *)> &answer)
{
    QObject::connect(server, &QTcpServer::newConnection, server, [server, marker, answer] {
        while (QTcpSocket *socket = server->nextPendingConnection()) {
            QObject::connect(socket, &QTcpSocket::readyRead, socket, [socket, marker, answer] {
                if (socket->readAll().contains(marker))
                    answer(socket);
            });
        }
    });
}

QByteArray headerValue(const AttemptResult::Headers &headers, const QByteArray &name)
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

} // namespace

class tst_CallbackSender final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void classification_data();
    void classification();
    void vettedHostReused();
    void connectionRefused();
    void requestHeaders();
    void rotationSendsBothSignatures();
    void hubSignature();
    void strictGuard_data();
    void strictGuard();
    void responseBodyIsTruncated();
    void manyConcurrentSends();
    void callbackWithContext();
    void abortAllReportsEveryAttempt();
    void isolationKeepsHangsInTheirPool();
    void providerStatsMatchItsLog();
    void providerServesSeveralPorts();
    void sequentialSendsShareOneConnection();
    void idleConnectionsAreClosed();
    void connectionCapIsConfigurable();
    void stalledBodyTimesOut();
    void endlessBodyIsCutShort();
    void tlsPeerName_data();
    void tlsPeerName();
    void tlsToAPlainServer();
    void deletedFromItsOwnCallback_data();
    void deletedFromItsOwnCallback();

private:
    struct Provider
    {
        QProcess *process = nullptr;
        QString baseUrl;
        QString logPath;
    };

    void startProvider(Provider *provider, const QString &name, const QByteArray &secret);
    void send(CallbackSender &sender, const CallbackRequest &request, AttemptResult *result);
    // The provider's log line for a webhook id, or an empty object when not (yet) written.
    QJsonObject logEntry(const Provider &provider, const QByteArray &webhookId) const;
    CallbackRequest request(const QString &url, const QByteArray &webhookId) const;

    Provider m_providerA; // knows SecretA
    Provider m_providerB; // knows SecretB
    int m_nextId = 1;
};

void tst_CallbackSender::startProvider(Provider *provider, const QString &name, const QByteArray &secret)
{
    QVERIFY2(QFileInfo::exists(ProviderPath), qPrintable(ProviderPath));
    provider->logPath = Test::scratchDir() + QLatin1Char('/') + name + QStringLiteral(".jsonl");
    provider->process = new QProcess(this);
    provider->process->setProgram(ProviderPath);
    provider->process->setArguments({QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                                     QStringLiteral("--secret"), QString::fromLatin1(secret),
                                     QStringLiteral("--log"), provider->logPath,
                                     QStringLiteral("--flush-ms"), QStringLiteral("10")});
    provider->process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    provider->process->start();
    QVERIFY(provider->process->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(provider->process->canReadLine(), 10000);
    const QString line = QString::fromUtf8(provider->process->readLine()).trimmed();
    QVERIFY2(line.startsWith(QLatin1String("listening on http://127.0.0.1:")), qPrintable(line));
    provider->baseUrl = line.mid(int(qstrlen("listening on ")));
}

void tst_CallbackSender::initTestCase()
{
    startProvider(&m_providerA, QStringLiteral("provider-a"), SecretA);
    startProvider(&m_providerB, QStringLiteral("provider-b"), SecretB);
}

void tst_CallbackSender::cleanupTestCase()
{
    for (Provider *provider : {&m_providerA, &m_providerB}) {
        if (!provider->process)
            continue;
        provider->process->terminate();
        QVERIFY(provider->process->waitForFinished(10000));
        // SIGTERM flushes the log and exits cleanly.
        QCOMPARE(provider->process->exitStatus(), QProcess::NormalExit);
        QCOMPARE(provider->process->exitCode(), 0);
    }
}

CallbackRequest tst_CallbackSender::request(const QString &url, const QByteArray &webhookId) const
{
    CallbackRequest request;
    request.url = QUrl(url);
    request.webhookId = webhookId;
    request.body = QByteArrayLiteral(R"({"type":"instance.status_changed","data":{"instance":{"id":"inst-1","status":"STOPPED","version":4}}})");
    request.secrets = {SecretA};
    return request;
}

void tst_CallbackSender::send(CallbackSender &sender, const CallbackRequest &request, AttemptResult *result)
{
    QSignalSpy spy(&sender, &CallbackSender::finished);
    const quint64 id = sender.send(request);
    QCOMPARE(spy.count(), 0); // never reported from inside send()
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 1, 30000);
    QCOMPARE(spy.at(0).at(0).toULongLong(), id);
    *result = spy.at(0).at(1).value<AttemptResult>();
    QCOMPARE(sender.inFlight(), 0);
}

QJsonObject tst_CallbackSender::logEntry(const Provider &provider, const QByteArray &webhookId) const
{
    QFile file(provider.logPath);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QString id = QString::fromLatin1(webhookId);
    QJsonObject found;
    for (const QByteArray &line : file.readAll().split('\n')) {
        const QJsonObject entry = QJsonDocument::fromJson(line).object();
        if (entry.value(QLatin1String("webhook_id")).toString() == id)
            found = entry;
    }
    return found;
}

void tst_CallbackSender::classification_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<int>("timeoutMs");
    QTest::addColumn<bool>("delivered");
    QTest::addColumn<int>("httpStatus");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<bool>("gone");
    QTest::addColumn<int>("retryAfterSecs"); // -1: none expected
    QTest::addColumn<int>("reachesProvider"); // 1 must, 0 must not, -1 either (a timeout may strike first)

    QTest::newRow("ok") << "/ok/a" << 10000 << true << 200 << "" << false << -1 << 1;
    QTest::newRow("500") << "/fail/a" << 10000 << false << 500 << "http" << false << -1 << 1;
    QTest::newRow("410 gone") << "/gone/a" << 10000 << false << 410 << "http" << true << -1 << 1;
    QTest::newRow("429 retry-after") << "/throttle/120/a" << 10000 << false << 429 << "http" << false << 120 << 1;
    QTest::newRow("503 retry-after") << "/unavailable/30/a" << 10000 << false << 503 << "http" << false << 30 << 1;
    QTest::newRow("hang times out") << "/hang/a" << 1000 << false << 0 << "timeout" << false << -1 << -1;
    QTest::newRow("slow within timeout") << "/slow/150/a" << 10000 << true << 200 << "" << false << -1 << 1;
    QTest::newRow("slow past timeout") << "/slow/5000/a" << 1000 << false << 0 << "timeout" << false << -1 << -1;
    QTest::newRow("redirect not followed") << "/redirect/a" << 10000 << false << 302 << "http" << false << -1 << 1;
    QTest::newRow("flaky always") << "/flaky/100/a" << 10000 << false << 500 << "http" << false << -1 << 1;
    QTest::newRow("unresolvable host") << "http://opsdeck-test.invalid/ok" << 10000 << false << 0 << "dns" << false
                                       << -1 << 0;
    QTest::newRow("bad scheme") << "ftp://127.0.0.1/ok" << 10000 << false << 0 << "invalid-url" << false << -1
                                << 0;
    QTest::newRow("no host") << "http:///ok" << 10000 << false << 0 << "invalid-url" << false << -1 << 0;
    // A host name goes through resolution and is pinned to the address; the Host header keeps
    // the name (the redirect's Location is built from it).
    QTest::newRow("localhost name") << "localhost:/ok/a" << 10000 << true << 200 << "" << false << -1 << 1;
    QTest::newRow("localhost redirect") << "localhost:/redirect/a" << 10000 << false << 302 << "http" << false << -1
                                        << 1;
}

void tst_CallbackSender::classification()
{
    QFETCH(QString, path);
    QFETCH(int, timeoutMs);
    QFETCH(bool, delivered);
    QFETCH(int, httpStatus);
    QFETCH(QString, errorClass);
    QFETCH(bool, gone);
    QFETCH(int, retryAfterSecs);
    QFETCH(int, reachesProvider);

    QString url = path;
    if (path.startsWith(QLatin1Char('/')))
        url = m_providerA.baseUrl + path;
    else if (path.startsWith(QLatin1String("localhost:")))
        url = QStringLiteral("http://localhost:%1%2").arg(QUrl(m_providerA.baseUrl).port()).arg(path.mid(10));

    CallbackSender sender(CallbackUrlGuard(true));
    const QByteArray webhookId = "msg_class_" + QByteArray::number(m_nextId++);
    CallbackRequest req = request(url, webhookId);
    req.timeout = std::chrono::milliseconds(timeoutMs);
    const QDateTime before = QDateTime::currentDateTimeUtc();
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;

    QCOMPARE(result.errorClass, errorClass);
    QCOMPARE(result.delivered, delivered);
    QCOMPARE(result.httpStatus, httpStatus);
    QCOMPARE(result.gone, gone);
    QCOMPARE(result.errorMessage.isEmpty(), delivered);
    QCOMPARE(result.url, QUrl(url));
    QCOMPARE(result.requestBody, req.body);
    QVERIFY(result.startedAt >= before.addSecs(-1));
    QVERIFY(result.latencyMs >= 0);
    if (retryAfterSecs >= 0) {
        QVERIFY(result.retryAfter);
        const qint64 seconds = before.secsTo(*result.retryAfter);
        QVERIFY2(seconds >= retryAfterSecs - 1 && seconds <= retryAfterSecs + 5, qPrintable(QString::number(seconds)));
        QCOMPARE(headerValue(result.responseHeaders, "Retry-After"), QByteArray::number(retryAfterSecs));
    } else {
        QVERIFY(!result.retryAfter);
    }
    if (httpStatus > 0) {
        // The provider's answer body is recorded.
        QVERIFY2(result.responseBody.contains("\"status\":" + QByteArray::number(httpStatus)), result.responseBody.constData());
    }
    if (httpStatus == 302) {
        QVERIFY(result.errorMessage.contains(QLatin1String("not followed")));
        const QByteArray location = headerValue(result.responseHeaders, "Location");
        QVERIFY(location.endsWith("/ok/redirected"));
        // The provider builds Location from the Host header it received.
        QCOMPARE(QUrl(QString::fromLatin1(location)).host(), QUrl(url).host());
    }

    if (reachesProvider == 1) {
        QJsonObject entry;
        QTRY_VERIFY_WITH_TIMEOUT(!(entry = logEntry(m_providerA, webhookId)).isEmpty(), 10000);
        QCOMPARE(entry.value(QLatin1String("signature_valid")), QJsonValue(true));
        QCOMPARE(entry.value(QLatin1String("instance_id")).toString(), QStringLiteral("inst-1"));
        QCOMPARE(entry.value(QLatin1String("status")).toString(), QStringLiteral("STOPPED"));
        QCOMPARE(entry.value(QLatin1String("version")).toInt(), 4);
        QCOMPARE(entry.value(QLatin1String("path")).toString(), QUrl(url).path());
    } else if (reachesProvider == 0) {
        QCOMPARE(logEntry(m_providerA, webhookId), QJsonObject());
    }
}

// A name is looked up once and its vetted address reused by the next attempts for a while; a
// name that failed to resolve is not kept.
void tst_CallbackSender::vettedHostReused()
{
    CallbackSender sender(CallbackUrlGuard(true));
    const QString url = QStringLiteral("http://localhost:%1/ok/vetted").arg(QUrl(m_providerA.baseUrl).port());
    QCOMPARE(sender.vettedHosts(), 0);
    AttemptResult first;
    send(sender, request(url, "msg_vetted_1"), &first);
    QVERIFY2(first.delivered, qPrintable(first.errorMessage));
    QCOMPARE(sender.vettedHosts(), 1);
    AttemptResult second;
    send(sender, request(url, "msg_vetted_2"), &second);
    QVERIFY2(second.delivered, qPrintable(second.errorMessage));
    QCOMPARE(headerValue(second.requestHeaders, "webhook-id"), QByteArray("msg_vetted_2"));
    QCOMPARE(sender.vettedHosts(), 1);
    AttemptResult unresolvable;
    send(sender, request(QStringLiteral("http://opsdeck-test.invalid/ok"), "msg_vetted_3"), &unresolvable);
    QCOMPARE(unresolvable.errorClass, QStringLiteral("dns"));
    QCOMPARE(sender.vettedHosts(), 1);
}

void tst_CallbackSender::connectionRefused()
{
    // A port that was just free and is closed again: nothing listens there.
    QTcpServer probe;
    QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
    const quint16 port = probe.serverPort();
    probe.close();

    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("http://127.0.0.1:%1/ok").arg(port), "msg_refused"), &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("connect"));
    QCOMPARE(result.httpStatus, 0);
    QVERIFY(!result.delivered);
    QVERIFY(!result.errorMessage.isEmpty());
}

void tst_CallbackSender::requestHeaders()
{
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    const QDateTime before = QDateTime::currentDateTimeUtc();
    send(sender, request(m_providerA.baseUrl + QStringLiteral("/ok/headers"), "msg_headers"), &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(headerValue(result.requestHeaders, "content-type"), QByteArray("application/json"));
    QCOMPARE(headerValue(result.requestHeaders, "user-agent"), QByteArray("OpsDeck-Webhooks/1"));
    QCOMPARE(headerValue(result.requestHeaders, "webhook-id"), QByteArray("msg_headers"));
    QCOMPARE(result.webhookTimestamp, result.startedAt.toSecsSinceEpoch());
    QVERIFY(qAbs(result.webhookTimestamp - before.toSecsSinceEpoch()) <= 2);
    QCOMPARE(headerValue(result.requestHeaders, "webhook-timestamp"), QByteArray::number(result.webhookTimestamp));
    // The log never holds a replayable signature.
    QCOMPARE(headerValue(result.requestHeaders, "webhook-signature"), QByteArray("v1,[redacted]"));
    QCOMPARE(headerValue(result.responseHeaders, "Content-Type"), QByteArray("application/json"));

    const QJsonObject json = result.toJson();
    QCOMPARE(json.value(QLatin1String("http_status")).toInt(), 200);
    QCOMPARE(json.value(QLatin1String("error_class")), QJsonValue());
    QVERIFY(!QJsonDocument(json).toJson().contains(WebhookSignature::decodeSecret(QString::fromLatin1(SecretA)).key.toBase64()));
}

void tst_CallbackSender::rotationSendsBothSignatures()
{
    // During a rotation the new secret (B) signs first and the old one (A) still signs: a
    // receiver that only knows either one accepts the same request.
    CallbackSender sender(CallbackUrlGuard(true));
    for (Provider *provider : {&m_providerA, &m_providerB}) {
        const QByteArray webhookId = "msg_rotation_" + QByteArray::number(m_nextId++);
        CallbackRequest req = request(provider->baseUrl + QStringLiteral("/ok/rotation"), webhookId);
        req.secrets = {SecretB, SecretA};
        AttemptResult result;
        send(sender, req, &result);
        if (QTest::currentTestFailed())
            return;
        QVERIFY(result.delivered);
        QCOMPARE(headerValue(result.requestHeaders, "webhook-signature"), QByteArray("v1,[redacted] v1,[redacted]"));
        QJsonObject entry;
        QTRY_VERIFY_WITH_TIMEOUT(!(entry = logEntry(*provider, webhookId)).isEmpty(), 10000);
        QCOMPARE(entry.value(QLatin1String("signature_valid")), QJsonValue(true));
        QCOMPARE(entry.value(QLatin1String("signatures")).toInt(), 2);
    }

    // After the grace period only B signs: the receiver still on A notices.
    const QByteArray webhookId = "msg_rotated_" + QByteArray::number(m_nextId++);
    CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/ok/rotated"), webhookId);
    req.secrets = {SecretB};
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QJsonObject entry;
    QTRY_VERIFY_WITH_TIMEOUT(!(entry = logEntry(m_providerA, webhookId)).isEmpty(), 10000);
    QCOMPARE(entry.value(QLatin1String("signature_valid")), QJsonValue(false));
}

void tst_CallbackSender::hubSignature()
{
    CallbackSender sender(CallbackUrlGuard(true));
    const QByteArray webhookId = "msg_hub_" + QByteArray::number(m_nextId++);
    CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/ok/hub"), webhookId);
    req.scheme = SigningScheme::HubSignature;
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(headerValue(result.requestHeaders, "X-Hub-Signature"), QByteArray("sha1=[redacted]"));
    QVERIFY(headerValue(result.requestHeaders, "webhook-signature").isEmpty());
    QJsonObject entry;
    QTRY_VERIFY_WITH_TIMEOUT(!(entry = logEntry(m_providerA, webhookId)).isEmpty(), 10000);
    QCOMPARE(entry.value(QLatin1String("signature_scheme")).toString(), QStringLiteral("x-hub-signature"));
    QCOMPARE(entry.value(QLatin1String("signature_valid")), QJsonValue(true));

    // Signed with the other provider's secret, the receiver refuses it.
    const QByteArray otherId = "msg_hub_" + QByteArray::number(m_nextId++);
    req = request(m_providerA.baseUrl + QStringLiteral("/ok/hub"), otherId);
    req.scheme = SigningScheme::HubSignature;
    req.secrets = {SecretB};
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY_WITH_TIMEOUT(!(entry = logEntry(m_providerA, otherId)).isEmpty(), 10000);
    QCOMPARE(entry.value(QLatin1String("signature_valid")), QJsonValue(false));
}

void tst_CallbackSender::strictGuard_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<QString>("detail");
    QTest::newRow("loopback literal") << "PROVIDER/ok/strict" << "invalid-url" << "loopback";
    QTest::newRow("localhost name") << "http://localhost:1/ok" << "invalid-url" << "loopback name";
    QTest::newRow("private literal") << "http://10.0.0.1/ok" << "invalid-url" << "private";
    QTest::newRow("mapped loopback") << "http://[::ffff:127.0.0.1]:1/ok" << "invalid-url" << "loopback";
    QTest::newRow("unresolvable") << "http://opsdeck-strict.invalid/ok" << "dns" << "opsdeck-strict.invalid";
    QTest::newRow("missing secret") << "SECRETLESS" << "signing" << "no signing secret";
    QTest::newRow("bad secret") << "BADSECRET" << "signing" << "base64";
}

void tst_CallbackSender::strictGuard()
{
    QFETCH(QString, url);
    QFETCH(QString, errorClass);
    QFETCH(QString, detail);
    CallbackSender sender{CallbackUrlGuard()};
    const QByteArray webhookId = "msg_strict_" + QByteArray::number(m_nextId++);
    CallbackRequest req = request(url.replace(QLatin1String("PROVIDER"), m_providerA.baseUrl), webhookId);
    if (url == QLatin1String("SECRETLESS")) {
        req = request(m_providerA.baseUrl + QStringLiteral("/ok/strict"), webhookId);
        req.secrets.clear();
    } else if (url == QLatin1String("BADSECRET")) {
        req = request(m_providerA.baseUrl + QStringLiteral("/ok/strict"), webhookId);
        req.secrets = {QByteArrayLiteral("whsec_!!!")};
    }
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, errorClass);
    QVERIFY2(result.errorMessage.contains(detail), qPrintable(result.errorMessage));
    QCOMPARE(result.httpStatus, 0);
    // Nothing reached the provider: the attempt stopped before connecting.
    QCOMPARE(logEntry(m_providerA, webhookId), QJsonObject());
}

void tst_CallbackSender::responseBodyIsTruncated()
{
    // A receiver answering 10 KiB: only the first 4 KiB are kept for the attempt log.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "\r\n\r\n", [](QTcpSocket *socket) {
        const QByteArray body(10 * 1024, 'x');
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(body.size())
                      + "\r\nConnection: close\r\n\r\n" + body);
        socket->disconnectFromHost();
    });
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("http://127.0.0.1:%1/big").arg(server.serverPort()), "msg_big"), &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(result.responseBody.size(), AttemptResult::MaxResponseBodyBytes);
    QVERIFY(result.responseTruncated);
}

void tst_CallbackSender::manyConcurrentSends()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    QSet<quint64> ids;
    constexpr int Count = 40;
    for (int i = 0; i < Count; ++i) {
        // Half of them hang. They share one pool with the others, so its 6 connections are
        // taken by hangs until they time out; every attempt must still end, classified.
        const QString path = i % 2 ? QStringLiteral("/hang/many") : QStringLiteral("/slow/50/many");
        CallbackRequest req = request(m_providerA.baseUrl + path, "msg_many_" + QByteArray::number(i));
        req.timeout = i % 2 ? 1s : 20s;
        ids.insert(sender.send(req));
    }
    QCOMPARE(ids.size(), Count);
    QCOMPARE(sender.inFlight(), Count);
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), Count, 30000);
    int delivered = 0;
    int timedOut = 0;
    for (const QList<QVariant> &arguments : std::as_const(spy)) {
        QVERIFY(ids.remove(arguments.at(0).toULongLong()));
        const AttemptResult result = arguments.at(1).value<AttemptResult>();
        delivered += result.delivered ? 1 : 0;
        timedOut += result.errorClass == QLatin1String("timeout") ? 1 : 0;
    }
    QCOMPARE(delivered, Count / 2);
    QCOMPARE(timedOut, Count / 2);
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSender::callbackWithContext()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    int calls = 0;
    AttemptResult seen;
    QObject context;
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/ok/cb"), "msg_cb_1"), &context,
                [&calls, &seen](const AttemptResult &result) {
                    ++calls;
                    seen = result;
                });
    auto *gone = new QObject;
    int goneCalls = 0;
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/ok/cb"), "msg_cb_2"), gone,
                [&goneCalls](const AttemptResult &) { ++goneCalls; });
    delete gone;
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 20000);
    QCOMPARE(calls, 1);
    QVERIFY(seen.delivered);
    QCOMPARE(goneCalls, 0);
}

void tst_CallbackSender::abortAllReportsEveryAttempt()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QSignalSpy spy(&sender, &CallbackSender::finished);
    sender.send(request(m_providerA.baseUrl + QStringLiteral("/hang/abort"), "msg_abort_1"));
    sender.send(request(QStringLiteral("http://opsdeck-abort.invalid/x"), "msg_abort_2"));
    // Wait until the hanging request is really at the provider before pulling the plug.
    QTRY_VERIFY_WITH_TIMEOUT(!logEntry(m_providerA, "msg_abort_1").isEmpty() || spy.count() > 0, 10000);
    sender.abortAll();
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 10000);
    for (const QList<QVariant> &arguments : std::as_const(spy)) {
        const AttemptResult result = arguments.at(1).value<AttemptResult>();
        QVERIFY(!result.delivered);
        QVERIFY2(result.errorClass == QLatin1String("connect") || result.errorClass == QLatin1String("dns"),
                 qPrintable(result.errorClass));
    }
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSender::isolationKeepsHangsInTheirPool()
{
    CallbackSender sender(CallbackUrlGuard(true));
    QCOMPARE(sender.maxConnectionsPerPool(), 6);
    QSignalSpy spy(&sender, &CallbackSender::finished);
    // Eight hanging attempts of one endpoint: they fill that pool's 6 connections, 2 queue.
    for (int i = 0; i < 8; ++i) {
        CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/hang/isolated"),
                                      "msg_isolated_hang_" + QByteArray::number(i));
        req.isolationKey = QStringLiteral("endpoint-hanging");
        req.timeout = 60s;
        sender.send(req);
    }
    const auto hangsAtProvider = [this] {
        int count = 0;
        for (int i = 0; i < 8; ++i)
            count += logEntry(m_providerA, "msg_isolated_hang_" + QByteArray::number(i)).isEmpty() ? 0 : 1;
        return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), 6, 20000);

    // Another endpoint on the same host:port is not stuck behind them.
    CallbackRequest ok = request(m_providerA.baseUrl + QStringLiteral("/ok/isolated"), "msg_isolated_ok");
    ok.isolationKey = QStringLiteral("endpoint-healthy");
    ok.timeout = 60s;
    const quint64 okId = sender.send(ok);
    QTRY_VERIFY_WITH_TIMEOUT(spy.count() >= 1, 30000);
    QCOMPARE(spy.at(0).at(0).toULongLong(), okId);
    QVERIFY(spy.at(0).at(1).value<AttemptResult>().delivered);
    QCOMPARE(sender.isolatedPools(), 2);
    QCOMPARE(sender.inFlight(), 8);

    sender.abortAll();
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 9, 10000);
    QCOMPARE(sender.inFlight(), 0);
}

void tst_CallbackSender::providerStatsMatchItsLog()
{
    // GET /stats is what demos and benchmarks read; it must agree with the log written so far.
    QNetworkAccessManager manager;
    QNetworkReply *reply = manager.get(QNetworkRequest(QUrl(m_providerA.baseUrl + QStringLiteral("/stats"))));
    QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 10000);
    QCOMPARE(reply->error(), QNetworkReply::NoError);
    const QJsonObject stats = QJsonDocument::fromJson(reply->readAll()).object();
    reply->deleteLater();

    const auto readLog = [this] {
        QFile file(m_providerA.logPath);
        return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
    };
    // The log is written in batches; wait until it has caught up with the counters.
    const int received = stats.value(QLatin1String("received")).toInt();
    QTRY_VERIFY_WITH_TIMEOUT(readLog().count('\n') >= received, 10000);
    int lines = 0;
    int valid = 0;
    int invalid = 0;
    for (const QByteArray &line : readLog().split('\n')) {
        const QJsonObject entry = QJsonDocument::fromJson(line).object();
        if (entry.isEmpty() || lines == received)
            continue;
        ++lines;
        valid += entry.value(QLatin1String("signature_valid")) == QJsonValue(true) ? 1 : 0;
        invalid += entry.value(QLatin1String("signature_valid")) == QJsonValue(false) ? 1 : 0;
    }
    QCOMPARE(stats.value(QLatin1String("received")).toInt(), lines);
    QCOMPARE(stats.value(QLatin1String("valid")).toInt(), valid);
    QCOMPARE(stats.value(QLatin1String("invalid")).toInt(), invalid);
    QVERIFY(valid >= 10);
    QVERIFY(invalid >= 2); // the rotated-away and the wrong X-Hub-Signature requests
    QCOMPARE(stats.value(QLatin1String("unsigned")).toInt(), 0);
    const QJsonObject byStatus = stats.value(QLatin1String("by_status")).toObject();
    for (const char *status : {"200", "302", "410", "429", "500", "503", "none"})
        QVERIFY2(byStatus.value(QLatin1String(status)).toInt() >= 1, status);
    QCOMPARE(stats.value(QLatin1String("unique_webhook_ids")).toInt() + stats.value(QLatin1String("duplicates")).toInt(),
             lines);
}

void tst_CallbackSender::providerServesSeveralPorts()
{
    // One process, one line per --listen: benchmarks give each endpoint its own host:port.
    QProcess process;
    process.setProgram(ProviderPath);
    process.setArguments({QStringLiteral("--secret"), QString::fromLatin1(SecretA), QStringLiteral("--listen"),
                          QStringLiteral("127.0.0.1:0"), QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                          QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0")});
    process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    process.start();
    QVERIFY(process.waitForStarted(10000));
    QStringList urls;
    const auto readLines = [&process, &urls] {
        while (process.canReadLine())
            urls.append(QString::fromUtf8(process.readLine()).trimmed());
        return urls.size();
    };
    QTRY_COMPARE_WITH_TIMEOUT(readLines(), 3, 10000);
    CallbackSender sender(CallbackUrlGuard(true));
    QSet<int> ports;
    for (const QString &line : std::as_const(urls)) {
        QVERIFY2(line.startsWith(QLatin1String("listening on http://127.0.0.1:")), qPrintable(line));
        const QString base = line.mid(int(qstrlen("listening on ")));
        ports.insert(QUrl(base).port());
        AttemptResult result;
        send(sender, request(base + QStringLiteral("/ok/port"), "msg_port_" + QByteArray::number(m_nextId++)), &result);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(result.delivered, qPrintable(result.errorMessage));
    }
    QCOMPARE(ports.size(), 3);

    QNetworkAccessManager manager;
    QNetworkReply *reply = manager.get(QNetworkRequest(QUrl(urls.first().mid(int(qstrlen("listening on "))) + QStringLiteral("/stats"))));
    QTRY_VERIFY_WITH_TIMEOUT(reply->isFinished(), 10000);
    const QJsonObject stats = QJsonDocument::fromJson(reply->readAll()).object();
    reply->deleteLater();
    QCOMPARE(stats.value(QLatin1String("received")).toInt(), 3);
    QCOMPARE(stats.value(QLatin1String("valid")).toInt(), 3);
    process.terminate();
    QVERIFY(process.waitForFinished(10000));
    QCOMPARE(process.exitCode(), 0);
}

void tst_CallbackSender::sequentialSendsShareOneConnection()
{
    CallbackSender sender(CallbackUrlGuard(true));
    for (int i = 0; i < 5; ++i) {
        AttemptResult result;
        send(sender, request(m_providerA.baseUrl + QStringLiteral("/ok/reuse"), "msg_reuse_" + QByteArray::number(m_nextId++)),
             &result);
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(result.delivered, qPrintable(result.errorMessage));
        // Kept alive and reused: never more than the one connection.
        QCOMPARE(sender.openConnections(), 1);
    }
    QCOMPARE(sender.pools(), 1);
    QCOMPARE(sender.isolatedPools(), 0);
}

void tst_CallbackSender::idleConnectionsAreClosed()
{
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/ok/idle"), "msg_idle");
    req.isolationKey = QStringLiteral("endpoint-idle");
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(sender.openConnections(), 1);
    QCOMPARE(sender.isolatedPools(), 1);
    // After IdleConnectionMs without traffic the connection is closed and its pool dropped.
    QTRY_COMPARE_WITH_TIMEOUT(sender.pools(), 0, 4 * CallbackSender::IdleConnectionMs);
    QCOMPARE(sender.openConnections(), 0);
}

void tst_CallbackSender::connectionCapIsConfigurable()
{
    CallbackSender sender(CallbackUrlGuard(true));
    sender.setMaxConnectionsPerPool(10);
    QCOMPARE(sender.maxConnectionsPerPool(), 10);
    QSignalSpy spy(&sender, &CallbackSender::finished);
    constexpr int Count = 12;
    for (int i = 0; i < Count; ++i) {
        CallbackRequest req = request(m_providerA.baseUrl + QStringLiteral("/hang/wide"), "msg_wide_" + QByteArray::number(i));
        req.isolationKey = QStringLiteral("endpoint-wide");
        req.timeout = 60s;
        sender.send(req);
    }
    const auto hangsAtProvider = [this] {
        int count = 0;
        for (int i = 0; i < Count; ++i)
            count += logEntry(m_providerA, "msg_wide_" + QByteArray::number(i)).isEmpty() ? 0 : 1;
        return count;
    };
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), 10, 20000);
    QCOMPARE(sender.openConnections(), 10);

    // Raised while requests wait: the pool opens more for them.
    sender.setMaxConnectionsPerPool(Count);
    QTRY_COMPARE_WITH_TIMEOUT(hangsAtProvider(), Count, 20000);
    QCOMPARE(sender.openConnections(), Count);
    QCOMPARE(spy.count(), 0);

    sender.abortAll();
    QCOMPARE(spy.count(), Count);
    QCOMPARE(sender.openConnections(), 0);
}

void tst_CallbackSender::stalledBodyTimesOut()
{
    // The head and part of the body arrive, the rest never does: the whole-attempt timeout ends it.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "\r\n\r\n", [](QTcpSocket *socket) {
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
    });
    CallbackSender sender(CallbackUrlGuard(true));
    CallbackRequest req = request(QStringLiteral("http://127.0.0.1:%1/stall").arg(server.serverPort()), "msg_stall");
    req.timeout = 1s;
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("timeout"));
    QVERIFY(!result.delivered);
    QVERIFY(result.errorMessage.contains(QLatin1String("1000 ms")));
    QCOMPARE(sender.openConnections(), 0); // a connection mid-response is not reused
}

void tst_CallbackSender::endlessBodyIsCutShort()
{
    // 200 with a body announced at 1 GB and streamed on and on: the status decides, 4 KiB are
    // kept, the rest is neither read nor kept, and the connection is dropped.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    bool hungUp = false;
    answerRequests(&server, "\r\n\r\n", [&hungUp](QTcpSocket *socket) {
        connect(socket, &QTcpSocket::disconnected, socket, [&hungUp] { hungUp = true; });
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n");
        auto *pump = new QTimer(socket);
        connect(pump, &QTimer::timeout, socket, [socket] {
            if (socket->bytesToWrite() < 256 * 1024)
                socket->write(QByteArray(64 * 1024, 'b'));
        });
        pump->start(1);
    });
    CallbackSender sender(CallbackUrlGuard(true));
    CallbackRequest req = request(QStringLiteral("http://127.0.0.1:%1/endless").arg(server.serverPort()), "msg_endless");
    req.timeout = 60s;
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(result.delivered, qPrintable(result.errorMessage));
    QCOMPARE(result.httpStatus, 200);
    QCOMPARE(result.responseBody, QByteArray(AttemptResult::MaxResponseBodyBytes, 'b'));
    QVERIFY(result.responseTruncated);
    QCOMPARE(sender.openConnections(), 0);
    QTRY_VERIFY(hungUp);
}

void tst_CallbackSender::tlsPeerName_data()
{
    QTest::addColumn<QString>("certificateName");
    QTest::addColumn<bool>("trusted");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<QString>("message");
    // The URL names "localhost"; the sender connects to the address it resolved to, and the
    // certificate must still be valid for the name.
    QTest::newRow("trusted, name matches") << "localhost" << true << "" << "";
    QTest::newRow("trusted, other name") << "other.example" << true << "tls" << "host name";
    QTest::newRow("self-signed, not trusted") << "localhost" << false << "tls" << "self";
}

void tst_CallbackSender::tlsPeerName()
{
    QFETCH(QString, certificateName);
    QFETCH(bool, trusted);
    QFETCH(QString, errorClass);
    QFETCH(QString, message);
    if (!QSslSocket::supportsSsl())
        QSKIP("no TLS backend");
    const QString openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
    if (openssl.isEmpty())
        QSKIP("openssl is needed to make a certificate");

    const QString dir = Test::scratchDir();
    const QString keyPath = dir + QStringLiteral("/tls-key.pem");
    const QString certificatePath = dir + QStringLiteral("/tls-certificate.pem");
    QProcess make;
    make.start(openssl, {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                         QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:prime256v1"), QStringLiteral("-nodes"),
                         QStringLiteral("-keyout"), keyPath, QStringLiteral("-out"), certificatePath, QStringLiteral("-days"),
                         QStringLiteral("2"), QStringLiteral("-subj"), QStringLiteral("/CN=") + certificateName,
                         QStringLiteral("-addext"), QStringLiteral("subjectAltName=DNS:") + certificateName});
    QVERIFY(make.waitForFinished(30000));
    QCOMPARE(make.exitCode(), 0);
    QFile keyFile(keyPath);
    QFile certificateFile(certificatePath);
    QVERIFY(keyFile.open(QIODevice::ReadOnly) && certificateFile.open(QIODevice::ReadOnly));
    const QSslCertificate certificate(certificateFile.readAll(), QSsl::Pem);
    const QSslKey key(keyFile.readAll(), QSsl::Ec, QSsl::Pem);
    QVERIFY(!certificate.isNull());
    QVERIFY(!key.isNull());

    QSslConfiguration serverConfiguration = QSslConfiguration::defaultConfiguration();
    serverConfiguration.setLocalCertificate(certificate);
    serverConfiguration.setPrivateKey(key);
    serverConfiguration.setPeerVerifyMode(QSslSocket::VerifyNone);
    QSslServer server;
    server.setSslConfiguration(serverConfiguration);
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    QByteArray hostSeen;
    connect(&server, &QTcpServer::pendingConnectionAvailable, this, [&server, &hostSeen] {
        auto *socket = qobject_cast<QSslSocket *>(server.nextPendingConnection());
        QVERIFY(socket);
        connect(socket, &QSslSocket::readyRead, socket, [socket, &hostSeen] {
            const QByteArray request = socket->readAll();
            if (!request.contains("\r\n\r\n"))
                return;
            for (const QByteArray &line : request.split('\n')) {
                if (line.startsWith("Host: "))
                    hostSeen = line.mid(6).trimmed();
            }
            socket->write("HTTP/1.1 204 No Content\r\n\r\n");
        });
    });

    // The client trusts the certificate only where the row says so.
    const QSslConfiguration original = QSslConfiguration::defaultConfiguration();
    if (trusted) {
        QSslConfiguration withCertificate = original;
        withCertificate.addCaCertificate(certificate);
        QSslConfiguration::setDefaultConfiguration(withCertificate);
    }
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    const QString url = QStringLiteral("https://localhost:%1/hook").arg(server.serverPort());
    send(sender, request(url, "msg_tls_" + QByteArray::number(m_nextId++)), &result);
    QSslConfiguration::setDefaultConfiguration(original);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, errorClass);
    QVERIFY2(result.errorMessage.contains(message, Qt::CaseInsensitive), qPrintable(result.errorMessage));
    if (errorClass.isEmpty()) {
        QVERIFY(result.delivered);
        QCOMPARE(result.httpStatus, 204);
        QCOMPARE(hostSeen, QStringLiteral("localhost:%1").arg(server.serverPort()).toLatin1());
    } else {
        QVERIFY(!result.delivered);
        QCOMPARE(result.httpStatus, 0);
        QVERIFY(hostSeen.isEmpty()); // not a byte of the request went out
    }
}

void tst_CallbackSender::tlsToAPlainServer()
{
    // A plain HTTP server answers the TLS hello with text and hangs up: a TLS failure, not HTTP.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "", [](QTcpSocket *socket) {
        socket->write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        socket->disconnectFromHost();
    });
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("https://127.0.0.1:%1/hook").arg(server.serverPort()), "msg_tls_plain"), &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("tls"));
    QCOMPARE(result.httpStatus, 0);
    QVERIFY(!result.delivered);
}

void tst_CallbackSender::deletedFromItsOwnCallback_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<bool>("delivered");
    QTest::newRow("on a response") << "/ok/delete" << true;
    QTest::newRow("on a failure") << "/fail/delete" << false;
}

void tst_CallbackSender::deletedFromItsOwnCallback()
{
    // A worker shutting down may drop its sender from inside finished(); the sockets whose
    // signal brought it there must survive that.
    QFETCH(QString, path);
    QFETCH(bool, delivered);
    auto *sender = new CallbackSender(CallbackUrlGuard(true));
    QPointer<CallbackSender> watch(sender);
    bool reported = false;
    bool deliveredSeen = false;
    QObject context;
    // A second attempt in flight on another connection of the same pool goes down with it.
    sender->send(request(m_providerA.baseUrl + QStringLiteral("/hang/delete"), "msg_delete_hang"));
    sender->send(request(m_providerA.baseUrl + path, "msg_delete_" + QByteArray::number(m_nextId++)), &context,
                 [&reported, &deliveredSeen, sender](const AttemptResult &result) {
                     reported = true;
                     deliveredSeen = result.delivered;
                     delete sender;
                 });
    QTRY_VERIFY_WITH_TIMEOUT(reported, 20000);
    QVERIFY(watch.isNull());
    QCOMPARE(deliveredSeen, delivered);
    // Let what the sender left to the event loop run; none of it may touch the sender.
    QPointer<QObject> marker(new QObject);
    marker->deleteLater();
    QTRY_VERIFY(marker.isNull());
}

QTEST_GUILESS_MAIN(tst_CallbackSender)
#include "tst_callbacksender.moc"
