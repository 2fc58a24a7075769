// Saves a PNG of each view once the window shows data, then quits.
#include "screenshotter.h"

#include "ui/bulkretrydialog.h"
#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/messagebox.h"
#include "ui/resourceview.h"
#include "ui/tonepalette.h"

#include "embeddedserver.h"

#include "core/delivery.h"
#include "models/connectionstatus.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QHash>
#include <QJsonObject>
#include <QLineEdit>
#include <QPixmap>
#include <QPointer>
#include <QStatusBar>
#include <QStyle>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <utility>

namespace OpsDeck {

namespace {

// How long a step may wait for the server or the feed before its shot is given up.
constexpr int kAwaitMs = 30000;
// How long a window that has just changed is given to lay itself out before its shot.
constexpr int kSettleMs = 300;

} // namespace

Screenshotter::Screenshotter(MainWindow *window, const QString &directory, EmbeddedServer *server, QObject *parent)
    : QObject(parent)
    , m_window(window)
    , m_server(server)
    , m_directory(directory)
    , m_timer(new QTimer(this))
    , m_deadline(new QTimer(this))
{
    m_timer->setSingleShot(true);
    m_deadline->setSingleShot(true);
    connect(m_deadline, &QTimer::timeout, this, &Screenshotter::giveUp);
}

void Screenshotter::start()
{
    QDir().mkpath(m_directory);
    // The same size on every display (a first start on a small screen is maximized).
    m_window->setWindowState(m_window->windowState() & ~Qt::WindowMaximized);
    m_window->resize(1400, 860);
    // Nobody is there to close a notice: a refusal is answered at once, and the step waiting for
    // what was refused gives up and says so.
    MessageBox::setAutoAnswer(QMessageBox::Ok);
    connect(m_timer, &QTimer::timeout, this, &Screenshotter::waitForData);
    m_timer->start(500);
}

void Screenshotter::waitForData()
{
    // Wait for synced rows (at most a minute), then a little longer for the feed to bring changes.
    const ResourceView *instances = m_window->resourceView(QStringLiteral("instances"));
    const bool hasRows = instances && instances->table()->model() && instances->table()->model()->rowCount() > 0;
    m_waited += 500;
    if (!hasRows && m_waited < 60000) {
        m_timer->start(500);
        return;
    }
    disconnect(m_timer, &QTimer::timeout, this, &Screenshotter::waitForData);
    connect(m_timer, &QTimer::timeout, this, &Screenshotter::nextStep);
    m_timer->start(9000);
}

void Screenshotter::save(QWidget *widget, const QString &name)
{
    const QString path = m_directory + QLatin1Char('/') + name + QStringLiteral(".png");
    // Highest PNG compression: the documentation keeps these files in git.
    if (!widget->grab().save(path, "PNG", 0))
        fail(QStringLiteral("could not write %1").arg(path));
    else
        std::printf("%s\n", qPrintable(path));
}

void Screenshotter::showTab(const QString &content, QWidget *target, const QString &name)
{
    // Tabs are found by what they hold: which ones a kind shows differs.
    auto *tabs = m_window->detailPane()->findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    auto *widget = m_window->detailPane()->findChild<QWidget *>(content);
    if (!tabs || !widget)
        return;
    int index = -1;
    for (QWidget *w = widget; w && index < 0; w = w->parentWidget())
        index = tabs->indexOf(w);
    if (index < 0)
        return;
    tabs->setCurrentIndex(index);
    save(target, name);
    tabs->setCurrentIndex(0);
}

void Screenshotter::nextStep()
{
    const QStringList views = m_window->viewNames();
    // Steps: each view (selecting the first row of tables so the detail pane shows something),
    // with the detail pane alone and its tabs; then the bulk retry, a test event and the instances
    // view in a dark palette, each waiting for what it shows.
    if (m_step < views.size() * 2) {
        const QString view = views.at(m_step / 2);
        if (m_step % 2 == 0) {
            m_window->showView(view);
            if (ResourceView *rv = m_window->resourceView(view)) {
                // A row whose state has actions makes a livelier detail pane than row 0.
                const QStringList preferred{QStringLiteral("FAILED"), QStringLiteral("RUNNING"),
                                            QStringLiteral("AVAILABLE"), QStringLiteral("PENDING")};
                const QAbstractItemModel *model = rv->table()->model();
                // Among those, the most recently changed: it has a history to show.
                int pick = -1;
                int bestRank = int(preferred.size());
                QString bestUpdate;
                for (int r = 0; model && r < model->rowCount() && r < 1000; ++r) {
                    const int rank = int(preferred.indexOf(model->index(r, 0).data(ResourceModel::StateRole).toString()));
                    const QString updated = model->index(r, 0)
                                                .data(ResourceModel::ObjectRole)
                                                .toJsonObject()
                                                .value(QStringLiteral("updated_at"))
                                                .toString();
                    if (rank >= 0 && (rank < bestRank || (rank == bestRank && updated > bestUpdate))) {
                        bestRank = rank;
                        bestUpdate = updated;
                        pick = r;
                    }
                }
                if (pick < 0 && model && model->rowCount() > 0)
                    pick = 0;
                if (pick >= 0)
                    rv->table()->selectRow(pick);
            }
        } else {
            save(m_window, view == QLatin1String("deliveries") ? QStringLiteral("callbacks") : view);
            if (view == QLatin1String("instances")) {
                save(m_window->detailPane(), QStringLiteral("detail-pane"));
                showTab(QStringLiteral("stateDiagram"), m_window->detailPane(), QStringLiteral("detail-lifecycle"));
                showTab(QStringLiteral("historyList"), m_window->detailPane(), QStringLiteral("detail-history"));
            } else if (view == QLatin1String("deliveries")) {
                showTab(QStringLiteral("attemptLog"), m_window, QStringLiteral("callbacks-attempts"));
                showTab(QStringLiteral("stateDiagram"), m_window, QStringLiteral("callbacks-lifecycle"));
            }
        }
        ++m_step;
        m_timer->start(m_step % 2 == 1 ? 1200 : 100);
        return;
    }
    watch();
    cancelPending();
}

bool Screenshotter::runPaneAction(const QString &view, qint64 id, const QString &action, const QString &reason)
{
    ResourceView *rv = m_window->resourceView(view);
    if (!rv || !rv->selectId(id) || m_window->detailPane()->objectId() != id)
        return false;
    const QList<QAction *> actions = m_window->detailPane()->objectActions();
    const auto it = std::find_if(actions.cbegin(), actions.cend(), [&action](const QAction *a) {
        return a->objectName() == QLatin1String("action_") + action;
    });
    if (it == actions.cend() || !(*it)->isEnabled())
        return false;
    if (!reason.isEmpty())
        MessageBox::setNextText(reason);
    (*it)->trigger();
    return true;
}

void Screenshotter::watch()
{
    // What the remaining steps wait for comes with these.
    const ResourceModel *deliveries = m_window->resourceModel(QStringLiteral("deliveries"));
    const ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    const QList<const QAbstractItemModel *> models{deliveries, view ? view->table()->model() : nullptr};
    for (const QAbstractItemModel *model : models) {
        if (!model)
            continue;
        connect(model, &QAbstractItemModel::dataChanged, this, &Screenshotter::check);
        connect(model, &QAbstractItemModel::rowsInserted, this, &Screenshotter::check);
        connect(model, &QAbstractItemModel::modelReset, this, &Screenshotter::check);
        connect(model, &QAbstractItemModel::layoutChanged, this, &Screenshotter::check);
    }
    if (view) {
        connect(view, &ResourceView::currentObjectChanged, this, &Screenshotter::check);
        connect(view, &ResourceView::currentObjectUpdated, this, &Screenshotter::check);
    }
}

void Screenshotter::cancelPending()
{
    m_window->showView(QStringLiteral("deliveries"));
    // Three pending callbacks of the provider with the most: two to cancel, one to open the dialog
    // on. Should it have fewer, its failing receiver gets test events, which wait there as
    // pending callbacks too. Five of them: that receiver may be a flaky one, which takes one test
    // event in three, and the shot waits for three still pending after a moment to settle.
    const qint64 provider = busiestProvider();
    const qint64 endpoint = provider > 0 ? activeEndpoint(provider, true) : 0;
    for (qsizetype i = pendingOf(provider).size(); endpoint > 0 && i < 5; ++i) {
        if (!runPaneAction(QStringLiteral("endpoints"), endpoint, QStringLiteral("test"),
                           QStringLiteral("a pending callback to show")))
            break;
    }
    await(
        QStringLiteral("three pending callbacks of provider #%1").arg(provider),
        [this, provider] { return provider > 0 && pendingOf(provider).size() >= 3; },
        [this, provider] { cancelTwo(pendingOf(provider)); }, [this] { cancelAgain(); }, kAwaitMs);
}

void Screenshotter::cancelAgain()
{
    // A callback delivered between the choice and its cancel: choose again, a few times.
    if (++m_cancelRounds < 3) {
        cancelPending();
        return;
    }
    fail(QStringLiteral("no bulk retry shot: no two pending callbacks of one provider could be cancelled"));
    sendTestEvent();
}

void Screenshotter::cancelTwo(const QList<qint64> &pending)
{
    const QString reason = QStringLiteral("the provider asked for a pause");
    if (!runPaneAction(QStringLiteral("deliveries"), pending.at(0), QStringLiteral("cancel"), reason)
        || !runPaneAction(QStringLiteral("deliveries"), pending.at(1), QStringLiteral("cancel"), reason)) {
        say(QStringLiteral("the detail pane offers no cancel for callbacks #%1 and #%2").arg(pending.at(0)).arg(pending.at(1)));
        cancelAgain();
        return;
    }
    const QPointer<const ResourceModel> model = m_window->resourceModel(QStringLiteral("deliveries"));
    const auto cancelled = [model](qint64 id) {
        return model && model->objectById(id).value(QStringLiteral("state")).toString() == Delivery::Cancelled;
    };
    await(
        QStringLiteral("callbacks #%1 and #%2 to be cancelled").arg(pending.at(0)).arg(pending.at(1)),
        [cancelled, first = pending.at(0), second = pending.at(1)] { return cancelled(first) && cancelled(second); },
        [this, target = pending.at(2)] { openBulkRetry(target); }, [this] { cancelAgain(); }, kAwaitMs);
}

qint64 Screenshotter::busiestProvider() const
{
    // Most pending callbacks, then most callbacks, then the first.
    const ResourceModel *deliveries = m_window->resourceModel(QStringLiteral("deliveries"));
    QHash<qint64, std::pair<int, int>> counts; // pending, all
    for (int row = 0; deliveries && row < deliveries->rowCount(); ++row) {
        const QJsonObject d = deliveries->objectAt(row);
        auto &c = counts[d.value(QStringLiteral("provider_id")).toInteger()];
        c.first += d.value(QStringLiteral("state")).toString() == Delivery::Pending ? 1 : 0;
        ++c.second;
    }
    qint64 best = 0;
    for (auto it = counts.cbegin(); it != counts.cend(); ++it) {
        if (it.key() > 0 && it.value().first > 0
            && (best == 0 || it.value() > counts.value(best) || (it.value() == counts.value(best) && it.key() < best)))
            best = it.key();
    }
    return best;
}

QList<qint64> Screenshotter::pendingOf(qint64 provider) const
{
    // Those to the endpoints failing most first, then the ones due last: they are the least likely
    // to be delivered meanwhile.
    const ResourceModel *deliveries = m_window->resourceModel(QStringLiteral("deliveries"));
    const ResourceModel *endpoints = m_window->resourceModel(QStringLiteral("endpoints"));
    const auto failures = [endpoints](const QJsonObject &d) {
        return endpoints ? endpoints->objectById(d.value(QStringLiteral("endpoint_id")).toInteger())
                               .value(QStringLiteral("consecutive_failures"))
                               .toInt()
                         : 0;
    };
    QList<QJsonObject> pending;
    for (int row = 0; deliveries && row < deliveries->rowCount(); ++row) {
        const QJsonObject d = deliveries->objectAt(row);
        if (d.value(QStringLiteral("provider_id")).toInteger() == provider
            && d.value(QStringLiteral("state")).toString() == Delivery::Pending)
            pending.append(d);
    }
    std::sort(pending.begin(), pending.end(), [&failures](const QJsonObject &a, const QJsonObject &b) {
        if (failures(a) != failures(b))
            return failures(a) > failures(b);
        return a.value(QStringLiteral("next_attempt_at")).toString() > b.value(QStringLiteral("next_attempt_at")).toString();
    });
    QList<qint64> ids;
    for (const QJsonObject &d : std::as_const(pending))
        ids.append(d.value(QStringLiteral("id")).toInteger());
    return ids;
}

qint64 Screenshotter::activeEndpoint(qint64 provider, bool failing) const
{
    const ResourceModel *endpoints = m_window->resourceModel(QStringLiteral("endpoints"));
    qint64 best = 0;
    int bestFailures = 0;
    for (int row = 0; endpoints && row < endpoints->rowCount(); ++row) {
        const QJsonObject e = endpoints->objectAt(row);
        const qint64 id = e.value(QStringLiteral("id")).toInteger();
        // Counted down for the failing one, so that either way the lowest count wins.
        const int failures = (failing ? -1 : 1) * e.value(QStringLiteral("consecutive_failures")).toInt();
        if (e.value(QStringLiteral("state")).toString() != QLatin1String("ACTIVE") || (failing && failures >= 0)
            || (provider > 0 && e.value(QStringLiteral("provider_id")).toInteger() != provider))
            continue;
        if (best == 0 || failures < bestFailures || (failures == bestFailures && id < best)) {
            best = id;
            bestFailures = failures;
        }
    }
    return best;
}

void Screenshotter::openBulkRetry(qint64 deliveryId)
{
    QPointer<BulkRetryDialog> dialog;
    if (runPaneAction(QStringLiteral("deliveries"), deliveryId, QStringLiteral("bulk-retry"), QString()))
        dialog = m_window->findChild<BulkRetryDialog *>(QStringLiteral("bulkRetryDialog"));
    if (!dialog) {
        fail(QStringLiteral("no bulk retry opened on callback #%1").arg(deliveryId));
        sendTestEvent();
        return;
    }
    connect(dialog, &BulkRetryDialog::counted, this, &Screenshotter::check);
    for (QCheckBox *box : dialog->findChildren<QCheckBox *>())
        box->setChecked(true);
    auto *scope = dialog->findChild<QComboBox *>(QStringLiteral("bulkRetryScope"));
    for (int i = 0; scope && i < scope->count() && !dialog->scopeFilter().contains(QStringLiteral("provider")); ++i)
        scope->setCurrentIndex(i);
    if (auto *reason = dialog->findChild<QLineEdit *>(QStringLiteral("bulkRetryReason")))
        reason->setText(QStringLiteral("receiver fixed after the outage"));
    const auto close = [this, dialog] {
        if (dialog)
            dialog->reject();
        sendTestEvent();
    };
    const auto skip = [this, close] {
        fail(QStringLiteral("no bulk retry shot: the count did not come"));
        close();
    };
    await(
        QStringLiteral("the bulk retry's count"), [dialog] { return dialog && dialog->count() >= 0; },
        [this, dialog, close] {
            if (!dialog->scopeFilter().contains(QStringLiteral("provider")))
                fail(QStringLiteral("the bulk retry offers no provider scope"));
            else
                save(dialog, QStringLiteral("callbacks-bulk-retry"));
            close();
        },
        skip, kAwaitMs);
}

void Screenshotter::sendTestEvent()
{
    m_window->showView(QStringLiteral("deliveries"));
    // An active endpoint whose receiver answers: its test event is delivered at once.
    const qint64 endpoint = activeEndpoint(0, false);
    if (endpoint == 0
        || !runPaneAction(QStringLiteral("endpoints"), endpoint, QStringLiteral("test"),
                          QStringLiteral("checking the receiver"))) {
        fail(QStringLiteral("no active endpoint offers a test event"));
        darkPalette();
        return;
    }
    // The console selects the new delivery as it arrives; the shot waits for it to be delivered.
    await(
        QStringLiteral("the test event's delivery to be selected and delivered"),
        [this] {
            const ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
            const QJsonObject current = view ? view->currentObject() : QJsonObject();
            const DetailPane *pane = m_window->detailPane();
            return current.value(QStringLiteral("event_type")).toString() == QLatin1String("opsdeck.test")
                   && pane->objectId() == current.value(QStringLiteral("id")).toInteger()
                   && pane->fieldText(QStringLiteral("state")) == Delivery::Delivered;
        },
        [this] {
            save(m_window, QStringLiteral("callbacks-test-event"));
            darkPalette();
        },
        [this] {
            fail(QStringLiteral("no test event shot"));
            darkPalette();
        },
        kAwaitMs);
}

void Screenshotter::await(const QString &what, std::function<bool()> ready, std::function<void()> then,
                          std::function<void()> skip, int timeoutMs)
{
    m_awaited = what;
    m_ready = std::move(ready);
    m_then = std::move(then);
    m_skip = std::move(skip);
    m_deadline->start(timeoutMs);
    check();
}

void Screenshotter::check()
{
    if (!m_ready || m_settling || !m_ready())
        return;
    // What the shot waits for is there; the widgets showing it were just built, and a word-wrapped
    // form lays itself out over a few turns of the event loop. The shot is taken once it has had a
    // moment for that, if what it waits for still holds.
    m_settling = true;
    QTimer::singleShot(kSettleMs, this, [this] {
        m_settling = false;
        if (!m_ready || !m_ready())
            return;
        m_deadline->stop();
        m_ready = {};
        m_skip = {};
        // then() may wait for something else: this wait is over first.
        std::exchange(m_then, {})();
    });
}

void Screenshotter::giveUp()
{
    say(QStringLiteral("gave up waiting for %1 (%2)").arg(m_awaited, MessageBox::lastText()));
    m_ready = {};
    m_then = {};
    std::exchange(m_skip, {})();
}

void Screenshotter::say(const QString &message)
{
    std::fprintf(stderr, "opsdeck: screenshot: %s\n", qPrintable(message));
}

void Screenshotter::fail(const QString &message)
{
    m_failed = true;
    say(message);
}

void Screenshotter::darkPalette()
{
    const QPalette dark = OpsDeck::darkPalette();
    m_lightStyle = QApplication::style()->name();
    m_lightPalette = QApplication::palette();
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(dark);
    m_window->showView(QStringLiteral("instances"));
    // What the earlier steps said there is over.
    m_window->statusBar()->clearMessage();
    disconnect(m_timer, &QTimer::timeout, this, &Screenshotter::nextStep);
    connect(m_timer, &QTimer::timeout, this, &Screenshotter::saveDark);
    m_timer->start(800);
}

void Screenshotter::saveDark()
{
    save(m_window, QStringLiteral("instances-dark"));
    QApplication::setStyle(QStyleFactory::create(m_lightStyle));
    QApplication::setPalette(m_lightPalette);
    goOffline();
}

void Screenshotter::goOffline()
{
    auto *sync = m_window->findChild<SyncEngine *>(QStringLiteral("syncEngine"));
    if (!m_server || !sync) {
        QCoreApplication::exit(m_failed ? 1 : 0);
        return;
    }
    const QPointer<ConnectionStatus> status = sync->status();
    connect(status, &ConnectionStatus::changed, this, &Screenshotter::check);
    m_window->showView(QStringLiteral("dashboard"));
    m_server->stop();
    const auto quit = [this] { QCoreApplication::exit(m_failed ? 1 : 0); };
    await(
        QStringLiteral("the console to notice the server has gone"),
        [status] { return status && status->state() == ConnectionStatus::State::Offline; },
        [this, quit] {
            save(m_window, QStringLiteral("offline"));
            quit();
        },
        [this, quit] {
            fail(QStringLiteral("no offline shot"));
            quit();
        },
        kAwaitMs);
}

} // namespace OpsDeck
