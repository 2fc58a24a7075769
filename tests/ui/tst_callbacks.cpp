// The Callbacks page as a provider reviewing failed callbacks uses it, against a real control plane
// that delivers to a real receiver on loopback: the attempts side by side, the countdown to the
// next one, the endpoint's and the instance's own requests, the bulk retry and the server's refusals.
#include "ui/attemptlogview.h"
#include "ui/bulkretrydialog.h"
#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/messagebox.h"
#include "ui/resourceview.h"

#include "models/resourcemodel.h"

#include "callbackreceiver.h"
#include "testserver.h"

#include <QAccessible>
#include <QAction>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Callbacks : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void attemptsSideBySide();
    void focusAloneChoosesNoRow();
    void destructionUnderWayDoesNotOfferStart();
    void disabledEndpointIsEnabledByResume();
    void heldDeliverySaysWhy();
    void testEventFromTheEndpoint();
    void testEventIsSelectedOnArrival_data();
    void testEventIsSelectedOnArrival();
    void refusedTestEventIsExplained();
    void rotateSecretShowsTheNewOne();
    void registerAsksForTheCallbackUrl();
    void bulkRetryCountsFirst();
    void supersededRetryOffersTheNewerOne();
    void secondActionWaitsForTheFirst();
    void changeWhileConfirmingSendsNothing();

private:
    // A server whose failed deliveries wait an hour for their next attempt, one provider with
    // instances registered on the receiver, and the window on the Callbacks page.
    // The server keeps a stopped instance for `retention` (its default when zero).
    void open(int receiverStatus, int instances = 1, std::chrono::seconds retention = {});
    QList<qint64> deliveryIds();
    qint64 endpointId();
    // Selects the row with this id in a view; false when it is not shown.
    static bool select(ResourceView *view, qint64 id);
    QAction *paneAction(const QString &name) const;
    // open(500), its delivery selected once the receiver has answered it (the next attempt is an
    // hour away), and its retry action enabled.
    void openWithOneAnswered(qint64 *id);
    // The actions of the delivery's audit entries, oldest first.
    QStringList auditActions(qint64 deliveryId);

    QTemporaryDir m_dir;
    std::unique_ptr<Receiver> m_receiver;
    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<MainWindow> m_window;
    QList<qint64> m_instances;
    int m_run = 0;
};

void tst_Callbacks::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_callbacks"));
    QVERIFY(m_dir.isValid());
}

void tst_Callbacks::init()
{
    QSettings().clear();
    // No dialog may ever block a test.
    MessageBox::setAutoAnswer(QMessageBox::Ok);
}

void tst_Callbacks::cleanup()
{
    m_window.reset();
    m_server.reset();
    m_receiver.reset();
    m_instances.clear();
}

void tst_Callbacks::open(int receiverStatus, int instances, std::chrono::seconds retention)
{
    m_receiver = std::make_unique<Receiver>(receiverStatus, QByteArrayLiteral(R"({"error": "database down"})"));
    ServerOptions options;
    options.retrySchedule = QStringLiteral("1h");
    if (retention.count() > 0)
        options.instanceRetention = retention;
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    const qint64 org = m_server->createOrganization(QStringLiteral("Acme Hosting"));
    const qint64 provider = m_server->createProvider(QStringLiteral("Ledger Inc"), org, {QStringLiteral("ledger")});
    for (int i = 0; i < instances; ++i) {
        const qint64 id = m_server->createInstance(QStringLiteral("web-%1").arg(i), org, provider,
                                                   QStringLiteral("ledger"), QStringLiteral("alice"));
        const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                       {{QStringLiteral("callback_url"), m_receiver->url()}},
                                       m_server->operatorToken());
        QVERIFY2(r.status == 200, r.body.constData());
        m_instances.append(id);
    }

    ConsoleConnection c;
    c.baseUrl = m_server->baseUrl();
    c.token = m_server->operatorToken();
    c.profile = QStringLiteral("callbacks");
    c.role = Actor::Operator;
    c.cachePath = m_dir.filePath(QStringLiteral("cache-%1.sqlite").arg(++m_run));
    m_window = std::make_unique<MainWindow>();
    m_window->show();
    m_window->connectTo(c);
    m_window->showView(QStringLiteral("deliveries"));
    QTRY_VERIFY2(m_window->connectionStatusText().contains(QStringLiteral("Live")),
                 qPrintable(m_window->connectionStatusText()));
}

QList<qint64> tst_Callbacks::deliveryIds()
{
    QList<qint64> ids;
    const QJsonArray items = m_server->get(QStringLiteral("/api/v1/deliveries"), m_server->operatorToken()).items();
    for (const QJsonValue &item : items)
        ids.append(item.toObject().value(QStringLiteral("id")).toInteger());
    return ids;
}

qint64 tst_Callbacks::endpointId()
{
    const QJsonArray items = m_server->get(QStringLiteral("/api/v1/endpoints"), m_server->operatorToken()).items();
    return items.isEmpty() ? 0 : items.first().toObject().value(QStringLiteral("id")).toInteger();
}

bool tst_Callbacks::select(ResourceView *view, qint64 id)
{
    const QAbstractItemModel *model = view->table()->model();
    for (int row = 0; row < model->rowCount(); ++row) {
        if (view->objectAt(row).value(QStringLiteral("id")).toInteger() == id) {
            view->table()->selectRow(row);
            return true;
        }
    }
    return false;
}

QAction *tst_Callbacks::paneAction(const QString &name) const
{
    return m_window->detailPane()->findChild<QAction *>(QStringLiteral("action_") + name);
}

void tst_Callbacks::attemptsSideBySide()
{
    open(500);
    if (QTest::currentTestFailed())
        return;
    // The first attempt got a 500; the next one waits an hour.
    QTRY_VERIFY(!deliveryIds().isEmpty());
    const qint64 delivery = deliveryIds().first();
    ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    QTRY_VERIFY(select(view, delivery));
    DetailPane *pane = m_window->detailPane();
    QTRY_COMPARE(pane->fieldText(QStringLiteral("last_status")), QStringLiteral("500"));

    // The attempt: what was sent beside what came back.
    AttemptLogView *log = pane->attemptLog();
    auto *tabs = pane->findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    QVERIFY(tabs->isTabVisible(tabs->indexOf(log)));
    QTRY_COMPARE(log->attemptCount(), 1);
    QVERIFY2(log->requestText().contains(QStringLiteral("instance.status_changed")), qPrintable(log->requestText()));
    QVERIFY2(log->requestText().contains(QStringLiteral("[redacted]")), qPrintable(log->requestText()));
    QVERIFY2(log->responseText().startsWith(QStringLiteral("HTTP 500 after ")), qPrintable(log->responseText()));
    QVERIFY2(log->responseText().contains(QStringLiteral("database down")), qPrintable(log->responseText()));

    // The next attempt and the give-up time count down.
    static const QRegularExpression countdown(QStringLiteral("\\(in \\d+ (min|h) \\d+ (s|min)\\)$"));
    QVERIFY2(countdown.match(pane->fieldText(QStringLiteral("next_attempt_at"))).hasMatch(),
             qPrintable(pane->fieldText(QStringLiteral("next_attempt_at"))));
    QVERIFY2(countdown.match(pane->fieldText(QStringLiteral("give_up_at"))).hasMatch(),
             qPrintable(pane->fieldText(QStringLiteral("give_up_at"))));

    // Other kinds have no attempts tab.
    m_window->showView(QStringLiteral("instances"));
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("instances")), m_instances.first()));
    QTRY_COMPARE(pane->objectId(), m_instances.first());
    QVERIFY(!tabs->isTabVisible(tabs->indexOf(log)));
}

void tst_Callbacks::focusAloneChoosesNoRow()
{
    open(500);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(!deliveryIds().isEmpty() && endpointId() > 0);
    const qint64 delivery = deliveryIds().first();
    ResourceView *deliveries = m_window->resourceView(QStringLiteral("deliveries"));
    ResourceView *endpoints = m_window->resourceView(QStringLiteral("endpoints"));
    QTRY_VERIFY(select(deliveries, delivery));
    DetailPane *pane = m_window->detailPane();
    QTRY_COMPARE(pane->objectId(), delivery);
    QTRY_COMPARE(endpoints->table()->model()->rowCount(), 1);

    // Tab on its way to the pane's actions passes the endpoints table: Qt puts that table's
    // cursor on its first row, which chooses nothing. The pane still shows the delivery.
    QVERIFY(!endpoints->table()->currentIndex().isValid());
    endpoints->table()->setFocus(Qt::TabFocusReason);
    QTRY_VERIFY(endpoints->table()->hasFocus());
    QVERIFY(endpoints->table()->currentIndex().isValid()); // the cursor Qt placed
    QCOMPARE(pane->kind()->name, QStringLiteral("deliveries"));
    QCOMPARE(pane->objectId(), delivery);

    // Choosing the endpoint (Space on the cursor's row) shows it, and the delivery is no longer
    // highlighted: one table of the page has a row chosen at a time.
    QTest::keyClick(endpoints->table(), Qt::Key_Space);
    QTRY_COMPARE(pane->kind()->name, QStringLiteral("endpoints"));
    QCOMPARE(pane->objectId(), endpointId());
    QVERIFY(!deliveries->table()->selectionModel()->hasSelection());

    // And choosing the delivery again shows it again.
    QVERIFY(select(deliveries, delivery));
    QTRY_COMPARE(pane->kind()->name, QStringLiteral("deliveries"));
    QCOMPARE(pane->objectId(), delivery);
    QVERIFY(!endpoints->table()->selectionModel()->hasSelection());
}

void tst_Callbacks::destructionUnderWayDoesNotOfferStart()
{
    // Stopped, its STOPPED notification acknowledged, its retention over: the destruction callback
    // goes out, and the provider answers it 500. The provider may have deleted the instance: the
    // server refuses to start it, and the console holds Start back and says why.
    open(200, 1, std::chrono::seconds(2));
    if (QTest::currentTestFailed())
        return;
    const qint64 id = m_instances.first();
    const QString op = m_server->operatorToken();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(id), {}, op).status, 200);
    const auto settled = [&] {
        const QJsonArray items = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(id), op).items();
        for (const QJsonValue &item : items)
            if (item.toObject().value(QStringLiteral("state")).toString() == QLatin1String("PENDING"))
                return false;
        return !items.isEmpty();
    };
    QTRY_VERIFY(settled());
    m_receiver->setStatus(500);
    const auto awaited = [&] {
        return m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), op)
            .json()
            .value(QStringLiteral("awaiting_ack"))
            .toObject()
            .value(QStringLiteral("event_type"))
            .toString();
    };
    QTRY_COMPARE_WITH_TIMEOUT(awaited(), QStringLiteral("instance.destroyed"), 15000);

    m_window->showView(QStringLiteral("instances"));
    ResourceView *view = m_window->resourceView(QStringLiteral("instances"));
    QTRY_VERIFY(select(view, id));
    DetailPane *pane = m_window->detailPane();
    QTRY_VERIFY2(pane->holdText().startsWith(QStringLiteral("Being destroyed: ")), qPrintable(pane->holdText()));
    QTRY_VERIFY(paneAction(QStringLiteral("start")));
    QTRY_COMPARE(paneAction(QStringLiteral("start"))->toolTip(), pane->holdText());
    QVERIFY(!paneAction(QStringLiteral("start"))->isEnabled());
}

void tst_Callbacks::disabledEndpointIsEnabledByResume()
{
    // A 410 Gone disables the endpoint; the pane's "Enable" must take the route that exists.
    open(410);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(endpointId() > 0);
    const qint64 endpoint = endpointId();
    QTRY_COMPARE(m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(endpoint), m_server->operatorToken())
                     .json()
                     .value(QStringLiteral("state"))
                     .toString(),
                 QStringLiteral("DISABLED"));
    m_receiver->setStatus(200);
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("endpoints")), endpoint));
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("DISABLED"));
    // Why it is disabled, and what enabling it does while the URL still answers 410.
    QVERIFY2(m_window->detailPane()->holdText().contains(QStringLiteral("410 Gone")), qPrintable(m_window->detailPane()->holdText()));
    QTRY_VERIFY(paneAction(QStringLiteral("enable")) && paneAction(QStringLiteral("enable"))->isEnabled());
    MessageBox::setNextText(QStringLiteral("the URL answers again"));
    paneAction(QStringLiteral("enable"))->trigger();
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("ACTIVE"));
    QVERIFY(m_window->detailPane()->holdText().isEmpty());
}

void tst_Callbacks::heldDeliverySaysWhy()
{
    // Its endpoint disabled by a 410, the delivery waits: the pane says so, and does not offer
    // "Retry now" (the server refuses it). Once the endpoint is enabled, the note goes.
    open(410);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(endpointId() > 0);
    const qint64 endpoint = endpointId();
    ResourceModel *endpoints = m_window->resourceModel(QStringLiteral("endpoints"));
    QTRY_COMPARE(endpoints->objectById(endpoint).value(QStringLiteral("state")).toString(), QStringLiteral("DISABLED"));
    const qint64 delivery = deliveryIds().first();
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("deliveries")), delivery));
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("PENDING"));
    QTRY_VERIFY2(m_window->detailPane()->holdText().contains(QStringLiteral("endpoint #%1 is DISABLED").arg(endpoint)),
                 qPrintable(m_window->detailPane()->holdText()));
    // The list marks it beside its state, with the same sentence as its tooltip, and a screen
    // reader on the cell hears it with the state.
    ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    const int stateColumn = view->kind().fieldIndex(QStringLiteral("state"));
    const auto stateCell = [&] { return view->table()->currentIndex().siblingAtColumn(stateColumn); };
    const auto note = [&] { return stateCell().data(ResourceModel::StateNoteRole).toString(); };
    QCOMPARE(note(), QStringLiteral("held"));
    QCOMPARE(stateCell().data(Qt::ToolTipRole).toString(), m_window->detailPane()->holdText());
    QAccessibleInterface *table = QAccessible::queryAccessibleInterface(view->table());
    QVERIFY(table && table->tableInterface());
    QAccessibleInterface *cell = table->tableInterface()->cellAt(stateCell().row(), stateColumn);
    QVERIFY(cell);
    QCOMPARE(cell->text(QAccessible::Name), QStringLiteral("pending, held"));
    QAction *retry = paneAction(QStringLiteral("retry"));
    QVERIFY(retry && !retry->isEnabled());
    QCOMPARE(retry->toolTip(), m_window->detailPane()->holdText());
    QVERIFY(paneAction(QStringLiteral("cancel")) && paneAction(QStringLiteral("cancel"))->isEnabled());
    // A bulk retry would take it, and says it would still wait.
    paneAction(QStringLiteral("bulk-retry"))->trigger();
    auto *dialog = m_window->findChild<BulkRetryDialog *>(QStringLiteral("bulkRetryDialog"));
    QVERIFY(dialog);
    QTRY_COMPARE(dialog->count(), qint64(1));
    QVERIFY2(dialog->countText().contains(QStringLiteral("Held by a paused or disabled endpoint: 1,")), qPrintable(dialog->countText()));
    dialog->reject();

    m_receiver->setStatus(200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/resume").arg(endpoint), {}, m_server->operatorToken()).status, 200);
    QTRY_VERIFY2(m_window->detailPane()->holdText().isEmpty(), qPrintable(m_window->detailPane()->holdText()));
    QTRY_VERIFY2(note().isEmpty(), qPrintable(note())); // delivered now, or at least no longer held
    QVERIFY(!cell->text(QAccessible::Name).contains(QStringLiteral("held")));
}

void tst_Callbacks::testEventFromTheEndpoint()
{
    open(200);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(endpointId() > 0);
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("endpoints")), endpointId()));
    QTRY_VERIFY(paneAction(QStringLiteral("test")) && paneAction(QStringLiteral("test"))->isEnabled());
    MessageBox::setNextText(QStringLiteral("checking the receiver"));
    paneAction(QStringLiteral("test"))->trigger();
    // The test event is a delivery like any other: it shows up in the table.
    const ResourceModel *deliveries = m_window->resourceModel(QStringLiteral("deliveries"));
    auto hasTestEvent = [deliveries] {
        for (int row = 0; row < deliveries->rowCount(); ++row) {
            if (deliveries->objectAt(row).value(QStringLiteral("event_type")).toString() == QLatin1String("opsdeck.test"))
                return true;
        }
        return false;
    };
    QTRY_VERIFY(hasTestEvent());
}

void tst_Callbacks::testEventIsSelectedOnArrival_data()
{
    QTest::addColumn<QString>("meanwhile");
    QTest::addColumn<bool>("selected");

    QTest::newRow("still on the endpoint") << QString() << true;
    QTest::newRow("another delivery chosen") << QStringLiteral("delivery") << false;
    QTest::newRow("another page opened") << QStringLiteral("page") << false;
}

void tst_Callbacks::testEventIsSelectedOnArrival()
{
    // The new delivery is shown once the feed brings it, unless the operator has moved on; the
    // keyboard stays where it was either way.
    QFETCH(QString, meanwhile);
    QFETCH(bool, selected);
    open(200);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(endpointId() > 0);
    QTRY_COMPARE(deliveryIds().size(), 1);
    const qint64 registration = deliveryIds().first();
    ResourceView *deliveries = m_window->resourceView(QStringLiteral("deliveries"));
    ResourceView *endpoints = m_window->resourceView(QStringLiteral("endpoints"));
    const ResourceModel *model = m_window->resourceModel(QStringLiteral("deliveries"));
    QTRY_VERIFY(model->rowOfId(registration) >= 0);
    QTRY_VERIFY(select(endpoints, endpointId()));
    QTRY_COMPARE(m_window->detailPane()->objectId(), endpointId());
    QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    endpoints->table()->setFocus();
    QTRY_VERIFY(endpoints->table()->hasFocus());

    QTRY_VERIFY(paneAction(QStringLiteral("test")) && paneAction(QStringLiteral("test"))->isEnabled());
    MessageBox::setNextText(QStringLiteral("checking the receiver"));
    paneAction(QStringLiteral("test"))->trigger();
    // Before the server has even answered.
    if (meanwhile == QLatin1String("delivery"))
        QVERIFY(select(deliveries, registration));
    else if (meanwhile == QLatin1String("page"))
        m_window->showView(QStringLiteral("audit"));

    QTRY_COMPARE(deliveryIds().size(), 2);
    const qint64 test = deliveryIds().last();
    QTRY_VERIFY(model->rowOfId(test) >= 0);
    if (!selected) {
        m_window->showView(QStringLiteral("deliveries"));
        QVERIFY(deliveries->currentObject().value(QStringLiteral("id")).toInteger() != test);
        QVERIFY(m_window->detailPane()->objectId() != test);
        return;
    }
    QTRY_COMPARE(deliveries->currentObject().value(QStringLiteral("id")).toInteger(), test);
    QCOMPARE(m_window->detailPane()->kind()->name, QStringLiteral("deliveries"));
    QCOMPARE(m_window->detailPane()->objectId(), test);
    QCOMPARE(m_window->detailPane()->fieldText(QStringLiteral("event_type")), QStringLiteral("opsdeck.test"));
    const QModelIndex current = deliveries->table()->currentIndex();
    QVERIFY(deliveries->table()->viewport()->rect().intersects(deliveries->table()->visualRect(current)));
    QVERIFY(endpoints->table()->hasFocus());
}

void tst_Callbacks::refusedTestEventIsExplained()
{
    // A paused endpoint: the pane says why there is no test event, and the server's own refusal,
    // should the request be made anyway, is shown in its words.
    open(200);
    if (QTest::currentTestFailed())
        return;
    QTRY_VERIFY(endpointId() > 0);
    const qint64 endpoint = endpointId();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/endpoints/%1/pause").arg(endpoint), {}, m_server->operatorToken()).status,
             200);
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("endpoints")), endpoint));
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("PAUSED"));
    QAction *test = paneAction(QStringLiteral("test"));
    QVERIFY(test && !test->isEnabled());
    QVERIFY2(test->toolTip().contains(QStringLiteral("resume")), qPrintable(test->toolTip()));

    MessageBox::setNextText(QStringLiteral("anyway"));
    emit m_window->detailPane()->actionRequested(QStringLiteral("endpoints"), endpoint, QStringLiteral("test"));
    QTRY_VERIFY2(MessageBox::lastText().contains(QStringLiteral("PAUSED")), qPrintable(MessageBox::lastText()));
}

void tst_Callbacks::rotateSecretShowsTheNewOne()
{
    open(200);
    if (QTest::currentTestFailed())
        return;
    m_window->showView(QStringLiteral("instances"));
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("instances")), m_instances.first()));
    QTRY_VERIFY(!m_window->detailPane()->fieldText(QStringLiteral("callback.url")).startsWith(QStringLiteral("—")));
    QTRY_VERIFY(paneAction(QStringLiteral("rotate-secret")) && paneAction(QStringLiteral("rotate-secret"))->isEnabled());
    MessageBox::setNextText(QStringLiteral("leaked in a log"));
    paneAction(QStringLiteral("rotate-secret"))->trigger();
    static const QRegularExpression secret(QStringLiteral("whsec_\\S+"));
    QTRY_VERIFY2(secret.match(MessageBox::lastText()).hasMatch(), qPrintable(MessageBox::lastText()));
    QVERIFY2(MessageBox::lastText().contains(QStringLiteral("also signs until")), qPrintable(MessageBox::lastText()));
}

void tst_Callbacks::registerAsksForTheCallbackUrl()
{
    // Registering needs the URL callbacks go to: the console asks for it, then for the reason,
    // and shows the signing secret the answer holds, once.
    open(200, 0);
    if (QTest::currentTestFailed())
        return;
    const qint64 org = m_server->createOrganization(QStringLiteral("Globex"));
    const qint64 provider = m_server->createProvider(QStringLiteral("Other Co"), org, {QStringLiteral("crm")});
    const qint64 id = m_server->createInstance(QStringLiteral("web-new"), org, provider, QStringLiteral("crm"),
                                               QStringLiteral("alice"));
    m_window->showView(QStringLiteral("instances"));
    QTRY_VERIFY(select(m_window->resourceView(QStringLiteral("instances")), id));
    QTRY_VERIFY(paneAction(QStringLiteral("register")) && paneAction(QStringLiteral("register"))->isEnabled());
    auto status = [this, id] {
        return m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken())
            .json().value(QStringLiteral("status")).toString();
    };

    // Cancelled at the URL: nothing is sent.
    MessageBox::setNextText(std::nullopt);
    paneAction(QStringLiteral("register"))->trigger();
    QTest::qWait(200);
    QCOMPARE(status(), QStringLiteral("PENDING"));

    // A URL that cannot be one is said so before the reason is asked, and asked for again.
    MessageBox::setNextText(QStringLiteral("ftp://files.example/hook"));
    MessageBox::setNextText(m_receiver->url());
    MessageBox::setNextText(QStringLiteral("onboarding"));
    paneAction(QStringLiteral("register"))->trigger();
    static const QRegularExpression secret(QStringLiteral("whsec_\\S+"));
    QTRY_VERIFY2(secret.match(MessageBox::lastText()).hasMatch(), qPrintable(MessageBox::lastText()));
    QVERIFY2(MessageBox::lastText().contains(QStringLiteral("verifies every callback")), qPrintable(MessageBox::lastText()));
    QCOMPARE(status(), QStringLiteral("RUNNING"));
    const QJsonObject registered = m_server->get(QStringLiteral("/api/v1/instances/%1").arg(id), m_server->operatorToken()).json();
    QCOMPARE(registered.value(QStringLiteral("callback")).toObject().value(QStringLiteral("url")).toString(), m_receiver->url());
    // The reason recorded is the one typed for it, not the URL typed second.
    const QJsonArray audit =
        m_server->get(QStringLiteral("/api/v1/audit?kind=instance&object_id=%1").arg(id), m_server->operatorToken()).items();
    QVERIFY(!audit.isEmpty());
    QCOMPARE(audit.last().toObject().value(QStringLiteral("reason")).toString(), QStringLiteral("onboarding"));
}

void tst_Callbacks::bulkRetryCountsFirst()
{
    open(500, 3);
    if (QTest::currentTestFailed())
        return;
    QTRY_COMPARE(deliveryIds().size(), 3);
    const QList<qint64> ids = deliveryIds();
    auto field = [this](qint64 id, const QString &key) {
        return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken())
            .json()
            .value(key);
    };
    // Each has had its first attempt; two of the three cancelled: a bulk retry of the cancelled
    // ones touches those two.
    for (qint64 id : ids)
        QTRY_COMPARE(field(id, QStringLiteral("attempts")).toInt(), 1);
    for (qint64 id : {ids.at(0), ids.at(1)})
        QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id), {}, m_server->operatorToken()).status,
                 200);
    ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    QTRY_VERIFY(select(view, ids.at(0)));
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("CANCELLED"));
    AttemptLogView *log = m_window->detailPane()->attemptLog();
    QTRY_COMPARE(log->attemptCount(), 1);
    QAction *bulk = paneAction(QStringLiteral("bulk-retry"));
    QVERIFY(bulk && bulk->isEnabled());
    bulk->trigger();
    // The dialog starts from the delivery: its state, its endpoint, and the server's count.
    auto *dialog = m_window->findChild<BulkRetryDialog *>(QStringLiteral("bulkRetryDialog"));
    QVERIFY(dialog && dialog->isVisible());
    // Its dry run is under way, and it is no operation waiting for confirmation.
    QCOMPARE(dialog->count(), qint64(-1));
    QCOMPARE(m_window->pendingOperationsText(), QStringLiteral("No pending operations"));
    QCOMPARE(dialog->checkedStates(), QStringList{QStringLiteral("CANCELLED")});
    QCOMPARE(dialog->scopeFilter().value(QStringLiteral("endpoint")).toInteger(), endpointId());
    QTRY_COMPARE(dialog->count(), qint64(2));
    // Another operator cancels the third while the dialog is open: it counts again, by itself.
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(ids.at(2)), {}, m_server->operatorToken()).status,
             200);
    QTRY_COMPARE(dialog->count(), qint64(3));
    dialog->findChild<QLineEdit *>(QStringLiteral("bulkRetryReason"))->setText(QStringLiteral("receiver fixed"));
    auto *retry = dialog->findChild<QPushButton *>(QStringLiteral("bulkRetryButton"));
    QCOMPARE(retry->text(), QStringLiteral("Retry 3 callbacks"));
    QTest::mouseClick(retry, Qt::LeftButton);
    for (const qint64 id : ids)
        QTRY_COMPARE(field(id, QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    QTRY_VERIFY(!m_window->findChild<BulkRetryDialog *>());
    // Sent again at once: the open attempt log follows without another click.
    QTRY_COMPARE(log->attemptCount(), 2);
    QVERIFY2(log->responseText().startsWith(QStringLiteral("HTTP 500")), qPrintable(log->responseText()));
}

void tst_Callbacks::supersededRetryOffersTheNewerOne()
{
    // STOPPED cancelled, then RUNNING: retrying STOPPED is refused, naming the RUNNING one, and
    // the console offers to show it.
    open(500);
    if (QTest::currentTestFailed())
        return;
    const qint64 instance = m_instances.first();
    const QString token = m_server->operatorToken();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), {}, token).status, 200);
    QTRY_COMPARE(deliveryIds().size(), 2);
    const qint64 stopped = deliveryIds().last();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(stopped), {}, token).status, 200);
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/start").arg(instance), {}, token).status, 200);
    QTRY_COMPARE(deliveryIds().size(), 3);
    const qint64 running = deliveryIds().last();

    ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    QTRY_VERIFY(select(view, running)); // synced
    QTRY_VERIFY(select(view, stopped));
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("CANCELLED"));
    QAction *retry = paneAction(QStringLiteral("retry"));
    QVERIFY(retry && retry->isEnabled());
    MessageBox::setNextText(QStringLiteral("resend"));
    MessageBox::setNextAnswer(QMessageBox::Yes);
    retry->trigger();
    QTRY_VERIFY2(MessageBox::lastText().endsWith(QStringLiteral("Show delivery #%1?").arg(running)),
                 qPrintable(MessageBox::lastText()));
    QVERIFY2(MessageBox::lastText().contains(QString::number(running)), qPrintable(MessageBox::lastText()));
    QTRY_COMPARE(m_window->detailPane()->objectId(), running);
    QCOMPARE(view->currentObject().value(QStringLiteral("id")).toInteger(), running);
}

QStringList tst_Callbacks::auditActions(qint64 deliveryId)
{
    QStringList actions;
    const QJsonArray items = m_server->get(QStringLiteral("/api/v1/audit?kind=delivery&object_id=%1").arg(deliveryId),
                                           m_server->operatorToken()).items();
    for (const QJsonValue &item : items)
        actions.append(item.toObject().value(QStringLiteral("action")).toString());
    return actions;
}

void tst_Callbacks::openWithOneAnswered(qint64 *id)
{
    open(500);
    if (QTest::currentTestFailed())
        return;
    *id = deliveryIds().first();
    ResourceView *view = m_window->resourceView(QStringLiteral("deliveries"));
    QTRY_VERIFY(select(view, *id));
    QTRY_VERIFY(view->currentObject().value(QStringLiteral("attempts")).toInteger() >= 1);
    QAction *retry = paneAction(QStringLiteral("retry"));
    QVERIFY(retry && retry->isEnabled());
}

void tst_Callbacks::secondActionWaitsForTheFirst()
{
    // A double submit: the second click comes while the first retry is on its way. It is not
    // sent (it would carry the version the first changes, and fail with a 412), and says why.
    qint64 id = 0;
    openWithOneAnswered(&id);
    if (QTest::currentTestFailed())
        return;
    QAction *retry = paneAction(QStringLiteral("retry"));
    MessageBox::setNextText(QStringLiteral("first"));
    retry->trigger();
    MessageBox::setNextText(QStringLiteral("second"));
    retry->trigger();
    QVERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral("not been answered yet")),
             qPrintable(m_window->statusBar()->currentMessage()));
    // The second reason was never asked for.
    QCOMPARE(MessageBox::getText(nullptr, QString(), QString()), std::optional<QString>(QStringLiteral("second")));
    QTRY_VERIFY2(m_window->statusBar()->currentMessage().contains(QStringLiteral(": done")),
                 qPrintable(m_window->statusBar()->currentMessage()));
    QCOMPARE(auditActions(id).count(QStringLiteral("retry")), 1);
    // Answered (the retry sent it again, and it failed for good), the next action goes.
    QTRY_COMPARE(m_window->detailPane()->fieldText(QStringLiteral("state")), QStringLiteral("FAILED"));
    QTRY_VERIFY(paneAction(QStringLiteral("retry")) && paneAction(QStringLiteral("retry"))->isEnabled());
    MessageBox::setNextText(QStringLiteral("again"));
    paneAction(QStringLiteral("retry"))->trigger();
    QTRY_COMPARE(auditActions(id).count(QStringLiteral("retry")), 2);
}

void tst_Callbacks::changeWhileConfirmingSendsNothing()
{
    // Another operator cancels the delivery while this one's retry dialog is open: what was
    // confirmed (PENDING, due now) no longer holds, so nothing is sent and the message says why.
    qint64 id = 0;
    openWithOneAnswered(&id);
    if (QTest::currentTestFailed())
        return;
    QAction *retry = paneAction(QStringLiteral("retry"));
    bool cancelledMeanwhile = false;
    MessageBox::setWhileAsking([&] {
        const Reply r = m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(id), {}, m_server->operatorToken());
        cancelledMeanwhile = r.status == 200 && QTest::qWaitFor([&] {
            return m_window->resourceModel(QStringLiteral("deliveries"))->objectById(id).value(QStringLiteral("state"))
                   == QLatin1String("CANCELLED");
        });
    });
    MessageBox::setNextText(QStringLiteral("resend"));
    retry->trigger();
    QVERIFY(cancelledMeanwhile);
    QVERIFY2(MessageBox::lastText().contains(QStringLiteral("it is CANCELLED now, not PENDING")), qPrintable(MessageBox::lastText()));
    QTest::qWait(200);
    QCOMPARE(auditActions(id), QStringList{QStringLiteral("cancel")});
}

QTEST_MAIN(tst_Callbacks)
#include "tst_callbacks.moc"
