// Standard Webhooks v1 signing and verification, and the legacy X-Hub-Signature (sha1) scheme.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>

#include <chrono>
#include <initializer_list>

namespace OpsDeck {

// Standard Webhooks (https://www.standardwebhooks.com) v1: the signed content is
// "{webhook-id}.{webhook-timestamp}.{body}", the key is the base64 part of a "whsec_" secret, and
// the header carries one "v1,<base64 HMAC-SHA256>" per active secret, space-separated, so a
// receiver keeps verifying while a secret is being rotated.
//
// Keys (QByteArray) below are decoded secret bytes (decodeSecret()); the legacy scheme uses the
// secret text itself as its HMAC key, as the providers configured for it expect.
class WebhookSignature final
{
public:
    enum class Status {
        Ok,
        MissingHeader,
        InvalidTimestamp,
        TimestampTooOld,
        TimestampTooNew,
        NoMatchingSignature,
    };

    struct Verification
    {
        Status status = Status::NoMatchingSignature;
        QString message;
        int matchedKey = -1; // index into the keys that verified, when ok()

        bool ok() const { return status == Status::Ok; }
    };

    struct DecodedSecret
    {
        QByteArray key;
        QString error; // empty when the secret was usable

        bool ok() const { return error.isEmpty(); }
    };

    using Headers = QList<QPair<QByteArray, QByteArray>>;

    // An HMAC-SHA256 key with its padded inner and outer blocks already hashed. A sender keeps
    // one per secret: each signature then hashes only the content and the 32-byte inner digest,
    // where a fresh HMAC hashes both padded key blocks again every time.
    class PreparedKey
    {
    public:
        PreparedKey() = default;
        explicit PreparedKey(const QByteArray &key);

        bool isNull() const { return !m_valid; }
        // The 32-byte HMAC-SHA256 of the content, the parts concatenated in order.
        QByteArray mac(std::initializer_list<QByteArrayView> parts) const;

    private:
        quint32 m_inner[8] = {};
        quint32 m_outer[8] = {};
        bool m_valid = false;
    };

    static constexpr int GeneratedSecretBytes = 32;
    static constexpr int MinSecretBytes = 24;
    static constexpr int MaxSecretBytes = 64;
    static constexpr std::chrono::seconds DefaultTolerance{5 * 60};

    WebhookSignature() = delete;

    // "whsec_" + base64 of 32 bytes from the system's cryptographic generator.
    static QString generateSecret();
    // "whsec_<base64>" or bare base64; refused unless it decodes strictly to 24..64 bytes.
    static DecodedSecret decodeSecret(const QString &secret);

    // "v1,<base64 HMAC-SHA256 of id.timestamp.body>".
    static QByteArray sign(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                           const QByteArray &key);
    // One signature per key, space-separated, in key order.
    static QByteArray signatureHeader(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                                      const QList<QByteArray> &keys);
    // The same with keys prepared once per secret, written into `header` (cleared first).
    static void signatureHeader(const QByteArray &msgId, qint64 timestamp, const QByteArray &body,
                                const QList<PreparedKey> &keys, QByteArray &header);

    // Checks the three headers against every key. Signatures of other versions ("v1a,...")
    // are skipped; a malformed one never matches. The timestamp may be at most `tolerance`
    // away from now in either direction (replay protection).
    static Verification verify(const QByteArray &msgId, const QByteArray &timestampHeader,
                               const QByteArray &signatureHeader, const QByteArray &body,
                               const QList<QByteArray> &keys, const QDateTime &now,
                               std::chrono::seconds tolerance = DefaultTolerance);

    // Legacy scheme: "sha1=<hex HMAC-SHA1 of body>" keyed with the secret text.
    static QByteArray hubSignature(const QByteArray &body, const QByteArray &secret);
    // True when the header matches the body under any of the secrets.
    static bool verifyHubSignature(const QByteArray &body, const QByteArray &header,
                                   const QList<QByteArray> &secrets);

    // For the attempt log: signature values replaced by "[redacted]" while keeping their
    // scheme prefixes ("v1,[redacted] v1,[redacted]"), so the log shows how many were sent
    // without handing out anything replayable. Authorization values are redacted too.
    static Headers redactSignatureHeaders(const Headers &headers);
    static bool isSignatureHeader(const QByteArray &name);

    // Compares without an early exit, so timing does not reveal how much of a guess was right.
    static bool constantTimeEquals(const QByteArray &a, const QByteArray &b);

    static QString statusName(Status status);
};

} // namespace OpsDeck
