// The detail pane: every field, actions enabled exactly as the state machine allows with a reason
// when not, the history timeline, and in-place updates of the object shown.
#include "ui/attemptlogview.h"
#include "ui/detailpane.h"
#include "ui/statediagramwidget.h"
#include "ui/valueformat.h"

#include "core/delivery.h"
#include "core/resourcekind.h"

#include <QAccessible>
#include <QAction>
#include <QLabel>
#include <QSignalSpy>
#include <QApplication>
#include <QTest>
#include <QToolBar>
#include <QTreeWidget>

using namespace OpsDeck;

namespace {

QJsonObject instance(const QString &status, qint64 version = 3)
{
    return QJsonObject{{"id", 42},
                       {"name", "billing-eu"},
                       {"organization_id", 7},
                       {"provider_id", 3},
                       {"application", "ledger"},
                       {"owner", "alice"},
                       {"status", status},
                       {"version", version},
                       {"created_at", "2026-11-29T10:00:00.000Z"},
                       {"updated_at", "2026-11-29T11:00:00.000Z"},
                       {"status_changed_at", "2026-11-29T11:00:00.000Z"},
                       {"callback", QJsonObject{{"url", "https://provider.example/hook"}, {"signing", "standard-webhooks"}}},
                       {"awaiting_ack", QJsonValue::Null},
                       {"destroy_after", QJsonValue::Null},
                       {"extra_field", "kept"}};
}

QJsonObject delivery(qint64 id, const QJsonObject &body)
{
    return QJsonObject{{"id", id},
                       {"webhook_id", QStringLiteral("msg_%1").arg(id)},
                       {"event_type", "instance.status_changed"},
                       {"instance_id", 60},
                       {"provider_id", 1},
                       {"endpoint_id", 5},
                       {"state", "PENDING"},
                       {"last_status", 500},
                       {"last_error", "http: HTTP 500 Internal Server Error"},
                       {"attempts", 2},
                       {"next_attempt_at", QJsonValue::Null},
                       {"give_up_at", QJsonValue::Null},
                       {"created_at", "2026-11-29T10:00:00.000Z"},
                       {"updated_at", "2026-11-29T11:00:00.000Z"},
                       {"version", 3},
                       {"body", body}};
}

} // namespace

class tst_DetailPane : public QObject
{
    Q_OBJECT

private slots:
    void actions_data();
    void actions();
    void fields();
    void focusedFieldKeepsTheKeyboard();
    void longValuesShowAllTheirLines();
    void unbreakableValuesDoNotWidenThePane();
    void subtitleNamesOneObject_data();
    void subtitleNamesOneObject();
    void aTabTheKindHasNotGivesWayToTheOverview();
    void theLifecycleIsDrawnWholeInItsTab();
    void actionLabelsFollowTheState_data();
    void actionLabelsFollowTheState();
    void bulkRetry_data();
    void bulkRetry();
    void aCountdownIsReadWithItsTitle();
    void aCountdownThatEndedOnTheFocusCatchesUp();
    void countdownWording_data();
    void countdownWording();
    void readOnlyDisablesEverything();
    void historyAndUpdates();
    void emptyHistorySaysWhoseItIs();
    void actionTriggers();
};

void tst_DetailPane::actions_data()
{
    QTest::addColumn<QString>("status");
    QTest::addColumn<int>("role");
    QTest::addColumn<QStringList>("enabled");
    QTest::addColumn<QStringList>("disabled");

    const int op = int(Actor::Operator);
    QTest::newRow("RUNNING as operator") << "RUNNING" << op << QStringList{"stop"} << QStringList{"register", "start"};
    QTest::newRow("STOPPED as operator") << "STOPPED" << op << QStringList{"start"} << QStringList{"register", "stop"};
    QTest::newRow("PENDING as operator") << "PENDING" << op << QStringList{"register", "stop"} << QStringList{"start"};
    QTest::newRow("PENDING as provider") << "PENDING" << int(Actor::Provider) << QStringList{"register"}
                                         << QStringList{"stop", "start"};
    QTest::newRow("RUNNING as owner") << "RUNNING" << int(Actor::Owner) << QStringList{"stop"}
                                      << QStringList{"register", "start"};
    QTest::newRow("RUNNING as provider") << "RUNNING" << int(Actor::Provider) << QStringList{}
                                         << QStringList{"register", "stop", "start"};
    QTest::newRow("DESTROYED as operator") << "DESTROYED" << op << QStringList{}
                                           << QStringList{"register", "stop", "start"};
}

void tst_DetailPane::actions()
{
    QFETCH(QString, status);
    QFETCH(int, role);
    QFETCH(QStringList, enabled);
    QFETCH(QStringList, disabled);

    DetailPane pane;
    pane.setRole(Actor(role));
    pane.showObject(resourceKindByName(u"instances"), instance(status));
    auto *toolbar = pane.findChild<QToolBar *>(QStringLiteral("detailActions"));
    QVERIFY(toolbar);
    // "destroy" is the system's: never a button.
    QVERIFY(!pane.findChild<QAction *>(QStringLiteral("action_destroy")));
    for (const QString &name : enabled) {
        auto *a = pane.findChild<QAction *>(QStringLiteral("action_") + name);
        QVERIFY2(a, qPrintable(name));
        QVERIFY2(a->isEnabled(), qPrintable(name));
    }
    for (const QString &name : disabled) {
        auto *a = pane.findChild<QAction *>(QStringLiteral("action_") + name);
        QVERIFY2(a, qPrintable(name));
        QVERIFY2(!a->isEnabled(), qPrintable(name));
        // A disabled action says why: the role, or the state.
        QVERIFY2(a->toolTip().contains(status) || a->toolTip().contains(actorName(Actor(role))),
                 qPrintable(a->toolTip()));
    }
    auto *diagram = pane.findChild<StateDiagramWidget *>(QStringLiteral("stateDiagram"));
    QVERIFY(diagram);
    QCOMPARE(diagram->currentState(), status);
    QCOMPARE(diagram->highlightedTransitions().isEmpty(), enabled.isEmpty());
}

void tst_DetailPane::fields()
{
    DetailPane pane;
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    QCOMPARE(pane.fieldText(QStringLiteral("name")), QStringLiteral("billing-eu"));
    QCOMPARE(pane.fieldText(QStringLiteral("status")), QStringLiteral("RUNNING"));
    // Its badge is read aloud with its title, as words.
    auto *status = pane.findChild<QWidget *>(QStringLiteral("field_status"));
    QVERIFY(status);
    QCOMPARE(status->accessibleName(), QStringLiteral("Status: running"));
    // A value is read with its title: a label's accessible name is all a screen reader says of it.
    QWidget *owner = pane.findChild<QWidget *>(QStringLiteral("field_owner"));
    QVERIFY(owner);
    QCOMPARE(owner->accessibleName(), QStringLiteral("Owner: alice"));
    QCOMPARE(QAccessible::queryAccessibleInterface(owner)->text(QAccessible::Name), QStringLiteral("Owner: alice"));
    QCOMPARE(pane.fieldText(QStringLiteral("owner")), QStringLiteral("alice"));
    QCOMPARE(pane.fieldText(QStringLiteral("callback.url")), QStringLiteral("https://provider.example/hook"));
    QCOMPARE(pane.fieldText(QStringLiteral("awaiting_ack.reason")), QStringLiteral("—"));
    // Fields the description does not know are shown too.
    QCOMPARE(pane.fieldText(QStringLiteral("extra_field")), QStringLiteral("kept"));
    QVERIFY(!pane.fieldText(QStringLiteral("created_at")).isEmpty());
    QVERIFY(!pane.fieldText(QStringLiteral("created_at")).contains(QLatin1Char('T')));
}

void tst_DetailPane::focusedFieldKeepsTheKeyboard()
{
    // The user put the keyboard on a value to select it; the object changes (a newer version
    // comes with the feed) and its rows are made anew: the same row keeps the keyboard.
    DetailPane pane;
    pane.show();
    pane.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&pane));
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    auto *owner = pane.findChild<QWidget *>(QStringLiteral("field_owner"));
    QVERIFY(owner && owner->focusPolicy() != Qt::NoFocus);
    owner->setFocus();
    QTRY_VERIFY(owner->hasFocus());
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("STOPPING"), 4));
    QCOMPARE(pane.fieldText(QStringLiteral("status")), QStringLiteral("STOPPING"));
    QVERIFY(QApplication::focusWidget());
    QCOMPARE(QApplication::focusWidget()->objectName(), QStringLiteral("field_owner"));
}

void tst_DetailPane::longValuesShowAllTheirLines()
{
    DetailPane pane;
    pane.resize(480, 520);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    const QJsonObject longBody{{"type", "instance.status_changed"}, {"instance_id", 60}, {"organization_id", 9},
                               {"previous_status", "RUNNING"}, {"status", "STOPPED"},
                               {"changed_at", "2026-11-30T21:58:21.227Z"}, {"version", 3}};
    const QJsonObject shortBody{{"type", "opsdeck.test"}, {"endpoint_id", 1}, {"instance_id", 239},
                                {"sent_at", "2026-11-30T21:59:23.868Z"}};
    // One delivery after another, as a provider goes down the list: each body is shown whole, in
    // as many lines as it wraps to, once the pane has had a moment to lay itself out.
    const ResourceKind *kind = resourceKindByName(u"deliveries");
    QVERIFY(kind);
    const QList<QJsonObject> shown = {delivery(7, longBody), delivery(23, shortBody), delivery(8, longBody),
                                      delivery(24, shortBody)};
    for (const QJsonObject &d : shown) {
        pane.showObject(kind, d);
        QTest::qWait(300);
        const auto *body = pane.findChild<QLabel *>(QStringLiteral("field_body"));
        QVERIFY(body);
        const int needed = body->heightForWidth(body->width());
        QVERIFY2(needed > body->fontMetrics().height(), "the body wraps");
        QVERIFY2(body->height() >= needed, qPrintable(QStringLiteral("delivery %1: body %2 px high, its lines need %3")
                                                          .arg(d.value(QStringLiteral("id")).toInteger())
                                                          .arg(body->height())
                                                          .arg(needed)));
    }
}

void tst_DetailPane::unbreakableValuesDoNotWidenThePane()
{
    // A title and values with nowhere to wrap ask for no more width than short ones: they are
    // cut at the pane's edge (the window would otherwise outgrow a small screen), and a row whose
    // label and value do not fit side by side puts the value under its label.
    const ResourceKind *kind = resourceKindByName(u"deliveries");
    QVERIFY(kind);
    DetailPane pane;
    pane.resize(300, 600);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    const QJsonObject body{{"type", "x"}};
    pane.showObject(kind, delivery(1, body));
    QCoreApplication::processEvents();
    const int usual = pane.minimumSizeHint().width();
    QJsonObject long_ = delivery(2, body);
    const QString unbreakable = QStringLiteral("instance.status_changed.") + QString(60, QLatin1Char('x'));
    long_.insert(QStringLiteral("event_type"), unbreakable);
    long_.insert(QStringLiteral("webhook_id"), QStringLiteral("msg_") + QString(80, QLatin1Char('f')));
    pane.showObject(kind, long_);
    QCoreApplication::processEvents();
    QCOMPARE(pane.findChild<QLabel *>(QStringLiteral("detailTitle"))->text(), unbreakable);
    QCOMPARE(pane.findChild<QLabel *>(QStringLiteral("detailTitle"))->toolTip(), unbreakable);
    QVERIFY2(pane.minimumSizeHint().width() <= usual,
             qPrintable(QStringLiteral("%1 px wide with long values, %2 with short ones").arg(pane.minimumSizeHint().width()).arg(usual)));
    QVERIFY2(usual < 300, qPrintable(QString::number(usual)));
}

void tst_DetailPane::subtitleNamesOneObject_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QJsonObject>("object");
    QTest::addColumn<QString>("subtitle");

    QTest::newRow("instance") << "instances" << instance(QStringLiteral("RUNNING")) << "Instance #42 · version 3";
    QTest::newRow("delivery") << "deliveries"
                              << QJsonObject{{"id", 7}, {"event_type", "instance.status_changed"}, {"state", "FAILED"}, {"version", 2}}
                              << "Callback delivery #7 · version 2";
    QTest::newRow("audit entry without a version") << "audit" << QJsonObject{{"id", 9}, {"action", "stop"}}
                                                   << "Audit entry #9";
}

void tst_DetailPane::subtitleNamesOneObject()
{
    // One object in the singular: "Instances #42" read as if it were a list.
    QFETCH(QString, kind);
    QFETCH(QJsonObject, object);
    QFETCH(QString, subtitle);
    DetailPane pane;
    pane.showObject(resourceKindByName(kind), object);
    auto *label = pane.findChild<QLabel *>(QStringLiteral("detailSubtitle"));
    QVERIFY(label);
    QCOMPARE(label->text(), subtitle);
}

void tst_DetailPane::aTabTheKindHasNotGivesWayToTheOverview()
{
    DetailPane pane;
    auto *tabs = pane.findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    QVERIFY(tabs);
    const int overview = tabs->indexOf(pane.findChild<QWidget *>(QStringLiteral("detailOverview")));
    const int attempts = tabs->indexOf(pane.attemptLog());
    QVERIFY(overview >= 0 && attempts >= 0);
    const QJsonObject d = delivery(7, QJsonObject{{"status", "RUNNING"}});
    pane.showObject(resourceKindByName(u"deliveries"), d);
    tabs->setCurrentIndex(attempts);
    // Another delivery: its attempts, as before.
    pane.showObject(resourceKindByName(u"deliveries"), delivery(8, QJsonObject{{"status", "STOPPED"}}));
    QCOMPARE(tabs->currentIndex(), attempts);
    // An instance has no attempts: the overview, not the tab that followed Attempts.
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    QCOMPARE(tabs->currentIndex(), overview);
    // A tab both kinds have stays.
    const int history = tabs->indexOf(pane.findChild<QWidget *>(QStringLiteral("detailHistory")));
    QVERIFY(history >= 0);
    tabs->setCurrentIndex(history);
    pane.showObject(resourceKindByName(u"deliveries"), d);
    QCOMPARE(tabs->currentIndex(), history);
    // An audit entry has no history.
    pane.showObject(resourceKindByName(u"audit"), QJsonObject{{"id", 9}, {"action", "stop"}});
    QCOMPARE(tabs->currentIndex(), overview);
}

void tst_DetailPane::theLifecycleIsDrawnWholeInItsTab()
{
    // The pane as the console gives it on a 1400 × 900 screen. A delivery's fields are long: below
    // them the diagram ran off the pane, CANCELLED out of sight.
    DetailPane pane;
    pane.resize(510, 740);
    pane.show();
    QVERIFY(QTest::qWaitForWindowExposed(&pane));
    auto *tabs = pane.findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    auto *lifecycle = pane.findChild<QWidget *>(QStringLiteral("detailLifecycle"));
    auto *diagram = pane.findChild<StateDiagramWidget *>(QStringLiteral("stateDiagram"));
    auto *overview = pane.findChild<QWidget *>(QStringLiteral("detailOverview"));
    QVERIFY(tabs && lifecycle && diagram && overview);
    QVERIFY(!overview->isAncestorOf(diagram));
    const int index = tabs->indexOf(lifecycle);
    QVERIFY(index >= 0);

    const QJsonObject body{{"type", "instance.status_changed"}, {"instance_id", 60}, {"organization_id", 9},
                           {"previous_status", "RUNNING"}, {"status", "STOPPED"},
                           {"changed_at", "2026-11-30T21:58:21.227Z"}, {"version", 3}};
    pane.showObject(resourceKindByName(u"deliveries"), delivery(7, body));
    QVERIFY(tabs->isTabVisible(index));
    tabs->setCurrentIndex(index);
    QTRY_VERIFY(diagram->isVisible());
    // At its own size (not scaled down), and every box of it in sight.
    QTRY_VERIFY(diagram->width() >= diagram->sizeHint().width() && diagram->height() >= diagram->sizeHint().height());
    const QRect seen = diagram->visibleRegion().boundingRect();
    for (const QString &state : Delivery::machine().states()) {
        const QRect box = diagram->diagramToWidget().mapRect(diagram->stateRect(state)).toAlignedRect();
        QVERIFY2(!box.isEmpty(), qPrintable(state));
        QVERIFY2(seen.contains(box), qPrintable(state));
    }
    QCOMPARE(diagram->currentState(), QStringLiteral("PENDING"));

    // A kind without a lifecycle has no such tab: an audit entry.
    pane.showObject(resourceKindByName(u"audit"), QJsonObject{{"id", 9}, {"action", "stop"}});
    QVERIFY(!tabs->isTabVisible(index));
    QCOMPARE(tabs->currentWidget(), overview);
}

void tst_DetailPane::actionLabelsFollowTheState_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("label");
    QTest::addColumn<QString>("toolTip");

    // A failed delivery is sent again with a fresh schedule: not "Retry now", a pending one's label.
    QTest::newRow("PENDING") << "PENDING" << "Retry now" << "Retry now: PENDING → PENDING";
    QTest::newRow("FAILED") << "FAILED" << "Retry" << "Retry: FAILED → PENDING";
    QTest::newRow("CANCELLED") << "CANCELLED" << "Retry" << "Retry: CANCELLED → PENDING";
}

void tst_DetailPane::actionLabelsFollowTheState()
{
    QFETCH(QString, state);
    QFETCH(QString, label);
    QFETCH(QString, toolTip);
    DetailPane pane;
    pane.showObject(resourceKindByName(u"deliveries"),
                    QJsonObject{{"id", 7}, {"event_type", "instance.status_changed"}, {"state", state}, {"version", 2}});
    auto *retry = pane.findChild<QAction *>(QStringLiteral("action_retry"));
    QVERIFY(retry);
    QCOMPARE(retry->text(), label);
    QCOMPARE(retry->toolTip(), toolTip);
}

void tst_DetailPane::bulkRetry_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QJsonValue>("endpoint");
    QTest::addColumn<int>("role");
    QTest::addColumn<bool>("enabled");

    // The dialog chooses states and scope: any delivery can open it, starting from its own, for
    // the roles that may retry.
    QTest::newRow("failed") << "FAILED" << QJsonValue(5) << int(Actor::Operator) << true;
    QTest::newRow("pending") << "PENDING" << QJsonValue(5) << int(Actor::Operator) << true;
    QTest::newRow("delivered") << "DELIVERED" << QJsonValue(5) << int(Actor::Operator) << true;
    QTest::newRow("no endpoint") << "FAILED" << QJsonValue(QJsonValue::Null) << int(Actor::Operator) << true;
    QTest::newRow("provider") << "CANCELLED" << QJsonValue(5) << int(Actor::Provider) << true;
    QTest::newRow("owner") << "FAILED" << QJsonValue(5) << int(Actor::Owner) << false;
}

void tst_DetailPane::bulkRetry()
{
    QFETCH(QString, state);
    QFETCH(QJsonValue, endpoint);
    QFETCH(int, role);
    QFETCH(bool, enabled);
    DetailPane pane;
    pane.setRole(Actor(role));
    pane.showObject(resourceKindByName(u"deliveries"),
                    QJsonObject{{"id", 7}, {"event_type", "instance.status_changed"}, {"state", state},
                                {"endpoint_id", endpoint}, {"version", 2}});
    auto *bulk = pane.findChild<QAction *>(QStringLiteral("action_bulk-retry"));
    QVERIFY(bulk);
    QCOMPARE(bulk->text(), QStringLiteral("Bulk retry…"));
    QCOMPARE(bulk->isEnabled(), enabled);
    // Disabled, it says why; enabled, what it does.
    QVERIFY(!bulk->toolTip().isEmpty());
}

void tst_DetailPane::aCountdownIsReadWithItsTitle()
{
    // The next attempt counts down in its text, and in what a screen reader says of it.
    QJsonObject d = delivery(7, {{"status", "RUNNING"}});
    d.insert(QStringLiteral("next_attempt_at"),
             QDateTime::currentDateTimeUtc().addSecs(185).toString(Qt::ISODateWithMs));
    const ResourceKind *kind = resourceKindByName(u"deliveries");
    QVERIFY(kind);
    const auto spec = std::find_if(kind->fields.cbegin(), kind->fields.cend(),
                                   [](const FieldSpec &f) { return f.key == QLatin1String("next_attempt_at"); });
    QVERIFY(spec != kind->fields.cend());
    DetailPane pane;
    pane.showObject(kind, d);
    const QString text = pane.fieldText(QStringLiteral("next_attempt_at"));
    QVERIFY2(text.contains(QStringLiteral("(in 3 min")), qPrintable(text));
    QWidget *field = pane.findChild<QWidget *>(QStringLiteral("field_next_attempt_at"));
    QVERIFY(field);
    QCOMPARE(field->accessibleName(), spec->title + QStringLiteral(": ") + text);

    // On the field, the reader is not told the new figure every second; off it, the name catches up.
    pane.show();
    pane.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&pane));
    field->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(field->hasFocus());
    const QString readWith = field->accessibleName();
    QTRY_VERIFY_WITH_TIMEOUT(pane.fieldText(QStringLiteral("next_attempt_at")) != text, 5000);
    QCOMPARE(field->accessibleName(), readWith);
    field->clearFocus();
    const QString ticked = pane.fieldText(QStringLiteral("next_attempt_at"));
    QTRY_VERIFY_WITH_TIMEOUT(pane.fieldText(QStringLiteral("next_attempt_at")) != ticked, 5000);
    QCOMPARE(field->accessibleName(), spec->title + QStringLiteral(": ") + pane.fieldText(QStringLiteral("next_attempt_at")));
}

void tst_DetailPane::aCountdownThatEndedOnTheFocusCatchesUp()
{
    // The moment comes while the reader is on the field: its name catches up once they leave it,
    // though nothing counts down any more.
    QJsonObject d = delivery(8, {{"status", "RUNNING"}});
    d.insert(QStringLiteral("next_attempt_at"),
             QDateTime::currentDateTimeUtc().addMSecs(2500).toString(Qt::ISODateWithMs));
    DetailPane pane;
    pane.showObject(resourceKindByName(u"deliveries"), d);
    QWidget *field = pane.findChild<QWidget *>(QStringLiteral("field_next_attempt_at"));
    QVERIFY(field);
    pane.show();
    pane.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&pane));
    field->setFocus(Qt::OtherFocusReason);
    QTRY_VERIFY(field->hasFocus());
    if (!field->accessibleName().contains(QLatin1Char('(')))
        QSKIP("the host stalled past the moment before the field had the focus");
    QTRY_VERIFY_WITH_TIMEOUT(!pane.fieldText(QStringLiteral("next_attempt_at")).contains(QLatin1Char('(')), 5000);
    QVERIFY2(field->accessibleName().contains(QLatin1Char('(')), qPrintable(field->accessibleName()));
    field->clearFocus();
    QTRY_VERIFY_WITH_TIMEOUT(!field->accessibleName().contains(QLatin1Char('(')), 5000);
    QVERIFY(field->accessibleName().endsWith(pane.fieldText(QStringLiteral("next_attempt_at"))));
}

void tst_DetailPane::countdownWording_data()
{
    QTest::addColumn<qint64>("ms");
    QTest::addColumn<QString>("text");

    QTest::newRow("passed") << qint64(-5000) << "now";
    QTest::newRow("this moment") << qint64(0) << "now";
    QTest::newRow("part of a second rounds up") << qint64(1) << "in 1 s";
    QTest::newRow("seconds") << qint64(45000) << "in 45 s";
    QTest::newRow("minutes") << qint64(185000) << "in 3 min 5 s";
    QTest::newRow("hours") << qint64((2 * 3600 + 5 * 60) * 1000LL) << "in 2 h 5 min";
    QTest::newRow("days") << qint64((3 * 86400 + 4 * 3600 + 59) * 1000LL) << "in 3 d 4 h";
}

void tst_DetailPane::countdownWording()
{
    QFETCH(qint64, ms);
    QFETCH(QString, text);
    QCOMPARE(countdownText(ms), text);
}

void tst_DetailPane::readOnlyDisablesEverything()
{
    DetailPane pane;
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    auto *stop = pane.findChild<QAction *>(QStringLiteral("action_stop"));
    QVERIFY(stop && stop->isEnabled());
    pane.setReadOnly(true);
    stop = pane.findChild<QAction *>(QStringLiteral("action_stop"));
    QVERIFY(stop);
    QVERIFY(!stop->isEnabled());
    QVERIFY2(stop->toolTip().contains(QStringLiteral("Offline")), qPrintable(stop->toolTip()));
    // Nor does the diagram offer what the buttons do not.
    auto *diagram = pane.findChild<StateDiagramWidget *>();
    auto *title = pane.findChild<QLabel *>(QStringLiteral("diagramTitle"));
    QVERIFY(diagram && title);
    QVERIFY(diagram->highlightedTransitions().isEmpty());
    QVERIFY2(title->text().startsWith(QStringLiteral("Offline")), qPrintable(title->text()));
    pane.setReadOnly(false);
    QVERIFY(pane.findChild<QAction *>(QStringLiteral("action_stop"))->isEnabled());
    QCOMPARE(diagram->highlightedTransitions().size(), 1);
    QVERIFY2(title->text().contains(QStringLiteral("what the operator role may do now")), qPrintable(title->text()));
}

void tst_DetailPane::emptyHistorySaysWhoseItIs()
{
    // A provider sees no audit entries of an organization: "no changes" would not be true.
    DetailPane pane;
    auto *status = pane.findChild<QLabel *>(QStringLiteral("historyStatus"));
    QVERIFY(status);
    const QJsonObject org{{"id", 3}, {"name", "Acme"}, {"status", "AVAILABLE"}, {"version", 1}};
    pane.showObject(resourceKindByName(u"organizations"), org);
    pane.setHistory(3, {});
    QCOMPARE(status->text(), QStringLiteral("No recorded changes yet."));
    pane.setRole(Actor::Provider);
    pane.showObject(resourceKindByName(u"organizations"), org);
    pane.setHistory(3, {});
    QCOMPARE(status->text(), QStringLiteral("No changes recorded that the provider role may see."));
    // A callback's attempts are elsewhere, and the empty history says where.
    const QJsonObject delivery{{"id", 43}, {"state", "PENDING"}, {"attempts", 2}, {"version", 3}};
    pane.showObject(resourceKindByName(u"deliveries"), delivery);
    pane.setHistory(43, {});
    QCOMPARE(status->text(),
             QStringLiteral("No changes recorded that the provider role may see. Its attempts are on the Attempts tab."));
}

void tst_DetailPane::historyAndUpdates()
{
    DetailPane pane;
    QSignalSpy requested(&pane, &DetailPane::historyRequested);
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.at(0).at(0).toString(), QStringLiteral("instance"));
    QCOMPARE(requested.at(0).at(1).toLongLong(), 42);

    auto *history = pane.findChild<QTreeWidget *>(QStringLiteral("historyList"));
    QVERIFY(history);
    const QJsonObject entry{{"id", 9},
                            {"at", "2026-11-29T11:00:00.000Z"},
                            {"actor", QJsonObject{{"role", "operator"}, {"subject", "console"}}},
                            {"action", "stop"},
                            {"kind", "instance"},
                            {"object_id", 42},
                            {"from", "RUNNING"},
                            {"to", "STOPPED"},
                            {"reason", "maintenance"}};
    pane.setHistory(41, {entry}); // another object's late answer is ignored
    QCOMPARE(history->topLevelItemCount(), 0);
    pane.setHistory(42, {entry});
    QCOMPARE(history->topLevelItemCount(), 1);
    const QString text = history->topLevelItem(0)->text(0);
    QVERIFY2(text.contains(QStringLiteral("RUNNING → STOPPED")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("maintenance")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("console (operator)")), qPrintable(text));

    // A newer version of the same object updates in place and asks for the history again.
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("STOPPED"), 4));
    QCOMPARE(pane.fieldText(QStringLiteral("status")), QStringLiteral("STOPPED"));
    QCOMPARE(requested.count(), 2);
    QCOMPARE(history->topLevelItemCount(), 1);
    QVERIFY(pane.findChild<QAction *>(QStringLiteral("action_start"))->isEnabled());

    // A provider acts under its id, and is named.
    pane.setReferenceLookup([](const QString &kind, qint64 id) {
        return kind == QLatin1String("providers") && id == 3 ? QStringLiteral("Medisys") : QString();
    });
    QJsonObject byProvider = entry;
    byProvider.insert(QStringLiteral("actor"), QJsonObject{{"role", "provider"}, {"subject", "3"}});
    pane.setHistory(42, {byProvider});
    QVERIFY2(history->topLevelItem(0)->text(0).contains(QStringLiteral("Medisys (provider)")),
             qPrintable(history->topLevelItem(0)->text(0)));
    // An audit entry shown in the pane names its actor and its object the same way.
    pane.showObject(resourceKindByName(u"audit"), byProvider);
    QCOMPARE(pane.fieldText(QStringLiteral("actor.subject")), QStringLiteral("Medisys (#3)"));
    QCOMPARE(pane.fieldText(QStringLiteral("object_id")), QStringLiteral("42"));
}

void tst_DetailPane::actionTriggers()
{
    DetailPane pane;
    pane.showObject(resourceKindByName(u"instances"), instance(QStringLiteral("RUNNING")));
    QSignalSpy spy(&pane, &DetailPane::actionRequested);
    pane.findChild<QAction *>(QStringLiteral("action_stop"))->trigger();
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.at(0).at(0).toString(), QStringLiteral("instances"));
    QCOMPARE(spy.at(0).at(1).toLongLong(), 42);
    QCOMPARE(spy.at(0).at(2).toString(), QStringLiteral("stop"));
}

QTEST_MAIN(tst_DetailPane)
#include "tst_detailpane.moc"
