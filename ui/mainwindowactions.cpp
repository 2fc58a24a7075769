// The main window's menus and toolbar, and what their actions and the detail pane's ask of the server.
#include "mainwindow.h"

#include "bulkretrydialog.h"
#include "detailpane.h"
#include "messagebox.h"
#include "modelchanges.h"
#include "pendingselection.h"
#include "resourceview.h"
#include "themedicon.h"
#include "valueformat.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "core/instance.h"
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
#include <QUrl>

namespace OpsDeck {

void MainWindow::buildActions()
{
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *connectAction =
        fileMenu->addAction(ThemedIcon::fromSvg(QStringLiteral(":/icons/connect.svg")), tr("&Connect to…"));
    connectAction->setObjectName(QStringLiteral("connectAction"));
    connect(connectAction, &QAction::triggered, this, &MainWindow::openConnectionDialog);
    QAction *exportAction =
        fileMenu->addAction(ThemedIcon::fromSvg(QStringLiteral(":/icons/export.svg")), tr("&Export view as CSV…"));
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
        QAction *a = viewMenu->addAction(ThemedIcon::fromSvg(m_pages.at(i).icon), m_pages.at(i).title);
        a->setObjectName(QStringLiteral("showView_") + m_pages.at(i).name);
        a->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(Qt::Key_1 + i)));
        connect(a, &QAction::triggered, this, [this, i] { m_navigation->setCurrentRow(i); });
    }
    viewMenu->addSeparator();
    QAction *findAction = viewMenu->addAction(tr("&Filter…"));
    findAction->setObjectName(QStringLiteral("findAction"));
    findAction->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_F));
    connect(findAction, &QAction::triggered, this, &MainWindow::focusQuery);
    // Ctrl+F goes to the page's main table: only its query line says so.
    for (const Page &page : std::as_const(m_pages)) {
        if (page.view)
            page.view->setQueryShortcut(findAction->shortcut());
    }
    QAction *refreshAction =
        viewMenu->addAction(ThemedIcon::fromSvg(QStringLiteral(":/icons/refresh.svg")), tr("&Refresh"));
    refreshAction->setObjectName(QStringLiteral("refreshAction"));
    refreshAction->setShortcut(QKeySequence(Qt::Key_F5));
    connect(refreshAction, &QAction::triggered, this, &MainWindow::refresh);

    // The selected object's actions, reachable from the keyboard (Alt+A) and named in one place.
    QMenu *actionsMenu = menuBar()->addMenu(tr("&Actions"));
    actionsMenu->setObjectName(QStringLiteral("actionsMenu"));
    connect(actionsMenu, &QMenu::aboutToShow, this, [this, actionsMenu] {
        actionsMenu->clear();
        const QList<QAction *> actions = !m_detail->isHidden() ? m_detail->objectActions() : QList<QAction *>();
        if (actions.isEmpty()) {
            actionsMenu->addAction(tr("Select a row to act on it"))->setEnabled(false);
            return;
        }
        actionsMenu->addActions(actions);
    });

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

namespace {

// The route of an action where it differs from the action's name: a disabled endpoint is
// enabled by the route that resumes a paused one.
QString routeOf(const QString &kindName, const QString &action)
{
    if (kindName == QLatin1String("endpoints") && action == QLatin1String("enable"))
        return QStringLiteral("resume");
    return action;
}

} // namespace

void MainWindow::loadHistory(const QString &auditKind, qint64 objectId)
{
    if (!m_api)
        return;
    m_api->get(QStringLiteral("/audit?kind=%1&object_id=%2&limit=200").arg(auditKind).arg(objectId), m_detail,
               [this, objectId](const ApiResult &result) {
                   if (!result.ok()) {
                       m_detail->setHistoryError(objectId, problemText(result));
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

void MainWindow::loadAttempts(qint64 deliveryId)
{
    if (!m_api || !m_connection.baseUrl.isValid())
        return;
    m_api->get(QStringLiteral("/deliveries/%1").arg(deliveryId), m_detail, [this, deliveryId](const ApiResult &result) {
        if (!result.ok()) {
            m_detail->setAttemptsError(deliveryId, problemText(result));
            return;
        }
        m_detail->setAttempts(deliveryId, result.object().value(QStringLiteral("attempt_log")).toArray());
    });
}

void MainWindow::watchHolds()
{
    // The server sends a paused or disabled endpoint nothing and refuses to retry its deliveries
    // ("resume it, then retry"): the pane says so where the delivery is shown.
    m_detail->setHoldLookup([this](const ResourceKind &kind, const QJsonObject &object) -> DetailPane::Hold {
        // Only a 410 disables an endpoint; enabled again while the URL still answers so, it is
        // disabled again at its next attempt, which looked like the enable had failed.
        if (kind.name == QLatin1String("endpoints") && object.value(QStringLiteral("state")).toString() == Endpoint::Disabled)
            return {tr("Disabled: its URL answered 410 Gone, which says it is gone for good. Enable it once the "
                       "provider answers there again: another 410 disables it again."),
                    {}};
        // Its retention over, a stopped instance waits for its provider to acknowledge before it
        // is destroyed: the table's Awaiting column is hidden by default, so the pane says it.
        const QString awaiting = valueAt(object, QStringLiteral("awaiting_ack.reason")).toString();
        const qint64 awaitedCallback = valueAt(object, QStringLiteral("awaiting_ack.delivery_id")).toInteger();
        // Its destruction callback issued, its provider may have deleted it: the server refuses to
        // start it again.
        if (kind.name == QLatin1String("instances") && Instance::destructionIssued(object))
            return {tr("Being destroyed: %1. Its provider may have deleted it already, so it cannot start again; it "
                       "becomes DESTROYED once callback #%2 is acknowledged. If that failed, retry it on the Callbacks "
                       "page.")
                        .arg(awaiting)
                        .arg(awaitedCallback),
                    Instance::heldActions(object)};
        if (kind.name == QLatin1String("instances") && !awaiting.isEmpty())
            return {tr("Awaiting the provider's acknowledgement: %1. It is destroyed once callback #%2 is acknowledged; "
                       "if it failed, retry it on the Callbacks page.")
                        .arg(awaiting)
                        .arg(awaitedCallback),
                    {}};
        // Stopped while PENDING, it has no callback: the server refuses to start it, since no
        // provider would be told that it runs.
        if (kind.name == QLatin1String("instances") && Instance::stoppedUnregistered(object))
            return {tr("Stopped before its provider registered it: it has no callback, so starting it would tell no "
                       "provider. Create a new instance instead."),
                    Instance::heldActions(object)};
        if (kind.name != QLatin1String("deliveries"))
            return {};
        const QString held = heldBy(object.value(QStringLiteral("endpoint_id")).toInteger());
        if (held.isEmpty())
            return {};
        return {held, {QStringLiteral("retry")}};
    });
    // The list says it too, beside the state of each waiting callback its endpoint holds: a
    // provider going down its callbacks sees which wait for a resume, not a next attempt long past.
    ResourceModel *deliveries = m_sync ? m_sync->model(QStringLiteral("deliveries")) : nullptr;
    if (deliveries) {
        const int stateField = deliveries->kind().fieldIndex(deliveries->kind().stateField);
        const int endpointField = deliveries->kind().fieldIndex(QStringLiteral("endpoint_id"));
        deliveries->setStateNoteLookup([this, deliveries, stateField, endpointField](int row) -> ResourceModel::StateNote {
            if (deliveries->cellText(row, stateField) != Delivery::Pending)
                return {};
            const QString held = heldBy(deliveries->rawValue(row, endpointField).toLongLong());
            return held.isEmpty() ? ResourceModel::StateNote() : ResourceModel::StateNote{tr("held"), held};
        });
    }
    ResourceModel *endpoints = m_sync ? m_sync->model(QStringLiteral("endpoints")) : nullptr;
    if (!endpoints)
        return;
    const auto refresh = [this, deliveries] {
        if (m_detail->kind() && m_detail->kind()->name == QLatin1String("deliveries"))
            m_detail->refreshHold();
        if (deliveries)
            deliveries->stateNotesChanged();
    };
    whenModelChanges(endpoints, this, refresh);
}

QString MainWindow::heldBy(qint64 endpointId) const
{
    const ResourceModel *endpoints = resourceModel(QStringLiteral("endpoints"));
    const int row = endpoints ? endpoints->rowOfId(endpointId) : -1;
    const QString state = row >= 0 ? endpoints->index(row, 0).data(ResourceModel::StateRole).toString() : QString();
    if (state == Endpoint::Paused)
        return tr("Held: its endpoint #%1 is PAUSED. Nothing is sent to it until it is resumed; its "
                  "waiting callbacks then go at once.").arg(endpointId);
    if (state == Endpoint::Disabled)
        return tr("Held: its endpoint #%1 is DISABLED. Nothing is sent to it until it is enabled "
                  "again; its waiting callbacks then go at once.").arg(endpointId);
    return {};
}

void MainWindow::runAction(const QString &kindName, qint64 objectId, const QString &action)
{
    if (!m_api)
        return;
    if (action == QLatin1String("bulk-retry")) {
        bulkRetry(objectId);
        return;
    }
    // Dialogs and the status bar speak of the button the user pressed ("Rotate secret"), not the
    // route ("rotate-secret").
    QString label = action;
    for (const QAction *a : m_detail->objectActions()) {
        if (a->objectName() == QLatin1String("action_") + action)
            label = a->text().remove(QChar(0x2026));
    }
    // One action at a time on an object: a second click while the first is on its way would
    // carry the version the first is about to change (a double submit).
    const QString busyKey = kindName + QLatin1Char('/') + QString::number(objectId);
    if (m_actionsInFlight.contains(busyKey)) {
        statusBar()->showMessage(tr("%1 #%2: the previous action on it has not been answered yet").arg(label).arg(objectId), 5000);
        return;
    }
    const ResourceModel *model = resourceModel(kindName);
    const QJsonObject object = model ? model->objectById(objectId) : QJsonObject();
    // Say what will happen before asking why.
    const ResourceKind *kind = resourceKindByName(kindName);
    const bool isTest = action == QLatin1String("test");
    const bool isRotation = action == QLatin1String("rotate-secret");
    // Registering names the callback URL the provider receives notifications at, and answers the
    // instance's signing secret, shown once as a rotation's is.
    const bool isRegistration = action == QLatin1String("register");
    QString callbackUrl;
    if (isRegistration) {
        // What can be told here is told before the reason is asked, and the URL is asked again as
        // typed: a typo costs no retyping. The server checks the rest (its address, for one).
        for (;;) {
            const std::optional<QString> url = MessageBox::getText(
                this, tr("Register #%1").arg(objectId),
                tr("Callback URL: where the provider receives this instance's notifications (https://…).\n"
                   "The server checks it; the signing secret is shown once, after."),
                callbackUrl);
            if (!url || url->trimmed().isEmpty())
                return;
            callbackUrl = url->trimmed();
            const QUrl parsed(callbackUrl, QUrl::StrictMode);
            const QString scheme = parsed.scheme().toLower();
            QString problem;
            if (!parsed.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
                problem = tr("A callback URL starts with https:// or http://: %1").arg(callbackUrl);
            else if (parsed.host().isEmpty())
                problem = tr("This callback URL names no host: %1").arg(callbackUrl);
            if (problem.isEmpty())
                break;
            MessageBox::warning(this, tr("Register #%1").arg(objectId), problem);
        }
    }
    const QString stateField = kind ? kind->stateField : QString();
    QString what = tr("%1: %2 #%3").arg(label, kind ? kind->itemTitle : kindName).arg(objectId);
    QString note; // what follows from it, after the object's name
    if (isTest) {
        what = tr("Send a test event to endpoint #%1").arg(objectId);
    } else if (isRotation) {
        what = tr("Rotate the callback signing secret of instance #%1; the new secret is shown once").arg(objectId);
    } else if (isRegistration) {
        what = tr("Register instance #%1 with its callbacks sent to %2").arg(objectId).arg(callbackUrl);
    } else if (kind && kind->machine && !stateField.isEmpty()) {
        const QString state = object.value(stateField).toString();
        if (const auto t = kind->machine->find(state, action, m_connection.role)) {
            what = t->to == state ? tr("%1 (stays %2)").arg(what, state) : tr("%1, %2 → %3").arg(what, state, t->to);
            // A stopped instance is destroyed once the retention period has passed.
            if (kindName == QLatin1String("instances") && t->to == Instance::Stopped)
                note = tr("\nUnless it is started again, it is destroyed when the server's retention period ends "
                          "(its provider is told).");
        }
    }
    const QString name = kind && !kind->nameField.isEmpty() ? object.value(kind->nameField).toString() : QString();
    const std::optional<QString> reason = MessageBox::getText(
        this, tr("Confirm: %1").arg(label),
        tr("%1%2%3\n\nWhy? The reason is kept in the audit log.")
            .arg(what, name.isEmpty() ? QString() : tr(" (%1)").arg(name), note));
    if (!reason)
        return;
    // The object may have changed while the dialog was open (another operator, the worker): what
    // was confirmed no longer holds. Nothing is sent; the user looks again.
    const QJsonObject now = model ? model->objectById(objectId) : QJsonObject();
    if (!isTest && object.contains(QStringLiteral("version"))
        && now.value(QStringLiteral("version")) != object.value(QStringLiteral("version"))) {
        MessageBox::warning(this, tr("%1 #%2 not sent").arg(label).arg(objectId),
                            stateField.isEmpty() || now.value(stateField) == object.value(stateField)
                                ? tr("#%1 changed while this dialog was open. Nothing was done: look at it again, "
                                     "then choose.").arg(objectId)
                                : tr("#%1 changed while this dialog was open: it is %2 now, not %3. Nothing was "
                                     "done: look at it again, then choose.")
                                      .arg(objectId)
                                      .arg(now.value(stateField).toString(), object.value(stateField).toString()));
        return;
    }
    // Whether the operator is still where the test event was sent from when its delivery arrives.
    const QString page = currentViewName();
    const QString shownKind = m_detail->kind() ? m_detail->kind()->name : QString();
    const qint64 shownId = m_detail->objectId();
    const std::function<bool()> unmoved = [this, page, shownKind, shownId] {
        return currentViewName() == page && m_detail->kind() && m_detail->kind()->name == shownKind
               && m_detail->objectId() == shownId;
    };
    RequestOptions options;
    // A test event is a new delivery, not a change of the endpoint: no version to match.
    if (object.contains(QStringLiteral("version")) && !isTest)
        options.ifMatch = object.value(QStringLiteral("version")).toInteger();
    m_actionsInFlight.insert(busyKey);
    auto done = [this, label, objectId, isTest, isRotation, isRegistration, unmoved, busyKey](const ApiResult &result) {
        m_actionsInFlight.remove(busyKey);
        if (result.status == 412) {
            // The version sent no longer matched: someone (or the worker) changed it in between.
            MessageBox::warning(this, tr("%1 #%2 not done").arg(label).arg(objectId),
                                tr("#%1 changed on the server before this action reached it. Nothing was done: "
                                   "look at it again (it is updated here), then choose.").arg(objectId));
            return;
        }
        if (result.status == 0) {
            // No answer: say whether it may have been done, not just what the network said.
            MessageBox::warning(this, tr("%1 #%2: no answer").arg(label).arg(objectId),
                                result.mayHaveArrived
                                    ? tr("%1\n\nWhether it was done is not known. Once the console is back online it "
                                         "shows #%2 as the server has it: look at it then, and choose again if need be.")
                                          .arg(problemText(result), QString::number(objectId))
                                    : tr("%1\n\nNothing was done: the request never reached the server. Try again once "
                                         "the console is back online.")
                                          .arg(problemText(result)));
            return;
        }
        if (!result.ok()) {
            // A newer notification carries the current status: offer it instead of a dead end.
            const qint64 newer = result.problem
                                     ? result.problem->extensions.value(QStringLiteral("newer_delivery_id")).toInteger()
                                     : 0;
            // Instances that keep an organization from being deleted: named, and shown on request.
            const QJsonArray blocking = result.problem
                                            ? result.problem->extensions.value(QStringLiteral("blocking_instances")).toArray()
                                            : QJsonArray();
            if (newer <= 0 && !blocking.isEmpty()) {
                offerBlockingInstances(objectId, tr("%1 #%2 failed").arg(label).arg(objectId), problemText(result), blocking);
                return;
            }
            if (newer <= 0) {
                MessageBox::warning(this, tr("%1 #%2 failed").arg(label).arg(objectId), problemText(result));
                return;
            }
            const auto answer = MessageBox::question(this, tr("%1 #%2 failed").arg(label).arg(objectId),
                                                     tr("%1\n\nShow delivery #%2?").arg(problemText(result)).arg(newer));
            if (answer != QMessageBox::Yes)
                return;
            showView(QStringLiteral("deliveries"));
            ResourceView *view = resourceView(QStringLiteral("deliveries"));
            if (!view || !view->selectId(newer))
                statusBar()->showMessage(tr("Delivery #%1 is not shown: clear the filter to see it").arg(newer), 8000);
            return;
        }
        if (isRotation || isRegistration)
            showNewSecret(result.object(), isRegistration);
        else if (isTest)
            followTestEvent(result.object().value(QStringLiteral("id")).toInteger(), unmoved);
        else
            statusBar()->showMessage(tr("%1 #%2: done").arg(label).arg(objectId), 5000);
    };
    const QString path = QStringLiteral("/%1/%2").arg(kindName).arg(objectId);
    if (action == QLatin1String("delete")) {
        options.reason = *reason;
        m_api->del(path, this, done, options);
    } else {
        QJsonObject body{{QStringLiteral("reason"), *reason}};
        if (isRegistration)
            body.insert(QStringLiteral("callback_url"), callbackUrl);
        m_api->post(path + QLatin1Char('/') + routeOf(kindName, action), body, this, done, options);
    }
}

void MainWindow::followTestEvent(qint64 deliveryId, const std::function<bool()> &unmoved)
{
    statusBar()->showMessage(tr("Test event queued as delivery #%1").arg(deliveryId), 8000);
    ResourceView *view = resourceView(QStringLiteral("deliveries"));
    delete m_followedDelivery;
    if (!view || deliveryId <= 0 || !unmoved())
        return;
    // Its row comes with the change feed (or the next list page), usually after this answer.
    m_followedDelivery = new PendingSelection(view, deliveryId, unmoved, this);
    // Whatever the operator selects or opens meanwhile wins over the arriving row.
    for (const Page &p : std::as_const(m_pages)) {
        for (ResourceView *v : {p.view, p.secondary}) {
            if (v)
                connect(v, &ResourceView::currentObjectChanged, m_followedDelivery, &PendingSelection::check);
        }
    }
    connect(m_navigation, &QListWidget::currentRowChanged, m_followedDelivery, &PendingSelection::check);
    m_followedDelivery->start();
}

void MainWindow::bulkRetry(qint64 deliveryId)
{
    const ResourceModel *model = resourceModel(QStringLiteral("deliveries"));
    const QJsonObject delivery = model ? model->objectById(deliveryId) : QJsonObject();
    BulkRetryScope scope;
    scope.state = delivery.value(QStringLiteral("state")).toString();
    scope.endpointId = delivery.value(QStringLiteral("endpoint_id")).toInteger();
    if (scope.endpointId > 0) {
        const ResourceModel *endpoints = resourceModel(QStringLiteral("endpoints"));
        const QString url = endpoints ? endpoints->objectById(scope.endpointId).value(QStringLiteral("url")).toString()
                                      : QString();
        scope.endpointText = url.isEmpty() ? tr("#%1").arg(scope.endpointId) : tr("#%1 (%2)").arg(scope.endpointId).arg(url);
    }
    scope.providerId = delivery.value(QStringLiteral("provider_id")).toInteger();
    if (scope.providerId > 0) {
        const ResourceModel *providers = resourceModel(QStringLiteral("providers"));
        const QString name = providers ? providers->nameOfId(scope.providerId) : QString();
        scope.providerText = name.isEmpty() ? tr("#%1").arg(scope.providerId) : tr("%1 (#%2)").arg(name).arg(scope.providerId);
    }
    // Not exec(): the dialog counts while it is open, and the window goes on showing the feed.
    auto *dialog = new BulkRetryDialog(m_api, scope, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &BulkRetryDialog::retried, this, [this](qint64 count, qint64 held) {
        const QString retried = tr("Retried %n callback(s)", nullptr, int(count));
        statusBar()->showMessage(held > 0 ? tr("%1; held by a paused or disabled endpoint: %2").arg(retried).arg(held) : retried,
                                 8000);
    });
    // What it counts changes with the feed while it is open: it counts again.
    if (model)
        whenModelChanges(model, dialog, [dialog] { dialog->callbacksChanged(); });
    dialog->open();
}

void MainWindow::offerBlockingInstances(qint64 organizationId, const QString &title, const QString &problem,
                                        const QJsonArray &instances)
{
    constexpr int kNamed = 10;
    QStringList lines;
    for (qsizetype i = 0; i < std::min<qsizetype>(kNamed, instances.size()); ++i) {
        const QJsonObject instance = instances.at(i).toObject();
        lines << tr("%1 #%2 (%3)")
                     .arg(instance.value(QStringLiteral("name")).toString())
                     .arg(instance.value(QStringLiteral("id")).toInteger())
                     .arg(instance.value(QStringLiteral("status")).toString());
    }
    if (instances.size() > kNamed)
        lines << tr("and %n more", nullptr, int(instances.size() - kNamed));
    const auto answer = MessageBox::question(
        this, title, tr("%1\n\n%2\n\nShow them in Instances, to stop them one by one?").arg(problem, lines.join(u'\n')));
    if (answer != QMessageBox::Yes)
        return;
    showView(QStringLiteral("instances"));
    if (ResourceView *view = resourceView(QStringLiteral("instances")))
        view->setQueryText(QStringLiteral("organization:%1 -state:stopped,destroyed").arg(organizationId));
}

void MainWindow::showNewSecret(const QJsonObject &instance, bool first)
{
    const QString until = instance.value(QStringLiteral("previous_secret_valid_until")).toString();
    const QString grace = first ? tr("The provider's receiver verifies every callback of this instance with it.")
                          : until.isEmpty()
                              ? tr("The previous secret no longer signs: this instance's signature has room for one.")
                              : tr("The previous secret also signs until %1.").arg(displayTimestamp(until));
    const QString secret = instance.value(QStringLiteral("secret")).toString();
    MessageBox::secret(this, tr("New signing secret"),
                       tr("The new signing secret of instance #%1 (%2). It is shown only now:\n\n%3\n\n%4")
                           .arg(instance.value(QStringLiteral("id")).toInteger())
                           .arg(instance.value(QStringLiteral("name")).toString(), secret, grace),
                       secret);
}

void MainWindow::refresh()
{
    if (m_connection.baseUrl.isValid())
        m_sync->relist(tr("refresh requested"));
}

} // namespace OpsDeck
