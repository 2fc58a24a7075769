// Standard Webhooks v1 signing and verification, and the legacy X-Hub-Signature (sha1) scheme.
#include "webhooksignature.h"

#include "sha256blocks.h"

#include <QMessageAuthenticationCode>
#include <QRandomGenerator>

#include <algorithm>
#include <cstdio>

namespace OpsDeck {

namespace {

const QByteArray SecretPrefix = QByteArrayLiteral("whsec_");
const QByteArray Version1 = QByteArrayLiteral("v1");
const QByteArray Redacted = QByteArrayLiteral("[redacted]");

QByteArray signedContent(const QByteArray &msgId, const QByteArray &timestamp, const QByteArray &body)
{
    QByteArray content;
    content.reserve(msgId.size() + timestamp.size() + body.size() + 2);
    content.append(msgId).append('.').append(timestamp).append('.').append(body);
    return content;
}

// SHA-256 with its state open, so that HMAC's padded key blocks are hashed once per key
// (QCryptographicHash cannot hand out or take a midstate in Qt 6.4).
constexpr int Sha256BlockBytes = Sha256Blocks::BlockBytes;
constexpr int Sha256DigestBytes = Sha256Blocks::DigestBytes;
const quint32 *const Sha256InitialState = Sha256Blocks::InitialState;

// A running SHA-256: a state, the bytes hashed so far and the tail of an unfinished block.
class Sha256
{
public:
    explicit Sha256(const quint32 state[8], quint64 hashedBytes = 0)
        : m_hashedBytes(hashedBytes)
    {
        std::copy(state, state + 8, m_state);
    }

    void add(const char *data, qsizetype size)
    {
        const auto *bytes = reinterpret_cast<const unsigned char *>(data);
        m_hashedBytes += quint64(size);
        if (m_used > 0) {
            const qsizetype take = qMin(size, qsizetype(Sha256BlockBytes - m_used));
            std::copy(bytes, bytes + take, m_block + m_used);
            m_used += int(take);
            bytes += take;
            size -= take;
            if (m_used < Sha256BlockBytes)
                return;
            Sha256Blocks::compress(m_state, m_block, 1);
            m_used = 0;
        }
        const qsizetype whole = size / Sha256BlockBytes;
        Sha256Blocks::compress(m_state, bytes, whole);
        bytes += whole * Sha256BlockBytes;
        size -= whole * Sha256BlockBytes;
        std::copy(bytes, bytes + size, m_block);
        m_used = int(size);
    }

    void finish(unsigned char digest[Sha256DigestBytes])
    {
        const quint64 bits = m_hashedBytes * 8;
        m_block[m_used++] = 0x80;
        if (m_used > Sha256BlockBytes - 8) {
            std::fill(m_block + m_used, m_block + Sha256BlockBytes, 0);
            Sha256Blocks::compress(m_state, m_block, 1);
            m_used = 0;
        }
        std::fill(m_block + m_used, m_block + Sha256BlockBytes - 8, 0);
        for (int i = 0; i < 8; ++i)
            m_block[Sha256BlockBytes - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
        Sha256Blocks::compress(m_state, m_block, 1);
        for (int i = 0; i < 8; ++i) {
            digest[4 * i] = static_cast<unsigned char>(m_state[i] >> 24);
            digest[4 * i + 1] = static_cast<unsigned char>(m_state[i] >> 16);
            digest[4 * i + 2] = static_cast<unsigned char>(m_state[i] >> 8);
            digest[4 * i + 3] = static_cast<unsigned char>(m_state[i]);
        }
    }

    const quint32 *state() const { return m_state; }

private:
    quint32 m_state[8];
    quint64 m_hashedBytes;
    unsigned char m_block[Sha256BlockBytes];
    int m_used = 0;
};

QByteArray hmacSha256(const QByteArray &content, const QByteArray &key)
{
    return WebhookSignature::PreparedKey(key).mac({content});
}

bool equalsIgnoringCase(QByteArrayView text, QByteArrayView lowerCase)
{
    return text.compare(lowerCase, Qt::CaseInsensitive) == 0;
}

bool startsWithIgnoringCase(QByteArrayView text, QByteArrayView lowerCase)
{
    return text.size() >= lowerCase.size() && equalsIgnoringCase(text.first(lowerCase.size()), lowerCase);
}

// Every attempt's headers pass through here, so names are compared in place, not lowered first.
QByteArray redactValue(const QByteArray &name, const QByteArray &value)
{
    if (equalsIgnoringCase(name, "webhook-signature")) {
        // "v1,<sig> v1,<sig>": each space-separated part keeps its version, written in one pass
        // (every attempt logs this header).
        QByteArray out;
        out.reserve(value.size());
        const auto isSpace = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
        for (qsizetype i = 0; i < value.size();) {
            if (isSpace(value.at(i))) {
                ++i;
                continue;
            }
            qsizetype end = i;
            while (end < value.size() && !isSpace(value.at(end)))
                ++end;
            const qsizetype comma = QByteArrayView(value).sliced(i, end - i).indexOf(',');
            if (!out.isEmpty())
                out.append(' ');
            if (comma >= 0)
                out.append(value.constData() + i, comma + 1);
            out.append(Redacted);
            i = end;
        }
        return out.isEmpty() ? Redacted : out;
    }
    if (startsWithIgnoringCase(name, "x-hub-signature")) {
        const qsizetype equals = value.indexOf('=');
        return equals < 0 ? Redacted : value.left(equals + 1) + Redacted;
    }
    if (equalsIgnoringCase(name, "authorization")) {
        const qsizetype space = value.indexOf(' ');
        return space < 0 ? Redacted : value.left(space + 1) + Redacted;
    }
    return value;
}

} // namespace

WebhookSignature::PreparedKey::PreparedKey(const QByteArray &key)
    : m_valid(true)
{
    unsigned char padded[Sha256BlockBytes] = {};
    if (key.size() > Sha256BlockBytes) {
        // RFC 2104: a key longer than a block is replaced by its hash.
        Sha256 keyHash(Sha256InitialState);
        keyHash.add(key.constData(), key.size());
        keyHash.finish(padded);
    } else {
        std::copy(key.constBegin(), key.constEnd(), padded);
    }
    unsigned char block[Sha256BlockBytes];
    std::copy(Sha256InitialState, Sha256InitialState + 8, m_inner);
    std::copy(Sha256InitialState, Sha256InitialState + 8, m_outer);
    for (int i = 0; i < Sha256BlockBytes; ++i)
        block[i] = padded[i] ^ 0x36;
    Sha256Blocks::compress(m_inner, block, 1);
    for (int i = 0; i < Sha256BlockBytes; ++i)
        block[i] = padded[i] ^ 0x5c;
    Sha256Blocks::compress(m_outer, block, 1);
}

QByteArray WebhookSignature::PreparedKey::mac(std::initializer_list<QByteArrayView> parts) const
{
    Q_ASSERT(m_valid);
    Sha256 inner(m_inner, Sha256BlockBytes);
    for (const QByteArrayView part : parts)
        inner.add(part.data(), part.size());
    unsigned char innerDigest[Sha256DigestBytes];
    inner.finish(innerDigest);
    Sha256 outer(m_outer, Sha256BlockBytes);
    outer.add(reinterpret_cast<const char *>(innerDigest), Sha256DigestBytes);
    QByteArray digest(Sha256DigestBytes, Qt::Uninitialized);
    outer.finish(reinterpret_cast<unsigned char *>(digest.data()));
    return digest;
}

QString WebhookSignature::generateSecret()
{
    QByteArray bytes(GeneratedSecretBytes, Qt::Uninitialized);
    // QRandomGenerator::system() is the OS's cryptographically secure source.
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()),
                                          GeneratedSecretBytes / int(sizeof(quint32)));
    return QString::fromLatin1(SecretPrefix + bytes.toBase64());
}

WebhookSignature::DecodedSecret WebhookSignature::decodeSecret(const QString &secret)
{
    DecodedSecret result;
    QByteArray text = secret.trimmed().toLatin1();
    if (text.startsWith(SecretPrefix))
        text = text.mid(SecretPrefix.size());
    if (text.isEmpty()) {
        result.error = QStringLiteral("the secret is empty");
        return result;
    }
    const QByteArray::FromBase64Result decoded =
        QByteArray::fromBase64Encoding(text, QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded) {
        result.error = QStringLiteral("the secret is not valid base64");
        return result;
    }
    if (decoded.decoded.size() < MinSecretBytes || decoded.decoded.size() > MaxSecretBytes) {
        result.error = QStringLiteral("the secret decodes to %1 bytes; it must be %2 to %3")
                           .arg(decoded.decoded.size())
                           .arg(MinSecretBytes)
                           .arg(MaxSecretBytes);
        return result;
    }
    result.key = decoded.decoded;
    return result;
}

QByteArray WebhookSignature::sign(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                                  const QByteArray &key)
{
    return Version1 + ',' + hmacSha256(signedContent(msgId, QByteArray::number(timestamp), body), key).toBase64();
}

QByteArray WebhookSignature::signatureHeader(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                                             const QList<QByteArray> &keys)
{
    QList<QByteArray> signatures;
    signatures.reserve(keys.size());
    for (const QByteArray &key : keys)
        signatures.append(sign(msgId, timestamp, body, key));
    return signatures.join(' ');
}

void WebhookSignature::signatureHeader(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                                       const QList<PreparedKey> &keys, QByteArray &header)
{
    char digits[24];
    const int digitCount = std::snprintf(digits, sizeof digits, "%lld", static_cast<long long>(timestamp));
    const QByteArrayView timestampText(digits, digitCount);
    header.clear();
    header.reserve(keys.size() * 48);
    for (const PreparedKey &key : keys) {
        if (!header.isEmpty())
            header.append(' ');
        header.append(Version1).append(',').append(key.mac({msgId, ".", timestampText, ".", body}).toBase64());
    }
}

WebhookSignature::Verification WebhookSignature::verify(const QByteArray &msgId, const QByteArray &timestampHeader,
                                                        const QByteArray &signatureHeader, const QByteArray &body,
                                                        const QList<QByteArray> &keys, const QDateTime &now,
                                                        std::chrono::seconds tolerance)
{
    Verification result;
    if (msgId.isEmpty() || timestampHeader.isEmpty() || signatureHeader.isEmpty()) {
        result.status = Status::MissingHeader;
        result.message = msgId.isEmpty()            ? QStringLiteral("webhook-id header missing")
                         : timestampHeader.isEmpty() ? QStringLiteral("webhook-timestamp header missing")
                                                     : QStringLiteral("webhook-signature header missing");
        return result;
    }

    const QByteArray timestampText = timestampHeader.trimmed();
    bool digits = !timestampText.isEmpty() && timestampText.size() <= 15;
    for (const char c : timestampText)
        digits = digits && c >= '0' && c <= '9';
    if (!digits) {
        result.status = Status::InvalidTimestamp;
        result.message = QStringLiteral("webhook-timestamp is not unix seconds");
        return result;
    }
    const qint64 timestamp = timestampText.toLongLong();
    const qint64 nowSecs = now.toSecsSinceEpoch();
    if (nowSecs - timestamp > tolerance.count()) {
        result.status = Status::TimestampTooOld;
        result.message = QStringLiteral("webhook-timestamp is %1 s old (tolerance %2 s)")
                             .arg(nowSecs - timestamp)
                             .arg(tolerance.count());
        return result;
    }
    if (timestamp - nowSecs > tolerance.count()) {
        result.status = Status::TimestampTooNew;
        result.message = QStringLiteral("webhook-timestamp is %1 s in the future (tolerance %2 s)")
                             .arg(timestamp - nowSecs)
                             .arg(tolerance.count());
        return result;
    }

    // The content is signed with the header's own text, exactly as the sender wrote it.
    const QByteArray content = signedContent(msgId, timestampText, body);
    QList<QByteArray> expected;
    expected.reserve(keys.size());
    for (const QByteArray &key : keys)
        expected.append(hmacSha256(content, key));

    for (const QByteArray &part : signatureHeader.simplified().split(' ')) {
        const qsizetype comma = part.indexOf(',');
        if (comma < 0 || part.left(comma) != Version1)
            continue;
        const QByteArray::FromBase64Result decoded = QByteArray::fromBase64Encoding(
            part.mid(comma + 1), QByteArray::Base64Encoding | QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded)
            continue;
        for (int i = 0; i < expected.size(); ++i) {
            if (constantTimeEquals(decoded.decoded, expected.at(i))) {
                result.status = Status::Ok;
                result.matchedKey = i;
                return result;
            }
        }
    }
    result.status = Status::NoMatchingSignature;
    result.message = keys.isEmpty() ? QStringLiteral("no secret to verify with")
                                    : QStringLiteral("no v1 signature matches");
    return result;
}

QByteArray WebhookSignature::hubSignature(const QByteArray &body, const QByteArray &secret)
{
    return QByteArrayLiteral("sha1=") + QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha1).toHex();
}

bool WebhookSignature::verifyHubSignature(const QByteArray &body, const QByteArray &header,
                                          const QList<QByteArray> &secrets)
{
    const QByteArray value = header.trimmed();
    if (!value.startsWith("sha1="))
        return false;
    // Hex digits in either case are the same signature.
    const QByteArray given = QByteArray::fromHex(value.mid(5));
    if (given.size() != 20 || value.size() != 45)
        return false;
    bool matched = false;
    for (const QByteArray &secret : secrets)
        matched = constantTimeEquals(given, QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha1))
                  || matched;
    return matched;
}

WebhookSignature::Headers WebhookSignature::redactSignatureHeaders(const Headers &headers)
{
    Headers result;
    result.reserve(headers.size());
    for (const auto &[name, value] : headers)
        result.append({name, redactValue(name, value)});
    return result;
}

bool WebhookSignature::isSignatureHeader(const QByteArray &name)
{
    return equalsIgnoringCase(name, "webhook-signature") || startsWithIgnoringCase(name, "x-hub-signature");
}

bool WebhookSignature::constantTimeEquals(const QByteArray &a, const QByteArray &b)
{
    if (a.size() != b.size())
        return false;
    unsigned char diff = 0;
    for (qsizetype i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a.at(i) ^ b.at(i));
    return diff == 0;
}

QString WebhookSignature::statusName(Status status)
{
    switch (status) {
    case Status::Ok:
        return QStringLiteral("ok");
    case Status::MissingHeader:
        return QStringLiteral("missing-header");
    case Status::InvalidTimestamp:
        return QStringLiteral("invalid-timestamp");
    case Status::TimestampTooOld:
        return QStringLiteral("timestamp-too-old");
    case Status::TimestampTooNew:
        return QStringLiteral("timestamp-too-new");
    case Status::NoMatchingSignature:
        return QStringLiteral("no-matching-signature");
    }
    return {};
}

} // namespace OpsDeck
