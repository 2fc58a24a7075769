// The main window's status bar: the connection's state, pending operations and cache notices.
#include "mainwindow.h"

#include "dashboardpage.h"
#include "detailpane.h"
#include "messagebox.h"
#include "valueformat.h"

#include "models/apiclient.h"
#include "models/cache.h"
#include "models/connectionstatus.h"
#include "models/syncengine.h"

#include <QDateTime>
#include <QLabel>
#include <QStatusBar>
#include <QTimer>

namespace OpsDeck {

void MainWindow::buildStatusBar()
{
    m_connectionLabel = new QLabel(tr("Not connected"), this);
    m_connectionLabel->setObjectName(QStringLiteral("connectionStatus"));
    m_connectionLabel->setAccessibleName(tr("Connection state"));
    m_pendingLabel = new QLabel(this);
    m_pendingLabel->setObjectName(QStringLiteral("pendingOperations"));
    m_pendingLabel->setAccessibleName(tr("Pending operations"));
    m_serverLabel = new QLabel(this);
    m_serverLabel->setObjectName(QStringLiteral("serverLabel"));
    m_serverLabel->setForegroundRole(QPalette::PlaceholderText);
    m_healthPoll = new QTimer(this);
    m_healthPoll->setObjectName(QStringLiteral("healthPoll"));
    m_healthPoll->setInterval(5000);
    connect(m_healthPoll, &QTimer::timeout, this, &MainWindow::pollHealth);
    m_healthPoll->start();
    m_cacheNotice = new QLabel(this);
    m_cacheNotice->setObjectName(QStringLiteral("cacheNotice"));
    m_cacheNotice->setAccessibleName(tr("Cache notice"));
    m_cacheNotice->hide();
    // The connection's state and the pending operations are permanent, on the right: a message
    // ("Stop #12: done") takes the left side for a few seconds, and hid them while it was shown.
    // The cache notice stays on the left, where a message may cover it a while: made permanent,
    // a long one would leave a message no room.
    m_cacheNotice->setContentsMargins(6, 0, 6, 0);
    statusBar()->addWidget(m_cacheNotice);
    for (QLabel *label : {m_connectionLabel, m_pendingLabel, m_serverLabel}) {
        label->setContentsMargins(6, 0, 6, 0);
        statusBar()->addPermanentWidget(label);
    }
    setPendingOperations(0);
}

void MainWindow::setPendingOperations(int count)
{
    m_pendingOperations = count;
    m_pendingLabel->setText(count == 0 ? tr("No pending operations") : tr("%n pending operation(s)", nullptr, count));
}

QString MainWindow::connectionStatusText() const
{
    if (!m_connection.baseUrl.isValid())
        return m_connectionLabel->text();
    // The state, where the rows come from and the next attempt are worded by the status alone.
    return m_sync->status()->text();
}

QString MainWindow::pendingOperationsText() const
{
    return m_pendingLabel->text();
}

void MainWindow::setStartupMessage(const QString &message)
{
    m_connectionLabel->setText(message);
    m_dashboard->setConnectionText(message);
}

void MainWindow::showFatalError(const QString &message)
{
    m_connectionLabel->setText(tr("Not connected"));
    m_dashboard->setConnectionText(message);
    MessageBox::warning(this, tr("OpsDeck"), message);
}

void MainWindow::onConnectionChanged()
{
    const ConnectionStatus *status = m_sync->status();
    QString colour;
    switch (status->state()) {
    case ConnectionStatus::State::Live:
        colour = QStringLiteral("#2e9d52");
        break;
    case ConnectionStatus::State::Connecting:
    case ConnectionStatus::State::Reconnecting:
        colour = QStringLiteral("#d08c00");
        break;
    case ConnectionStatus::State::Offline:
        colour = QStringLiteral("#c01c28");
        break;
    }
    m_connectionLabel->setText(QStringLiteral("<span style=\"color:%1\">\u25CF</span> %2")
                                   .arg(colour, connectionStatusText().toHtmlEscaped()));
    m_connectionLabel->setToolTip(status->lastError());
    // Offline the console is read-only from its cache, and says so.
    m_detail->setReadOnly(!status->isLive());
    if (status->isLive())
        pollHealth();
    else
        m_dashboard->setDeliveryWorkerUnknown();
    m_dashboard->setConnectionText(status->isLive()
                                       ? tr("Connected to %1 as %2 · live").arg(m_connection.baseUrl.toString(),
                                                                             roleText(m_connection.role))
                                       : tr("%1 — %2").arg(m_connection.baseUrl.toString(), connectionStatusText()));
}

void MainWindow::pollHealth()
{
    // One at a time; a reply of a client since replaced is gone with it.
    if (m_healthReply || !m_sync->status()->isLive())
        return;
    RequestOptions once;
    once.maxRetries = 0; // the next poll is the retry
    m_healthReply = m_api->get(QStringLiteral("/healthz"), once);
    connect(m_healthReply, &ApiReply::finished, this, [this](const ApiResult &result) {
        // A degraded server (503) still says how its worker is doing; an answer that arrives
        // after the connection was lost says nothing of now.
        if (result.status == 0 || !result.json.isObject() || !m_sync->status()->isLive())
            return;
        m_dashboard->setDeliveryWorker(result.object().value(QStringLiteral("delivery_worker")).toObject(),
                                       QDateTime::currentDateTimeUtc());
    });
}

void MainWindow::onCacheRebuilt(const QString &reason)
{
    m_cacheNotice->setText(tr("The local cache was rebuilt: %1").arg(reason));
    m_cacheNotice->setToolTip(m_cache ? m_cache->filePath() : QString());
    m_cacheNotice->show();
}

} // namespace OpsDeck
