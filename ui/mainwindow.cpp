// The console's main window: navigation, views, detail pane, status bar.
#include "mainwindow.h"

#include "connectiondialog.h"
#include "credentialstore.h"
#include "dashboardpage.h"
#include "detailpane.h"
#include "messagebox.h"
#include "resourceview.h"
#include "unavailablepage.h"

#include "core/resourcekind.h"
#include "core/statemachine.h"
#include "models/apiclient.h"
#include "models/filterproxymodel.h"
#include "models/cache.h"
#include "models/connectionstatus.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QDateTime>
#include <QFileInfo>
#include <QJsonArray>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QToolBar>

// Resources of a static library must be registered by name, outside any namespace.
static void initResources()
{
    Q_INIT_RESOURCE(icons);
}

namespace OpsDeck {

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    initResources();
    setObjectName(QStringLiteral("mainWindow"));
    setAccessibleName(tr("OpsDeck console"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/opsdeck.svg")));

    m_navigation = new QListWidget(this);
    m_navigation->setObjectName(QStringLiteral("navigation"));
    m_navigation->setAccessibleName(tr("Views"));
    m_navigation->setIconSize(QSize(20, 20));
    m_navigation->setFrameShape(QFrame::NoFrame);
    m_navigation->setSpacing(1);

    m_stack = new QStackedWidget(this);
    m_stack->setObjectName(QStringLiteral("pages"));
    m_detail = new DetailPane(this);

    m_splitter = new QSplitter(Qt::Horizontal, this);
    m_splitter->setObjectName(QStringLiteral("mainSplitter"));
    m_splitter->addWidget(m_navigation);
    m_splitter->addWidget(m_stack);
    m_splitter->addWidget(m_detail);
    m_splitter->setStretchFactor(0, 0);
    m_splitter->setStretchFactor(1, 3);
    m_splitter->setStretchFactor(2, 2);
    m_splitter->setCollapsible(1, false);
    m_splitter->setSizes({160, 720, 520});
    setCentralWidget(m_splitter);

    buildModels();
    buildPages();
    buildActions();
    buildStatusBar();
    restoreSettings();
    updateWindowTitle();

    connect(m_navigation, &QListWidget::currentRowChanged, this, &MainWindow::onNavigation);
    connect(m_dashboard, &DashboardPage::openViewRequested, this, [this](const QString &kind, const QString &query) {
        showView(kind);
        if (ResourceView *view = resourceView(kind))
            view->setQueryText(query);
    });
    if (m_navigation->currentRow() < 0)
        m_navigation->setCurrentRow(0);
    onNavigation(m_navigation->currentRow());
}

MainWindow::~MainWindow()
{
    // The engine announces its end on the way out; the widgets that would show it are going.
    disconnect(m_sync->status(), nullptr, this, nullptr);
    disconnect(m_sync, nullptr, this, nullptr);
    for (FilterProxyModel *proxy : std::as_const(m_proxies))
        proxy->setSourceModel(nullptr);
    delete m_sync;
    delete m_api;
    delete m_cache;
}

void MainWindow::buildModels()
{
    // Until the first connection, an engine that is never started gives the views empty models.
    m_api = new ApiClient(this);
    m_sync = new SyncEngine(m_api, nullptr, this);
    for (const ResourceKind &kind : resourceKinds()) {
        auto *proxy = new FilterProxyModel(this);
        proxy->setObjectName(kind.name + QStringLiteral("Proxy"));
        // Reference columns (provider_id, organization_id) show names from the other kinds' models.
        proxy->setReferenceLookup([this](const QString &kindName, qint64 id) {
            const ResourceModel *model = resourceModel(kindName);
            return model ? model->nameOfId(id) : QString();
        });
        m_proxies.insert(kind.name, proxy);
    }
    bindModels();
}

void MainWindow::bindModels()
{
    const ReferenceLookup lookup = [this](const QString &kindName, qint64 id) {
        const ResourceModel *model = resourceModel(kindName);
        return model ? model->nameOfId(id) : QString();
    };
    m_detail->setReferenceLookup(lookup);
    for (auto it = m_proxies.cbegin(); it != m_proxies.cend(); ++it) {
        ResourceModel *model = m_sync->model(it.key());
        if (!model)
            continue;
        model->setReferenceLookup(lookup);
        it.value()->setSourceModel(model);
        if (m_dashboard)
            m_dashboard->setModel(it.key(), model);
    }
}

ResourceModel *MainWindow::resourceModel(const QString &kindName) const
{
    return m_sync ? m_sync->model(kindName) : nullptr;
}

FilterProxyModel *MainWindow::filterModel(const QString &kindName) const
{
    return m_proxies.value(kindName);
}

void MainWindow::buildPages()
{
    struct Nav
    {
        const char *name;
        const char *title;
        const char *icon;
    };
    // Spec §8's navigation, in its order; Ctrl+1..8 follow it.
    const Nav navigation[] = {
        {"dashboard", QT_TR_NOOP("Dashboard"), "dashboard"},
        {"organizations", QT_TR_NOOP("Organizations"), "organizations"},
        {"instances", QT_TR_NOOP("Instances"), "instances"},
        {"sandboxes", QT_TR_NOOP("Sandboxes"), "sandboxes"},
        {"bindings", QT_TR_NOOP("Bindings"), "bindings"},
        {"catalog", QT_TR_NOOP("Catalog"), "catalog"},
        {"deliveries", QT_TR_NOOP("Callbacks"), "callbacks"},
        {"audit", QT_TR_NOOP("Audit"), "audit"},
    };
    for (const Nav &nav : navigation) {
        Page page;
        page.name = QString::fromLatin1(nav.name);
        page.title = tr(nav.title);
        page.icon = QStringLiteral(":/icons/%1.svg").arg(QLatin1String(nav.icon));
        if (page.name == QLatin1String("dashboard")) {
            m_dashboard = new DashboardPage(m_stack);
            page.widget = m_dashboard;
        } else if ((page.kind = resourceKindByName(page.name))) {
            const ResourceKind *endpoints = resourceKindByName(u"endpoints");
            if (page.name == QLatin1String("deliveries") && endpoints) {
                // The Callbacks page: the deliveries, and below them the endpoints with their health.
                auto *split = new QSplitter(Qt::Vertical, m_stack);
                split->setObjectName(QStringLiteral("deliveriesView"));
                split->setAccessibleName(tr("%1 view").arg(page.title));
                page.view = makeView(*page.kind, split);
                page.secondary = makeView(*endpoints, split);
                split->addWidget(page.view);
                split->addWidget(page.secondary);
                split->setStretchFactor(0, 3);
                split->setStretchFactor(1, 1);
                page.widget = split;
            } else {
                page.view = makeView(*page.kind, m_stack);
                page.widget = page.view;
            }
        } else {
            page.widget = new UnavailablePage(page.name, page.title, m_stack);
        }
        m_stack->addWidget(page.widget);
        auto *item = new QListWidgetItem(QIcon(page.icon), page.title, m_navigation);
        item->setData(Qt::UserRole, page.name);
        item->setSizeHint(QSize(0, 30));
        m_pages.append(page);
    }
    m_navigation->setMinimumWidth(150);
    for (const char *name : {"organizations", "instances", "deliveries", "endpoints", "providers"}) {
        // Cards follow the current engine's models: bindModels() replaces them on connecting.
        const QString kindName = QString::fromLatin1(name);
        if (const ResourceKind *kind = resourceKindByName(kindName))
            m_dashboard->addKind(*kind, resourceModel(kindName));
    }
    connect(m_detail, &DetailPane::historyRequested, this, &MainWindow::loadHistory);
    connect(m_detail, &DetailPane::actionRequested, this, &MainWindow::runAction);
}

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
    m_cacheNotice = new QLabel(this);
    m_cacheNotice->setObjectName(QStringLiteral("cacheNotice"));
    m_cacheNotice->setAccessibleName(tr("Cache notice"));
    m_cacheNotice->hide();
    statusBar()->addWidget(m_connectionLabel);
    statusBar()->addWidget(m_pendingLabel);
    statusBar()->addWidget(m_cacheNotice);
    statusBar()->addPermanentWidget(m_serverLabel);
    setPendingOperations(0);
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray()))
        resize(1400, 860);
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
    const QByteArray splitter = settings.value(QStringLiteral("mainWindow/splitter")).toByteArray();
    if (!splitter.isEmpty())
        m_splitter->restoreState(splitter);
    const QString last = settings.value(QStringLiteral("mainWindow/view")).toString();
    const int row = viewNames().indexOf(last);
    m_navigation->setCurrentRow(row < 0 ? 0 : row);
    m_stack->setCurrentIndex(m_navigation->currentRow());
}

void MainWindow::saveSettings() const
{
    QSettings settings;
    settings.setValue(QStringLiteral("mainWindow/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("mainWindow/state"), saveState());
    settings.setValue(QStringLiteral("mainWindow/splitter"), m_splitter->saveState());
    settings.setValue(QStringLiteral("mainWindow/view"), currentViewName());
    for (const Page &p : m_pages) {
        if (p.view)
            p.view->saveLayout();
        if (p.secondary)
            p.secondary->saveLayout();
    }
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveSettings();
    event->accept();
}

QStringList MainWindow::viewNames() const
{
    QStringList names;
    for (const Page &p : m_pages)
        names.append(p.name);
    return names;
}

void MainWindow::showView(const QString &name)
{
    const int row = viewNames().indexOf(name);
    if (row >= 0)
        m_navigation->setCurrentRow(row);
}

QString MainWindow::currentViewName() const
{
    const int row = m_stack->currentIndex();
    return row >= 0 && row < m_pages.size() ? m_pages.at(row).name : QString();
}

ResourceView *MainWindow::makeView(const ResourceKind &kind, QWidget *parent)
{
    auto *view = new ResourceView(kind, parent);
    FilterProxyModel *proxy = filterModel(kind.name);
    connect(view, &ResourceView::queryChanged, proxy, &FilterProxyModel::setQuery);
    view->setModel(proxy, ResourceModel::ObjectRole);
    connect(view, &ResourceView::currentObjectChanged, this,
            [this, name = kind.name](const QJsonObject &object) { onCurrentObjectChanged(name, object); });
    connect(view, &ResourceView::currentObjectUpdated, this,
            [this, name = kind.name](const QJsonObject &object) { onCurrentObjectUpdated(name, object); });
    return view;
}

ResourceView *MainWindow::resourceView(const QString &kindName) const
{
    for (const Page &p : m_pages) {
        if (p.view && p.view->kind().name == kindName)
            return p.view;
        if (p.secondary && p.secondary->kind().name == kindName)
            return p.secondary;
    }
    return nullptr;
}

void MainWindow::onNavigation(int row)
{
    if (row < 0 || row >= m_pages.size())
        return;
    m_stack->setCurrentIndex(row);
    const Page &page = m_pages.at(row);
    // Only tables have a selection to detail; other pages get the whole width.
    m_detail->setVisible(page.view != nullptr);
    // The detail pane follows the selection of the view being looked at.
    if (page.view) {
        const QJsonObject current = page.view->currentObject();
        if (current.isEmpty())
            m_detail->clear();
        else
            m_detail->showObject(page.kind, current);
    } else {
        m_detail->clear();
    }
}

void MainWindow::onCurrentObjectChanged(const QString &kindName, const QJsonObject &object)
{
    // Only the tables of the page being looked at drive the detail pane.
    const int row = m_stack->currentIndex();
    if (row < 0 || row >= m_pages.size())
        return;
    const Page &page = m_pages.at(row);
    const bool onPage = (page.view && page.view->kind().name == kindName)
                        || (page.secondary && page.secondary->kind().name == kindName);
    if (!onPage)
        return;
    const ResourceKind *kind = resourceKindByName(kindName);
    if (object.isEmpty() || !kind)
        m_detail->clear();
    else
        m_detail->showObject(kind, object);
}

void MainWindow::onCurrentObjectUpdated(const QString &kindName, const QJsonObject &object)
{
    // A newer version of what the pane shows; another table's current row changing is not news.
    if (m_detail->kind() && m_detail->kind()->name == kindName
        && m_detail->objectId() == object.value(QStringLiteral("id")).toInteger(-2))
        m_detail->showObject(m_detail->kind(), object);
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

void MainWindow::openConnectionDialog()
{
    auto *dialog = new ConnectionDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        ConsoleConnection c;
        const ConnectionProfile profile = dialog->profile();
        c.baseUrl = profile.serverUrl;
        c.profile = profile.name;
        c.token = dialog->token();
        if (!c.token.isEmpty()) {
            connectTo(c);
            return;
        }
        // The token was stored earlier: in the profile's file, or in the keychain.
        QString error;
        if (!profile.tokenFile.isEmpty()) {
            c.token = CredentialStore::readTokenFile(profile.tokenFile, &error);
            if (c.token.isEmpty())
                MessageBox::warning(this, tr("No token"), error);
            else
                connectTo(c);
            return;
        }
        auto *store = new CredentialStore(this);
        connect(store, &CredentialStore::tokenRead, this, [this, store, c](const QString &, const QString &token) mutable {
            store->deleteLater();
            c.token = token;
            connectTo(c);
        });
        connect(store, &CredentialStore::failed, this, [this, store](const QString &, const QString &message, bool) {
            store->deleteLater();
            MessageBox::warning(this, tr("No token"),
                                tr("%1. Open File › Connect to… again and give the token.").arg(message));
        });
        store->read(profile.name);
    });
    dialog->open();
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

void MainWindow::updateWindowTitle()
{
    if (m_connection.baseUrl.isEmpty())
        setWindowTitle(tr("OpsDeck"));
    else if (m_connection.embedded)
        setWindowTitle(tr("OpsDeck — %1 (embedded server)").arg(m_connection.profile));
    else
        setWindowTitle(tr("OpsDeck — %1").arg(m_connection.profile.isEmpty() ? m_connection.baseUrl.toString()
                                                                             : m_connection.profile));
}

void MainWindow::connectTo(const ConsoleConnection &connection)
{
    m_connection = connection;
    updateWindowTitle();
    m_serverLabel->setText(tr("%1 · %2").arg(connection.baseUrl.toString(), actorName(connection.role)));
    m_detail->setRole(connection.role);

    // A fresh client, cache and engine per connection; the old ones go once the views point at
    // the new models.
    SyncEngine *oldSync = m_sync;
    ApiClient *oldApi = m_api;
    Cache *oldCache = m_cache;
    disconnect(oldSync->status(), nullptr, this, nullptr);
    disconnect(oldSync, nullptr, this, nullptr);
    oldSync->stop();

    m_api = new ApiClient(this);
    m_api->setObjectName(QStringLiteral("apiClient"));
    m_api->setBaseUrl(connection.baseUrl);
    m_api->setToken(connection.token);
    connect(m_api, &ApiClient::pendingMutationsChanged, this, &MainWindow::setPendingOperations);
    connect(m_api, &ApiClient::unauthenticated, this, [this](const Problem &problem) {
        m_cacheNotice->setText(tr("The server refused the token: %1")
                                   .arg(problem.detail.isEmpty() ? problem.title : problem.detail));
        m_cacheNotice->show();
    });
    connect(m_api, &ApiClient::sslErrors, this, &MainWindow::onSslErrors);
    m_sslAsked = false;
    m_cache = new Cache(connection.cachePath.isEmpty() ? Cache::defaultPath(connection.profile) : connection.cachePath,
                        this);
    connect(m_cache, &Cache::cacheRebuilt, this, &MainWindow::onCacheRebuilt);
    m_sync = new SyncEngine(m_api, m_cache, this);
    m_sync->setObjectName(QStringLiteral("syncEngine"));
    connect(m_sync->status(), &ConnectionStatus::changed, this, &MainWindow::onConnectionChanged);
    connect(m_sync, &SyncEngine::problem, this, [this](const Problem &problem) {
        statusBar()->showMessage(problem.detail.isEmpty() ? problem.title : problem.detail, 10000);
    });
    bindModels();
    delete oldSync;
    delete oldApi;
    delete oldCache;

    m_cacheNotice->hide();
    // Until the first contact the rows are the cache's, as of its last write (read before opening
    // it, which may write).
    QDateTime cachedAsOf;
    for (const QString &suffix : {QString(), QStringLiteral("-wal")}) {
        const QFileInfo info(m_cache->filePath() + suffix);
        if (info.exists() && (!cachedAsOf.isValid() || info.lastModified() > cachedAsOf))
            cachedAsOf = info.lastModified();
    }
    m_sync->status()->setCachedAsOf(cachedAsOf);
    m_cache->open();
    m_sync->start();
    onConnectionChanged();
    discoverRole();
}

void MainWindow::discoverRole()
{
    // A profile or token file does not say what the token may do: the server does. Until it
    // answers (or when it is unreachable) the role given at connection time stays.
    m_api->get(QStringLiteral("/whoami"), this, [this](const ApiResult &result) {
        if (!result.ok())
            return;
        const auto role = roleFromName(result.object().value(QStringLiteral("role")).toString());
        if (!role || *role == m_connection.role)
            return;
        m_connection.role = *role;
        m_serverLabel->setText(tr("%1 · %2").arg(m_connection.baseUrl.toString(), actorName(*role)));
        m_detail->setRole(*role);
    });
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
    m_dashboard->setConnectionText(status->isLive()
                                       ? tr("Connected to %1 as %2 · live").arg(m_connection.baseUrl.toString(),
                                                                             actorName(m_connection.role))
                                       : tr("%1 — %2").arg(m_connection.baseUrl.toString(), connectionStatusText()));
}

void MainWindow::onSslErrors(const QList<QSslError> &errors, const QUrl &url)
{
    // Asked once per connection: the requests failed already, and a relist follows a yes.
    if (m_sslAsked)
        return;
    m_sslAsked = true;
    QStringList lines;
    for (const QSslError &e : errors)
        lines.append(QStringLiteral("• ") + e.errorString());
    const auto answer = MessageBox::question(
        this, tr("Untrusted certificate"),
        tr("The certificate of %1 is not trusted:\n%2\n\nConnect anyway? Only do this if you know why the "
           "certificate is not trusted.")
            .arg(url.host(), lines.join(QLatin1Char('\n'))));
    if (answer != QMessageBox::Yes)
        return;
    m_api->setAcceptedSslErrors(errors);
    m_sync->relist(tr("certificate accepted"));
}

void MainWindow::onCacheRebuilt(const QString &reason)
{
    m_cacheNotice->setText(tr("The local cache was rebuilt: %1").arg(reason));
    m_cacheNotice->setToolTip(m_cache ? m_cache->filePath() : QString());
    m_cacheNotice->show();
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
