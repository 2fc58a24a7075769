// Interoperability: a receiver built on the official Standard Webhooks library verifies every callback.
#include "testserver.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QStandardPaths>
#include <QtTest>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// scripts/check installs the receiver's pinned library here with `npm ci`.
const QString ReceiverDir = QStringLiteral(OPSDECK_BINARY_DIR "/tools/standardwebhooks-receiver");
constexpr int Patience = 20000;

} // namespace

class tst_Interop : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void everySignatureVerifies();
    void rotationSignsWithBothSecrets();
    void aWrongSecretIsRejected();

private:
    Reply receiver(const QByteArray &method, const QString &path, const QByteArray &body = {}) const;
    QJsonObject stats() const;
    void setSecrets(const QStringList &secrets);
    // Stops or starts the instance and waits until the receiver has verified one more callback.
    void transitionAndWait(const QString &action);
    // `times` stop + start pairs, then: every callback so far verified, none refused.
    void cycleAndCheck(int times);

    std::unique_ptr<QProcess> m_receiver;
    QUrl m_receiverUrl;
    std::unique_ptr<TestServer> m_server;
    qint64 m_instance = 0;
    QString m_secret;
    int m_expected = 0;
};

void tst_Interop::initTestCase()
{
    const QString node = QStandardPaths::findExecutable(QStringLiteral("node"));
    const bool installed = QFileInfo::exists(ReceiverDir + QStringLiteral("/node_modules/standardwebhooks/package.json"));
    if (node.isEmpty() || !installed) {
        const QString why = node.isEmpty() ? QStringLiteral("node is not installed")
                                           : QStringLiteral("the receiver's library is not installed (npm ci --prefix %1)").arg(ReceiverDir);
        // CI installs both through scripts/setup and scripts/check: a missing piece there is a failure.
        if (!qEnvironmentVariableIsEmpty("CI"))
            QFAIL(qPrintable(why));
        QSKIP(qPrintable(why));
    }
    m_receiver = std::make_unique<QProcess>();
    m_receiver->setProgram(node);
    m_receiver->setArguments({ReceiverDir + QStringLiteral("/receiver.js")});
    m_receiver->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_receiver->start();
    QVERIFY(m_receiver->waitForStarted(10000));
    QTRY_VERIFY_WITH_TIMEOUT(m_receiver->canReadLine(), Patience);
    const QString line = QString::fromUtf8(m_receiver->readLine()).trimmed();
    const auto match = QRegularExpression(QStringLiteral("^listening on (http://\\S+)$")).match(line);
    QVERIFY2(match.hasMatch(), qPrintable(line));
    m_receiverUrl = QUrl(match.captured(1));

    ServerOptions options;
    options.retrySchedule = QStringLiteral("200ms,300ms,500ms");
    options.outboxPollInterval = std::chrono::milliseconds(50);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    const qint64 org = m_server->createOrganization(QStringLiteral("acme"));
    const qint64 provider = m_server->createProvider(QStringLiteral("crm"), org, {QStringLiteral("crm")});
    m_instance = m_server->createInstance(QStringLiteral("crm-acme"), org, provider, QStringLiteral("crm"), QStringLiteral("alice"));
    QVERIFY(m_instance > 0);
    const Reply registered = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(m_instance),
                                            {{QStringLiteral("callback_url"), m_receiverUrl.resolved(QUrl(QStringLiteral("/callbacks/crm"))).toString()}},
                                            m_server->token(QStringLiteral("provider"), QString::number(provider)));
    QCOMPARE(registered.status, 200);
    m_secret = registered.json().value(QStringLiteral("secret")).toString();
    QVERIFY(m_secret.startsWith(QLatin1String("whsec_")));
    setSecrets({m_secret});
    // Registration queued the first status notification; the receiver answered 503 until it
    // knew the secret, so it arrives with a retry.
    m_expected = 1;
    QTRY_COMPARE_WITH_TIMEOUT(stats().value(QStringLiteral("ok")).toInt(), m_expected, Patience);
}

void tst_Interop::cleanupTestCase()
{
    m_server.reset();
    if (m_receiver && m_receiver->state() == QProcess::Running) {
        m_receiver->kill();
        m_receiver->waitForFinished(5000);
    }
}

Reply tst_Interop::receiver(const QByteArray &method, const QString &path, const QByteArray &body) const
{
    return TestServer::send(m_receiverUrl, method, path, body);
}

QJsonObject tst_Interop::stats() const
{
    return receiver("GET", QStringLiteral("/stats")).json();
}

void tst_Interop::setSecrets(const QStringList &secrets)
{
    const Reply r = receiver("PUT", QStringLiteral("/secrets"), QJsonDocument(QJsonArray::fromStringList(secrets)).toJson());
    QCOMPARE(r.status, 204);
}

void tst_Interop::transitionAndWait(const QString &action)
{
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/%2").arg(m_instance).arg(action), {}, m_server->operatorToken());
    QCOMPARE(r.status, 200);
    ++m_expected;
    QTRY_COMPARE_WITH_TIMEOUT(stats().value(QStringLiteral("ok")).toInt() + stats().value(QStringLiteral("bad")).toInt(),
                              m_expected, Patience);
}

void tst_Interop::cycleAndCheck(int times)
{
    for (int i = 0; i < times; ++i) {
        transitionAndWait(QStringLiteral("stop"));
        transitionAndWait(QStringLiteral("start"));
        if (QTest::currentTestFailed())
            return;
    }
    const QJsonObject s = stats();
    QVERIFY2(s.value(QStringLiteral("errors")).toArray().isEmpty(), QJsonDocument(s).toJson().constData());
    QCOMPARE(s.value(QStringLiteral("ok")).toInt(), m_expected);
    QCOMPARE(s.value(QStringLiteral("bad")).toInt(), 0);
}

void tst_Interop::everySignatureVerifies()
{
    cycleAndCheck(5);
    if (QTest::currentTestFailed())
        return;
    const QJsonObject s = stats();
    QSet<QString> ids;
    for (const QJsonValue &id : s.value(QStringLiteral("ids")).toArray())
        ids.insert(id.toString());
    QCOMPARE(ids.size(), m_expected); // one webhook-id per notification
}

void tst_Interop::rotationSignsWithBothSecrets()
{
    const Reply rotated = m_server->post(QStringLiteral("/api/v1/instances/%1/rotate-secret").arg(m_instance), {}, m_server->operatorToken());
    QCOMPARE(rotated.status, 200);
    const QString fresh = rotated.json().value(QStringLiteral("secret")).toString();
    QVERIFY(fresh.startsWith(QLatin1String("whsec_")) && fresh != m_secret);
    // During the grace period each secret alone must verify: a provider may switch at any time.
    setSecrets({fresh, m_secret});
    cycleAndCheck(3);
}

void tst_Interop::aWrongSecretIsRejected()
{
    // The receiver really checks: with a secret OpsDeck never had, the next callback fails.
    setSecrets({QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")});
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(m_instance), {}, m_server->operatorToken());
    QCOMPARE(r.status, 200);
    QTRY_VERIFY_WITH_TIMEOUT(stats().value(QStringLiteral("bad")).toInt() > 0, Patience);
    QVERIFY(stats().value(QStringLiteral("errors")).toArray().first().toString().contains(QLatin1String("signature")));
}

QTEST_GUILESS_MAIN(tst_Interop)
#include "tst_interop.moc"
