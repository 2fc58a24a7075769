// The main window's menus and toolbar, and what their actions and the detail pane's ask of the server.
#include "mainwindow.h"

#include "detailpane.h"
#include "messagebox.h"
#include "resourceview.h"

#include "core/resourcekind.h"
#include "core/statemachine.h"
#include "models/apiclient.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QJsonArray>
#include <QListWidget>
#include <QMenuBar>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolBar>

namespace OpsDeck {

void MainWindow::buildActions()
{
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *connectAction = fileMenu->addAction(QIcon(QStringLiteral(":/icons/connect.svg")), tr("&Connect to…"));
    connectAction->setObjectName(QStringLiteral("connectAction"));
    connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectionDialog);
    QAction *exportAction = fileMenu->addAction(QIcon(QStringLiteral(":/icons/export.svg")), tr("&Export view as CSV…"));
    exportAction->setObjectName(QStringLiteral("exportAction"));
    exportAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(exportAction, &QAction::triggered, this, &MainWindow::exportCurrentView);
    fileMenu->addSeparator();
    QAction *quitAction = fileMenu->addAction(tr("&Quit"));
    quitAction->setObjectName(QStringLiteral("quitAction"));
    quitAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Q));
    quitAction->setMenuRole(QAction::QuitRole);
    connect(quitAction, &QAction::triggered, this, &MainWindow::close);

    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    for (int i = 0; i < m_pages.size(); ++i) {
        QAction *a = viewMenu->addAction(QIcon(m_pages.at(i).icon), m_pages.at(i).title);
        a->setObjectName(QStringLiteral("showView_") + m_pages.at(i).name);
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        connect(a, &QAction::triggered, this, [this, i] { m_navigation->setCurrentRow(i); });
    }
    viewMenu->addSeparator();
    QAction *findAction = viewMenu->addAction(tr("&Filter…"));
    findAction->setObjectName(QStringLiteral("findAction"));
    findAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    connect(findAction, &QAction::triggered, this, &MainWindow::focusQuery);
    QAction *refreshAction = viewMenu->addAction(QIcon(QStringLiteral(":/icons/refresh.svg")), tr("&Refresh"));
    refreshAction->setObjectName(QStringLiteral("refreshAction"));
    refreshAction->setShortcut(QKeySequence(Qt::Key_F5));
    connect(refreshAction, &QAction::triggered, this, &MainWindow::refresh);

    QMenu *helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction *about = helpMenu->addAction(tr("&About OpsDeck"));
    connect(about, &QAction::triggered, this, [this] {
        MessageBox::information(this, tr("About OpsDeck"),
                                tr("OpsDeck %1 — lifecycle control plane and operator console.")
                                    .arg(QApplication::applicationVersion()));
    });

    QToolBar *toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolBar"));
    toolbar->setMovable(false);
    toolbar->setIconSize(QSize(18, 18));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->addAction(refreshAction);
    toolbar->addAction(exportAction);
    toolbar->addAction(connectAction);
}

void MainWindow::focusQuery()
{
    const int row = m_stack->currentIndex();
    if (row >= 0 && row < m_pages.size() && m_pages.at(row).view)
        m_pages.at(row).view->focusQuery();
}

void MainWindow::exportCurrentView()
{
    const int row = m_stack->currentIndex();
    if (row < 0 || row >= m_pages.size() || !m_pages.at(row).view) {
        MessageBox::information(this, tr("Export"), tr("Choose a table view to export."));
        return;
    }
    ResourceView *view = m_pages.at(row).view;
    const QString suggested = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                              + QStringLiteral("/opsdeck-%1.csv").arg(view->kind().name);
    const QString path = QFileDialog::getSaveFileName(this, tr("Export %1 as CSV").arg(view->kind().title),
                                                      suggested, tr("CSV files (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!view->exportCsv(path, &error))
        MessageBox::warning(this, tr("Export failed"), tr("Could not write %1: %2").arg(path, error));
    else
        statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
}

void MainWindow::loadHistory(const QString &auditKind, qint64 objectId)
{
    if (!m_api)
        return;
    m_api->get(QStringLiteral("/audit?kind=%1&object_id=%2&limit=200").arg(auditKind).arg(objectId), m_detail,
               [this, objectId](const ApiResult &result) {
                   if (!result.ok()) {
                       m_detail->setHistoryError(objectId, result.problem ? result.problem->detail.isEmpty()
                                                                                ? result.problem->title
                                                                                : result.problem->detail
                                                                          : tr("HTTP %1").arg(result.status));
                       return;
                   }
                   QList<QJsonObject> entries;
                   const QJsonArray items = result.object().value(QStringLiteral("items")).toArray();
                   // The server lists oldest first; a timeline reads newest first.
                   for (qsizetype i = items.size() - 1; i >= 0; --i)
                       entries.append(items.at(i).toObject());
                   m_detail->setHistory(objectId, entries);
               });
}

void MainWindow::runAction(const QString &kindName, qint64 objectId, const QString &action)
{
    if (!m_api)
        return;
    const ResourceModel *model = resourceModel(kindName);
    const QJsonObject object = model ? model->objectById(objectId) : QJsonObject();
    // Say what will happen before asking why.
    const ResourceKind *kind = resourceKindByName(kindName);
    QString what = tr("%1 %2 #%3").arg(action, kind ? kind->title.toLower() : kindName).arg(objectId);
    if (kind && kind->machine && !kind->stateField.isEmpty()) {
        const QString state = object.value(kind->stateField).toString();
        if (const auto t = kind->machine->find(state, action, m_connection.role))
            what = tr("%1: %2 → %3").arg(what, state, t->to);
    }
    const QString name = kind && !kind->nameField.isEmpty() ? object.value(kind->nameField).toString() : QString();
    const std::optional<QString> reason = MessageBox::getText(
        this, tr("Confirm %1").arg(action),
        tr("%1%2\n\nWhy? The reason is kept in the audit log.")
            .arg(what, name.isEmpty() ? QString() : tr(" (%1)").arg(name)));
    if (!reason)
        return;
    RequestOptions options;
    if (object.contains(QStringLiteral("version")))
        options.ifMatch = object.value(QStringLiteral("version")).toInteger();
    auto done = [this, action, objectId](const ApiResult &result) {
        if (result.ok()) {
            statusBar()->showMessage(tr("%1 #%2: done").arg(action).arg(objectId), 5000);
            return;
        }
        // The server's problem detail verbatim: it names the blocking objects and the allowed actions.
        const QString detail = result.problem ? (result.problem->detail.isEmpty() ? result.problem->title
                                                                                   : result.problem->detail)
                                              : tr("HTTP %1").arg(result.status);
        MessageBox::warning(this, tr("%1 #%2 failed").arg(action).arg(objectId), detail);
    };
    const QString path = QStringLiteral("/%1/%2").arg(kindName).arg(objectId);
    if (action == QLatin1String("delete")) {
        options.reason = *reason;
        m_api->del(path, this, done, options);
    } else {
        m_api->post(path + QLatin1Char('/') + action, QJsonObject{{QStringLiteral("reason"), *reason}}, this, done,
                    options);
    }
}

void MainWindow::refresh()
{
    if (m_connection.baseUrl.isValid())
        m_sync->relist(tr("refresh requested"));
}

} // namespace OpsDeck
