// The console's embedded server host with demo data: its callback URL that refuses connections
// keeps refusing them while the demo runs. Its port is held (bound, never listening), so the
// system cannot give it to another program, which would then receive the demo's callbacks.
#include "serverhost.h"

#include "testsupport.h"

#include <QtTest>

#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_ServerHost final : public QObject
{
    Q_OBJECT

private slots:
    void deadCallbackPortStaysRefusingAndTaken();
};

void tst_ServerHost::deadCallbackPortStaysRefusingAndTaken()
{
    ServerOptions options;
    options.host = QStringLiteral("127.0.0.1");
    options.port = 0;
    options.databaseUrl = QStringLiteral("sqlite://") + scratchDir() + QStringLiteral("/demo.sqlite");
    options.allowPrivateCallbacks = true;
    options.deliveryWorker = false; // the host's own listeners are under test, not deliveries
    ServerHost host;
    QSignalSpy started(&host, &ServerHost::started);
    QSignalSpy failed(&host, &ServerHost::failed);
    host.start(options, true);
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    QCOMPARE(started.size(), 1);

    const QUrl dead = host.deadCallbackUrl();
    QVERIFY(dead.isValid());
    QCOMPARE(dead.host(), QStringLiteral("127.0.0.1"));
    const quint16 port = quint16(dead.port());
    QVERIFY(port > 0);

    // Nobody else can listen there while the demo runs...
    QTcpServer squatter;
    QVERIFY(!squatter.listen(QHostAddress::LocalHost, port));
    // ... and a connection there is refused, as the demo means it to be.
    QTcpSocket client;
    QSignalSpy errors(&client, &QAbstractSocket::errorOccurred);
    client.connectToHost(QHostAddress::LocalHost, port);
    QTRY_COMPARE(errors.size(), 1);
    QCOMPARE(errors.first().first().value<QAbstractSocket::SocketError>(), QAbstractSocket::ConnectionRefusedError);

    // Stopped, the port is given back.
    host.stop();
    QVERIFY(host.deadCallbackUrl().isEmpty());
    QVERIFY(squatter.listen(QHostAddress::LocalHost, port));
}

QTEST_GUILESS_MAIN(tst_ServerHost)
#include "tst_serverhost.moc"
