// Fuzz target: HttpResponseParser, which reads what a provider's endpoint answers to a callback.
// Whatever the endpoint sends, the parser must give the same response (or the same failure)
// whether the bytes arrive at once, in pieces or a byte at a time, keep no more body than it was
// told to, and never take a response for complete without a status it accepts.
#include "fuzzsupport.h"

#include "server/delivery/httpresponseparser.h"

using namespace OpsDeck;

namespace {

constexpr qsizetype kKeepBody = 64;

struct Outcome
{
    HttpResponseParser::State state = HttpResponseParser::State::Incomplete;
    HttpResponse response;
    QString error;
    bool excess = false;
    bool sawBytes = false;
};

Outcome parse(const QList<QByteArrayView> &pieces, bool closed)
{
    HttpResponseParser parser(kKeepBody);
    for (const QByteArrayView piece : pieces)
        parser.feed(piece.data(), piece.size());
    if (closed)
        parser.finish();
    Outcome o{parser.state(), parser.response(), parser.error(), parser.hasExcess(), parser.sawBytes()};
    FUZZ_CHECK(o.response.body.size() <= kKeepBody);
    FUZZ_CHECK(o.response.headers.size() <= HttpResponseParser::MaxHeaderCount);
    if (o.state == HttpResponseParser::State::Failed)
        FUZZ_CHECK(!o.error.isEmpty() && !o.response.keepAlive);
    if (o.state == HttpResponseParser::State::Complete) {
        FUZZ_CHECK(o.error.isEmpty());
        FUZZ_CHECK(o.response.status >= 200 && o.response.status <= 999);
    }
    if (closed)
        FUZZ_CHECK(o.state != HttpResponseParser::State::Incomplete);
    return o;
}

void checkSame(const Outcome &a, const Outcome &b)
{
    FUZZ_CHECK(a.state == b.state);
    FUZZ_CHECK(a.error == b.error);
    FUZZ_CHECK(a.sawBytes == b.sawBytes);
    if (a.state != HttpResponseParser::State::Complete)
        return;
    FUZZ_CHECK(a.response.status == b.response.status);
    FUZZ_CHECK(a.response.reason == b.response.reason);
    FUZZ_CHECK(a.response.headers == b.response.headers);
    FUZZ_CHECK(a.response.body == b.response.body);
    FUZZ_CHECK(a.response.bodyTruncated == b.response.bodyTruncated);
    FUZZ_CHECK(a.response.keepAlive == b.response.keepAlive);
    FUZZ_CHECK(a.excess == b.excess);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const auto input = Fuzz::streamInput(data, size);
    if (!input)
        return 0;
    const QList<QByteArrayView> inPieces = Fuzz::pieces(input->bytes, input->seed);
    const QList<QByteArrayView> oneByOne = Fuzz::oneByOne(input->bytes);
    for (const bool closed : {false, true}) {
        const Outcome atOnce = parse({input->bytes}, closed);
        checkSame(atOnce, parse(inPieces, closed));
        checkSame(atOnce, parse(oneByOne, closed));
    }
    return 0;
}
