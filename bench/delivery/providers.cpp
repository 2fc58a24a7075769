// The delivery benchmark's provider processes and wrk's run against one.
#include "providers.h"

#include "cpuclocks.h"

#include "core/webhooksignature.h"

#include <QDateTime>
#include <QFile>
#include <QRegularExpression>

#include <algorithm>

namespace OpsDeck::Bench {

std::unique_ptr<Provider> startProvider(const QString &binary, const QString &secret, const QString &log)
{
    auto p = std::make_unique<Provider>();
    p->process = std::make_unique<QProcess>();
    QStringList args{QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--secret"), secret};
    if (!log.isEmpty()) {
        p->log = log;
        args << QStringLiteral("--log") << p->log;
    }
    p->process->setProgram(binary);
    p->process->setArguments(args);
    p->process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p->process->start();
    if (!p->process->waitForStarted(10000) || !p->process->waitForReadyRead(10000))
        qFatal("cannot start %s", qPrintable(binary));
    p->base = QString::fromUtf8(p->process->readLine()).trimmed().mid(int(qstrlen("listening on ")));
    return p;
}

void stopProvider(Provider &p)
{
    p.process->terminate();
    p.process->waitForFinished(10000);
}

qint64 providersCpuMicros(const std::vector<std::unique_ptr<Provider>> &providers)
{
    qint64 cpu = 0;
    for (const auto &p : providers)
        cpu += processCpuMicros(p->process->processId());
    return cpu;
}

WrkRun wrkRate(const Provider &provider, const QByteArray &body, const QString &secret, const QString &script, int seconds,
               int connections)
{
    const QString url = provider.base + QStringLiteral("/ok/wrk");
    const qint64 ts = QDateTime::currentSecsSinceEpoch();
    const QByteArray id = "msg_wrk";
    const QByteArray signature = WebhookSignature::sign(id, ts, body, WebhookSignature::decodeSecret(secret).key);
    QFile f(script);
    if (!f.open(QIODevice::WriteOnly))
        qFatal("cannot write %s", qPrintable(script));
    f.write("wrk.method = \"POST\"\nwrk.body = '" + body + "'\n"
            "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
            "wrk.headers[\"webhook-id\"] = \"" + id + "\"\n"
            "wrk.headers[\"webhook-timestamp\"] = \"" + QByteArray::number(ts) + "\"\n"
            "wrk.headers[\"webhook-signature\"] = \"" + signature + "\"\n");
    f.close();
    const qint64 providerAtStart = processCpuMicros(provider.process->processId());
    const qint64 childrenAtStart = endedChildrenCpuMicros();
    QProcess wrk;
    wrk.start(QStringLiteral("wrk"), {QStringLiteral("-t2"), QStringLiteral("-c%1").arg(connections), QStringLiteral("-d%1s").arg(seconds),
                                      QStringLiteral("-s"), script, url});
    if (!wrk.waitForFinished((seconds + 30) * 1000))
        return {};
    WrkRun run;
    const QString out = QString::fromUtf8(wrk.readAllStandardOutput());
    const auto rate = QRegularExpression(QStringLiteral("Requests/sec:\\s+([0-9.]+)")).match(out);
    const auto requests = QRegularExpression(QStringLiteral("([0-9]+) requests in")).match(out);
    if (!rate.hasMatch() || !requests.hasMatch())
        return run;
    run.rate = rate.captured(1).toDouble();
    const double count = std::max(1.0, requests.captured(1).toDouble());
    run.providerCpu = double(processCpuMicros(provider.process->processId()) - providerAtStart) / count;
    run.wrkCpu = double(endedChildrenCpuMicros() - childrenAtStart) / count;
    return run;
}

} // namespace OpsDeck::Bench
