// The real MainWindow against a real control plane on a loopback port, offscreen: navigation,
// keyboard and names, filter, sort, selection and the detail pane, live changes, actions, roles,
// the callbacks' pages. Offline, the cache and a restarted server: tst_mainwindowoffline.
#include "ui/dashboardpage.h"
#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/messagebox.h"
#include "ui/resourceview.h"
#include "ui/statebadgelabel.h"
#include "ui/unavailablepage.h"
#include "ui/valueformat.h"

#include "models/resourcemodel.h"

#include "callbackfixture.h"
#include "testserver.h"
#include "testsupport.h"
#include "windowfixture.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QHeaderView>
#include <QJsonObject>
#include <QGridLayout>
#include <QLabel>
#include <QListWidget>
#include <QLineEdit>
#include <QMenu>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>


using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_MainWindow : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void navigation_data();
    void navigation();
    void filterPlaceholdersNameTheirShortcut();
    void unavailablePageKeepsAMeasure();
    void tabGoesFromTheViewsToThePageThenTheDetails();
    void navigationShowsWhenItHasTheFocus();
    void focusableControlsHaveNames();
    void filterSortSelectAndLive();
    void actionFromTheDetailPane();
    void actionsMenuOffersTheSelectedObjects();
    void roleComesFromTheServer();
    void emptyCallbacksSayWhy();
    void dashboardShowsCallbackDelivery();
    void dashboardTimesReadAsTheTablesDo();
    void dashboardCardsOpenThePageThatShowsThem();
    void refusedDeletionNamesItsInstances();
    void awaitingInstanceSaysWhy();
    void neverRegisteredInstanceDoesNotOfferStart();
    void fitsA1024PixelScreen();
    void firstStartFitsTheScreen();

private:
    QTemporaryDir m_dir;
};

void tst_MainWindow::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindow"));
    QVERIFY(m_dir.isValid());
}

void tst_MainWindow::init()
{
    QSettings().clear();
    // No dialog may ever block a test.
    MessageBox::setAutoAnswer(QMessageBox::Ok);
}

void tst_MainWindow::navigation_data()
{
    QTest::addColumn<int>("key");
    QTest::addColumn<QString>("view");
    QTest::addColumn<bool>("available");

    QTest::newRow("Ctrl+1 dashboard") << int(Qt::Key_1) << "dashboard" << true;
    QTest::newRow("Ctrl+2 organizations") << int(Qt::Key_2) << "organizations" << true;
    QTest::newRow("Ctrl+3 instances") << int(Qt::Key_3) << "instances" << true;
    QTest::newRow("Ctrl+4 sandboxes") << int(Qt::Key_4) << "sandboxes" << false;
    QTest::newRow("Ctrl+5 bindings") << int(Qt::Key_5) << "bindings" << false;
    QTest::newRow("Ctrl+6 catalog") << int(Qt::Key_6) << "catalog" << false;
    QTest::newRow("Ctrl+7 callbacks") << int(Qt::Key_7) << "deliveries" << true;
    QTest::newRow("Ctrl+8 audit") << int(Qt::Key_8) << "audit" << true;
}

void tst_MainWindow::navigation()
{
    QFETCH(int, key);
    QFETCH(QString, view);
    QFETCH(bool, available);

    MainWindow w;
    w.resize(1400, 860);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QCOMPARE(w.objectName(), QStringLiteral("mainWindow"));
    QTest::keyClick(&w, Qt::Key(key), Qt::ControlModifier);
    QCOMPARE(w.currentViewName(), view);
    auto *pages = w.findChild<QStackedWidget *>(QStringLiteral("pages"));
    QVERIFY(pages);
    QCOMPARE(pages->currentWidget()->objectName(), view + QStringLiteral("View"));
    QVERIFY(!pages->currentWidget()->accessibleName().isEmpty());
    // Only a table's rows can be exported: elsewhere the action is off and says why.
    auto *exportAction = w.findChild<QAction *>(QStringLiteral("exportAction"));
    QVERIFY(exportAction);
    QCOMPARE(exportAction->isEnabled(), w.resourceView(view) != nullptr);
    QVERIFY(!exportAction->toolTip().isEmpty());
    if (!available) {
        // Not an empty table: a page that says the server does not have this yet.
        auto *page = qobject_cast<UnavailablePage *>(pages->currentWidget());
        if (page) {
            QVERIFY2(page->text().contains(QStringLiteral("not available on this server yet")), qPrintable(page->text()));
            // Read at a glance: the reason wraps to a measure of about 72 characters, not one
            // line across a wide window.
            auto *reason = page->findChild<QLabel *>(QStringLiteral("unavailableReason"));
            QVERIFY(reason);
            QTRY_VERIFY2(reason->width() > 0 && reason->width() <= reason->fontMetrics().averageCharWidth() * 75,
                         qPrintable(QString::number(reason->width())));
        } else {
            QVERIFY(w.resourceView(view)); // the kind became available: then it is a real table
        }
    } else if (view != QLatin1String("dashboard")) {
        ResourceView *rv = w.resourceView(view);
        QVERIFY(rv);
        QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
        QVERIFY(rv->queryEdit()->hasFocus());
    }
}

void tst_MainWindow::unavailablePageKeepsAMeasure()
{
    // On a wide page the reason wraps to about 72 characters, shows all of its lines, and the
    // page can still get narrower: margins that grew with it held a French window 13 000 px wide.
    UnavailablePage page(QStringLiteral("sandboxes"), QStringLiteral("Sandboxes"));
    page.resize(1600, 500);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    auto *reason = page.findChild<QLabel *>(QStringLiteral("unavailableReason"));
    QVERIFY(reason);
    const int measure = reason->fontMetrics().averageCharWidth() * 75;
    // As wide as the measure allows: a word-wrapped label left to its size hint was a narrow
    // column of five lines.
    QTRY_VERIFY2(reason->width() > measure * 0.9 && reason->width() <= measure, qPrintable(QString::number(reason->width())));
    QTRY_VERIFY2(reason->height() >= reason->heightForWidth(reason->width()), qPrintable(QString::number(reason->height())));
    QVERIFY2(page.minimumSizeHint().width() < measure, qPrintable(QString::number(page.minimumSizeHint().width())));
    page.resize(500, 500);
    QTRY_COMPARE(page.width(), 500);
    QTRY_VERIFY2(reason->height() >= reason->heightForWidth(reason->width()), qPrintable(QString::number(reason->height())));
}

void tst_MainWindow::filterPlaceholdersNameTheirShortcut()
{
    // Every page's main filter names Ctrl+F the same way; the endpoints' filter below the
    // callbacks does not, since Ctrl+F goes to the callbacks' own.
    MainWindow w;
    const QString shortcut = QKeySequence(Qt::CTRL | Qt::Key_F).toString(QKeySequence::NativeText);
    for (const QString &name : w.viewNames()) {
        const ResourceView *view = w.resourceView(name);
        if (!view)
            continue;
        const QString placeholder = view->queryEdit()->placeholderText();
        QVERIFY2(placeholder.endsWith(QStringLiteral("… (%1)").arg(shortcut)), qPrintable(placeholder));
    }
    const ResourceView *endpoints = w.resourceView(QStringLiteral("endpoints"));
    QVERIFY(endpoints);
    QVERIFY2(!endpoints->queryEdit()->placeholderText().contains(shortcut),
             qPrintable(endpoints->queryEdit()->placeholderText()));
}

void tst_MainWindow::tabGoesFromTheViewsToThePageThenTheDetails()
{
    // Tab from the list of views reaches the page's filter and table before the detail pane, on
    // every page with a table.
    MainWindow w;
    w.show();
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    auto *navigation = w.findChild<QWidget *>(QStringLiteral("navigation"));
    QVERIFY(navigation);
    for (const QString &name : {QStringLiteral("organizations"), QStringLiteral("instances"),
                                QStringLiteral("deliveries"), QStringLiteral("audit")}) {
        w.showView(name);
        ResourceView *view = w.resourceView(name);
        QVERIFY(view);
        // With an object shown, as after selecting a row: its tabs and fields can take focus too.
        w.detailPane()->showObject(&view->kind(), QJsonObject{{QStringLiteral("id"), 1}});
        QVERIFY(!w.detailPane()->isHidden());
        navigation->setFocus();
        QTRY_VERIFY(navigation->hasFocus());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY2(view->queryEdit()->hasFocus(),
                 qPrintable(name + QStringLiteral(": ") + QApplication::focusWidget()->metaObject()->className()
                            + QLatin1Char(' ') + QApplication::focusWidget()->objectName()));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY2(view->table()->hasFocus(), qPrintable(name + QStringLiteral(": ") + QApplication::focusWidget()->objectName()));
    }
}

void tst_MainWindow::navigationShowsWhenItHasTheFocus()
{
    // The arrow keys change the page while the list of views has the focus: its chosen row says so
    // in the selection's full colour, and is muted once the focus has gone elsewhere.
    MainWindow w;
    w.show();
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    auto *navigation = w.findChild<QListWidget *>(QStringLiteral("navigation"));
    QVERIFY(navigation);
    w.showView(QStringLiteral("instances"));
    const QRect row = navigation->visualItemRect(navigation->currentItem());
    QVERIFY(!row.isEmpty());
    const QPoint background(row.right() - 3, row.center().y()); // right of the title, in the row's background
    const auto colour = [&] { return navigation->viewport()->grab().toImage().pixelColor(background); };
    navigation->setFocus();
    QTRY_VERIFY(navigation->hasFocus());
    // Near enough: the style may shade the selection by a step.
    const auto near = [](const QColor &a, const QColor &b) {
        return qAbs(a.red() - b.red()) <= 4 && qAbs(a.green() - b.green()) <= 4 && qAbs(a.blue() - b.blue()) <= 4;
    };
    const QColor focused = colour();
    QVERIFY2(near(focused, navigation->palette().color(QPalette::Highlight)), qPrintable(focused.name()));
    w.resourceView(QStringLiteral("instances"))->table()->setFocus();
    QTRY_VERIFY(!navigation->hasFocus());
    const QColor elsewhere = colour();
    QVERIFY2(!near(elsewhere, focused), qPrintable(elsewhere.name()));
    QVERIFY2(!near(elsewhere, navigation->palette().color(QPalette::Base)), qPrintable(elsewhere.name())); // still a selection
}

void tst_MainWindow::focusableControlsHaveNames()
{
    // What a screen reader says when Tab lands on a control: every one on every page, with an
    // object in the detail pane, has a name.
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QStringList unnamed;
    for (const QString &name : w.viewNames()) {
        w.showView(name);
        if (ResourceView *view = w.resourceView(name))
            w.detailPane()->showObject(&view->kind(), QJsonObject{{QStringLiteral("id"), 1}});
        for (QWidget *widget : w.findChildren<QWidget *>()) {
            // A tab bar names itself by its tabs.
            if (!widget->isVisible() || !(widget->focusPolicy() & Qt::TabFocus) || qobject_cast<QTabBar *>(widget))
                continue;
            if (widget->accessibleName().isEmpty())
                unnamed.append(QStringLiteral("%1: %2 %3").arg(name, QString::fromLatin1(widget->metaObject()->className()),
                                                                widget->objectName()));
        }
    }
    unnamed.removeDuplicates();
    QVERIFY2(unnamed.isEmpty(), qPrintable(unnamed.join(QStringLiteral("; "))));
}

void tst_MainWindow::filterSortSelectAndLive()
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    QCOMPARE(s.instances.size(), 3);

    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("live.sqlite"))));
    w.showView(QStringLiteral("instances"));
    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    QVERIFY(view);
    QAbstractItemModel *model = view->table()->model();
    QTRY_COMPARE(model->rowCount(), 3);
    QTRY_VERIFY2(w.connectionStatusText().contains(QStringLiteral("Live")), qPrintable(w.connectionStatusText()));

    // Filter by typing.
    QTest::keyClicks(view->queryEdit(), QStringLiteral("name:web"));
    QTest::keyClick(view->queryEdit(), Qt::Key_Return);
    QTRY_COMPARE(model->rowCount(), 2);
    view->queryEdit()->clear();
    QTest::keyClick(view->queryEdit(), Qt::Key_Return);
    QTRY_COMPARE(model->rowCount(), 3);

    // Sort by clicking the name header (twice: descending).
    const int nameColumn = view->kind().fieldIndex(u"name");
    QHeaderView *header = view->table()->horizontalHeader();
    const QPoint nameHeader(header->sectionViewportPosition(nameColumn) + 5, header->height() / 2);
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, nameHeader);
    if (header->sortIndicatorOrder() != Qt::AscendingOrder)
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, nameHeader);
    QCOMPARE(header->sortIndicatorSection(), nameColumn);
    QCOMPARE(model->index(0, nameColumn).data().toString(), QStringLiteral("db-charlie"));
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, nameHeader);
    QCOMPARE(model->index(0, nameColumn).data().toString(), QStringLiteral("web-bravo"));

    // Select a row: the detail pane shows it, its diagram and its history.
    view->table()->selectRow(0);
    DetailPane *detail = w.detailPane();
    QTRY_COMPARE(detail->fieldText(QStringLiteral("name")), QStringLiteral("web-bravo"));
    QCOMPARE(detail->fieldText(QStringLiteral("status")), QStringLiteral("PENDING"));
    auto *history = detail->findChild<QTreeWidget *>(QStringLiteral("historyList"));
    QTRY_VERIFY(history->topLevelItemCount() >= 1);

    // A change made through the API appears live, in the table and in the open detail pane: its
    // provider registers it, then it is stopped (and, registered, may start again).
    const qint64 id = detail->objectId();
    QVERIFY(!server.registerInstance(id).isEmpty());
    QTRY_COMPARE(detail->fieldText(QStringLiteral("status")), QStringLiteral("RUNNING"));
    const Reply stopped = server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(id),
                                      {{QStringLiteral("reason"), QStringLiteral("live test")}},
                                      server.operatorToken());
    QCOMPARE(stopped.status, 200);
    QTRY_COMPARE(detail->fieldText(QStringLiteral("status")), QStringLiteral("STOPPED"));
    QTRY_VERIFY(history->topLevelItemCount() >= 2);
    QTRY_VERIFY(detail->findChild<QAction *>(QStringLiteral("action_start"))->isEnabled());

    // A new object appears live too.
    server.createInstance(QStringLiteral("web-delta"), s.organization, s.provider, QStringLiteral("ledger"),
                          QStringLiteral("bob"));
    QTRY_COMPARE(model->rowCount(), 4);
}

void tst_MainWindow::actionFromTheDetailPane()
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);

    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("action.sqlite"))));
    w.showView(QStringLiteral("instances"));
    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 3);
    view->setQueryText(QStringLiteral("name:db-charlie"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 1);
    view->table()->selectRow(0);
    DetailPane *detail = w.detailPane();
    QTRY_COMPARE(detail->fieldText(QStringLiteral("status")), QStringLiteral("PENDING"));

    // Actions are enabled once the feed is live (before that the console is read-only).
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    auto stopAction = [detail] { return detail->findChild<QAction *>(QStringLiteral("action_stop")); };
    QTRY_VERIFY(stopAction() && stopAction()->isEnabled());
    MessageBox::setNextText(QStringLiteral("maintenance from the console"));
    stopAction()->trigger();
    // The confirmation names the one object (in the singular) and says what stopping leads to.
    QVERIFY2(MessageBox::lastText().startsWith(QStringLiteral("Stop: Instance #%1, PENDING → STOPPED (db-charlie)")
                                                   .arg(s.instances.at(2))),
             qPrintable(MessageBox::lastText()));
    QVERIFY2(MessageBox::lastText().contains(QStringLiteral("destroyed when the server's retention period ends")),
             qPrintable(MessageBox::lastText()));
    QTRY_COMPARE(detail->fieldText(QStringLiteral("status")), QStringLiteral("STOPPED"));
    const Reply audit = server.get(QStringLiteral("/api/v1/audit?kind=instance&object_id=%1").arg(s.instances.at(2)),
                                   server.operatorToken());
    QVERIFY(audit.body.contains("maintenance from the console"));

    // A refused action shows the server's problem detail verbatim (start is allowed, so ask the
    // server for an impossible one directly through the pane's signal).
    MessageBox::setNextText(QStringLiteral("again"));
    emit detail->actionRequested(QStringLiteral("instances"), s.instances.at(2), QStringLiteral("stop"));
    QTRY_VERIFY2(MessageBox::lastText().contains(QStringLiteral("STOPPED")), qPrintable(MessageBox::lastText()));
}

void tst_MainWindow::actionsMenuOffersTheSelectedObjects()
{
    // The pane's toolbar buttons take no keyboard focus: the Actions menu (Alt+A) offers the same.
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server);
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("menu.sqlite"))));
    auto *menu = w.findChild<QMenu *>(QStringLiteral("actionsMenu"));
    QVERIFY(menu);
    QVERIFY(menu->title().contains(QStringLiteral("&A")));
    auto stopInMenu = [menu]() -> QAction * {
        emit menu->aboutToShow();
        for (QAction *a : menu->actions()) {
            if (a->objectName() == QLatin1String("action_stop"))
                return a;
        }
        return nullptr;
    };
    // Nothing selected: the menu says how to get actions.
    w.showView(QStringLiteral("instances"));
    QVERIFY(!stopInMenu());
    QCOMPARE(menu->actions().size(), 1);
    QVERIFY(!menu->actions().first()->isEnabled());

    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 3);
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    view->table()->selectRow(0);
    QTRY_VERIFY(stopInMenu() && stopInMenu()->isEnabled());
    const qint64 id = w.detailPane()->objectId();
    MessageBox::setNextText(QStringLiteral("from the menu"));
    stopInMenu()->trigger();
    QTRY_COMPARE(w.detailPane()->fieldText(QStringLiteral("status")), QStringLiteral("STOPPED"));
    QCOMPARE(w.detailPane()->objectId(), id);
    // The status bar names the button, as the menu did.
    QTRY_COMPARE(w.statusBar()->currentMessage(), QStringLiteral("Stop #%1: done").arg(id));
    // The message leaves the connection's state and the pending operations in sight.
    for (const char *name : {"connectionStatus", "pendingOperations", "serverLabel"}) {
        auto *label = w.statusBar()->findChild<QLabel *>(QLatin1String(name));
        QVERIFY2(label && label->isVisible(), name);
    }

    // The dashboard has no selection: nothing to act on.
    w.showView(QStringLiteral("dashboard"));
    QVERIFY(!stopInMenu());
}

void tst_MainWindow::roleComesFromTheServer()
{
    // A token file says nothing of its role: the console must not offer an owner the operator's
    // actions because the profile said "operator".
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    ConsoleConnection c = connectionTo(server, m_dir.filePath(QStringLiteral("role.sqlite")));
    c.token = server.token(QStringLiteral("owner"), QStringLiteral("alice"));
    MainWindow w;
    w.show();
    w.connectTo(c);
    auto *label = w.findChild<QLabel *>(QStringLiteral("serverLabel"));
    QVERIFY(label);
    QTRY_VERIFY2(label->text().endsWith(QStringLiteral("owner")), qPrintable(label->text()));
    // The title names the connection; the platform adds the application's name after it, once.
    QCOMPARE(w.windowTitle(), QStringLiteral("test"));

    // The server shows an owner no callbacks: the empty tables say so rather than "nothing yet".
    w.showView(QStringLiteral("deliveries"));
    for (const QString &kind : {QStringLiteral("deliveries"), QStringLiteral("endpoints")}) {
        auto *hint = w.resourceView(kind)->findChild<QLabel *>(QStringLiteral("emptyHint"));
        QVERIFY(hint);
        QTRY_VERIFY2(hint->isVisible() && hint->text().contains(QStringLiteral("owner role does not see callbacks")),
                     qPrintable(hint->text()));
    }
    // Nor does the dashboard count them as 0; the other cards stay, in the grid without gaps.
    w.showView(QStringLiteral("dashboard"));
    for (const QString &kind : {QStringLiteral("deliveries"), QStringLiteral("endpoints")}) {
        auto *card = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_") + kind);
        QVERIFY(card);
        QTRY_VERIFY2(!card->isVisible(), qPrintable(kind));
    }
    auto *instances = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_instances"));
    QVERIFY(instances && instances->isVisible());
    // The worker's figures are the whole server's: a report does not bring its card back.
    w.dashboard()->setDeliveryWorker(QJsonObject{{QStringLiteral("status"), QStringLiteral("ok")}},
                                     QDateTime::currentDateTimeUtc());
    auto *worker = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_deliveryWorker"));
    QVERIFY(worker && !worker->isVisible());
    auto *grid = w.dashboard()->findChild<QGridLayout *>();
    QVERIFY(grid);
    for (int i = 0; i < grid->count(); ++i)
        QVERIFY2(grid->itemAt(i)->widget()->isVisible() || !grid->itemAt(i)->widget()->testAttribute(Qt::WA_WState_ExplicitShowHide),
                 qPrintable(grid->itemAt(i)->widget()->objectName()));
}

void tst_MainWindow::dashboardTimesReadAsTheTablesDo()
{
    // Whatever the language, a moment on the dashboard is written as in the tables and the pane.
    MainWindow w;
    const QDateTime asOf(QDate(2026, 12, 3), QTime(10, 5, 7), Qt::UTC);
    w.dashboard()->setDeliveryWorker(QJsonObject{{QStringLiteral("status"), QStringLiteral("failing")},
                                                 {QStringLiteral("since"), QStringLiteral("2026-12-03T10:00:00.000Z")},
                                                 {QStringLiteral("last_error"), QStringLiteral("disk I/O error")}},
                                     asOf);
    auto *note = w.dashboard()->findChild<QLabel *>(QStringLiteral("deliveryWorkerNote"));
    auto *when = w.dashboard()->findChild<QLabel *>(QStringLiteral("deliveryWorkerAsOf"));
    QVERIFY(note && when);
    QCOMPARE(note->text(), QStringLiteral("Failing since %1: disk I/O error")
                               .arg(displayTimestamp(QStringLiteral("2026-12-03T10:00:00.000Z"))));
    QCOMPARE(when->text(), QStringLiteral("As of %1").arg(asOf.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
}

void tst_MainWindow::emptyCallbacksSayWhy()
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("empty.sqlite"))));
    w.showView(QStringLiteral("deliveries"));
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    auto *hint = w.resourceView(QStringLiteral("deliveries"))->findChild<QLabel *>(QStringLiteral("emptyHint"));
    QVERIFY(hint);
    QTRY_VERIFY2(hint->isVisible() && hint->text().startsWith(QStringLiteral("No callbacks yet: one is queued")),
                 qPrintable(hint->text()));
}

void tst_MainWindow::dashboardShowsCallbackDelivery()
{
    // The server's delivery worker at a glance: its state and attempts as /healthz says, here one
    // attempt held by a provider that never answers.
    auto owned = std::make_unique<TestServer>();
    TestServer &server = *owned;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    DemoProvider provider;
    startProvider(&provider, {});
    QVERIFY(!QTest::currentTestFailed());
    const Reply registered = server.post(QStringLiteral("/api/v1/instances/%1/register").arg(s.instances.first()),
                                         {{QStringLiteral("callback_url"), provider.url(QStringLiteral("/hang/dashboard"))}},
                                         server.operatorToken());
    QCOMPARE(registered.status, 200);

    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("worker.sqlite"))));
    w.showView(QStringLiteral("dashboard"));
    DashboardPage *dashboard = w.dashboard();
    QTRY_VERIFY(dashboard->findChild<QWidget *>(QStringLiteral("card_deliveryWorker")));
    QWidget *card = dashboard->findChild<QWidget *>(QStringLiteral("card_deliveryWorker"));
    QTRY_VERIFY(card->isVisible());
    auto *state = card->findChild<StateBadgeLabel *>(QStringLiteral("deliveryWorkerState"));
    QVERIFY(state);
    QCOMPARE(state->state(), QStringLiteral("RUNNING"));
    const auto figure = [card](const char *name) {
        auto *label = card->findChild<QLabel *>(QStringLiteral("worker_") + QLatin1String(name));
        return label ? label->text() : QStringLiteral("missing");
    };
    // The console asks every few seconds.
    QTRY_COMPARE_WITH_TIMEOUT(figure("attempts_in_flight.probing"), QStringLiteral("1"), 20000);
    QCOMPARE(figure("endpoints_known.probing"), QStringLiteral("1"));
    QCOMPARE(figure("attempts_in_flight.answering"), QStringLiteral("0"));
    QCOMPARE(figure("attempts_waiting.answering"), QStringLiteral("0"));

    // The server gone, the card keeps its figures but no longer claims the worker runs.
    owned.reset();
    QTRY_COMPARE_WITH_TIMEOUT(state->state(), QStringLiteral("UNKNOWN"), 20000);
    QCOMPARE(figure("attempts_in_flight.probing"), QStringLiteral("1"));

    // A click on the card opens the callbacks.
    QTest::mouseClick(card, Qt::LeftButton);
    QCOMPARE(w.currentViewName(), QStringLiteral("deliveries"));
}

void tst_MainWindow::dashboardCardsOpenThePageThatShowsThem()
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("cards.sqlite"))));
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    w.resourceView(QStringLiteral("deliveries"))->setQueryText(QStringLiteral("fail"));
    w.resourceView(QStringLiteral("endpoints"))->setQueryText(QStringLiteral("acme"));
    w.showView(QStringLiteral("dashboard"));

    // Endpoints are shown on the Callbacks page: their card opens it, with their table unfiltered.
    auto *endpoints = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_endpoints"));
    QVERIFY(endpoints);
    QTest::mouseClick(endpoints, Qt::LeftButton);
    QCOMPARE(w.currentViewName(), QStringLiteral("deliveries"));
    QCOMPARE(w.resourceView(QStringLiteral("endpoints"))->queryText(), QString());
    QCOMPARE(w.resourceView(QStringLiteral("deliveries"))->queryText(), QStringLiteral("fail"));

    // No page shows providers: their card counts, opens nothing and says nothing of opening.
    w.showView(QStringLiteral("dashboard"));
    auto *providers = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_providers"));
    QVERIFY(providers);
    QVERIFY(providers->toolTip().isEmpty());
    QCOMPARE(providers->cursor().shape(), Qt::ArrowCursor);
    QTest::mouseClick(providers, Qt::LeftButton);
    QCOMPARE(w.currentViewName(), QStringLiteral("dashboard"));
    QCOMPARE(w.resourceView(QStringLiteral("deliveries"))->queryText(), QStringLiteral("fail"));
    QCOMPARE(providers->focusPolicy(), Qt::NoFocus);

    // The keyboard opens a card as the mouse does.
    auto *instances = w.dashboard()->findChild<QWidget *>(QStringLiteral("card_instances"));
    QVERIFY(instances && instances->focusPolicy() & Qt::TabFocus);
    instances->setFocus(Qt::TabFocusReason);
    QTest::keyClick(instances, Qt::Key_Return);
    QCOMPARE(w.currentViewName(), QStringLiteral("instances"));
}

void tst_MainWindow::refusedDeletionNamesItsInstances()
{
    // An organization with instances not stopped cannot be deleted: the refusal names them and
    // offers them, filtered, on the Instances page.
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("blocked.sqlite"))));
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    QTRY_COMPARE(w.resourceView(QStringLiteral("organizations"))->table()->model()->rowCount(), 1);
    MessageBox::setNextText(QStringLiteral("closing the account"));
    MessageBox::setNextAnswer(QMessageBox::Yes);
    emit w.detailPane()->actionRequested(QStringLiteral("organizations"), s.organization, QStringLiteral("delete"));
    QTRY_COMPARE(w.currentViewName(), QStringLiteral("instances"));
    QVERIFY2(MessageBox::lastText().contains(QStringLiteral("web-alpha #%1 (PENDING)").arg(s.instances.at(0))),
             qPrintable(MessageBox::lastText()));
    QCOMPARE(w.resourceView(QStringLiteral("instances"))->queryText(),
             QStringLiteral("organization:%1 -state:stopped,destroyed").arg(s.organization));
    QTRY_COMPARE(w.resourceView(QStringLiteral("instances"))->table()->model()->rowCount(), 3);
}

void tst_MainWindow::awaitingInstanceSaysWhy()
{
    // A stopped instance past its retention whose provider has not acknowledged: the pane says
    // what it waits for (the table's Awaiting column is hidden by default).
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("awaiting.sqlite"))));
    w.showView(QStringLiteral("instances"));
    ResourceModel *model = w.resourceModel(QStringLiteral("instances"));
    QVERIFY(model);
    QTRY_COMPARE(model->rowCount(), 3);
    QJsonObject awaiting = model->objectById(s.instances.first());
    // As the feed would bring it: a newer version.
    awaiting.insert(QStringLiteral("version"), awaiting.value(QStringLiteral("version")).toInteger() + 1);
    awaiting.insert(QStringLiteral("status"), QStringLiteral("STOPPED"));
    awaiting.insert(QStringLiteral("awaiting_ack"), QJsonObject{{QStringLiteral("reason"), QStringLiteral("delivery 8 is FAILED")},
                                                                {QStringLiteral("delivery_id"), 8}});
    model->upsert({awaiting});
    model->flush();
    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    view->setQueryText(QStringLiteral("name:web-alpha"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 1);
    view->table()->selectRow(0);
    QTRY_VERIFY2(w.detailPane()->holdText().contains(QStringLiteral("Awaiting the provider's acknowledgement: delivery 8 is FAILED")),
                 qPrintable(w.detailPane()->holdText()));
    QVERIFY(w.detailPane()->holdText().contains(QStringLiteral("callback #8")));
}

void tst_MainWindow::neverRegisteredInstanceDoesNotOfferStart()
{
    // Stopped while PENDING, web-alpha has no callback and the server would refuse Start;
    // web-bravo was registered before it stopped and starts again.
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    QVERIFY(!server.registerInstance(s.instances.at(1)).isEmpty());
    for (const qint64 id : {s.instances.at(0), s.instances.at(1)})
        QCOMPARE(server.post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, server.operatorToken()).status, 200);
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("unregistered.sqlite"))));
    w.showView(QStringLiteral("instances"));
    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 3);
    const auto startAction = [&w]() -> QAction * {
        for (QAction *a : w.detailPane()->objectActions())
            if (a->objectName() == QLatin1String("action_start"))
                return a;
        return nullptr;
    };
    view->setQueryText(QStringLiteral("name:web-alpha"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 1);
    view->table()->selectRow(0);
    QTRY_VERIFY(startAction());
    QTRY_VERIFY2(w.detailPane()->holdText().contains(QStringLiteral("before its provider registered it")),
                 qPrintable(w.detailPane()->holdText()));
    // Once live (offline, every action says so instead).
    QTRY_COMPARE(startAction()->toolTip(), w.detailPane()->holdText());
    QVERIFY(!startAction()->isEnabled());

    view->setQueryText(QStringLiteral("name:web-bravo"));
    QTRY_COMPARE(view->table()->model()->rowCount(), 1);
    view->table()->selectRow(0);
    QTRY_VERIFY(w.detailPane()->holdText().isEmpty());
    QTRY_VERIFY(startAction() && startAction()->isEnabled());
}

void tst_MainWindow::fitsA1024PixelScreen()
{
    // Every page, with an object in the detail pane, fits a 1024-pixel-wide screen. The pages
    // share the widest one's minimum: the dashboard's cards, side by side, once set it for all.
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);
    QVERIFY(!server.registerInstance(s.instances.at(0)).isEmpty());
    MainWindow w;
    w.resize(1024, 700);
    w.show();
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("narrow.sqlite"))));
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    auto *dashboard = w.findChild<QWidget *>(QStringLiteral("dashboardView"));
    QVERIFY(dashboard);
    // Its cards scroll within it: however many there are, it asks for little.
    QTRY_VERIFY(w.findChild<QWidget *>(QStringLiteral("card_deliveryWorker")));
    QVERIFY2(dashboard->minimumSizeHint().width() < 300, qPrintable(QString::number(dashboard->minimumSizeHint().width())));
    for (const QString &name : w.viewNames()) {
        w.showView(name);
        if (ResourceView *view = w.resourceView(name)) {
            QTRY_VERIFY2(view->table()->model()->rowCount() > 0 || name != QLatin1String("deliveries"), qPrintable(name));
            if (view->table()->model()->rowCount() > 0)
                view->table()->selectRow(0);
        }
        QCoreApplication::processEvents();
        QVERIFY2(w.minimumSizeHint().width() <= 1024,
                 qPrintable(QStringLiteral("%1: at least %2 pixels wide").arg(name).arg(w.minimumSizeHint().width())));
    }
}

void tst_MainWindow::firstStartFitsTheScreen()
{
    // No saved geometry (init() cleared the settings): the window takes 1400 × 860 where the screen
    // has room for it, and starts maximized on a smaller one (this platform's), no larger than it.
    MainWindow w;
    const QRect room = w.screen()->availableGeometry();
    QVERIFY2(room.width() < 1400 || room.height() < 860, "the test needs a screen smaller than 1400 × 860");
    QVERIFY(w.windowState().testFlag(Qt::WindowMaximized));
    QVERIFY2(w.width() <= room.width() && w.height() <= room.height(),
             qPrintable(QStringLiteral("%1×%2 on %3×%4").arg(w.width()).arg(w.height()).arg(room.width()).arg(room.height())));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY2(room.contains(w.geometry()),
             qPrintable(QStringLiteral("%1,%2 %3×%4 on %5×%6")
                            .arg(w.x()).arg(w.y()).arg(w.width()).arg(w.height()).arg(room.width()).arg(room.height())));
}

QTEST_MAIN(tst_MainWindow)
#include "tst_mainwindow.moc"
