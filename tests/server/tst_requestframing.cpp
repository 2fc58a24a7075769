// The framing of requests as they arrive: what ends where, and what is refused before it is parsed.
#include "server/http/requestframing.h"

#include <QtTest>

using namespace OpsDeck;

class tst_RequestFraming : public QObject
{
    Q_OBJECT

private slots:
    void framing_data();
    void framing();
    void requestEndsAreKnown();
    void bodiesAreCountedNotRead();
    void aWaitForContinueIsKnown();
    void aTrailerIsRefusedAtItsFirstByte();
};

namespace {

constexpr qint64 kHead = 1024;

// The verdict on `bytes` fed at once, and fed a byte at a time: 0 when nothing is refused.
std::pair<int, int> verdicts(const QByteArray &bytes)
{
    RequestFraming whole(kHead);
    const auto once = whole.feed(bytes);
    RequestFraming pieces(kHead);
    std::optional<RequestFraming::Refusal> bytewise;
    for (qsizetype i = 0; i < bytes.size() && !bytewise; ++i)
        bytewise = pieces.feed(QByteArrayView(bytes).sliced(i, 1));
    return {once ? once->status : 0, bytewise ? bytewise->status : 0};
}

const QByteArray kPause = "POST /api/v1/endpoints/1/pause HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";

} // namespace

void tst_RequestFraming::framing_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("status");

    QTest::newRow("get") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\n\r\n") << 0;
    QTest::newRow("post, then another") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello") + kPause << 0;
    QTest::newRow("chunked, extension")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n5;x=y\r\nhello\r\n1A \r\n")
               + QByteArray(26, 'z') + "\r\n0\r\n\r\n" + kPause
        << 0;
    // QHttpServer 6.4 would end the request inside its trailers.
    QTest::newRow("trailer")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n") + kPause
        << 400;
    QTest::newRow("empty line first") << QByteArray("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n") << 0;
    QTest::newRow("HTTP/1.0") << QByteArray("GET / HTTP/1.0\r\n\r\n") << 0;
    QTest::newRow("bare LF") << QByteArray("POST /a HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}") + kPause << 0;
    QTest::newRow("a body that looks like a request")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: ") + QByteArray::number(kPause.size()) + "\r\n\r\n" + kPause << 0;

    // Each of these would have QHttpServer read an empty body and take the rest for a request.
    const auto smuggling = [](const QByteArray &headers) {
        return QByteArray("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\n") + headers + "\r\n" + kPause;
    };
    QTest::newRow("length abc") << smuggling("Content-Length: abc\r\n") << 400;
    QTest::newRow("length -5") << smuggling("Content-Length: -5\r\n") << 400;
    QTest::newRow("length beyond 64 bits") << smuggling("Content-Length: 99999999999999999999999\r\n") << 400;
    QTest::newRow("length list") << smuggling("Content-Length: 12, 12\r\n") << 400;
    QTest::newRow("length in hex") << smuggling("Content-Length: 0x0c\r\n") << 400;
    QTest::newRow("two lengths") << smuggling("Content-Length: 0\r\nContent-Length: 12\r\n") << 400;
    QTest::newRow("gzip") << smuggling("Transfer-Encoding: gzip\r\n") << 501;
    QTest::newRow("chunked twice") << smuggling("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") << 400;
    QTest::newRow("chunked and a length") << smuggling("Transfer-Encoding: chunked\r\nContent-Length: 3\r\n") << 400;
    QTest::newRow("space before the colon") << smuggling("Content-Length : 12\r\n") << 400;
    QTest::newRow("folded") << smuggling("X-A: 1\r\n Content-Length: 12\r\n") << 400;
    QTest::newRow("bare CR") << smuggling("X-A: 1\rContent-Length: 12\r\n") << 400;
    QTest::newRow("chunk size zz")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") + kPause << 400;
    QTest::newRow("chunk longer than said")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n") << 400;
    QTest::newRow("length in a trailer")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nContent-Length: 5\r\n\r\n") << 400;
    // QHttpServer's parser takes any two bytes after a chunk for its CR LF, and reads past a bare
    // LF in a chunk extension: in a chunked body only CR LF ends a line.
    QTest::newRow("bare LF after a chunk")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nAAAAA\n30\r\n") + kPause << 400;
    QTest::newRow("bare LF in a chunk extension")
        << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nAAAAA\r\n0\r\n\r\n") << 400;
    QTest::newRow("chunked in HTTP/1.0")
        << QByteArray("POST /a HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") << 400;
    QTest::newRow("no Host") << QByteArray("GET / HTTP/1.1\r\nX-A: 1\r\n\r\n") << 400;
    QTest::newRow("two Hosts") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n") << 400;
    QTest::newRow("two Authorizations") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nauthorization: Bearer b\r\n\r\n") << 400;
    QTest::newRow("two Idempotency-Keys") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n\r\n") << 400;
    QTest::newRow("two reasons") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nX-OpsDeck-Reason: a\r\nX-OpsDeck-Reason: b\r\n\r\n") << 400;
    QTest::newRow("two Content-Types") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\nContent-Type: c/d\r\n\r\n") << 400;
    QTest::newRow("list fields may repeat") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nAccept: a/b\r\nAccept: c/d\r\nIf-Match: \"1\"\r\nIf-Match: \"2\"\r\n\r\n") << 0;
    QTest::newRow("one of each, in two requests") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\n\r\n") << 0;
    QTest::newRow("two Hosts in HTTP/1.0") << QByteArray("GET / HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n") << 400;
    QTest::newRow("Expect 100-continue") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-Continue\r\nContent-Length: 2\r\n\r\n{}") << 0;
    QTest::newRow("Expect something else") << QByteArray("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n") << 417;
    QTest::newRow("Expect in HTTP/1.0 is ignored") << QByteArray("POST /a HTTP/1.0\r\nExpect: 200-ok\r\n\r\n") << 0;
    QTest::newRow("HTTP/9.9") << QByteArray("GET / HTTP/9.9\r\n\r\n") << 505;
    QTest::newRow("no version") << QByteArray("GET /\r\n\r\n") << 400;
    QTest::newRow("two spaces") << QByteArray("GET  / HTTP/1.1\r\nHost: x\r\n\r\n") << 400;
    QTest::newRow("head too large") << QByteArray("GET / HTTP/1.1\r\nHost: x\r\nX-Big: ") + QByteArray(kHead, 'a') + "\r\n\r\n" << 431;
    QTest::newRow("endless empty lines") << QByteArray(2 * kHead, '\n') << 431;
}

void tst_RequestFraming::framing()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, status);
    const auto [once, bytewise] = verdicts(bytes);
    QCOMPARE(once, status);
    QCOMPARE(bytewise, status);
}

void tst_RequestFraming::requestEndsAreKnown()
{
    // Where each request ends, whether it arrives whole or a byte at a time: the guard follows
    // QHttpServer's passes, one request each, by these.
    const QByteArray get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const QByteArray post = "POST /a HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc";
    const QByteArray chunked = "POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n";
    const QByteArray all = get + post + chunked + "GET /partial HT";
    for (const bool bytewise : {false, true}) {
        RequestFraming f(kHead);
        if (bytewise) {
            for (qsizetype i = 0; i < all.size(); ++i)
                QVERIFY(!f.feed(QByteArrayView(all).sliced(i, 1)));
        } else {
            QVERIFY(!f.feed(all));
        }
        QCOMPARE(f.position(), all.size());
        const auto ends = [&f](qint64 from) {
            const auto end = f.nextEnd(from);
            return end ? std::pair(end->position, end->http10) : std::pair(qint64(-1), false);
        };
        QCOMPARE(ends(0), std::pair(qint64(get.size()), false));
        QCOMPARE(ends(get.size()), std::pair(qint64(get.size() + post.size()), true));
        QCOMPARE(ends(get.size() + post.size()), std::pair(qint64(get.size() + post.size() + chunked.size()), false));
        QCOMPARE(ends(get.size() + post.size() + chunked.size()), std::pair(qint64(-1), false));
    }
}

void tst_RequestFraming::bodiesAreCountedNotRead()
{
    // Inside a body of known length the caller only counts: the guard copies no bytes of it.
    RequestFraming f(kHead);
    QVERIFY(!f.feed("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"));
    QVERIFY(f.skips(1000));
    QVERIFY(!f.skips(1001));
    f.skip(600);
    QVERIFY(f.skips(400));
    QVERIFY(!f.skips(401));
    // What follows the body is the next request, read as one.
    QVERIFY(!f.feed(QByteArray(400, 'x') + "GET / HTTP/1.1\r\nHost: x\r\n"));
    QVERIFY(!f.skips(1));
    const auto refusal = f.feed("Content-Length: nope\r\n\r\n");
    QVERIFY(refusal);
    QCOMPARE(refusal->status, 400);
    QVERIFY2(refusal->detail.contains(QStringLiteral("nope")), qPrintable(refusal->detail));
}

void tst_RequestFraming::aWaitForContinueIsKnown()
{
    // The guard writes 100 Continue for a request whose head is whole and that waits for it, once
    // the requests before it (up to where its head began) are answered.
    const QByteArray get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    const QByteArray head = "PUT /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n";
    RequestFraming f(kHead);
    QVERIFY(!f.feed(get + head.first(head.size() - 2)));
    QVERIFY(!f.continueWanted()); // the head is not whole yet
    QVERIFY(!f.feed("\r\n"));
    QVERIFY(f.continueWanted());
    QCOMPARE(f.continueWanted()->headStart, get.size());
    QCOMPARE(f.continueWanted()->contentLength, 5);
    QVERIFY(!f.feed("hel"));
    QVERIFY(f.continueWanted()); // a client may send its body without waiting
    QVERIFY(!f.feed("lo"));
    QVERIFY(!f.continueWanted());
    QVERIFY(f.betweenRequests());

    // Chunked: no length to check against the limit. Without a body, nothing to wait for; HTTP/1.0
    // cannot ask.
    RequestFraming chunked(kHead);
    QVERIFY(!chunked.feed("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n"));
    QVERIFY(chunked.continueWanted());
    QCOMPARE(chunked.continueWanted()->contentLength, std::nullopt);
    QVERIFY(!chunked.betweenRequests());
    RequestFraming empty(kHead);
    QVERIFY(!empty.feed("POST /a HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n"));
    QVERIFY(!empty.continueWanted());
    RequestFraming old(kHead);
    QVERIFY(!old.feed("POST /a HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"));
    QVERIFY(!old.continueWanted());
}

void tst_RequestFraming::aTrailerIsRefusedAtItsFirstByte()
{
    // QHttpServer 6.4 ends a chunked request at the first byte of a trailer field: the guard must
    // refuse it then, not once the field's line is whole (by then the request has run).
    RequestFraming f(kHead);
    QVERIFY(!f.feed("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"));
    QVERIFY(!f.feed("\r")); // the CR of the empty line that ends the request may come alone
    RequestFraming g(kHead);
    QVERIFY(!g.feed("POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n"));
    const auto refusal = g.feed("X");
    QVERIFY(refusal);
    QCOMPARE(refusal->status, 400);
    QVERIFY(!g.nextEnd(0));
}

QTEST_GUILESS_MAIN(tst_RequestFraming)
#include "tst_requestframing.moc"
