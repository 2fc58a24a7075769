// The bulk retry dialog against a real control plane: the states and the endpoint, provider or
// every endpoint chosen, the server's count of that choice (one dry run of all the chosen states,
// asked again on every change), the retry of exactly that in one request, and the English plural
// forms of its words.
#include "ui/bulkretrydialog.h"
#include "ui/mainwindow.h"
#include "ui/resourceview.h"

#include "models/apiclient.h"

#include "testserver.h"
#include "testsupport.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTranslator>

#include <algorithm>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_BulkRetryDialog : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void countsTheChosenStatesAndScope_data();
    void countsTheChosenStatesAndScope();
    void keyboardReachesEveryControl();
    void stateBoxesAreNamedInTheConsolesLanguage();
    void countIsSaidInTheConsolesLanguage();
    void retriesTheChosenStatesInOneRequest();
    void aRefusedRetryChangesNothing();
    void dryRunsAreNoPendingOperations();
    void pluralFormsComeWithTheConsole();

private:
    // The delivery of this instance as the server lists it.
    QJsonObject delivery(qint64 instance);
    // The dialog as the console opens it from the delivery of this instance.
    std::unique_ptr<BulkRetryDialog> dialogFrom(qint64 instance);
    // Checks exactly these states and picks the scope ("endpoint", "provider" or "" for every
    // endpoint), without waiting in between: only the last choice's count may show.
    static void choose(BulkRetryDialog *dialog, const QStringList &states, const QString &scope);
    QStringList retriedReasons(qint64 deliveryId);
    // Bulk retries (dry runs included) the server has answered so far, by its own metrics.
    qint64 bulkRetryRequests();

    std::unique_ptr<TestServer> m_server;
    std::unique_ptr<ApiClient> m_api;
    RefusingPort m_refusing; // the endpoints that refuse: their deliveries soon give up
    QTcpServer m_hanging; // accepts and never answers: its deliveries stay PENDING
    QList<QTcpSocket *> m_held;
    QHash<QString, qint64> m_instances; // "a1", "a2", "b1", "b2", "c1"
};

void tst_BulkRetryDialog::initTestCase()
{
    // Endpoints a (two instances) and b (two) of provider Ledger, c (one) of provider Mail. a and c
    // refuse connections and soon give up (FAILED); b hangs, one of its two is cancelled.
    QVERIFY(m_hanging.listen(QHostAddress::LocalHost, 0));
    connect(&m_hanging, &QTcpServer::newConnection, this, [this] {
        while (QTcpSocket *socket = m_hanging.nextPendingConnection())
            m_held.append(socket);
    });

    ServerOptions options;
    options.retrySchedule = QStringLiteral("100ms");
    options.deliveryTimeout = std::chrono::milliseconds(120000);
    options.outboxPollInterval = std::chrono::milliseconds(50);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    const qint64 org = m_server->createOrganization(QStringLiteral("Acme Hosting"));
    const qint64 ledger = m_server->createProvider(QStringLiteral("Ledger Inc"), org, {QStringLiteral("ledger")});
    const qint64 mail = m_server->createProvider(QStringLiteral("Mail Co"), org, {QStringLiteral("mail")});
    const QString refusing = m_refusing.url(QStringLiteral("/"));
    const QString hanging = QStringLiteral("http://127.0.0.1:%1/").arg(m_hanging.serverPort());
    const struct
    {
        const char *name;
        qint64 provider;
        QString url;
    } instances[] = {{"a1", ledger, refusing + QStringLiteral("a")},
                     {"a2", ledger, refusing + QStringLiteral("a")},
                     {"b1", ledger, hanging + QStringLiteral("b")},
                     {"b2", ledger, hanging + QStringLiteral("b")},
                     {"c1", mail, refusing + QStringLiteral("c")}};
    for (const auto &i : instances) {
        const QString name = QString::fromLatin1(i.name);
        const qint64 id = m_server->createInstance(name, org, i.provider,
                                                   i.provider == mail ? QStringLiteral("mail") : QStringLiteral("ledger"),
                                                   QStringLiteral("alice"));
        QVERIFY(id > 0);
        const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(id),
                                       {{QStringLiteral("callback_url"), i.url}}, m_server->operatorToken());
        QVERIFY2(r.status == 200, r.body.constData());
        m_instances.insert(name, id);
    }
    for (const char *name : {"a1", "a2", "c1"})
        QTRY_COMPARE_WITH_TIMEOUT(delivery(m_instances.value(QLatin1String(name))).value(QStringLiteral("state")).toString(),
                                  QStringLiteral("FAILED"), 30000);
    const qint64 b1 = delivery(m_instances.value(QStringLiteral("b1"))).value(QStringLiteral("id")).toInteger();
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(b1), {}, m_server->operatorToken()).status, 200);
    QCOMPARE(delivery(m_instances.value(QStringLiteral("b2"))).value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));

    m_api = std::make_unique<ApiClient>();
    m_api->setBaseUrl(m_server->baseUrl());
    m_api->setToken(m_server->operatorToken());
}

void tst_BulkRetryDialog::cleanupTestCase()
{
    m_api.reset();
    m_server.reset();
    qDeleteAll(m_held);
}

QJsonObject tst_BulkRetryDialog::delivery(qint64 instance)
{
    const QJsonArray items = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance),
                                           m_server->operatorToken())
                                 .items();
    return items.isEmpty() ? QJsonObject() : items.first().toObject();
}

std::unique_ptr<BulkRetryDialog> tst_BulkRetryDialog::dialogFrom(qint64 instance)
{
    const QJsonObject d = delivery(instance);
    BulkRetryScope scope;
    scope.state = d.value(QStringLiteral("state")).toString();
    scope.endpointId = d.value(QStringLiteral("endpoint_id")).toInteger();
    scope.endpointText = QStringLiteral("#%1").arg(scope.endpointId);
    scope.providerId = d.value(QStringLiteral("provider_id")).toInteger();
    scope.providerText = QStringLiteral("#%1").arg(scope.providerId);
    auto dialog = std::make_unique<BulkRetryDialog>(m_api.get(), scope);
    dialog->show();
    return dialog;
}

void tst_BulkRetryDialog::choose(BulkRetryDialog *dialog, const QStringList &states, const QString &scope)
{
    // Everything first, as an operator trying choices out would: answers to those must not show.
    for (QCheckBox *box : dialog->findChildren<QCheckBox *>())
        box->setChecked(true);
    for (QCheckBox *box : dialog->findChildren<QCheckBox *>()) {
        const QString state = box->objectName().section(QLatin1Char('_'), 1);
        if (!states.contains(state))
            QTest::mouseClick(box, Qt::LeftButton, {}, QPoint(4, box->height() / 2));
    }
    auto *combo = dialog->findChild<QComboBox *>(QStringLiteral("bulkRetryScope"));
    for (int i = 0; i < combo->count(); ++i) {
        if (combo->itemData(i, Qt::UserRole).toString() == scope)
            combo->setCurrentIndex(i);
    }
}

QStringList tst_BulkRetryDialog::retriedReasons(qint64 deliveryId)
{
    QStringList reasons;
    const QJsonArray entries = m_server->get(QStringLiteral("/api/v1/audit?kind=delivery&object_id=%1&limit=200").arg(deliveryId),
                                             m_server->operatorToken())
                                   .items();
    for (const QJsonValue &e : entries) {
        if (e.toObject().value(QStringLiteral("action")).toString() == QLatin1String("retry"))
            reasons.append(e.toObject().value(QStringLiteral("reason")).toString());
    }
    return reasons;
}

qint64 tst_BulkRetryDialog::bulkRetryRequests()
{
    const QByteArray prefix = "opsdeck_http_requests_total{route=\"/api/v1/deliveries/retry\",method=\"POST\",";
    qint64 total = 0;
    for (const QByteArray &line : m_server->get(QStringLiteral("/metrics"), {}).body.split('\n')) {
        if (line.startsWith(prefix))
            total += line.mid(line.lastIndexOf(' ') + 1).toLongLong();
    }
    return total;
}

void tst_BulkRetryDialog::countsTheChosenStatesAndScope_data()
{
    QTest::addColumn<QString>("from");
    QTest::addColumn<QStringList>("states");
    QTest::addColumn<QString>("scope");
    QTest::addColumn<qint64>("count");
    QTest::addColumn<QString>("text");

    QTest::newRow("failed to endpoint a") << "a1" << QStringList{"FAILED"} << "endpoint" << qint64(2) << "2 callbacks";
    QTest::newRow("failed of provider Mail") << "c1" << QStringList{"FAILED"} << "provider" << qint64(1) << "1 callback";
    QTest::newRow("cancelled to endpoint a")
        << "a1" << QStringList{"CANCELLED"} << "endpoint" << qint64(0) << "No callback matches: there is nothing to retry.";
    QTest::newRow("failed and cancelled of provider Ledger")
        << "b1" << QStringList{"FAILED", "CANCELLED"} << "provider" << qint64(3) << "3 callbacks (2 failed, 1 cancelled)";
    QTest::newRow("failed and cancelled to every endpoint")
        << "b1" << QStringList{"FAILED", "CANCELLED"} << "" << qint64(4) << "4 callbacks (3 failed, 1 cancelled)";
    QTest::newRow("every state to endpoint b")
        << "b2" << QStringList{"FAILED", "CANCELLED", "PENDING"} << "endpoint" << qint64(2)
        << "2 callbacks (1 cancelled, 1 pending)";
    QTest::newRow("no state") << "a1" << QStringList{} << "endpoint" << qint64(-1) << "Choose at least one state.";
}

void tst_BulkRetryDialog::countsTheChosenStatesAndScope()
{
    QFETCH(QString, from);
    QFETCH(QStringList, states);
    QFETCH(QString, scope);
    QFETCH(qint64, count);
    QFETCH(QString, text);
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(from));
    // It opens on the delivery's own state and endpoint, and counts that at once.
    const QString own = delivery(m_instances.value(from)).value(QStringLiteral("state")).toString();
    QCOMPARE(dialog->checkedStates(), QStringList{own});
    QVERIFY(dialog->scopeFilter().contains(QStringLiteral("endpoint")));
    QTRY_VERIFY(dialog->count() >= 0);

    choose(dialog.get(), states, scope);
    QCOMPARE(dialog->checkedStates(), states);
    QCOMPARE(dialog->scopeFilter().keys(), scope.isEmpty() ? QStringList() : QStringList{scope});
    QTRY_COMPARE(dialog->countText(), text);
    QCOMPARE(dialog->count(), count);
    // A round trip later, no answer to an earlier choice has overwritten it.
    m_server->get(QStringLiteral("/api/v1/deliveries?limit=1"), m_server->operatorToken());
    QCOMPARE(dialog->countText(), text);
    auto *retry = dialog->findChild<QPushButton *>(QStringLiteral("bulkRetryButton"));
    // Not without a reason: the audit log keeps one for every retry (blanks are none).
    QVERIFY(!retry->isEnabled());
    auto *reason = dialog->findChild<QLineEdit *>(QStringLiteral("bulkRetryReason"));
    reason->setText(QStringLiteral("   "));
    QVERIFY(!retry->isEnabled());
    reason->setText(QStringLiteral("receiver fixed"));
    QCOMPARE(retry->isEnabled(), count > 0);
    if (count > 0)
        QCOMPARE(retry->text(), count == 1 ? QStringLiteral("Retry 1 callback") : QStringLiteral("Retry %1 callbacks").arg(count));
}

void tst_BulkRetryDialog::keyboardReachesEveryControl()
{
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("a1")));
    QVERIFY(QTest::qWaitForWindowActive(dialog.get()));
    QTRY_VERIFY(dialog->count() >= 0);
    QList<QWidget *> reached;
    QWidget *first = dialog->findChild<QCheckBox *>(QStringLiteral("bulkRetryState_FAILED"));
    first->setFocus();
    QTRY_VERIFY(first->hasFocus());
    for (int i = 0; i < 12 && !reached.contains(QApplication::focusWidget()); ++i) {
        reached.append(QApplication::focusWidget());
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
    }
    QStringList names;
    for (QWidget *w : std::as_const(reached)) {
        // Each control says what it is to a screen reader: its accessible name or its own text.
        const auto *button = qobject_cast<QAbstractButton *>(w);
        QVERIFY2(!w->accessibleName().isEmpty() || (button && !button->text().isEmpty()), qPrintable(w->objectName()));
        names.append(w->objectName());
    }
    for (const char *name : {"bulkRetryState_FAILED", "bulkRetryState_CANCELLED", "bulkRetryState_PENDING",
                                "bulkRetryScope", "bulkRetryCount", "bulkRetryReason"})
        QVERIFY2(names.contains(QLatin1String(name)), qPrintable(names.join(QLatin1Char(' '))));
    // The Retry button is disabled for a count of 0 here; Cancel is always reachable.
    QVERIFY2(std::any_of(reached.cbegin(), reached.cend(),
                         [](const QWidget *w) {
                             const auto *b = qobject_cast<const QAbstractButton *>(w);
                             return b && b->text() == QLatin1String("Cancel");
                         }),
             qPrintable(names.join(QLatin1Char(' '))));
}

void tst_BulkRetryDialog::stateBoxesAreNamedInTheConsolesLanguage()
{
    // A screen reader reads the state as the box shows it, never the state's code.
    {
        const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("a1")));
        const auto *failed = dialog->findChild<QCheckBox *>(QStringLiteral("bulkRetryState_FAILED"));
        QVERIFY(failed);
        QCOMPARE(failed->accessibleName(), QStringLiteral("Retry the callbacks in state: Failed"));
    }
    QTranslator french;
    QVERIFY(french.load(QStringLiteral(":/i18n/opsdeck_fr.qm")));
    QCoreApplication::installTranslator(&french);
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("a1")));
    QCoreApplication::removeTranslator(&french);
    const auto *pending = dialog->findChild<QCheckBox *>(QStringLiteral("bulkRetryState_PENDING"));
    QVERIFY(pending);
    QCOMPARE(pending->accessibleName(), QString::fromUtf8("Relancer les rappels à l'état\u00a0: En attente (tenter maintenant)"));
}

void tst_BulkRetryDialog::countIsSaidInTheConsolesLanguage()
{
    // The count's breakdown names its states in the console's words, never the state's code, and
    // in French they agree with "rappels" (masculine) as the boxes do.
    QTranslator french;
    QVERIFY(french.load(QStringLiteral(":/i18n/opsdeck_fr.qm")));
    QCoreApplication::installTranslator(&french);
    const auto restore = qScopeGuard([&french] { QCoreApplication::removeTranslator(&french); });
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("b1")));
    QTRY_VERIFY(dialog->count() >= 0);
    choose(dialog.get(), {QStringLiteral("FAILED"), QStringLiteral("CANCELLED")}, QStringLiteral("provider"));
    QTRY_COMPARE(dialog->countText(), QStringLiteral("3 rappels (2 échoués, 1 annulé)"));
    const auto *failed = dialog->findChild<QCheckBox *>(QStringLiteral("bulkRetryState_FAILED"));
    QVERIFY(failed);
    QCOMPARE(failed->text().remove(QLatin1Char('&')), QStringLiteral("Échoués"));
}

void tst_BulkRetryDialog::retriesTheChosenStatesInOneRequest()
{
    // FAILED and CANCELLED of provider Ledger: a1, a2 and b1, each once, with the reason, in one
    // request the server runs as one transaction; c1 (Mail) and b2 (PENDING) untouched.
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("b1")));
    choose(dialog.get(), {QStringLiteral("FAILED"), QStringLiteral("CANCELLED")}, QStringLiteral("provider"));
    QTRY_COMPARE(dialog->count(), qint64(3));
    // Every dry run of the earlier choices answered: from here on, only the retry goes out.
    QTRY_VERIFY(m_api->findChildren<ApiReply *>().isEmpty());
    const qint64 requestsBefore = bulkRetryRequests();
    QSignalSpy retried(dialog.get(), &BulkRetryDialog::retried);
    QSignalSpy mutations(m_api.get(), &ApiClient::pendingMutationsChanged);
    // From the keyboard: the reason, then Enter on the default button.
    auto *reason = dialog->findChild<QLineEdit *>(QStringLiteral("bulkRetryReason"));
    reason->setFocus();
    QTest::keyClicks(reason, QStringLiteral("receiver fixed"));
    QTest::keyClick(reason, Qt::Key_Return);
    QTRY_COMPARE(retried.size(), 1);
    QCOMPARE(retried.first().first().toLongLong(), qint64(3));
    QCOMPARE(dialog->result(), int(QDialog::Accepted));
    QVERIFY(dialog->errorText().isEmpty());
    // One request: the client sent one mutation, and the server saw one bulk retry.
    QCOMPARE(mutations.size(), 2);
    QCOMPARE(mutations.at(0).first().toInt(), 1);
    QCOMPARE(mutations.at(1).first().toInt(), 0);
    QTRY_COMPARE(bulkRetryRequests(), requestsBefore + 1);
    for (const char *name : {"a1", "a2", "b1"}) {
        const qint64 id = delivery(m_instances.value(QLatin1String(name))).value(QStringLiteral("id")).toInteger();
        QCOMPARE(retriedReasons(id), QStringList{QStringLiteral("receiver fixed")});
    }
    for (const char *name : {"b2", "c1"}) {
        const qint64 id = delivery(m_instances.value(QLatin1String(name))).value(QStringLiteral("id")).toInteger();
        QVERIFY(retriedReasons(id).isEmpty());
    }
}

void tst_BulkRetryDialog::aRefusedRetryChangesNothing()
{
    // The server is gone between the count and the retry: the dialog stays open, says nothing
    // was retried (the retry is one request, never a part of the choice) and can be used again.
    ApiClient api;
    api.setBaseUrl(m_server->baseUrl());
    api.setToken(m_server->operatorToken());
    const QJsonObject c1 = delivery(m_instances.value(QStringLiteral("c1")));
    BulkRetryScope scope;
    scope.state = c1.value(QStringLiteral("state")).toString();
    scope.providerId = c1.value(QStringLiteral("provider_id")).toInteger();
    scope.providerText = QStringLiteral("#%1").arg(scope.providerId);
    BulkRetryDialog dialog(&api, scope);
    dialog.show();
    QTRY_COMPARE(dialog.count(), qint64(1));
    const RefusingPort closed;
    QUrl gone = m_server->baseUrl();
    gone.setPort(closed.port());
    api.setBaseUrl(gone);
    QSignalSpy retried(&dialog, &BulkRetryDialog::retried);

    dialog.findChild<QLineEdit *>(QStringLiteral("bulkRetryReason"))->setText(QStringLiteral("receiver fixed"));
    QTest::mouseClick(dialog.findChild<QPushButton *>(QStringLiteral("bulkRetryButton")), Qt::LeftButton);
    QTRY_VERIFY(!dialog.errorText().isEmpty());
    QVERIFY2(dialog.errorText().startsWith(QLatin1String("Nothing was retried: ")), qPrintable(dialog.errorText()));
    QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("bulkRetryError"))->isVisible());
    QVERIFY(dialog.isVisible());
    QCOMPARE(retried.size(), 0);
    QVERIFY(retriedReasons(c1.value(QStringLiteral("id")).toInteger()).isEmpty());
    // It counts again (here in vain) and the choice can be changed.
    QTRY_VERIFY(dialog.countText().startsWith(QLatin1String("The count failed: ")));
    QCOMPARE(dialog.count(), qint64(-1));
    QVERIFY(dialog.findChild<QComboBox *>(QStringLiteral("bulkRetryScope"))->isEnabled());
    QVERIFY(dialog.findChild<QLineEdit *>(QStringLiteral("bulkRetryReason"))->isEnabled());
}

void tst_BulkRetryDialog::dryRunsAreNoPendingOperations()
{
    // Counting changes nothing: the status bar's pending operations must not flicker while the
    // dialog asks for its dry runs (one for the checked states, again on every change).
    QSignalSpy pending(m_api.get(), &ApiClient::pendingMutationsChanged);
    const std::unique_ptr<BulkRetryDialog> dialog = dialogFrom(m_instances.value(QStringLiteral("b2")));
    QSignalSpy counted(dialog.get(), &BulkRetryDialog::counted);
    QCOMPARE(m_api->pendingMutations(), 0);
    choose(dialog.get(), BulkRetryDialog::retryableStates(), QStringLiteral("provider"));
    QCOMPARE(m_api->pendingMutations(), 0);
    // Only the last choice's count is announced: answers to the earlier choices are dropped.
    QTRY_COMPARE(counted.size(), 1);
    QVERIFY(dialog->count() >= 0);
    QCOMPARE(counted.first().first().toLongLong(), dialog->count());
    QCOMPARE(pending.count(), 0);
}

void tst_BulkRetryDialog::pluralFormsComeWithTheConsole()
{
    // Linking the console's window installs its English plural forms as the application starts:
    // nothing in this test asked for them.
    QVERIFY(QCoreApplication::instance()->findChild<QTranslator *>(QStringLiteral("opsdeckPluralForms")));
    QCOMPARE(QCoreApplication::translate("OpsDeck::BulkRetryDialog", "%n callback(s)", nullptr, 1), QStringLiteral("1 callback"));
    QCOMPARE(QCoreApplication::translate("OpsDeck::BulkRetryDialog", "%n callback(s)", nullptr, 2), QStringLiteral("2 callbacks"));
    // The window, not yet connected, counts its empty tables with them.
    MainWindow window;
    const QLabel *rows = window.resourceView(QStringLiteral("instances"))->findChild<QLabel *>(QStringLiteral("rowCount"));
    QVERIFY(rows);
    QCOMPARE(rows->text(), QStringLiteral("0 rows"));
}

QTEST_MAIN(tst_BulkRetryDialog)
#include "tst_bulkretrydialog.moc"
