// The callback sender against loopback receivers of its own: a refused connection, bodies that
// are too long, stall or never end, TLS peer names and TLS spoken to a plain HTTP server, and
// which attempts in flight cannot have reached their receiver.
#include "server/delivery/callbacksender.h"

#include "callbackfixture.h"
#include "testsupport.h"

#include <QtTest>

#include <QProcess>
#include <QSslKey>
#include <QSslServer>
#include <QSslSocket>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>

#include <functional>

using namespace OpsDeck;
using namespace OpsDeck::Test;
using namespace std::chrono_literals;

namespace {

const QByteArray SecretA = QByteArrayLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");

// Serves loopback clients: whenever bytes containing `marker` arrive (after they are read),
// `answer` writes to that socket. An empty marker answers any bytes (a TLS hello is not HTTP).
void answerRequests(QTcpServer *server, const QByteArray &marker, const std::function<void(QTcpSocket *)> &answer)
{
    QObject::connect(server, &QTcpServer::newConnection, server, [server, marker, answer] {
        while (QTcpSocket *socket = server->nextPendingConnection()) {
            QObject::connect(socket, &QTcpSocket::readyRead, socket, [socket, marker, answer] {
                if (socket->readAll().contains(marker))
                    answer(socket);
            });
        }
    });
}

} // namespace

class tst_CallbackSenderFaults final : public QObject
{
    Q_OBJECT

public:
    static void initMain() { useRequestedEventDispatcher(); }

private slots:
    void connectionRefused();
    void responseBodyIsTruncated();
    void stalledBodyTimesOut();
    void notModifiedIsNoSuccess();
    void endlessBodyIsCutShort();
    void tlsPeerName_data();
    void tlsPeerName();
    void tlsToAPlainServer();
    void unsentAreThoseNotYetWritten();

private:
    void send(CallbackSender &sender, const CallbackRequest &req, AttemptResult *result) { sendAndWait(sender, req, result); }
    CallbackRequest request(const QString &url, const QByteArray &id) const { return stoppedInstanceRequest(url, id, SecretA); }

    int m_nextId = 1;
};

void tst_CallbackSenderFaults::connectionRefused()
{
    const RefusingPort refusing;

    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(refusing.url(QStringLiteral("/ok")), "msg_refused"), &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("connect"));
    QCOMPARE(result.httpStatus, 0);
    QVERIFY(!result.delivered);
    QVERIFY(!result.errorMessage.isEmpty());
}

void tst_CallbackSenderFaults::responseBodyIsTruncated()
{
    // A receiver answering 10 KiB: only the first 4 KiB are kept for the attempt log.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "\r\n\r\n", [](QTcpSocket *socket) {
        const QByteArray body(10 * 1024, 'x');
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(body.size())
                      + "\r\nConnection: close\r\n\r\n" + body);
        socket->disconnectFromHost();
    });
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("http://127.0.0.1:%1/big").arg(server.serverPort()), "msg_big"), &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(result.delivered);
    QCOMPARE(result.responseBody.size(), AttemptResult::MaxResponseBodyBytes);
    QVERIFY(result.responseTruncated);
}

void tst_CallbackSenderFaults::stalledBodyTimesOut()
{
    // The head and part of the body arrive, the rest never does: the whole-attempt timeout ends it.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "\r\n\r\n", [](QTcpSocket *socket) {
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial");
    });
    CallbackSender sender(CallbackUrlGuard(true));
    CallbackRequest req = request(QStringLiteral("http://127.0.0.1:%1/stall").arg(server.serverPort()), "msg_stall");
    req.timeout = 1s;
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("timeout"));
    QVERIFY(!result.delivered);
    QVERIFY2(result.errorMessage.contains(QLatin1String("HTTP 200 OK arrived")), qPrintable(result.errorMessage));
    QVERIFY(result.errorMessage.contains(QLatin1String("1000 ms")));
    QCOMPARE(result.httpStatus, 0); // the attempt failed: no status to count as the delivery's
    QCOMPARE(sender.openConnections(), 0); // a connection mid-response is not reused
}

void tst_CallbackSenderFaults::notModifiedIsNoSuccess()
{
    // A 3xx without a Location (304 here) is a failure like any 3xx, but it is no redirect.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "\r\n\r\n", [](QTcpSocket *socket) { socket->write("HTTP/1.1 304 Not Modified\r\n\r\n"); });
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("http://127.0.0.1:%1/cached").arg(server.serverPort()), "msg_304"), &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(!result.delivered);
    QCOMPARE(result.httpStatus, 304);
    QCOMPARE(result.errorClass, QStringLiteral("http"));
    QCOMPARE(result.errorMessage, QStringLiteral("HTTP 304 Not Modified (only a 2xx answer is a success)"));
}

void tst_CallbackSenderFaults::endlessBodyIsCutShort()
{
    // 200 with a body announced at 1 GB and streamed on and on: the status decides, 4 KiB are
    // kept, the rest is neither read nor kept, and the connection is dropped.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    bool hungUp = false;
    answerRequests(&server, "\r\n\r\n", [&hungUp](QTcpSocket *socket) {
        connect(socket, &QTcpSocket::disconnected, socket, [&hungUp] { hungUp = true; });
        socket->write("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n");
        auto *pump = new QTimer(socket);
        connect(pump, &QTimer::timeout, socket, [socket] {
            if (socket->bytesToWrite() < 256 * 1024)
                socket->write(QByteArray(64 * 1024, 'b'));
        });
        pump->start(1);
    });
    CallbackSender sender(CallbackUrlGuard(true));
    CallbackRequest req = request(QStringLiteral("http://127.0.0.1:%1/endless").arg(server.serverPort()), "msg_endless");
    req.timeout = 60s;
    AttemptResult result;
    send(sender, req, &result);
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(result.delivered, qPrintable(result.errorMessage));
    QCOMPARE(result.httpStatus, 200);
    QCOMPARE(result.responseBody, QByteArray(AttemptResult::MaxResponseBodyBytes, 'b'));
    QVERIFY(result.responseTruncated);
    QCOMPARE(sender.openConnections(), 0);
    QTRY_VERIFY(hungUp);
}

void tst_CallbackSenderFaults::tlsPeerName_data()
{
    QTest::addColumn<QString>("certificateName");
    QTest::addColumn<bool>("trusted");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<QString>("message");
    // The URL names "localhost"; the sender connects to the address it resolved to, and the
    // certificate must still be valid for the name.
    QTest::newRow("trusted, name matches") << "localhost" << true << "" << "";
    QTest::newRow("trusted, other name") << "other.example" << true << "tls" << "host name";
    QTest::newRow("self-signed, not trusted") << "localhost" << false << "tls" << "self";
}

void tst_CallbackSenderFaults::tlsPeerName()
{
    QFETCH(QString, certificateName);
    QFETCH(bool, trusted);
    QFETCH(QString, errorClass);
    QFETCH(QString, message);
    if (!QSslSocket::supportsSsl())
        QSKIP("no TLS backend");
    const QString openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
    if (openssl.isEmpty())
        QSKIP("openssl is needed to make a certificate");

    const QString dir = Test::scratchDir();
    const QString keyPath = dir + QStringLiteral("/tls-key.pem");
    const QString certificatePath = dir + QStringLiteral("/tls-certificate.pem");
    QProcess make;
    make.start(openssl, {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
                         QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:prime256v1"), QStringLiteral("-nodes"),
                         QStringLiteral("-keyout"), keyPath, QStringLiteral("-out"), certificatePath, QStringLiteral("-days"),
                         QStringLiteral("2"), QStringLiteral("-subj"), QStringLiteral("/CN=") + certificateName,
                         QStringLiteral("-addext"), QStringLiteral("subjectAltName=DNS:") + certificateName});
    QVERIFY(make.waitForFinished(30000));
    QCOMPARE(make.exitCode(), 0);
    QFile keyFile(keyPath);
    QFile certificateFile(certificatePath);
    QVERIFY(keyFile.open(QIODevice::ReadOnly) && certificateFile.open(QIODevice::ReadOnly));
    const QSslCertificate certificate(certificateFile.readAll(), QSsl::Pem);
    const QSslKey key(keyFile.readAll(), QSsl::Ec, QSsl::Pem);
    QVERIFY(!certificate.isNull());
    QVERIFY(!key.isNull());

    QSslConfiguration serverConfiguration = QSslConfiguration::defaultConfiguration();
    serverConfiguration.setLocalCertificate(certificate);
    serverConfiguration.setPrivateKey(key);
    serverConfiguration.setPeerVerifyMode(QSslSocket::VerifyNone);
    QSslServer server;
    server.setSslConfiguration(serverConfiguration);
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    QByteArray hostSeen;
    connect(&server, &QTcpServer::pendingConnectionAvailable, this, [&server, &hostSeen] {
        auto *socket = qobject_cast<QSslSocket *>(server.nextPendingConnection());
        QVERIFY(socket);
        connect(socket, &QSslSocket::readyRead, socket, [socket, &hostSeen] {
            const QByteArray request = socket->readAll();
            if (!request.contains("\r\n\r\n"))
                return;
            for (const QByteArray &line : request.split('\n')) {
                if (line.startsWith("Host: "))
                    hostSeen = line.mid(6).trimmed();
            }
            socket->write("HTTP/1.1 204 No Content\r\n\r\n");
        });
    });

    // The client trusts the certificate only where the row says so.
    const QSslConfiguration original = QSslConfiguration::defaultConfiguration();
    if (trusted) {
        QSslConfiguration withCertificate = original;
        withCertificate.addCaCertificate(certificate);
        QSslConfiguration::setDefaultConfiguration(withCertificate);
    }
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    const QString url = QStringLiteral("https://localhost:%1/hook").arg(server.serverPort());
    send(sender, request(url, "msg_tls_" + QByteArray::number(m_nextId++)), &result);
    QSslConfiguration::setDefaultConfiguration(original);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, errorClass);
    QVERIFY2(result.errorMessage.contains(message, Qt::CaseInsensitive), qPrintable(result.errorMessage));
    if (errorClass.isEmpty()) {
        QVERIFY(result.delivered);
        QCOMPARE(result.httpStatus, 204);
        QCOMPARE(hostSeen, QStringLiteral("localhost:%1").arg(server.serverPort()).toLatin1());
    } else {
        QVERIFY(!result.delivered);
        QCOMPARE(result.httpStatus, 0);
        QVERIFY(hostSeen.isEmpty()); // not a byte of the request went out
    }
}

void tst_CallbackSenderFaults::tlsToAPlainServer()
{
    // A plain HTTP server answers the TLS hello with text and hangs up: a TLS failure, not HTTP.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    answerRequests(&server, "", [](QTcpSocket *socket) {
        socket->write("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        socket->disconnectFromHost();
    });
    CallbackSender sender(CallbackUrlGuard(true));
    AttemptResult result;
    send(sender, request(QStringLiteral("https://127.0.0.1:%1/hook").arg(server.serverPort()), "msg_tls_plain"), &result);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(result.errorClass, QStringLiteral("tls"));
    QCOMPARE(result.httpStatus, 0);
    QVERIFY(!result.delivered);
}

void tst_CallbackSenderFaults::unsentAreThoseNotYetWritten()
{
    // A receiver that reads and never answers, one connection per pool: the first attempt is
    // connecting, then written; the second waits for that connection; the third cannot be signed.
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    int received = 0;
    answerRequests(&server, "\r\n\r\n", [&received](QTcpSocket *) { ++received; });
    CallbackSender sender(CallbackUrlGuard(true));
    sender.setMaxConnectionsPerPool(1);
    const QString url = QStringLiteral("http://127.0.0.1:%1/never").arg(server.serverPort());
    QSignalSpy finished(&sender, &CallbackSender::finished);
    const quint64 written = sender.send(request(url, "msg_written"));
    const quint64 waiting = sender.send(request(url, "msg_waiting"));
    CallbackRequest unsignedRequest = request(url, "msg_unsigned");
    unsignedRequest.secrets.clear();
    const quint64 unsignedId = sender.send(unsignedRequest);
    QList<quint64> unsent = sender.unsent();
    std::sort(unsent.begin(), unsent.end());
    QCOMPARE(unsent, (QList<quint64>{written, waiting, unsignedId}));

    QTRY_COMPARE(received, 1);
    QTRY_COMPARE(finished.count(), 1); // the unsigned one failed
    QCOMPARE(finished.at(0).at(0).toULongLong(), unsignedId);
    QCOMPARE(sender.unsent(), QList<quint64>{waiting});
    QCOMPARE(sender.inFlight(), 2);
}

QTEST_GUILESS_MAIN(tst_CallbackSenderFaults)
#include "tst_callbacksenderfaults.moc"
