// Tests for the connection state object the status bar binds to.
#include "models/connectionstatus.h"

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
    QCOMPARE(status.nextAttemptMs(), 400);
    QVERIFY(status.lastSync() > wentLive);
    QVERIFY(status.lastSync() >= beforeFailure);
    const QDateTime lastContact = status.lastSync();
    QVERIFY(status.text().startsWith(QStringLiteral("Reconnecting… (offline as of ")));
    status.setFailure(State::Offline, QStringLiteral("Connection refused"), 800);
    QCOMPARE(status.lastSync(), lastContact); // failing again is no contact
    QVERIFY(status.text().startsWith(QStringLiteral("Offline (as of ")));
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

QTEST_GUILESS_MAIN(tst_ConnectionStatus)
#include "tst_connectionstatus.moc"
