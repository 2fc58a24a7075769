// The HTTP front's own handling of connections, in front of the routes: framing and pipelining,
// Connection: close and HTTP/1.0, Host, 100 Continue, the idle timeout, WebSocket upgrades behind
// a long poll. A request hidden where a lenient parser would find it never runs.
#include "testserver.h"

#include <QRegularExpression>
#include <QTcpSocket>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_HttpFront : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void cleanupTestCase();
    void hugeBodyIsRefusedWhileItArrives();
    void unsureFramingIsRefused_data();
    void unsureFramingIsRefused();
    void pipelinedRequestsAcrossReads_data();
    void pipelinedRequestsAcrossReads();
    void headAnswersWithoutABody();
    void connectionCloseIsHonoured();
    void http10EndsUnlessKeptAlive();
    void hostIsRequired();
    void continueIsSentWhenAwaited();
    void idleConnectionsEnd();
    void upgradeAfterALongPoll();
    void hiddenRequestsNeverRan();

private:
    std::unique_ptr<TestServer> m_server;
    // The endpoint that the hidden requests would pause, and the organizations they would create.
    qint64 m_endpoint = 0;
    int m_organizationsBefore = 0;
    // Writes `segments` on a connection of its own, each after the server has had 300 ms for the
    // last, and reads until the server closes it: its answers.
    QByteArray exchange(const QByteArrayList &segments);
    QByteArray exchange(const QByteArray &bytes) { return exchange(QByteArrayList{bytes}); }
};

namespace {

// The test server's idle timeout: longer than exchange()'s pauses between segments.
constexpr int kIdleMs = 2000;

} // namespace

void tst_HttpFront::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
    ServerOptions options;
    options.deliveryWorker = false; // the endpoint keeps its version unless a request changes it
    options.idleTimeout = std::chrono::milliseconds(kIdleMs);
    m_server = std::make_unique<TestServer>(options);
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    const qint64 org = m_server->createOrganization(QStringLiteral("Customer"));
    const qint64 provider = m_server->createProvider(QStringLiteral("P"), org, {QStringLiteral("app")});
    const qint64 instance = m_server->createInstance(QStringLiteral("r"), org, provider, QStringLiteral("app"), QStringLiteral("alice"));
    QCOMPARE(m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                            {{QStringLiteral("callback_url"), QStringLiteral("http://127.0.0.1:9/hook")}}, m_server->operatorToken())
                 .status,
             200);
    m_endpoint = m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken())
                     .items()
                     .first()
                     .toObject()
                     .value(QStringLiteral("endpoint_id"))
                     .toInteger();
    QVERIFY(m_endpoint);
    m_organizationsBefore = int(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size());
}

void tst_HttpFront::cleanupTestCase()
{
    m_server.reset();
}

void tst_HttpFront::hugeBodyIsRefusedWhileItArrives()
{
    // A client announcing 64 MiB and sending as fast as the server takes it. The server answers
    // 413 once a little over the limit has arrived and closes the connection: it neither waits
    // for (nor holds) the rest.
    constexpr qint64 kAnnounced = 64 * 1024 * 1024;
    const QUrl base = m_server->baseUrl();
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    QVERIFY(socket.waitForConnected(10000));
    socket.write("POST /api/v1/organizations HTTP/1.1\r\nHost: " + base.host().toUtf8() + "\r\nAuthorization: Bearer "
                 + m_server->operatorToken().toUtf8() + "\r\nContent-Type: application/json\r\nContent-Length: "
                 + QByteArray::number(kAnnounced) + "\r\n\r\n{\"name\": \"");
    const QByteArray chunk(256 * 1024, 'x');
    qint64 sent = 0;
    QByteArray answer;
    bool closed = false;
    const auto feed = [&] {
        while (answer.isEmpty() && !closed && sent < kAnnounced && socket.bytesToWrite() < 1024 * 1024) {
            socket.write(chunk);
            sent += chunk.size();
        }
    };
    connect(&socket, &QTcpSocket::bytesWritten, this, feed);
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    connect(&socket, &QTcpSocket::disconnected, this, [&] { closed = true; });
    connect(&socket, &QTcpSocket::errorOccurred, this, [&] { closed = true; });
    feed();
    QTRY_VERIFY_WITH_TIMEOUT(closed || (answer.contains("\r\n\r\n") && answer.contains("}")), 60000);
    QVERIFY2(answer.startsWith("HTTP/1.1 413"), answer.left(200).constData());
    QVERIFY(answer.contains("application/problem+json"));
    QVERIFY(answer.contains("payload-too-large"));
    // Far less than announced went out before the answer came.
    QVERIFY2(sent < 16 * 1024 * 1024, qPrintable(QStringLiteral("%1 bytes sent").arg(sent)));
    // And the connection ends, the server's side first.
    QTRY_VERIFY_WITH_TIMEOUT(closed, 10000);
}

QByteArray tst_HttpFront::exchange(const QByteArrayList &segments)
{
    const QUrl base = m_server->baseUrl();
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    if (!socket.waitForConnected(10000))
        return "not connected";
    QByteArray answer;
    bool closed = false;
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    connect(&socket, &QTcpSocket::disconnected, this, [&] { closed = true; });
    connect(&socket, &QTcpSocket::errorOccurred, this, [&] { closed = true; });
    for (qsizetype i = 0; i < segments.size() && !closed; ++i) {
        if (i > 0)
            QTest::qWait(300);
        socket.write(segments.at(i));
        socket.flush();
    }
    // Within the refusal's grace period of 2 s, or the server's idle timeout: it must close.
    if (!QTest::qWaitFor([&] { return closed; }, 20000))
        return "still open after: " + answer;
    return answer + socket.readAll();
}

void tst_HttpFront::unsureFramingIsRefused_data()
{
    QTest::addColumn<QByteArray>("headers");
    QTest::addColumn<int>("status");
    // A GET whose body QHttpServer 6.4 would read as empty, taking it for a request: a pause of
    // the endpoint, which hiddenRequestsNeverRan() finds ACTIVE at version 1.
    QTest::newRow("length abc") << QByteArray("Content-Length: abc\r\n") << 400;
    QTest::newRow("length -5") << QByteArray("Content-Length: -5\r\n") << 400;
    QTest::newRow("two lengths") << QByteArray("Content-Length: 0\r\nContent-Length: 12\r\n") << 400;
    QTest::newRow("gzip") << QByteArray("Transfer-Encoding: gzip\r\n") << 501;
    QTest::newRow("two Idempotency-Keys") << QByteArray("Idempotency-Key: a\r\nIdempotency-Key: b\r\n") << 400;
    QTest::newRow("header of 200 KB") << "X-Big: " + QByteArray(200 * 1024, 'a') + "\r\n" << 431;
}

void tst_HttpFront::unsureFramingIsRefused()
{
    QFETCH(QByteArray, headers);
    QFETCH(int, status);
    const QByteArray token = m_server->operatorToken().toUtf8();
    const QByteArray pause = "POST /api/v1/endpoints/" + QByteArray::number(m_endpoint) + "/pause HTTP/1.1\r\nHost: x\r\n"
                             "Authorization: Bearer " + token + "\r\nContent-Length: 0\r\n\r\n";
    const QByteArray answer = exchange("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token + "\r\n"
                                       + headers + "\r\n" + pause);
    QVERIFY2(answer.startsWith("HTTP/1.1 " + QByteArray::number(status) + ' '), answer.left(300).constData());
    QVERIFY(answer.contains("application/problem+json"));
    QVERIFY(answer.contains("Connection: close"));
    QCOMPARE(answer.count("HTTP/1.1 "), 1); // one answer: the hidden request was not run
}

void tst_HttpFront::headAnswersWithoutABody()
{
    // HEAD is GET without the body: the same status and Content-Length, and the next answer on
    // the connection starts right after the head (a body there would be read as the next answer).
    const QByteArray token = m_server->operatorToken().toUtf8();
    const QByteArray answer = exchange("HEAD /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                                       + "\r\n\r\nGET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token
                                       + "\r\nConnection: close\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
    const qsizetype headEnd = answer.indexOf("\r\n\r\n");
    QVERIFY(headEnd > 0);
    const QByteArray rest = answer.mid(headEnd + 4);
    QVERIFY2(rest.startsWith("HTTP/1.1 200"), answer.constData());
    // The GET's body has the length the HEAD announced.
    static const QRegularExpression length(QStringLiteral("Content-Length: (\\d+)"), QRegularExpression::CaseInsensitiveOption);
    const auto announced = length.match(QString::fromLatin1(answer.left(headEnd)));
    QVERIFY(announced.hasMatch());
    const qsizetype getHeadEnd = rest.indexOf("\r\n\r\n");
    QCOMPARE(rest.mid(getHeadEnd + 4).size(), announced.captured(1).toLongLong());
    // The query is read as the GET's is: HEAD dropped ?wait first, so "wait=abc" was a 200 to
    // HEAD and a 400 to GET. A good wait is answered at once, as the GET would be once it ended.
    const QByteArray badWait = exchange("HEAD /api/v1/events?wait=abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                        + token + "\r\nConnection: close\r\n\r\n");
    QVERIFY2(badWait.startsWith("HTTP/1.1 400"), badWait.constData());
    QVERIFY2(badWait.endsWith("\r\n\r\n"), badWait.constData());
    const QByteArray goodWait = exchange("HEAD /api/v1/events?wait=5 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                                         + token + "\r\nConnection: close\r\n\r\n");
    QVERIFY2(goodWait.startsWith("HTTP/1.1 200"), goodWait.constData());
    // And a path with no GET says so in Allow; one with GET allows HEAD too.
    const Reply notAllowed = m_server->request("PUT", QStringLiteral("/api/v1/whoami"), QByteArray(), m_server->operatorToken());
    QCOMPARE(notAllowed.status, 405);
    QVERIFY2(notAllowed.header("Allow").contains("HEAD"), notAllowed.header("Allow").constData());
    // OPTIONS, which the server implements, is answered on every path it has: 204 with Allow
    // (it was a 405 whose Allow left OPTIONS out).
    QCOMPARE(notAllowed.header("Allow"), QByteArray("GET, HEAD, OPTIONS"));
    const QByteArray options = exchange("OPTIONS /api/v1/organizations HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QVERIFY2(options.startsWith("HTTP/1.1 204"), options.constData());
    QVERIFY2(options.contains("\r\nAllow: GET, HEAD, POST, OPTIONS\r\n"), options.constData());
    QVERIFY2(options.endsWith("\r\n\r\n"), options.constData());
    QVERIFY2(!options.contains("Content-Length") && !options.contains("Content-Type"), options.constData());
    const Reply noSuchPath = m_server->request("OPTIONS", QStringLiteral("/api/v1/nothing"), QByteArray(), QString());
    QCOMPARE(noSuchPath.status, 404);
}

void tst_HttpFront::pipelinedRequestsAcrossReads_data()
{
    QTest::addColumn<QByteArrayList>("segments");
    QTest::addColumn<QByteArrayList>("statuses"); // of the answers, in order
    const QByteArray health = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    // QHttpServer parses one request a pass and leaves the rest of what arrived for the next: the
    // guard must not take those bytes for new ones.
    QTest::newRow("a request line cut in two") << QByteArrayList{health + "GET /healthz HT", "TP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}
                                               << QByteArrayList{"200", "200"};
    // The refusal ends the connection, after the answers to the whole requests before it: the
    // POST whose body ends in the same read as the refused request is run (401: no token) first.
    QTest::newRow("a body cut in two, then a bad request")
        << QByteArrayList{health + "POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + QByteArray(60, 'x'),
                          QByteArray(140, 'y') + "GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n"}
        << QByteArrayList{"200", "401", "501"};
    QTest::newRow("good requests and a bad one in one read")
        << QByteArrayList{health + health + "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n" + health}
        << QByteArrayList{"200", "200", "400"};
    // A request that closes the connection ends it: what follows is neither run nor refused.
    QTest::newRow("a closing request, then a bad one in the same read")
        << QByteArrayList{"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/2.0\r\n\r\n"}
        << QByteArrayList{"200"};
    QTest::newRow("a body cut in two, then a good request")
        << QByteArrayList{health + "POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\n\r\n" + QByteArray(60, 'x'),
                          QByteArray(140, 'y') + "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"}
        << QByteArrayList{"200", "401", "200"};
    QTest::newRow("a bare LF after a chunk")
        << QByteArrayList{"POST /api/v1/organizations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nAAAAA\n30\r\n"
                          "\r\nGET /healthz HTTP/1.1\r\nContent-Length: 7\r\nX:\r\n\r\n\r\n0\r\n\r\n"}
        << QByteArrayList{"400"};
    QTest::newRow("chunked in HTTP/1.0")
        << QByteArrayList{"POST /api/v1/organizations HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"} << QByteArrayList{"400"};
    // An Upgrade header without Connection: upgrade is no upgrade: answered, and still guarded.
    QTest::newRow("upgrade header alone")
        << QByteArrayList{"GET /healthz HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n",
                          "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"}
        << QByteArrayList{"200", "400"};
}

void tst_HttpFront::pipelinedRequestsAcrossReads()
{
    QFETCH(QByteArrayList, segments);
    QFETCH(QByteArrayList, statuses);
    const QByteArray answer = exchange(segments);
    QByteArrayList got;
    for (qsizetype at = answer.indexOf("HTTP/1.1 "); at >= 0; at = answer.indexOf("HTTP/1.1 ", at + 1))
        got.append(answer.mid(at + 9, 3));
    QVERIFY2(got == statuses, answer.left(600).constData());
}

void tst_HttpFront::connectionCloseIsHonoured()
{
    // Answered, then closed by the server; a request after it on the same connection is not run.
    const QByteArray answer = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                                       "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.left(300).constData());
    QVERIFY(answer.contains("Connection: close"));
    QCOMPARE(answer.count("HTTP/1.1 "), 1);

    // The same for an answer written later: a long poll of the feed that times out after a second.
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray later = exchange("GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "Connection: close\r\n\r\n"
                                      "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    QVERIFY2(later.startsWith("HTTP/1.1 200"), later.left(300).constData());
    QVERIFY2(later.contains("Connection: close"), later.constData());
    QVERIFY(later.contains("\"events\""));
    QCOMPARE(later.count("HTTP/1.1 "), 1);

    // What the client sends while that answer is still to come is neither run nor refused: the
    // answer it waits for comes, not a refusal of bytes it should not have sent.
    const QByteArray after = exchange({"GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "Connection: close\r\n\r\n",
                                       "GET / HTTP/2.0\r\n\r\n"});
    QVERIFY2(after.startsWith("HTTP/1.1 200"), after.left(300).constData());
    QVERIFY(after.contains("\"events\""));
    QCOMPARE(after.count("HTTP/1.1 "), 1);

    // A request after a long poll on the same connection: the poll is answered first (now, with
    // what there is), then the request; answers come in the order of the requests.
    const QByteArray inOrder = exchange("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n"
                                        "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    QCOMPARE(inOrder.count("HTTP/1.1 200"), 2);
    const qsizetype second = inOrder.indexOf("HTTP/1.1 200", 1);
    QVERIFY2(inOrder.indexOf("\"events\"") < second, inOrder.constData());
    QVERIFY2(inOrder.indexOf("delivery_worker", second) > second, inOrder.constData());
}

void tst_HttpFront::http10EndsUnlessKeptAlive()
{
    // An HTTP/1.0 request ends its connection with the answer (RFC 9112, 9.3): the request after
    // it is not run.
    const QByteArray get = "GET /healthz HTTP/1.0\r\n\r\n";
    const QByteArray closed = exchange(get + get);
    QVERIFY2(closed.startsWith("HTTP/1.1 200"), closed.left(300).constData());
    QVERIFY2(closed.contains("Connection: close"), closed.constData());
    QCOMPARE(closed.count("HTTP/1.1 "), 1);

    // Unless it asks to keep it: then the next one is run, and the answer says it is kept.
    const QByteArray kept = exchange("GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n" + get + get);
    QCOMPARE(kept.count("HTTP/1.1 200"), 2);
    QVERIFY2(kept.indexOf("Connection: keep-alive") < kept.indexOf("HTTP/1.1 200", 1), kept.constData());
    QVERIFY2(kept.indexOf("Connection: close") > kept.indexOf("HTTP/1.1 200", 1), kept.constData());
    // A long poll's answer, written later, says so too.
    const QByteArray polled = exchange("GET /api/v1/events?wait=1 HTTP/1.0\r\nConnection: keep-alive\r\nAuthorization: Bearer "
                                       + m_server->operatorToken().toUtf8() + "\r\n\r\n");
    QVERIFY2(polled.startsWith("HTTP/1.1 200") && polled.contains("Connection: keep-alive"), polled.constData());
}

void tst_HttpFront::hostIsRequired()
{
    // Refused behind a long poll still owed: the poll's answer comes first, then the refusal (the
    // client would take a refusal that came first for the poll's answer).
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray behind = exchange({"GET /api/v1/events?wait=1 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n",
                                        "GET /healthz HTTP/1.1\r\n\r\n"});
    QVERIFY2(behind.startsWith("HTTP/1.1 200"), behind.left(300).constData());
    QVERIFY2(behind.indexOf("HTTP/1.1 400") > behind.indexOf("\"events\""), behind.constData());

    // RFC 9112, 3.2: an HTTP/1.1 request without Host, or with two, is answered 400.
    for (const QByteArray &head : {QByteArray("GET /healthz HTTP/1.1\r\n\r\n"),
                                   QByteArray("GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n")}) {
        const QByteArray answer = exchange(head);
        QVERIFY2(answer.startsWith("HTTP/1.1 400"), answer.left(300).constData());
        QVERIFY2(answer.contains("Host"), answer.constData());
        QVERIFY(answer.contains("application/problem+json"));
    }
}

void tst_HttpFront::continueIsSentWhenAwaited()
{
    // A client that waits for 100 Continue before sending its body (curl does for bodies over
    // 1 MiB) gets it as soon as its head arrives; ahead of it, the answers to what it sent before.
    const QUrl base = m_server->baseUrl();
    const QByteArray body = R"({"role": "owner", "subject": "continued"})";
    const QByteArray head = "POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                            + m_server->operatorToken().toUtf8() + "\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                            "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n";
    for (const QByteArray &before : {QByteArray(), QByteArray("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")}) {
        QTcpSocket socket;
        socket.connectToHost(base.host(), quint16(base.port()));
        QVERIFY(socket.waitForConnected(10000));
        QByteArray answer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
        socket.write(before + head);
        // The client sends nothing more until it hears 100 Continue.
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 100 Continue\r\n\r\n"), kIdleMs);
        QVERIFY2(answer.endsWith("HTTP/1.1 100 Continue\r\n\r\n"), answer.constData());
        if (!before.isEmpty())
            QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
        socket.write(body);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 201") && answer.endsWith("}"), 10000);
        QCOMPARE(answer.count("100 Continue"), 1);
    }

    // Behind a long poll still owed, the 100 Continue waits for the poll's answer and for the
    // answers of what came after it.
    {
        QTcpSocket socket;
        socket.connectToHost(base.host(), quint16(base.port()));
        QVERIFY(socket.waitForConnected(10000));
        QByteArray answer;
        connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
        socket.write("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + m_server->operatorToken().toUtf8()
                     + "\r\n\r\n");
        QTest::qWait(300); // the poll waits
        socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + head);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("100 Continue"), kIdleMs);
        const qsizetype poll = answer.indexOf("\"events\"");
        const qsizetype health = answer.indexOf("delivery_worker");
        QVERIFY2(poll > 0 && health > poll && answer.endsWith("HTTP/1.1 100 Continue\r\n\r\n"), answer.constData());
        socket.write(body);
        QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 201") && answer.endsWith("}"), 10000);
    }

    // Nor after an answer that ended the connection: the request waiting for it is never run.
    const QByteArray afterClose = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + head);
    QVERIFY2(afterClose.startsWith("HTTP/1.1 200"), afterClose.constData());
    QVERIFY2(!afterClose.contains("100 Continue"), afterClose.constData());

    // A body announced over the limit is refused at once, before the client sends it.
    const QByteArray tooLarge = exchange("POST /api/v1/tokens HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: "
                                         + QByteArray::number(64 * 1024 * 1024) + "\r\n\r\n");
    QVERIFY2(tooLarge.startsWith("HTTP/1.1 413"), tooLarge.left(300).constData());
    QVERIFY(!tooLarge.contains("100 Continue"));

    // An expectation the server cannot meet (RFC 9110, 10.1.1).
    const QByteArray unmet = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: the-moon\r\n\r\n");
    QVERIFY2(unmet.startsWith("HTTP/1.1 417"), unmet.left(300).constData());
}

void tst_HttpFront::idleConnectionsEnd()
{
    // A connection that sends nothing is closed after the idle timeout, without an answer.
    QCOMPARE(exchange(QByteArrayList{}), QByteArray());
    // One that sent part of a request hears 408 (RFC 9110, 15.5.9) and is closed.
    const QByteArray partial = exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n");
    QVERIFY2(partial.startsWith("HTTP/1.1 408"), partial.left(300).constData());
    QVERIFY(partial.contains("request-timeout"));
    // The timeout counts from the last answer: a long poll longer than it is answered in full,
    // and its connection is closed only after the same idle time again.
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    const QByteArray polled = exchange("GET /api/v1/events?wait=" + QByteArray::number(2 * kIdleMs / 1000) + " HTTP/1.1\r\nHost: x\r\n"
                                       + token + "\r\n");
    QVERIFY2(polled.startsWith("HTTP/1.1 200"), polled.left(300).constData());
    QVERIFY(polled.contains("\"events\""));
    QCOMPARE(polled.count("HTTP/1.1 "), 1);
}

void tst_HttpFront::upgradeAfterALongPoll()
{
    // A WebSocket handshake behind a long poll still owed: the poll is answered first, then the
    // 101; after it the connection speaks WebSocket frames, where an HTTP answer has no place.
    const QUrl base = m_server->baseUrl();
    const QByteArray token = "Authorization: Bearer " + m_server->operatorToken().toUtf8() + "\r\n";
    QTcpSocket socket;
    socket.connectToHost(base.host(), quint16(base.port()));
    QVERIFY(socket.waitForConnected(10000));
    QByteArray answer;
    connect(&socket, &QTcpSocket::readyRead, this, [&] { answer += socket.readAll(); });
    socket.write("GET /api/v1/events?wait=20 HTTP/1.1\r\nHost: x\r\n" + token + "\r\n");
    QTest::qWait(300); // the poll waits
    socket.write("GET /api/v1/watch HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n" + token + "\r\n");
    QTRY_VERIFY_WITH_TIMEOUT(answer.contains("HTTP/1.1 101"), kIdleMs);
    QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
    QVERIFY2(answer.indexOf("\"events\"") < answer.indexOf("HTTP/1.1 101"), answer.constData());
}

void tst_HttpFront::hiddenRequestsNeverRan()
{
    QCOMPARE(m_server->get(QStringLiteral("/healthz"), {}).status, 200);
    QCOMPARE(int(m_server->get(QStringLiteral("/api/v1/organizations"), m_server->operatorToken()).items().size()), m_organizationsBefore);
    const QJsonObject endpoint = m_server->get(QStringLiteral("/api/v1/endpoints/%1").arg(m_endpoint), m_server->operatorToken()).json();
    QCOMPARE(endpoint.value(QStringLiteral("state")).toString(), QStringLiteral("ACTIVE"));
    QCOMPARE(endpoint.value(QStringLiteral("version")).toInteger(), 1);
    const QByteArray metrics = m_server->get(QStringLiteral("/metrics"), {}).body;
    QVERIFY(!metrics.contains("status=\"500\""));
}

QTEST_GUILESS_MAIN(tst_HttpFront)
#include "tst_httpfront.moc"
