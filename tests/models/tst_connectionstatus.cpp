// Tests for the connection state object the status bar binds to.
#include "models/connectionstatus.h"

#include <QLocale>
#include <QSignalSpy>
#include <QTest>

using namespace OpsDeck;

using State = ConnectionStatus::State;
using Transport = ConnectionStatus::Transport;

class tst_ConnectionStatus final : public QObject
{
    Q_OBJECT

private slots:
    void startsOffline();
    void liveRecordsContact();
    void failureKeepsLastContact();
    void noRepeatedSignals();
    void countsDownToTheNextAttempt_data();
    void countsDownToTheNextAttempt();
    void wording_data();
    void wording();
    void cachedDataGoesWhenLive();
};

void tst_ConnectionStatus::startsOffline()
{
    ConnectionStatus status;
    QCOMPARE(status.state(), State::Offline);
    QVERIFY(!status.lastSync().isValid());
    QCOMPARE(status.text(), QStringLiteral("Offline"));
    QCOMPARE(status.nextAttemptMs(), -1);
}

void tst_ConnectionStatus::liveRecordsContact()
{
    ConnectionStatus status;
    QSignalSpy changed(&status, &ConnectionStatus::changed);
    status.setState(State::Connecting);
    QCOMPARE(status.text(), QStringLiteral("Connecting…"));
    const QDateTime before = QDateTime::currentDateTimeUtc();
    status.setState(State::Live, Transport::WebSocket);
    QCOMPARE(changed.count(), 2);
    QVERIFY(status.isLive());
    QCOMPARE(status.transport(), Transport::WebSocket);
    QVERIFY(status.lastSync() >= before);
    QCOMPARE(status.text(), QStringLiteral("Live"));
}

void tst_ConnectionStatus::failureKeepsLastContact()
{
    ConnectionStatus status;
    status.setState(State::Live, Transport::LongPoll);
    // The feed stayed quiet for a while: the rows were still current when the connection broke.
    const QDateTime wentLive = status.lastSync();
    QTest::qSleep(20);
    const QDateTime beforeFailure = QDateTime::currentDateTimeUtc();
    status.setFailure(State::Reconnecting, QStringLiteral("Connection refused"), 400);
    QCOMPARE(status.state(), State::Reconnecting);
    QCOMPARE(status.lastError(), QStringLiteral("Connection refused"));
    QVERIFY(status.nextAttemptMs() > 0 && status.nextAttemptMs() <= 400);
    QVERIFY(status.lastSync() > wentLive);
    QVERIFY(status.lastSync() >= beforeFailure);
    const QDateTime lastContact = status.lastSync();
    QVERIFY(status.text().startsWith(QStringLiteral("Reconnecting in 1 s… (data as of ")));
    status.setFailure(State::Offline, QStringLiteral("Connection refused"), 800);
    QCOMPARE(status.lastSync(), lastContact); // failing again is no contact
    QVERIFY(status.text().startsWith(QStringLiteral("Offline (data as of ")));
    QVERIFY(status.text().endsWith(QStringLiteral(", retrying in 1 s")));
    status.setState(State::Live, Transport::WebSocket);
    QVERIFY(status.lastError().isEmpty());
    QCOMPARE(status.nextAttemptMs(), -1);
}

void tst_ConnectionStatus::noRepeatedSignals()
{
    ConnectionStatus status;
    status.setState(State::Live, Transport::LongPoll);
    QSignalSpy changed(&status, &ConnectionStatus::changed);
    status.setState(State::Live, Transport::LongPoll); // every long-poll answer says so again
    status.touch();
    QCOMPARE(changed.count(), 0);
    status.setState(State::Live, Transport::WebSocket);
    QCOMPARE(changed.count(), 1);
}

void tst_ConnectionStatus::countsDownToTheNextAttempt_data()
{
    QTest::addColumn<int>("state");
    QTest::addColumn<QString>("waiting");
    QTest::addColumn<QString>("underWay");

    QTest::newRow("reconnecting") << int(State::Reconnecting) << QStringLiteral("Reconnecting in %1 s…")
                                  << QStringLiteral("Reconnecting…");
    QTest::newRow("offline") << int(State::Offline) << QStringLiteral("Offline, retrying in %1 s")
                             << QStringLiteral("Offline, retrying…");
}

void tst_ConnectionStatus::countsDownToTheNextAttempt()
{
    QFETCH(int, state);
    QFETCH(QString, waiting);
    QFETCH(QString, underWay);
    ConnectionStatus status;
    QSignalSpy changed(&status, &ConnectionStatus::changed);
    QSignalSpy retries(&status, &ConnectionStatus::retryScheduled);
    status.setFailure(State(state), QStringLiteral("Connection refused"), 2500);
    QCOMPARE(retries.count(), 1);
    QCOMPARE(retries.first().at(0).toInt(), 2500);
    QCOMPARE(status.text(), waiting.arg(3));
    // The text follows the time left, and says so when it changes, until the attempt is under way.
    // (Read as it changes: a host that stalls for a second may skip a figure, never go back.)
    QStringList texts;
    QList<qint64> left;
    const QMetaObject::Connection watch = connect(&status, &ConnectionStatus::changed, this, [&] {
        texts.append(status.text());
        left.append(status.nextAttemptMs());
    });
    QTRY_VERIFY2(!texts.isEmpty() && texts.last() == underWay, qPrintable(texts.join(QLatin1String(" | "))));
    disconnect(watch);
    QCOMPARE(status.text(), underWay);
    QCOMPARE(status.nextAttemptMs(), 0);
    QVERIFY2(texts.size() >= 2, qPrintable(texts.join(QLatin1String(" | ")))); // 2 s or 1 s left was said
    for (qsizetype i = 0; i + 1 < texts.size(); ++i) {
        QVERIFY2(texts.at(i) == waiting.arg(2) || texts.at(i) == waiting.arg(1), qPrintable(texts.join(QLatin1String(" | "))));
        QVERIFY(left.at(i) <= (texts.at(i) == waiting.arg(2) ? 2000 : 1000));
        QVERIFY(left.at(i + 1) < left.at(i));
    }
    QVERIFY(texts.first() != texts.last());
    QCOMPARE(changed.count(), texts.size() + 1); // and the failure itself
    status.setState(State::Live, Transport::WebSocket);
    QCOMPARE(status.nextAttemptMs(), -1);
    QCOMPARE(status.text(), QStringLiteral("Live"));
}

namespace {
// Where the rows shown come from, which the wording names.
enum class Rows { None, Session, Cache };
} // namespace

void tst_ConnectionStatus::wording_data()
{
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("state");
    QTest::addColumn<int>("nextAttemptMs"); // -1: none scheduled
    QTest::addColumn<QString>("expected");  // %1 is the time of the rows shown

    const auto row = [](const char *name, Rows rows, State state, int nextAttemptMs, const char *expected) {
        QTest::newRow(name) << int(rows) << int(state) << nextAttemptMs << QString::fromUtf8(expected);
    };
    // Before any contact and without a cache there is nothing to date.
    row("no rows: offline", Rows::None, State::Offline, -1, "Offline");
    row("no rows: offline, retrying in 3 s", Rows::None, State::Offline, 2500, "Offline, retrying in 3 s");
    row("no rows: offline, retrying now", Rows::None, State::Offline, 0, "Offline, retrying…");
    row("no rows: reconnecting in 3 s", Rows::None, State::Reconnecting, 2500, "Reconnecting in 3 s…");
    row("no rows: reconnecting now", Rows::None, State::Reconnecting, 0, "Reconnecting…");
    row("no rows: connecting", Rows::None, State::Connecting, -1, "Connecting…");
    // After a live session drops, the rows are what it last saw.
    row("session: offline", Rows::Session, State::Offline, -1, "Offline (data as of %1)");
    row("session: offline, retrying in 3 s", Rows::Session, State::Offline, 2500,
        "Offline (data as of %1), retrying in 3 s");
    row("session: offline, retrying now", Rows::Session, State::Offline, 0, "Offline (data as of %1), retrying…");
    row("session: reconnecting in 3 s", Rows::Session, State::Reconnecting, 2500,
        "Reconnecting in 3 s… (data as of %1)");
    row("session: reconnecting now", Rows::Session, State::Reconnecting, 0, "Reconnecting… (data as of %1)");
    row("session: connecting", Rows::Session, State::Connecting, -1, "Connecting… (data as of %1)");
    row("session: live", Rows::Session, State::Live, -1, "Live");
    // Before any contact, the rows are the disk cache of an earlier session.
    row("cache: offline", Rows::Cache, State::Offline, -1, "Offline (cached data as of %1)");
    row("cache: offline, retrying in 3 s", Rows::Cache, State::Offline, 2500,
        "Offline (cached data as of %1), retrying in 3 s");
    row("cache: offline, retrying now", Rows::Cache, State::Offline, 0, "Offline (cached data as of %1), retrying…");
    row("cache: reconnecting in 3 s", Rows::Cache, State::Reconnecting, 2500,
        "Reconnecting in 3 s… (cached data as of %1)");
    row("cache: reconnecting now", Rows::Cache, State::Reconnecting, 0, "Reconnecting… (cached data as of %1)");
    row("cache: connecting", Rows::Cache, State::Connecting, -1, "Connecting… (cached data as of %1)");
}

void tst_ConnectionStatus::wording()
{
    QFETCH(int, rows);
    QFETCH(int, state);
    QFETCH(int, nextAttemptMs);
    QFETCH(QString, expected);
    ConnectionStatus status;
    if (Rows(rows) == Rows::Cache) {
        QSignalSpy changed(&status, &ConnectionStatus::changed);
        status.setCachedAsOf(QDateTime(QDate::currentDate(), QTime(10, 2, 48)));
        QCOMPARE(changed.count(), 1);
    } else if (Rows(rows) == Rows::Session) {
        status.setState(State::Live, Transport::WebSocket);
    }
    if (nextAttemptMs >= 0)
        status.setFailure(State(state), QStringLiteral("Connection refused"), nextAttemptMs);
    else
        status.setState(State(state));
    if (expected.contains(QLatin1String("%1"))) {
        const QDateTime asOf = Rows(rows) == Rows::Cache ? status.cachedAsOf() : status.lastSync().toLocalTime();
        QVERIFY(asOf.isValid());
        expected = expected.arg(QLocale().toString(asOf.time(), QLocale::LongFormat));
    }
    QCOMPARE(status.text(), expected);
}

void tst_ConnectionStatus::cachedDataGoesWhenLive()
{
    ConnectionStatus status;
    // A cache written on another day says which day.
    const QDateTime lastWeek = QDateTime::currentDateTime().addDays(-7);
    status.setCachedAsOf(lastWeek);
    QVERIFY2(status.text().contains(QLocale().toString(lastWeek.date(), QLocale::ShortFormat)),
             qPrintable(status.text()));
    status.setState(State::Live, Transport::WebSocket);
    QVERIFY(!status.cachedAsOf().isValid());
    // Once live, the rows date from the last contact, not from the cache.
    status.setFailure(State::Offline, QStringLiteral("Connection refused"), -1);
    QVERIFY2(status.text().startsWith(QStringLiteral("Offline (data as of ")), qPrintable(status.text()));
    QVERIFY(!status.text().contains(QStringLiteral("cached")));
}

QTEST_GUILESS_MAIN(tst_ConnectionStatus)
#include "tst_connectionstatus.moc"
