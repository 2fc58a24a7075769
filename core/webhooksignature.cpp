// Standard Webhooks v1 signing and verification, and the legacy X-Hub-Signature (sha1) scheme.
#include "webhooksignature.h"

#include <QMessageAuthenticationCode>
#include <QRandomGenerator>

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

QByteArray hmacSha256(const QByteArray &content, const QByteArray &key)
{
    return QMessageAuthenticationCode::hash(content, key, QCryptographicHash::Sha256);
}

QByteArray redactValue(const QByteArray &name, const QByteArray &value)
{
    const QByteArray lower = name.toLower();
    if (lower == "webhook-signature") {
        QList<QByteArray> parts;
        for (const QByteArray &part : value.simplified().split(' ')) {
            const qsizetype comma = part.indexOf(',');
            parts.append(comma < 0 ? Redacted : part.left(comma + 1) + Redacted);
        }
        return parts.join(' ');
    }
    if (lower.startsWith("x-hub-signature")) {
        const qsizetype equals = value.indexOf('=');
        return equals < 0 ? Redacted : value.left(equals + 1) + Redacted;
    }
    if (lower == "authorization") {
        const qsizetype space = value.indexOf(' ');
        return space < 0 ? Redacted : value.left(space + 1) + Redacted;
    }
    return value;
}

} // namespace

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
    const QByteArray lower = name.toLower();
    return lower == "webhook-signature" || lower.startsWith("x-hub-signature");
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
