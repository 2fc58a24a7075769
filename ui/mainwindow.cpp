// The console's main window: its layout, the pages and their views, the models behind them and
// the remembered window state.
#include "mainwindow.h"

#include "dashboardpage.h"
#include "detailpane.h"
#include "pluralforms.h"
#include "resourceview.h"
#include "themedicon.h"
#include "unavailablepage.h"

#include "core/resourcekind.h"
#include "models/apiclient.h"
#include "models/filterproxymodel.h"
#include "models/cache.h"
#include "models/connectionstatus.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include <QCloseEvent>
#include <QCoreApplication>
#include <QListWidget>
#include <QStyledItemDelegate>
#include <QGuiApplication>
#include <QScreen>
#include <QSettings>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>

// Resources of a static library must be registered by name, outside any namespace.
static void initResources()
{
    Q_INIT_RESOURCE(icons);
}

// While the application is being constructed: before main() installs the translation of the
// user's locale, which then takes precedence over the English forms.
static void installPluralForms()
{
    OpsDeck::PluralForms::install();
}
Q_COREAPP_STARTUP_FUNCTION(installPluralForms)

namespace OpsDeck {

namespace {

// The chosen view is drawn in the selection's full colour while the list has the keyboard focus
// and muted otherwise, as item views elsewhere are not: where the arrow keys act is seen at once.
class NavigationDelegate final : public QStyledItemDelegate
{
public:
    using QStyledItemDelegate::QStyledItemDelegate;

protected:
    void initStyleOption(QStyleOptionViewItem *option, const QModelIndex &index) const override
    {
        QStyledItemDelegate::initStyleOption(option, index);
        if (option->widget && option->widget->hasFocus())
            return;
        QPalette &palette = option->palette;
        const QColor highlight = palette.color(QPalette::Highlight);
        const QColor base = palette.color(QPalette::Base);
        // A third of the way from the page's background to the selection's colour.
        const auto third = [](int from, int to) { return from + (to - from) / 3; };
        palette.setColor(QPalette::Highlight, QColor(third(base.red(), highlight.red()), third(base.green(), highlight.green()),
                                                     third(base.blue(), highlight.blue())));
        palette.setColor(QPalette::HighlightedText, palette.color(QPalette::Text));
    }
};

} // namespace

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
    m_navigation->setItemDelegate(new NavigationDelegate(m_navigation));

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
    orderFocusChain();
    applyRole(m_connection.role);
    restoreSettings();
    updateWindowTitle();

    connect(m_navigation, &QListWidget::currentRowChanged, this, &MainWindow::onNavigation);
    connect(m_dashboard, &DashboardPage::openViewRequested, this, [this](const QString &kind, const QString &query) {
        // The page that shows the kind (endpoints are on the Callbacks page), its table filtered.
        ResourceView *view = resourceView(kind);
        for (qsizetype row = 0; view && row < m_pages.size(); ++row) {
            if (m_pages.at(row).widget == view || m_pages.at(row).widget->isAncestorOf(view)) {
                m_navigation->setCurrentRow(int(row));
                view->setQueryText(query);
                view->table()->setFocus(Qt::OtherFocusReason);
                return;
            }
        }
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
    watchHolds();
    for (auto it = m_proxies.cbegin(); it != m_proxies.cend(); ++it) {
        ResourceModel *model = m_sync->model(it.key());
        if (!model)
            continue;
        model->setReferenceLookup(lookup);
        it.value()->setSourceModel(model);
        if (m_dashboard)
            m_dashboard->setModel(it.key(), model);
        // Names shown in reference columns come with the other kinds' rows, often after this
        // kind's own (a remembered filter may already read them). Renames are left out: every
        // status change of an instance would refilter its callbacks.
        FilterProxyModel *proxy = it.value();
        for (const FieldSpec &field : model->kind().fields) {
            const ResourceModel *named = field.references.isEmpty() ? nullptr : m_sync->model(field.references);
            if (!named)
                continue;
            for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
                connect(named, signal, proxy, &FilterProxyModel::referencedNamesChanged);
            connect(named, &QAbstractItemModel::modelReset, proxy, &FilterProxyModel::referencedNamesChanged);
        }
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
        auto *item = new QListWidgetItem(ThemedIcon::fromSvg(page.icon), page.title, m_navigation);
        item->setData(Qt::UserRole, page.name);
        item->setSizeHint(QSize(0, 30));
        m_pages.append(page);
    }
    m_navigation->setMinimumWidth(150);
    for (const char *name : {"organizations", "instances", "deliveries", "endpoints", "providers"}) {
        // Cards follow the current engine's models: bindModels() replaces them on connecting.
        const QString kindName = QString::fromLatin1(name);
        if (const ResourceKind *kind = resourceKindByName(kindName))
            m_dashboard->addKind(*kind, resourceModel(kindName), resourceView(kindName) != nullptr);
    }
    connect(m_detail, &DetailPane::historyRequested, this, &MainWindow::loadHistory);
    connect(m_detail, &DetailPane::actionRequested, this, &MainWindow::runAction);
    connect(m_detail, &DetailPane::attemptsRequested, this, &MainWindow::loadAttempts);
}

void MainWindow::orderFocusChain()
{
    // The detail pane is made before the pages it details, so its widgets came first in the
    // focus chain and Tab went from the views to the pane, past the page. The pane's widgets go
    // after the page's, in their own order; fields the pane adds later join at the end anyway.
    QList<QWidget *> pane;
    QWidget *lastOfPages = nullptr;
    for (QWidget *w = nextInFocusChain(); w != this; w = w->nextInFocusChain()) {
        if (w->focusPolicy() == Qt::NoFocus)
            continue;
        if (m_detail->isAncestorOf(w))
            pane.append(w);
        else if (m_stack->isAncestorOf(w))
            lastOfPages = w;
    }
    for (QWidget *w : std::as_const(pane)) {
        if (!lastOfPages)
            break;
        setTabOrder(lastOfPages, w);
        lastOfPages = w;
    }
}

void MainWindow::restoreSettings()
{
    QSettings settings;
    if (!restoreGeometry(settings.value(QStringLiteral("mainWindow/geometry")).toByteArray()))
        placeFirstTime();
    restoreState(settings.value(QStringLiteral("mainWindow/state")).toByteArray());
    const QByteArray splitter = settings.value(QStringLiteral("mainWindow/splitter")).toByteArray();
    if (!splitter.isEmpty())
        m_splitter->restoreState(splitter);
    const QString last = settings.value(QStringLiteral("mainWindow/view")).toString();
    const int row = viewNames().indexOf(last);
    m_navigation->setCurrentRow(row < 0 ? 0 : row);
    m_stack->setCurrentIndex(m_navigation->currentRow());
}

void MainWindow::placeFirstTime()
{
    // 1400 × 860 where the screen has room for it and its frame; on a smaller screen all of its
    // room, maximized (the window system fits the frame in): the status bar and the Callbacks
    // page's lower half must not start off a 1024 × 700 screen.
    const QSize preferred(1400, 860);
    const QScreen *where = screen() ? screen() : QGuiApplication::primaryScreen();
    const QRect room = where ? where->availableGeometry() : QRect(QPoint(), preferred);
    constexpr QSize frameRoom(32, 64);
    if (room.width() >= preferred.width() + frameRoom.width() && room.height() >= preferred.height() + frameRoom.height()) {
        resize(preferred);
        return;
    }
    resize(preferred.boundedTo(room.size()));
    setWindowState(windowState() | Qt::WindowMaximized);
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
    // Nor has any other page rows to export.
    if (auto *exportAction = findChild<QAction *>(QStringLiteral("exportAction"))) {
        exportAction->setEnabled(page.view != nullptr);
        exportAction->setToolTip(page.view ? tr("Export the rows this table shows as CSV")
                                           : tr("Only a table's rows can be exported: this page has no table."));
    }
    // The detail pane shows the row chosen in the page's tables (one at most has one).
    for (const ResourceView *view : {page.view, page.secondary}) {
        const QJsonObject chosen = view ? view->chosenObject() : QJsonObject();
        if (const ResourceKind *kind = chosen.isEmpty() ? nullptr : resourceKindByName(view->kind().name)) {
            m_detail->showObject(kind, chosen);
            return;
        }
    }
    m_detail->clear();
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
    if (object.isEmpty() || !kind) {
        m_detail->clear();
        return;
    }
    m_detail->showObject(kind, object);
    // One table of the page at a time has rows chosen: the pane shows that one's.
    if (page.secondary) {
        ResourceView *other = page.view->kind().name == kindName ? page.secondary : page.view;
        other->table()->clearSelection();
    }
}

void MainWindow::onCurrentObjectUpdated(const QString &kindName, const QJsonObject &object)
{
    // A newer version of what the pane shows; another table's current row changing is not news.
    if (m_detail->kind() && m_detail->kind()->name == kindName
        && m_detail->objectId() == object.value(QStringLiteral("id")).toInteger(-2))
        m_detail->showObject(m_detail->kind(), object);
}

} // namespace OpsDeck
