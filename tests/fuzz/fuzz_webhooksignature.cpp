// Fuzz target: Standard Webhooks signing, whose HMAC-SHA256 is OpsDeck's own (keys prepared once
// per secret). For any key, id, timestamp and body: the prepared MAC must equal Qt's
// QMessageAuthenticationCode, whatever the parts it is given; a signature must verify against its
// own key and fail against any other; and a signature header made of arbitrary bytes must never
// verify.
#include "fuzzsupport.h"

#include "core/webhooksignature.h"

#include <QCryptographicHash>
#include <QMessageAuthenticationCode>

using namespace OpsDeck;

namespace {

// Reads `n` bytes (fewer at the end) and moves past them.
QByteArray take(QByteArrayView &input, qsizetype n)
{
    const QByteArrayView part = input.first(std::min(n, input.size()));
    input = input.sliced(part.size());
    return part.toByteArray();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 4)
        return 0;
    QByteArrayView input(reinterpret_cast<const char *>(data), qsizetype(size));
    // Lengths first: a key of 0 to 159 bytes (over the 64-byte block too), an id, then the body.
    const qsizetype keyLength = std::uint8_t(input.at(0)) % 160;
    const qsizetype idLength = 1 + std::uint8_t(input.at(1)) % 40;
    const qint64 timestamp = 1'700'000'000 + std::uint8_t(input.at(2)) * 1000;
    const qsizetype cut = std::uint8_t(input.at(3));
    input = input.sliced(4);
    const QByteArray key = take(input, keyLength);
    const QByteArray id = take(input, idLength);
    const QByteArray body = input.toByteArray();

    // The prepared MAC against Qt's, over the body cut in two anywhere (and not at all).
    const WebhookSignature::PreparedKey prepared(key);
    const qsizetype at = body.isEmpty() ? 0 : cut % (body.size() + 1);
    const QByteArray expected = QMessageAuthenticationCode::hash(body, key, QCryptographicHash::Sha256);
    FUZZ_CHECK(prepared.mac({QByteArrayView(body)}) == expected);
    FUZZ_CHECK(prepared.mac({QByteArrayView(body).first(at), QByteArrayView(body).sliced(at)}) == expected);

    // Signed, then verified as a receiver would at the moment of sending (one requires an id).
    if (id.isEmpty())
        return 0;
    const QDateTime now = QDateTime::fromSecsSinceEpoch(timestamp, Qt::UTC);
    const QByteArray ts = QByteArray::number(timestamp);
    const QByteArray header = WebhookSignature::signatureHeader(id, timestamp, body, QList<QByteArray>{key});
    FUZZ_CHECK(header == WebhookSignature::sign(id, timestamp, body, key));
    QByteArray fromPrepared;
    WebhookSignature::signatureHeader(id, timestamp, body, QList<WebhookSignature::PreparedKey>{prepared}, fromPrepared);
    FUZZ_CHECK(fromPrepared == header);
    const auto good = WebhookSignature::verify(id, ts, header, body, {key}, now);
    FUZZ_CHECK(good.ok() && good.matchedKey == 0);
    // Another key (one byte more) must not verify it; nor may the body with a byte more.
    FUZZ_CHECK(!WebhookSignature::verify(id, ts, header, body, {key + 'k'}, now).ok());
    FUZZ_CHECK(!WebhookSignature::verify(id, ts, header, body + 'b', {key}, now).ok());
    // The fuzzer's bytes as the header: a forged signature never verifies (unless it holds the
    // true one, which it cannot know: the header is part of the signed body here).
    const QByteArray forged = body.left(200);
    if (!forged.contains(header.mid(3)))
        FUZZ_CHECK(!WebhookSignature::verify(id, ts, forged, body, {key}, now).ok());
    return 0;
}
