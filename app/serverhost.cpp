// Runs the control plane inside the embedded server's worker thread.
#include "serverhost.h"

#include "demoactivity.h"
#include "demoreceiver.h"

#include <QTcpSocket>

#include "server/controlplane.h"
#include "server/demoseeder.h"

namespace OpsDeck {

namespace {

// Enough rows for every state to show and the tables to scroll, few enough to sync at once.
constexpr int kDemoInstances = 240;

} // namespace

ServerHost::ServerHost(QObject *parent)
    : QObject(parent)
{
}

ServerHost::~ServerHost()
{
    stop();
}

void ServerHost::start(const ServerOptions &options, bool demo)
{
    Q_ASSERT(!m_server);
    m_server = new ControlPlane(options, this);
    Problem problem;
    if (!m_server->start(&problem)) {
        emit failed(problem.detail.isEmpty() ? problem.title : problem.detail);
        return;
    }
    const QString token = m_server->createToken(QStringLiteral("operator"), QStringLiteral("console"),
                                                QStringLiteral("opsdeck console session"));
    if (token.isEmpty()) {
        emit failed(tr("The embedded server could not create a session token"));
        return;
    }
    if (demo) {
        m_receiver = new DemoReceiver(this);
        const bool listening = m_receiver->listen();
        DemoSeeder seeder(m_server->database());
        // The seeded instances' callbacks reach the demo's receiver, so starting and stopping
        // them is delivered and acknowledged.
        if (listening)
            seeder.setCallbackUrl(m_receiver->url(QStringLiteral("/hook")).toString());
        if (!seeder.seed(kDemoInstances, &problem)) {
            emit failed(tr("The demo data could not be seeded: %1")
                            .arg(problem.detail.isEmpty() ? problem.title : problem.detail));
            return;
        }
        m_demo = new DemoActivity(m_server->baseUrl(), token, this);
        // A port bound and never listening: its callbacks are refused and retry.
        m_deadPort = new QTcpSocket(this);
        if (listening && m_deadPort->bind(QHostAddress::LocalHost, 0, QAbstractSocket::DontShareAddress))
            m_demo->registerCallbacks(m_receiver->url(QStringLiteral("/hook")), m_receiver->url(QStringLiteral("/flaky")),
                                      deadCallbackUrl());
        m_demo->start();
    }
    emit started(m_server->baseUrl(), token);
}

QUrl ServerHost::deadCallbackUrl() const
{
    if (!m_deadPort || m_deadPort->state() != QAbstractSocket::BoundState)
        return {};
    return QUrl(QStringLiteral("http://127.0.0.1:%1/hook").arg(m_deadPort->localPort()));
}

void ServerHost::stop()
{
    delete m_demo;
    m_demo = nullptr;
    delete m_receiver;
    m_receiver = nullptr;
    delete m_deadPort;
    m_deadPort = nullptr;
    if (m_server) {
        m_server->stop();
        delete m_server;
        m_server = nullptr;
    }
}

} // namespace OpsDeck
