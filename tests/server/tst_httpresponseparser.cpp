// The callback sender's HTTP/1.1 response parser: framing, keep-alive, interim responses and limits,
// each fed whole, in tiny pieces and byte by byte.
#include "server/delivery/httpresponseparser.h"

#include <QtTest>

using namespace OpsDeck;

class tst_HttpResponseParser final : public QObject
{
    Q_OBJECT

private slots:
    void parse_data();
    void parse();
    void closeDelimitedBodyEndsAtEof();
    void eofBeforeAnyByte();
    void eofInsideTheBody();
    void hugeHeadIsRefusedEarly();
    void headLimitIsExact_data();
    void headLimitIsExact();
    void hugeBodyStopsAtTheReadLimit();
    void bytesAfterTheResponse();
};

namespace {

constexpr qsizetype Keep = 16;

QByteArray repeated(char c, qsizetype count)
{
    return QByteArray(count, c);
}

} // namespace

void tst_HttpResponseParser::parse_data()
{
    QTest::addColumn<QByteArray>("wire");
    QTest::addColumn<int>("state"); // HttpResponseParser::State
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("truncated");
    QTest::addColumn<bool>("keepAlive");

    const int complete = int(HttpResponseParser::State::Complete);
    const int failed = int(HttpResponseParser::State::Failed);
    const int incomplete = int(HttpResponseParser::State::Incomplete);

    QTest::newRow("content-length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello") << complete << 200
                                    << QByteArray("hello") << false << true;
    QTest::newRow("bare LF lines") << QByteArray("HTTP/1.1 201 Created\nContent-Length: 2\n\nok") << complete << 201
                                   << QByteArray("ok") << false << true;
    QTest::newRow("connection close") << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
                                      << complete << 200 << QByteArray("ok") << false << false;
    QTest::newRow("connection token list") << QByteArray("HTTP/1.1 200 OK\r\nConnection: Upgrade, Close\r\nContent-Length: 0\r\n\r\n")
                                           << complete << 200 << QByteArray() << false << false;
    QTest::newRow("http/1.0 closes") << QByteArray("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok") << complete << 200
                                     << QByteArray("ok") << false << false;
    QTest::newRow("http/1.0 keep-alive") << QByteArray("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok")
                                         << complete << 200 << QByteArray("ok") << false << true;
    QTest::newRow("chunked") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                           "5\r\nhello\r\n1;ext=1\r\n \r\nB\r\n0123456789a\r\n0\r\nX-Trailer: t\r\n\r\n")
                             << complete << 200 << QByteArray("hello 0123456789") << true << true;
    QTest::newRow("chunked upper-case hex") << QByteArray("HTTP/1.1 500 Oops\r\ntransfer-encoding: CHUNKED\r\n\r\nC\r\n0123456789ab\r\n0\r\n\r\n")
                                            << complete << 500 << QByteArray("0123456789ab") << false << true;
    QTest::newRow("chunked without the last chunk") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n")
                                                    << incomplete << 200 << QByteArray("ok") << false << true;
    QTest::newRow("bad chunk size") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") << failed
                                    << 200 << QByteArray() << false << false;
    QTest::newRow("chunk missing CRLF") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n")
                                        << failed << 200 << QByteArray("ok") << false << false;
    QTest::newRow("chunked and length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
                                        << complete << 200 << QByteArray("ok") << false << false;
    QTest::newRow("body truncated") << ("HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n" + repeated('x', 40)) << complete << 200
                                    << repeated('x', Keep) << true << true;
    QTest::newRow("204 has no body") << QByteArray("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n") << complete << 204
                                     << QByteArray() << false << true;
    QTest::newRow("304 has no body") << QByteArray("HTTP/1.1 304 Not Modified\r\n\r\n") << complete << 304 << QByteArray()
                                     << false << true;
    QTest::newRow("100 continue skipped") << QByteArray("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 1\r\n\r\nk")
                                          << complete << 202 << QByteArray("k") << false << true;
    QTest::newRow("103 hints skipped") << QByteArray("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 410 Gone\r\nContent-Length: 0\r\n\r\n")
                                       << complete << 410 << QByteArray() << false << true;
    QTest::newRow("101 refused") << QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n") << failed << 101
                                 << QByteArray() << false << false;
    QTest::newRow("no reason phrase") << QByteArray("HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n") << complete << 200
                                      << QByteArray() << false << true;
    QTest::newRow("headers only so far") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n") << incomplete << 200
                                         << QByteArray() << false << false;
    QTest::newRow("not http") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n") << failed << 0 << QByteArray() << false << false;
    QTest::newRow("http/2 preface") << QByteArray("HTTP/2 200\r\n\r\n") << failed << 0 << QByteArray() << false << false;
    QTest::newRow("status not a number") << QByteArray("HTTP/1.1 2x0 OK\r\n\r\n") << failed << 0 << QByteArray() << false
                                         << false;
    QTest::newRow("header without colon") << QByteArray("HTTP/1.1 200 OK\r\nbroken\r\n\r\n") << failed << 200 << QByteArray()
                                          << false << false;
    QTest::newRow("folded header") << QByteArray("HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\n\r\n") << failed << 200 << QByteArray()
                                   << false << false;
    QTest::newRow("space before colon") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n") << failed << 200
                                        << QByteArray() << false << false;
    QTest::newRow("negative length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n") << failed << 200
                                     << QByteArray() << false << false;
    QTest::newRow("conflicting lengths") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok")
                                         << failed << 200 << QByteArray() << false << false;
    QTest::newRow("repeated equal lengths") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok")
                                            << complete << 200 << QByteArray("ok") << false << true;
    QTest::newRow("chunk line over the limit")
        << ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=" + repeated('a', 1100) + "\r\nx\r\n0\r\n\r\n")
        << failed << 200 << QByteArray() << false << false;
    QTest::newRow("too many headers") << ("HTTP/1.1 200 OK\r\n" + QByteArray("X-A: 1\r\n").repeated(HttpResponseParser::MaxHeaderCount + 1) + "\r\n")
                                      << failed << 200 << QByteArray() << false << false;
}

void tst_HttpResponseParser::parse()
{
    QFETCH(QByteArray, wire);
    QFETCH(int, state);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(bool, truncated);
    QFETCH(bool, keepAlive);

    // The same bytes whole, in pieces of 3 and one by one must parse alike.
    for (const qsizetype piece : {wire.size(), qsizetype(3), qsizetype(1)}) {
        HttpResponseParser parser(Keep);
        for (qsizetype at = 0; at < wire.size(); at += piece)
            parser.feed(wire.mid(at, piece));
        const QByteArray where = "piece size " + QByteArray::number(piece);
        QVERIFY2(int(parser.state()) == state, where + ": " + parser.error().toUtf8());
        QVERIFY2(parser.response().status == status, where);
        QVERIFY2(parser.sawBytes(), where);
        if (state == int(HttpResponseParser::State::Failed)) {
            QVERIFY2(!parser.error().isEmpty(), where);
            QVERIFY2(!parser.response().keepAlive, where);
            continue;
        }
        QVERIFY2(parser.error().isEmpty(), where);
        QVERIFY2(parser.response().body == body, where + ": " + parser.response().body);
        QVERIFY2(parser.response().bodyTruncated == truncated, where);
        QVERIFY2(parser.response().keepAlive == keepAlive, where);
        QVERIFY2(!parser.hasExcess(), where);
    }
}

void tst_HttpResponseParser::closeDelimitedBodyEndsAtEof()
{
    HttpResponseParser parser(Keep);
    QCOMPARE(parser.feed(QByteArray("HTTP/1.1 200 OK\r\nX-Seen: yes\r\n\r\nuntil")), HttpResponseParser::State::Incomplete);
    QCOMPARE(parser.feed(QByteArray(" close")), HttpResponseParser::State::Incomplete);
    QCOMPARE(parser.finish(), HttpResponseParser::State::Complete);
    QCOMPARE(parser.response().body, QByteArray("until close"));
    QCOMPARE(parser.response().header("x-seen"), QByteArray("yes"));
    QVERIFY(!parser.response().keepAlive);
}

void tst_HttpResponseParser::eofBeforeAnyByte()
{
    HttpResponseParser parser(Keep);
    QCOMPARE(parser.finish(), HttpResponseParser::State::Failed);
    QVERIFY(!parser.sawBytes());
    QVERIFY(parser.error().contains(QLatin1String("without a response")));
}

void tst_HttpResponseParser::eofInsideTheBody()
{
    HttpResponseParser parser(Keep);
    parser.feed(QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"));
    QCOMPARE(parser.finish(), HttpResponseParser::State::Failed);
    QVERIFY(parser.sawBytes());
    QVERIFY(parser.error().contains(QLatin1String("before the response was complete")));
}

void tst_HttpResponseParser::hugeHeadIsRefusedEarly()
{
    // A header line that never ends: refused once it passes the limit, not buffered forever.
    HttpResponseParser parser(Keep);
    parser.feed(QByteArray("HTTP/1.1 200 OK\r\nX-Big: "));
    const QByteArray block = repeated('a', 4096);
    qsizetype fed = 0;
    while (parser.state() == HttpResponseParser::State::Incomplete && fed < 4 * HttpResponseParser::MaxHeaderBytes) {
        parser.feed(block);
        fed += block.size();
    }
    QCOMPARE(parser.state(), HttpResponseParser::State::Failed);
    QVERIFY(fed <= HttpResponseParser::MaxHeaderBytes + block.size());
    QVERIFY2(parser.error().contains(QLatin1String("larger than")), qPrintable(parser.error()));

    // Many complete header lines that add up past the limit fail the same way.
    HttpResponseParser lines(Keep);
    lines.feed(QByteArray("HTTP/1.1 200 OK\r\n"));
    for (int i = 0; i < 40 && lines.state() == HttpResponseParser::State::Incomplete; ++i)
        lines.feed("X-" + QByteArray::number(i) + ": " + repeated('b', 2000) + "\r\n");
    QCOMPARE(lines.state(), HttpResponseParser::State::Failed);
}

void tst_HttpResponseParser::headLimitIsExact_data()
{
    QTest::addColumn<QByteArray>("end"); // how each line of the head ends
    QTest::addColumn<qsizetype>("headBytes");
    QTest::addColumn<bool>("complete");
    const qsizetype max = HttpResponseParser::MaxHeaderBytes;
    for (const QByteArray &end : {QByteArray("\r\n"), QByteArray("\n")}) {
        const QByteArray name = end.size() == 2 ? "CRLF" : "LF";
        QTest::newRow(name + ", one byte under") << end << max - 1 << true;
        QTest::newRow(name + ", at the limit") << end << max << true;
        QTest::newRow(name + ", one byte over") << end << max + 1 << false;
    }
}

void tst_HttpResponseParser::headLimitIsExact()
{
    // A head of exactly `headBytes` bytes (status line, one padded header, the empty line, each
    // with its line end): the limit counts the bytes that arrive, however they are split.
    QFETCH(QByteArray, end);
    QFETCH(qsizetype, headBytes);
    QFETCH(bool, complete);
    const QByteArray status = "HTTP/1.1 204 No Content" + end;
    const QByteArray name = "X-Pad: ";
    const QByteArray wire = status + name + repeated('p', headBytes - status.size() - name.size() - 2 * end.size()) + end + end;
    QCOMPARE(wire.size(), headBytes);
    for (const qsizetype piece : {wire.size(), qsizetype(1000), qsizetype(1)}) {
        HttpResponseParser parser(Keep);
        for (qsizetype at = 0; at < wire.size(); at += piece)
            parser.feed(wire.mid(at, piece));
        QVERIFY2(parser.state() == (complete ? HttpResponseParser::State::Complete : HttpResponseParser::State::Failed),
                 qPrintable(QStringLiteral("piece %1: %2").arg(piece).arg(parser.error())));
    }
}

void tst_HttpResponseParser::hugeBodyStopsAtTheReadLimit()
{
    for (const QByteArray &head : {QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n"),
                                   QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
                                   QByteArray("HTTP/1.1 200 OK\r\n\r\n")}) {
        HttpResponseParser parser(Keep);
        parser.feed(head);
        const bool chunked = head.contains("chunked");
        const QByteArray block = chunked ? "10000\r\n" + repeated('z', 0x10000) + "\r\n" : repeated('z', 0x10000);
        qint64 fed = 0;
        while (parser.state() == HttpResponseParser::State::Incomplete && fed < 4 * HttpResponseParser::MaxBodyReadBytes) {
            parser.feed(block);
            fed += block.size();
        }
        QCOMPARE(parser.state(), HttpResponseParser::State::Complete);
        QVERIFY(fed <= HttpResponseParser::MaxBodyReadBytes + 2 * block.size());
        QCOMPARE(parser.response().status, 200);
        QCOMPARE(parser.response().body, repeated('z', Keep));
        QVERIFY(parser.response().bodyTruncated);
        // The rest was never read: the connection cannot carry another request.
        QVERIFY(!parser.response().keepAlive);
    }
}

void tst_HttpResponseParser::bytesAfterTheResponse()
{
    HttpResponseParser parser(Keep);
    QCOMPARE(parser.feed(QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1")), HttpResponseParser::State::Complete);
    QVERIFY(parser.hasExcess());
    QCOMPARE(parser.response().body, QByteArray("ok"));

    HttpResponseParser later(Keep);
    QCOMPARE(later.feed(QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")), HttpResponseParser::State::Complete);
    QVERIFY(!later.hasExcess());
    later.feed(QByteArray("x"));
    QVERIFY(later.hasExcess());
}

QTEST_GUILESS_MAIN(tst_HttpResponseParser)
#include "tst_httpresponseparser.moc"
