// The delivery benchmark's provider processes (opsdeck-demo-provider) and wrk's run against one.
#pragma once

#include <QByteArray>
#include <QProcess>
#include <QString>

#include <memory>
#include <vector>

namespace OpsDeck::Bench {

struct Provider
{
    std::unique_ptr<QProcess> process;
    QString base; // http://127.0.0.1:PORT
    QString log;
};

// Starts `binary` on an ephemeral loopback port with `secret`, logging to `log` unless empty.
std::unique_ptr<Provider> startProvider(const QString &binary, const QString &secret, const QString &log = {});
void stopProvider(Provider &p);
// CPU time so far of every process of `providers`, in microseconds.
qint64 providersCpuMicros(const std::vector<std::unique_ptr<Provider>> &providers);

struct WrkRun
{
    double rate = 0;
    double providerCpu = 0; // microseconds per request, of the provider process wrk posts to
    double wrkCpu = 0;      // and of wrk
};

// The provider's own maximum: wrk posting `body`, validly signed with `secret`, to its /ok/wrk
// as fast as it can (its Lua script written to `script`).
WrkRun wrkRate(const Provider &provider, const QByteArray &body, const QString &secret, const QString &script, int seconds,
               int connections);

} // namespace OpsDeck::Bench
