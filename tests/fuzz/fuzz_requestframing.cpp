// Fuzz target: RequestFraming, the check that decides where each request on a connection ends
// before QHttpServer parses it. Whatever the bytes, it must reach the same verdict and the same
// request ends whether they arrive at once, in pieces or a byte at a time, and its ends must be
// positions it has seen, in order.
#include "fuzzsupport.h"

#include "server/http/requestframing.h"

#include <optional>

using namespace OpsDeck;

namespace {

constexpr qint64 kMaxHead = 512; // small, so inputs of a few KiB reach the head limit too

struct Verdict
{
    std::optional<int> status;
    QList<std::pair<qint64, bool>> ends; // position, HTTP/1.0
    qint64 position = 0;
};

Verdict collect(RequestFraming &framing, const std::optional<RequestFraming::Refusal> &refusal)
{
    Verdict v;
    if (refusal) {
        FUZZ_CHECK(refusal->status == 400 || refusal->status == 417 || refusal->status == 431 || refusal->status == 501
                   || refusal->status == 505);
        FUZZ_CHECK(!refusal->detail.isEmpty());
        v.status = refusal->status;
    }
    v.position = framing.position();
    for (auto end = framing.nextEnd(0); end; end = framing.nextEnd(end->position)) {
        FUZZ_CHECK(end->position > 0 && end->position <= v.position);
        FUZZ_CHECK(v.ends.isEmpty() || end->position > v.ends.last().first);
        v.ends.append({end->position, end->http10});
    }
    // A request waiting for 100 Continue began where the last one ended (or at the start).
    if (const auto &wanted = framing.continueWanted())
        FUZZ_CHECK(wanted->headStart == (v.ends.isEmpty() ? 0 : v.ends.last().first));
    return v;
}

// As RequestGuard feeds it: bytes inside a body of known length are only counted.
Verdict fedInPieces(const QList<QByteArrayView> &pieces)
{
    RequestFraming framing(kMaxHead);
    std::optional<RequestFraming::Refusal> refusal;
    for (const QByteArrayView piece : pieces) {
        if (framing.skips(piece.size()))
            framing.skip(piece.size());
        else
            refusal = framing.feed(piece);
        if (refusal)
            break;
    }
    return collect(framing, refusal);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const auto input = Fuzz::streamInput(data, size);
    if (!input)
        return 0;
    const QByteArrayView bytes = input->bytes;

    RequestFraming whole(kMaxHead);
    const Verdict atOnce = collect(whole, whole.feed(bytes));
    // Nothing is refused once the bytes were all framed; a refusal stops where it was found.
    if (!atOnce.status)
        FUZZ_CHECK(atOnce.position == bytes.size());
    FUZZ_CHECK(atOnce.position <= bytes.size());

    const Verdict inPieces = fedInPieces(Fuzz::pieces(bytes, input->seed));
    const Verdict byteByByte = fedInPieces(Fuzz::oneByOne(bytes));

    for (const Verdict *other : {&inPieces, &byteByByte}) {
        FUZZ_CHECK(other->status == atOnce.status);
        // A refusal may be found at a different byte of the line that shows it (fed in pieces, its
        // start was counted earlier), never at another line: the requests that ended before are the same.
        FUZZ_CHECK(other->ends == atOnce.ends);
        if (!atOnce.status)
            FUZZ_CHECK(other->position == atOnce.position);
    }
    return 0;
}
