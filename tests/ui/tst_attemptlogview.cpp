// A delivery's attempts as the attempt log view shows them: one row each, the newest chosen, its
// request and response (side by side when wide), and what is said when there is no answer or no attempt.
#include "ui/attemptlogview.h"
#include "ui/detailpane.h"

#include "core/resourcekind.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <QTreeWidget>

using namespace OpsDeck;

namespace {

QJsonObject attempt(int number, const QJsonValue &status, const QString &errorClass, const QString &error)
{
    return QJsonObject{{"attempt", number},
                       {"at", "2026-11-29T10:00:0" + QString::number(number) + ".000Z"},
                       {"request_headers", QJsonArray{QJsonArray{"webhook-id", "msg_1"},
                                                      QJsonArray{"webhook-signature", "v1,[redacted]"}}},
                       {"request_body", R"({"type":"instance.status_changed","instance_id":4})"},
                       {"response_status", status},
                       {"response_headers", status.isNull() ? QJsonValue() : QJsonValue(QJsonArray{QJsonArray{"Retry-After", "30"}})},
                       {"response_body", status.isNull() ? QJsonValue() : QJsonValue("upstream down")},
                       {"latency_ms", 120 + number},
                       {"error_class", errorClass.isEmpty() ? QJsonValue() : QJsonValue(errorClass)},
                       {"error", error.isEmpty() ? QJsonValue() : QJsonValue(error)}};
}

} // namespace

class tst_AttemptLogView : public QObject
{
    Q_OBJECT

private slots:
    void sides_data();
    void sides();
    void choosingAnotherAttempt();
    void underAMillisecond();
    void sidesFollowTheWidth();
    void interruptedAttemptSaysNobodyKnows();
    void choiceKeptWhenTheAttemptsComeAgain();
    void cutResponseSaysSo();
    void paneSaysWhyThereIsNone_data();
    void paneSaysWhyThereIsNone();
};

void tst_AttemptLogView::sides_data()
{
    QTest::addColumn<QJsonObject>("newest");
    QTest::addColumn<QString>("statusColumn");
    QTest::addColumn<QString>("response");

    QTest::newRow("HTTP error") << attempt(2, 503, "http", "HTTP 503 Service Unavailable") << "503"
                                << "HTTP 503 after 122 ms\nRetry-After: 30\n\nupstream down";
    QTest::newRow("no answer") << attempt(2, QJsonValue::Null, "connect", "Connection refused") << "no answer"
                               << "No response after 122 ms\nconnect: Connection refused";
    QTest::newRow("answered, then timed out") << attempt(2, 200, "timeout", "body not read in time") << "200"
                                              << "HTTP 200 after 122 ms\nRetry-After: 30\n\nupstream down\n\n"
                                                 "timeout: body not read in time";
}

void tst_AttemptLogView::sides()
{
    QFETCH(QJsonObject, newest);
    QFETCH(QString, statusColumn);
    QFETCH(QString, response);

    AttemptLogView view;
    view.setAttempts({attempt(1, QJsonValue::Null, "dns", "host not found"), newest});
    QCOMPARE(view.attemptCount(), 2);
    QVERIFY(view.message().isEmpty());
    // The newest is chosen: its request and response are shown.
    auto *list = view.findChild<QTreeWidget *>(QStringLiteral("attemptList"));
    QVERIFY(list);
    QCOMPARE(list->indexOfTopLevelItem(list->currentItem()), 1);
    QCOMPARE(list->currentItem()->text(2), statusColumn);
    QCOMPARE(list->currentItem()->text(3), QStringLiteral("122 ms"));
    QVERIFY2(view.requestText().startsWith(QStringLiteral("webhook-id: msg_1\nwebhook-signature: v1,[redacted]\n\n{")),
             qPrintable(view.requestText()));
    // A JSON body is indented to be read.
    QVERIFY2(view.requestText().contains(QStringLiteral("\n    \"instance_id\": 4")), qPrintable(view.requestText()));
    QCOMPARE(view.responseText(), response);
}

void tst_AttemptLogView::underAMillisecond()
{
    // A refused connection on this host is logged at 0 ms: "0 ms" and "No response after 0 ms"
    // read as a measurement of nothing.
    QJsonObject refused = attempt(1, QJsonValue::Null, "connect", "Connection refused");
    refused.insert("latency_ms", 0);
    QJsonObject quick = attempt(2, 204, "", "");
    quick.insert("latency_ms", 0);
    AttemptLogView view;
    view.setAttempts({refused, quick});
    auto *list = view.findChild<QTreeWidget *>(QStringLiteral("attemptList"));
    QVERIFY(list);
    QCOMPARE(list->topLevelItem(0)->text(3), QStringLiteral("< 1 ms"));
    QCOMPARE(list->topLevelItem(1)->text(3), QStringLiteral("< 1 ms"));
    QVERIFY2(view.responseText().startsWith(QStringLiteral("HTTP 204 after < 1 ms\n")), qPrintable(view.responseText()));
    list->setCurrentItem(list->topLevelItem(0));
    QCOMPARE(view.responseText(), QStringLiteral("No response\nconnect: Connection refused"));
}

void tst_AttemptLogView::sidesFollowTheWidth()
{
    // In the detail pane (a third of the window) request and response are one above the other,
    // each as wide as the pane; given room they are side by side.
    AttemptLogView view;
    view.setAttempts({attempt(1, 503, "http", "HTTP 503")});
    view.resize(500, 600);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QCOMPARE(view.sidesOrientation(), Qt::Vertical);
    auto *request = view.findChild<QWidget *>(QStringLiteral("attemptRequest"));
    QVERIFY(request);
    QVERIFY2(request->width() > 400, qPrintable(QString::number(request->width())));
    view.resize(1000, 600);
    QTRY_COMPARE(view.sidesOrientation(), Qt::Horizontal);
    view.resize(500, 600);
    QTRY_COMPARE(view.sidesOrientation(), Qt::Vertical);
}

void tst_AttemptLogView::choosingAnotherAttempt()
{
    AttemptLogView view;
    view.setAttempts({attempt(1, QJsonValue::Null, "dns", "host not found"), attempt(2, 500, "http", "HTTP 500")});
    auto *list = view.findChild<QTreeWidget *>(QStringLiteral("attemptList"));
    list->setCurrentItem(list->topLevelItem(0));
    QCOMPARE(view.responseText(), QStringLiteral("No response after 121 ms\ndns: host not found"));
    QCOMPARE(list->topLevelItem(0)->text(4), QStringLiteral("dns: host not found"));
    view.clear();
    QCOMPARE(view.attemptCount(), 0);
    QVERIFY(view.requestText().isEmpty());
    QVERIFY(view.responseText().isEmpty());
}

void tst_AttemptLogView::interruptedAttemptSaysNobodyKnows()
{
    // As the server logs it: no headers, no response, no latency.
    QJsonObject cut = attempt(1, QJsonValue::Null, "interrupted", "worker w-1 held this delivery until its lease expired");
    cut.insert("request_headers", QJsonArray());
    cut.insert("latency_ms", QJsonValue::Null);
    AttemptLogView view;
    view.setAttempts({cut, attempt(2, 200, QString(), QString())});
    auto *list = view.findChild<QTreeWidget *>(QStringLiteral("attemptList"));
    QVERIFY(list);
    QTreeWidgetItem *first = list->topLevelItem(0);
    QCOMPARE(first->text(2), QStringLiteral("unknown"));
    QCOMPARE(first->text(3), QStringLiteral("—"));
    list->setCurrentItem(first);
    QVERIFY2(view.requestText().startsWith(QStringLiteral("(headers not recorded)\n\n{")), qPrintable(view.requestText()));
    QCOMPARE(view.responseText(), QStringLiteral("Outcome unknown: the request may have reached the endpoint\n"
                                                 "interrupted: worker w-1 held this delivery until its lease expired"));
    QCOMPARE(list->topLevelItem(1)->text(2), QStringLiteral("200"));
}

void tst_AttemptLogView::choiceKeptWhenTheAttemptsComeAgain()
{
    // The delivery changed and its attempts came again: the attempt the user chose stays
    // chosen; while the newest was shown, a newer one that came is.
    AttemptLogView view;
    auto *list = view.findChild<QTreeWidget *>(QStringLiteral("attemptList"));
    const QJsonObject first = attempt(1, QJsonValue::Null, "dns", "host not found");
    const QJsonObject second = attempt(2, 500, "http", "HTTP 500");
    const QJsonObject third = attempt(3, 503, "http", "HTTP 503");
    view.setAttempts({first, second});
    QCOMPARE(list->currentItem()->text(0), QStringLiteral("2"));
    view.setAttempts({first, second, third});
    QCOMPARE(list->currentItem()->text(0), QStringLiteral("3"));
    list->setCurrentItem(list->topLevelItem(0));
    view.setAttempts({first, second, third, attempt(4, 500, "http", "HTTP 500")});
    QCOMPARE(list->currentItem()->text(0), QStringLiteral("1"));
    QCOMPARE(view.responseText(), QStringLiteral("No response after 121 ms\ndns: host not found"));
    // Another delivery's attempts (cleared in between, as the pane does) start at the newest.
    view.clear();
    view.setAttempts({first, second});
    QCOMPARE(list->currentItem()->text(0), QStringLiteral("2"));
}

void tst_AttemptLogView::cutResponseSaysSo()
{
    QJsonObject long4k = attempt(1, 500, "http", "HTTP 500");
    long4k.insert("response_body", QString(4096, QLatin1Char('x')));
    AttemptLogView view;
    view.setAttempts({long4k});
    QVERIFY2(view.responseText().endsWith(QStringLiteral("(only the first 4 KiB of the response are kept)")),
             qPrintable(view.responseText().right(80)));
    view.setAttempts({attempt(1, 500, "http", "HTTP 500")});
    QVERIFY(!view.responseText().contains(QStringLiteral("4 KiB")));
}

void tst_AttemptLogView::paneSaysWhyThereIsNone_data()
{
    QTest::addColumn<QJsonValue>("nextAttempt");
    QTest::addColumn<QString>("message");

    QTest::newRow("first attempt due") << QJsonValue("2026-11-29T10:00:00.000Z") << "No attempt yet; the first is due ";
    QTest::newRow("never sent") << QJsonValue(QJsonValue::Null) << "No attempt was made.";
}

void tst_AttemptLogView::paneSaysWhyThereIsNone()
{
    QFETCH(QJsonValue, nextAttempt);
    QFETCH(QString, message);
    DetailPane pane;
    pane.showObject(resourceKindByName(u"deliveries"),
                    QJsonObject{{"id", 7}, {"state", "PENDING"}, {"next_attempt_at", nextAttempt}, {"version", 1}});
    QCOMPARE(pane.attemptLog()->message(), QStringLiteral("Loading the attempts…"));
    pane.setAttempts(7, {});
    QVERIFY2(pane.attemptLog()->message().startsWith(message), qPrintable(pane.attemptLog()->message()));
    // Answers for another delivery than the one shown are dropped; a failure to load is said.
    pane.setAttempts(8, {attempt(1, 500, "http", "HTTP 500")});
    QCOMPARE(pane.attemptLog()->attemptCount(), 0);
    pane.setAttemptsError(7, QStringLiteral("HTTP 503"));
    QCOMPARE(pane.attemptLog()->message(), QStringLiteral("The attempts could not be loaded: HTTP 503"));
}

QTEST_MAIN(tst_AttemptLogView)
#include "tst_attemptlogview.moc"
