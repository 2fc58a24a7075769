// The console's main window: navigation of spec §8, one view per kind, the detail pane and the
// status bar (live / reconnecting / offline, pending operations).
#pragma once

#include "consoleconnection.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QMainWindow>
#include <QPointer>
#include <QSet>
#include <QSslError>

#include <functional>

class QLabel;
class QListWidget;
class QSplitter;
class QStackedWidget;
class QTimer;

namespace OpsDeck {

struct ResourceKind;
class ApiClient;
class ApiReply;
class Cache;
class ConnectionStatus;
class SyncEngine;
class DashboardPage;
class DetailPane;
class FilterProxyModel;
class PendingSelection;
class ResourceModel;
class ResourceView;

class MainWindow final : public QMainWindow
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(MainWindow)

public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Before a connection exists (e.g. while the embedded server starts).
    void setStartupMessage(const QString &message);
    // A failure that prevents connecting at all (the embedded server did not start, ...).
    void showFatalError(const QString &message);
    void connectTo(const ConsoleConnection &connection);
    const ConsoleConnection &connection() const { return m_connection; }

    // View ids in navigation order: "dashboard", "organizations", "instances", "sandboxes",
    // "bindings", "catalog", "deliveries", "audit".
    QStringList viewNames() const;
    void showView(const QString &name);
    QString currentViewName() const;
    ResourceView *resourceView(const QString &kindName) const;
    // Every kind has a model, whether or not it has a view (providers name the instances' rows);
    // the models belong to the sync engine of the current connection.
    ResourceModel *resourceModel(const QString &kindName) const;
    FilterProxyModel *filterModel(const QString &kindName) const;
    DetailPane *detailPane() const { return m_detail; }
    DashboardPage *dashboard() const { return m_dashboard; }
    QString connectionStatusText() const;
    QString pendingOperationsText() const;

    void refresh();
    void saveSettings() const;

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    struct Page
    {
        QString name;
        QString title;
        QString icon;
        const ResourceKind *kind = nullptr; // not owned; null for the dashboard and unknown kinds
        QWidget *widget = nullptr;
        ResourceView *view = nullptr;
        ResourceView *secondary = nullptr; // a second table on the same page (Callbacks: endpoints)
    };

    // The layout, pages and models (mainwindow.cpp).
    void buildModels();
    void bindModels();
    void buildPages();
    void restoreSettings();
    // The size and place of a first start, with no saved geometry: what the screen has room for.
    void placeFirstTime();
    void orderFocusChain();
    void onNavigation(int row);
    ResourceView *makeView(const ResourceKind &kind, QWidget *parent);
    void onCurrentObjectChanged(const QString &kindName, const QJsonObject &object);
    void onCurrentObjectUpdated(const QString &kindName, const QJsonObject &object);

    // Menus, toolbar and the requests they and the detail pane make (mainwindowactions.cpp).
    void buildActions();
    void exportCurrentView();
    void focusQuery();
    void loadHistory(const QString &auditKind, qint64 objectId);
    void runAction(const QString &kindName, qint64 objectId, const QString &action);
    // What holds a shown delivery back (its endpoint paused or disabled), asked again whenever
    // the endpoints change.
    void watchHolds();
    // Why a waiting callback to this endpoint is held (its endpoint paused or disabled), or empty.
    QString heldBy(qint64 endpointId) const;
    void loadAttempts(qint64 deliveryId);
    // Selects a test event's new delivery once it arrives in the deliveries view, while unmoved()
    // says the operator is still where the test was sent from.
    void followTestEvent(qint64 deliveryId, const std::function<bool()> &unmoved);
    // Opens the bulk retry, starting from this delivery's state and endpoint: the operator
    // chooses states and scope and sees how many that is (the server's dry run) before retrying.
    void bulkRetry(qint64 deliveryId);
    void showNewSecret(const QJsonObject &instance, bool first);
    // An organization's deletion refused for its instances not stopped: names them, and offers
    // the Instances page filtered to them.
    void offerBlockingInstances(qint64 organizationId, const QString &title, const QString &problem,
                                const QJsonArray &instances);

    // Choosing and switching the server (mainwindowconnection.cpp).
    void openConnectionDialog();
    void updateWindowTitle();
    void discoverRole();
    // What the role changes in the window: the pane's actions, the empty tables' explanations.
    void applyRole(Actor role);
    void onSslErrors(const QList<QSslError> &errors, const QUrl &url);

    // The status bar (mainwindowstatusbar.cpp).
    void buildStatusBar();
    void setPendingOperations(int count);
    void onConnectionChanged();
    void onCacheRebuilt(const QString &reason);
    // Asks /healthz how the server's delivery worker is doing, for the dashboard's card: every few
    // seconds while live, and when the connection becomes live.
    void pollHealth();

    ConsoleConnection m_connection;
    QHash<QString, FilterProxyModel *> m_proxies; // children, by kind name; their sources are m_sync's
    ApiClient *m_api = nullptr;            // child; replaced on each connectTo
    Cache *m_cache = nullptr;              // child; replaced on each connectTo
    SyncEngine *m_sync = nullptr;          // child; replaced on each connectTo

    QList<Page> m_pages;
    QListWidget *m_navigation = nullptr;
    QStackedWidget *m_stack = nullptr;
    QSplitter *m_splitter = nullptr;
    DashboardPage *m_dashboard = nullptr;
    DetailPane *m_detail = nullptr;
    QLabel *m_connectionLabel = nullptr;
    QLabel *m_pendingLabel = nullptr;
    QLabel *m_serverLabel = nullptr;
    QLabel *m_cacheNotice = nullptr;
    QPointer<PendingSelection> m_followedDelivery; // child; the test event waiting for its row
    QSet<QString> m_actionsInFlight;               // "kind/id" of objects with an action on its way
    QTimer *m_healthPoll = nullptr;                // child
    QPointer<ApiReply> m_healthReply;              // the /healthz request on its way, if any
    int m_pendingOperations = 0;
    bool m_sslAsked = false;
};

} // namespace OpsDeck
