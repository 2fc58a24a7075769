// The callback sender against the real demo provider: every answer's classification, signatures
// seen valid by the receiver, secret rotation, X-Hub-Signature, the URL guard and the provider's
// own counters of what it received.
#include "server/delivery/callbacksender.h"

#include "core/webhooksignature.h"
#include "callbackfixture.h"
#include "testsupport.h"

#include <QtTest>

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QByteArray SecretA = QByteArrayLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray SecretB = QByteArrayLiteral("whsec_QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI=");
const QString ProviderPath = demoProviderPath();

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

public:
    static void initMain() { useRequestedEventDispatcher(); }

private slots:
    void initTestCase();
    void cleanupTestCase();
    void classification_data();
    void classification();
    void vettedHostReused();
    void requestHeaders();
    void rotationSendsBothSignatures();
    void hubSignature();
    void strictGuard_data();
    void strictGuard();
    void providerStatsMatchItsLog();
    void providerServesSeveralPorts();

private:
    using Provider = DemoProvider;

    void send(CallbackSender &sender, const CallbackRequest &req, AttemptResult *result) { sendAndWait(sender, req, result); }
    CallbackRequest request(const QString &url, const QByteArray &id) const { return stoppedInstanceRequest(url, id, SecretA); }

    Provider m_providerA; // knows SecretA
    Provider m_providerB; // knows SecretB
    int m_nextId = 1;
};

void tst_CallbackSender::initTestCase()
{
    startProvider(&m_providerA, {QString::fromLatin1(SecretA)});
    startProvider(&m_providerB, {QString::fromLatin1(SecretB)});
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
    QTest::newRow("hang after none") << "/hang-after/0/a" << 1000 << false << 0 << "timeout" << false << -1 << -1;
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

QTEST_GUILESS_MAIN(tst_CallbackSender)
#include "tst_callbacksender.moc"
