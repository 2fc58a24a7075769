// Fixture code shared by the callback tests: the demo provider (tools/opsdeck-demo-provider) as a
// child process and the JSON lines it logs; one callback attempt built, sent and waited for.
#pragma once

#include "server/delivery/attemptresult.h"
#include "server/delivery/callbackrequest.h"

#include <QJsonObject>
#include <QList>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <memory>

namespace OpsDeck {
class CallbackSender;
}

namespace OpsDeck::Test {

// One demo provider process. A port set before startProvider() is where it listens (callbacks
// can be registered before it runs, to start it with the secret the registration returns);
// port 0 lets it pick one, which startProvider() then fills in.
struct DemoProvider
{
    DemoProvider() = default;
    ~DemoProvider(); // kills the process if still running
    DemoProvider(const DemoProvider &) = delete;
    DemoProvider &operator=(const DemoProvider &) = delete;

    std::unique_ptr<QProcess> process;
    quint16 port = 0;
    QString baseUrl; // http://127.0.0.1:<port>, once started
    QString logPath; // a fresh file in the scratch dir unless set before the first start

    QString url(const QString &path) const { return QStringLiteral("http://127.0.0.1:%1%2").arg(port).arg(path); }
};

// The path of the demo provider executable in the build tree.
QString demoProviderPath();

// A loopback port that was free a moment ago.
quint16 freePort();

// (Re)starts the provider knowing `secrets` on its port and waits for its "listening on" line;
// a test failure (QVERIFY) when it does not come.
void startProvider(DemoProvider *provider, const QStringList &secrets, const QStringList &extra = {});

// Every line of the provider's log so far (it writes in batches of --flush-ms).
QList<QJsonObject> logLines(const DemoProvider &provider);

// The provider's log line for a webhook id, or an empty object when not (yet) written.
QJsonObject logEntry(const DemoProvider &provider, const QByteArray &webhookId);

// An instance.status_changed callback (inst-1 STOPPED at version 4, fields the demo provider
// logs) to `url`, signed with `secret`.
CallbackRequest stoppedInstanceRequest(const QString &url, const QByteArray &webhookId, const QByteArray &secret);

// Sends `request` and waits for its finished() (never emitted from inside send()); the sender
// has nothing in flight afterwards. Test failures (QCOMPARE) when not.
void sendAndWait(CallbackSender &sender, const CallbackRequest &request, AttemptResult *result);

} // namespace OpsDeck::Test
