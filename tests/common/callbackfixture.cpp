// Fixture code shared by the callback tests: the demo provider and one callback attempt.
#include "callbackfixture.h"

#include "testsupport.h"

#include "server/delivery/callbacksender.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QTcpServer>
#include <QtTest>

namespace OpsDeck::Test {

DemoProvider::~DemoProvider()
{
    if (process && process->state() == QProcess::Running) {
        process->kill();
        process->waitForFinished(5000);
    }
}

QString demoProviderPath()
{
    return QStringLiteral(OPSDECK_BINARY_DIR "/tools/opsdeck-demo-provider/opsdeck-demo-provider");
}

quint16 freePort()
{
    QTcpServer probe;
    probe.listen(QHostAddress::LocalHost, 0);
    return probe.serverPort();
}

void startProvider(DemoProvider *provider, const QStringList &secrets, const QStringList &extra)
{
    static int started = 0;
    QVERIFY2(QFileInfo::exists(demoProviderPath()), qPrintable(demoProviderPath()));
    if (provider->logPath.isEmpty())
        provider->logPath = scratchDir() + QStringLiteral("/provider-%1.jsonl").arg(++started);
    if (provider->process && provider->process->state() == QProcess::Running) {
        provider->process->kill();
        provider->process->waitForFinished(5000);
    }
    provider->process = std::make_unique<QProcess>();
    QStringList args{QStringLiteral("--listen"), QStringLiteral("127.0.0.1:%1").arg(provider->port),
                     QStringLiteral("--log"), provider->logPath, QStringLiteral("--flush-ms"), QStringLiteral("10")};
    for (const QString &s : secrets)
        args << QStringLiteral("--secret") << s;
    provider->process->setProgram(demoProviderPath());
    provider->process->setArguments(args + extra);
    provider->process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    provider->process->start();
    QVERIFY(provider->process->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(provider->process->canReadLine(), 10000);
    const QString line = QString::fromUtf8(provider->process->readLine()).trimmed();
    QVERIFY2(line.startsWith(QLatin1String("listening on http://127.0.0.1:")), qPrintable(line));
    provider->baseUrl = line.mid(int(qstrlen("listening on ")));
    provider->port = quint16(QUrl(provider->baseUrl).port());
}

QList<QJsonObject> logLines(const DemoProvider &provider)
{
    QList<QJsonObject> lines;
    QFile file(provider.logPath);
    if (!file.open(QIODevice::ReadOnly))
        return lines;
    for (const QByteArray &line : file.readAll().split('\n')) {
        if (!line.trimmed().isEmpty())
            lines.append(QJsonDocument::fromJson(line).object());
    }
    return lines;
}

QJsonObject logEntry(const DemoProvider &provider, const QByteArray &webhookId)
{
    const QString id = QString::fromLatin1(webhookId);
    QJsonObject found;
    for (const QJsonObject &entry : logLines(provider)) {
        if (entry.value(QLatin1String("webhook_id")).toString() == id)
            found = entry;
    }
    return found;
}

CallbackRequest stoppedInstanceRequest(const QString &url, const QByteArray &webhookId, const QByteArray &secret)
{
    CallbackRequest request;
    request.url = QUrl(url);
    request.webhookId = webhookId;
    request.body = QByteArrayLiteral(R"({"type":"instance.status_changed","data":{"instance":{"id":"inst-1","status":"STOPPED","version":4}}})");
    request.secrets = {secret};
    return request;
}

void sendAndWait(CallbackSender &sender, const CallbackRequest &request, AttemptResult *result)
{
    QSignalSpy spy(&sender, &CallbackSender::finished);
    const quint64 id = sender.send(request);
    QCOMPARE(spy.count(), 0); // never reported from inside send()
    QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 1, 30000);
    QCOMPARE(spy.at(0).at(0).toULongLong(), id);
    *result = spy.at(0).at(1).value<AttemptResult>();
    QCOMPARE(sender.inFlight(), 0);
}

} // namespace OpsDeck::Test
