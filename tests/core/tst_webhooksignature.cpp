// Standard Webhooks signing against the specification's reference vector, rotation, tampering,
// tolerance edges, secrets, the legacy X-Hub-Signature scheme and redaction.
#include "core/sha256blocks.h"
#include "core/webhooksignature.h"

#include <QMessageAuthenticationCode>
#include <QtTest>

using namespace OpsDeck;
using Status = WebhookSignature::Status;

Q_DECLARE_METATYPE(OpsDeck::WebhookSignature::Status)

namespace {

// The reference vector of the Standard Webhooks libraries' own tests
// (standard-webhooks/standard-webhooks, libraries/*/tests: secret, message id, timestamp,
// payload and expected signature); also reproduced with
//   printf '%s' 'msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}' |
//   openssl dgst -sha256 -mac HMAC -macopt hexkey:<hex of the base64-decoded secret> -binary | base64
const QString VectorSecret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const QByteArray VectorId = QByteArrayLiteral("msg_p5jXN8AQM9LWM0D4loKWxJek");
constexpr qint64 VectorTimestamp = 1614265330;
const QByteArray VectorBody = QByteArrayLiteral(R"({"test": 2432232314})");
const QByteArray VectorSignature = QByteArrayLiteral("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");

QByteArray vectorKey()
{
    return WebhookSignature::decodeSecret(VectorSecret).key;
}

QByteArray otherKey()
{
    return QByteArray(32, '\x42');
}

QDateTime atSecs(qint64 secs)
{
    return QDateTime::fromSecsSinceEpoch(secs, Qt::UTC);
}

} // namespace

class tst_WebhookSignature final : public QObject
{
    Q_OBJECT

private slots:
    void referenceVector();
    void preparedKeys_data();
    void preparedKeys();
    void verify_data();
    void verify();
    void rotation_data();
    void rotation();
    void decodeSecret_data();
    void decodeSecret();
    void generatedSecrets();
    void hubSignature_data();
    void hubSignature();
    void redaction_data();
    void redaction();
    void constantTimeEquals();
    void shaInstructionsAgreeWithThePortableCode();
};

void tst_WebhookSignature::referenceVector()
{
    const WebhookSignature::DecodedSecret secret = WebhookSignature::decodeSecret(VectorSecret);
    QVERIFY2(secret.ok(), qPrintable(secret.error));
    QCOMPARE(secret.key.size(), 24);
    QCOMPARE(WebhookSignature::sign(VectorId, VectorTimestamp, VectorBody, secret.key), VectorSignature);
    QCOMPARE(WebhookSignature::signatureHeader(VectorId, VectorTimestamp, VectorBody, {secret.key}), VectorSignature);
    const auto result = WebhookSignature::verify(VectorId, QByteArray::number(VectorTimestamp), VectorSignature,
                                                 VectorBody, {secret.key}, atSecs(VectorTimestamp));
    QVERIFY2(result.ok(), qPrintable(result.message));
    QCOMPARE(result.matchedKey, 0);

    QByteArray header("stale");
    WebhookSignature::signatureHeader(VectorId, VectorTimestamp, VectorBody, {WebhookSignature::PreparedKey(secret.key)},
                                      header);
    QCOMPARE(header, VectorSignature);
}

// The own HMAC-SHA256 against Qt's at the key and padding edges: keys shorter than, as long as
// and longer than a block (hashed first), content ending before, at and after the 55/56-byte
// boundary where the length no longer fits the last block.
void tst_WebhookSignature::preparedKeys_data()
{
    QTest::addColumn<QByteArray>("key");
    QTest::addColumn<QByteArray>("content");
    const int keySizes[] = {0, 1, 24, 32, 63, 64, 65, 200};
    const int contentSizes[] = {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000};
    for (const int keySize : keySizes) {
        for (const int contentSize : contentSizes) {
            QByteArray key(keySize, Qt::Uninitialized);
            for (int i = 0; i < keySize; ++i)
                key[i] = char(i * 37 + 11);
            QByteArray content(contentSize, Qt::Uninitialized);
            for (int i = 0; i < contentSize; ++i)
                content[i] = char(i * 13 + 200);
            QTest::addRow("key %d, content %d", keySize, contentSize) << key << content;
        }
    }
}

void tst_WebhookSignature::preparedKeys()
{
    QFETCH(QByteArray, key);
    QFETCH(QByteArray, content);
    const QByteArray expected = QMessageAuthenticationCode::hash(content, key, QCryptographicHash::Sha256);
    const WebhookSignature::PreparedKey prepared(key);
    QVERIFY(!prepared.isNull());
    QCOMPARE(prepared.mac({content}).toHex(), expected.toHex());
    // The content in parts hashes as the whole, and the prepared key is not consumed.
    const qsizetype half = content.size() / 2;
    QCOMPARE(prepared.mac({QByteArrayView(content).first(half), QByteArrayView(content).sliced(half)}).toHex(),
             expected.toHex());
}

void tst_WebhookSignature::verify_data()
{
    QTest::addColumn<QByteArray>("msgId");
    QTest::addColumn<QByteArray>("timestamp");
    QTest::addColumn<QByteArray>("signature");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<qint64>("nowOffset"); // seconds after the vector's timestamp
    QTest::addColumn<Status>("expected");

    const QByteArray ts = QByteArray::number(VectorTimestamp);
    QTest::newRow("vector") << VectorId << ts << VectorSignature << VectorBody << qint64(0) << Status::Ok;
    QTest::newRow("tampered body") << VectorId << ts << VectorSignature << QByteArray(R"({"test": 2432232315})")
                                   << qint64(0) << Status::NoMatchingSignature;
    QTest::newRow("tampered id") << QByteArray("msg_other") << ts << VectorSignature << VectorBody << qint64(0)
                                 << Status::NoMatchingSignature;
    QTest::newRow("tampered timestamp") << VectorId << QByteArray::number(VectorTimestamp + 1) << VectorSignature
                                        << VectorBody << qint64(0) << Status::NoMatchingSignature;
    QTest::newRow("flipped last bit") << VectorId << ts
                                      << QByteArray("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=") << VectorBody
                                      << qint64(0) << Status::NoMatchingSignature;
    // Tolerance is inclusive: exactly five minutes either way is still accepted.
    QTest::newRow("old edge") << VectorId << ts << VectorSignature << VectorBody << qint64(300) << Status::Ok;
    QTest::newRow("too old") << VectorId << ts << VectorSignature << VectorBody << qint64(301)
                             << Status::TimestampTooOld;
    QTest::newRow("new edge") << VectorId << ts << VectorSignature << VectorBody << qint64(-300) << Status::Ok;
    QTest::newRow("too new") << VectorId << ts << VectorSignature << VectorBody << qint64(-301)
                             << Status::TimestampTooNew;
    QTest::newRow("other version only") << VectorId << ts
                                        << QByteArray("v1a,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
                                        << VectorBody << qint64(0) << Status::NoMatchingSignature;
    QTest::newRow("no version") << VectorId << ts << QByteArray("g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
                                << VectorBody << qint64(0) << Status::NoMatchingSignature;
    QTest::newRow("malformed base64") << VectorId << ts << QByteArray("v1,g0hM9SsE+OTPJTGt/tmIK!SyZlE3uFJELVlNIOLJ1OE=")
                                      << VectorBody << qint64(0) << Status::NoMatchingSignature;
    QTest::newRow("empty v1") << VectorId << ts << QByteArray("v1,") << VectorBody << qint64(0)
                              << Status::NoMatchingSignature;
    // The multi-signature row of the reference libraries' tests: other versions and wrong v1
    // signatures around the valid one.
    QTest::newRow("several with one valid")
        << VectorId << ts
        << QByteArray("v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ")
               + VectorSignature + " v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc="
        << VectorBody << qint64(0) << Status::Ok;
    QTest::newRow("version ignored before valid") << VectorId << ts
                                                  << QByteArray("v1a,abc ") + VectorSignature << VectorBody
                                                  << qint64(0) << Status::Ok;
    QTest::newRow("missing id") << QByteArray() << ts << VectorSignature << VectorBody << qint64(0)
                                << Status::MissingHeader;
    QTest::newRow("missing timestamp") << VectorId << QByteArray() << VectorSignature << VectorBody << qint64(0)
                                       << Status::MissingHeader;
    QTest::newRow("missing signature") << VectorId << ts << QByteArray() << VectorBody << qint64(0)
                                       << Status::MissingHeader;
    QTest::newRow("word timestamp") << VectorId << QByteArray("hello") << VectorSignature << VectorBody << qint64(0)
                                    << Status::InvalidTimestamp;
    QTest::newRow("negative timestamp") << VectorId << QByteArray("-1614265330") << VectorSignature << VectorBody
                                        << qint64(0) << Status::InvalidTimestamp;
    QTest::newRow("exponent timestamp") << VectorId << QByteArray("1.6e9") << VectorSignature << VectorBody
                                        << qint64(0) << Status::InvalidTimestamp;
    QTest::newRow("millisecond timestamp") << VectorId << QByteArray("1614265330000") << VectorSignature
                                           << VectorBody << qint64(0) << Status::TimestampTooNew;
}

void tst_WebhookSignature::verify()
{
    QFETCH(QByteArray, msgId);
    QFETCH(QByteArray, timestamp);
    QFETCH(QByteArray, signature);
    QFETCH(QByteArray, body);
    QFETCH(qint64, nowOffset);
    QFETCH(Status, expected);
    const auto result = WebhookSignature::verify(msgId, timestamp, signature, body, {vectorKey()},
                                                 atSecs(VectorTimestamp + nowOffset));
    QCOMPARE(WebhookSignature::statusName(result.status), WebhookSignature::statusName(expected));
    QCOMPARE(result.message.isEmpty(), expected == Status::Ok);
}

void tst_WebhookSignature::rotation_data()
{
    QTest::addColumn<QList<QByteArray>>("signingKeys");
    QTest::addColumn<QList<QByteArray>>("verifyingKeys");
    QTest::addColumn<int>("matchedKey"); // -1: must not verify
    QTest::newRow("old receiver, both sent") << QList<QByteArray>{vectorKey(), otherKey()}
                                             << QList<QByteArray>{vectorKey()} << 0;
    QTest::newRow("new receiver, both sent") << QList<QByteArray>{vectorKey(), otherKey()}
                                             << QList<QByteArray>{otherKey()} << 0;
    QTest::newRow("receiver knows both") << QList<QByteArray>{otherKey()}
                                         << QList<QByteArray>{vectorKey(), otherKey()} << 1;
    QTest::newRow("rotated away") << QList<QByteArray>{otherKey()} << QList<QByteArray>{vectorKey()} << -1;
    QTest::newRow("no keys") << QList<QByteArray>{vectorKey()} << QList<QByteArray>{} << -1;
}

void tst_WebhookSignature::rotation()
{
    QFETCH(QList<QByteArray>, signingKeys);
    QFETCH(QList<QByteArray>, verifyingKeys);
    QFETCH(int, matchedKey);
    const QByteArray header = WebhookSignature::signatureHeader(VectorId, VectorTimestamp, VectorBody, signingKeys);
    QCOMPARE(header.count(' '), signingKeys.size() - 1);
    QList<WebhookSignature::PreparedKey> prepared;
    for (const QByteArray &key : signingKeys)
        prepared.append(WebhookSignature::PreparedKey(key));
    QByteArray preparedHeader;
    WebhookSignature::signatureHeader(VectorId, VectorTimestamp, VectorBody, prepared, preparedHeader);
    QCOMPARE(preparedHeader, header);
    QVERIFY(header.startsWith(VectorSignature) == (signingKeys.first() == vectorKey()));
    const auto result = WebhookSignature::verify(VectorId, QByteArray::number(VectorTimestamp), header, VectorBody,
                                                 verifyingKeys, atSecs(VectorTimestamp));
    QCOMPARE(result.ok(), matchedKey >= 0);
    QCOMPARE(result.matchedKey, matchedKey);
}

void tst_WebhookSignature::decodeSecret_data()
{
    QTest::addColumn<QString>("secret");
    QTest::addColumn<int>("bytes"); // -1: refused
    QTest::newRow("whsec vector") << VectorSecret << 24;
    QTest::newRow("bare base64") << QStringLiteral("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") << 24;
    QTest::newRow("padded whitespace") << QStringLiteral("  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n") << 24;
    QTest::newRow("32 bytes") << QString::fromLatin1("whsec_" + QByteArray(32, 'k').toBase64()) << 32;
    QTest::newRow("too short") << QStringLiteral("whsec_c2hvcnQ=") << -1;
    QTest::newRow("too long") << QString::fromLatin1("whsec_" + QByteArray(65, 'k').toBase64()) << -1;
    QTest::newRow("not base64") << QStringLiteral("whsec_not base64 at all, really not!!") << -1;
    QTest::newRow("prefix only") << QStringLiteral("whsec_") << -1;
    QTest::newRow("empty") << QString() << -1;
}

void tst_WebhookSignature::decodeSecret()
{
    QFETCH(QString, secret);
    QFETCH(int, bytes);
    const WebhookSignature::DecodedSecret decoded = WebhookSignature::decodeSecret(secret);
    QCOMPARE(decoded.ok(), bytes >= 0);
    QCOMPARE(decoded.key.size(), qMax(bytes, 0));
    QCOMPARE(decoded.error.isEmpty(), bytes >= 0);
}

void tst_WebhookSignature::generatedSecrets()
{
    const QString first = WebhookSignature::generateSecret();
    const QString second = WebhookSignature::generateSecret();
    QVERIFY(first.startsWith(QLatin1String("whsec_")));
    QVERIFY(first != second);
    const WebhookSignature::DecodedSecret decoded = WebhookSignature::decodeSecret(first);
    QVERIFY2(decoded.ok(), qPrintable(decoded.error));
    QCOMPARE(decoded.key.size(), WebhookSignature::GeneratedSecretBytes);
    QVERIFY(decoded.key != QByteArray(32, '\0'));
}

void tst_WebhookSignature::hubSignature_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("secret");
    QTest::addColumn<QByteArray>("expected");
    // Expected values computed independently with
    //   printf '%s' '<body>' | openssl dgst -sha1 -hmac '<secret>'
    QTest::newRow("hello") << QByteArray("hello") << QByteArray("key")
                           << QByteArray("sha1=b34ceac4516ff23a143e61d79d0fa7a4fbe5f266");
    QTest::newRow("notification") << QByteArray(R"({"type":"instance.status_changed","status":"STOPPED"})")
                                  << QByteArray("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
                                  << QByteArray("sha1=6ec308656332b85e0d92ffe30ac5e0086da981da");
}

void tst_WebhookSignature::hubSignature()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, secret);
    QFETCH(QByteArray, expected);
    QCOMPARE(WebhookSignature::hubSignature(body, secret), expected);
    QVERIFY(WebhookSignature::verifyHubSignature(body, expected, {secret}));
    QVERIFY(WebhookSignature::verifyHubSignature(body, expected.toUpper().replace("SHA1=", "sha1="), {secret}));
    QVERIFY(WebhookSignature::verifyHubSignature(body, expected, {QByteArray("old"), secret}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body + ' ', expected, {secret}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body, expected, {secret + 'x'}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body, expected, {}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body, "sha256=" + expected.mid(5), {secret}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body, expected.left(44), {secret}));
    QVERIFY(!WebhookSignature::verifyHubSignature(body, expected.left(43) + "zz", {secret}));
}

void tst_WebhookSignature::redaction_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("one signature") << QByteArray("webhook-signature") << VectorSignature
                                   << QByteArray("v1,[redacted]");
    QTest::newRow("rotation") << QByteArray("Webhook-Signature") << VectorSignature + ' ' + VectorSignature
                              << QByteArray("v1,[redacted] v1,[redacted]");
    QTest::newRow("rotation, odd spacing") << QByteArray("webhook-signature") << QByteArray("  v1,abc= \t v1a,def=\r\n")
                                           << QByteArray("v1,[redacted] v1a,[redacted]");
    QTest::newRow("part without a version") << QByteArray("webhook-signature") << QByteArray("abc v1,def")
                                            << QByteArray("[redacted] v1,[redacted]");
    QTest::newRow("empty signature") << QByteArray("webhook-signature") << QByteArray() << QByteArray("[redacted]");
    QTest::newRow("hub") << QByteArray("X-Hub-Signature") << QByteArray("sha1=b34ceac4516ff23a143e61d79d0fa7a4fbe5f266")
                         << QByteArray("sha1=[redacted]");
    QTest::newRow("authorization") << QByteArray("authorization") << QByteArray("Bearer abc.def")
                                   << QByteArray("Bearer [redacted]");
    QTest::newRow("id kept") << QByteArray("webhook-id") << VectorId << VectorId;
    QTest::newRow("content type kept") << QByteArray("content-type") << QByteArray("application/json")
                                       << QByteArray("application/json");
}

void tst_WebhookSignature::redaction()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, value);
    QFETCH(QByteArray, expected);
    const WebhookSignature::Headers redacted = WebhookSignature::redactSignatureHeaders({{name, value}});
    QCOMPARE(redacted.size(), 1);
    QCOMPARE(redacted.first().first, name);
    QCOMPARE(redacted.first().second, expected);
}

void tst_WebhookSignature::constantTimeEquals()
{
    QVERIFY(WebhookSignature::constantTimeEquals(QByteArray("abc"), QByteArray("abc")));
    QVERIFY(WebhookSignature::constantTimeEquals(QByteArray(), QByteArray()));
    QVERIFY(!WebhookSignature::constantTimeEquals(QByteArray("abc"), QByteArray("abd")));
    QVERIFY(!WebhookSignature::constantTimeEquals(QByteArray("abc"), QByteArray("abcd")));
    QVERIFY(!WebhookSignature::constantTimeEquals(QByteArray("\x01", 1), QByteArray("\x81", 1)));
}

void tst_WebhookSignature::shaInstructionsAgreeWithThePortableCode()
{
    // A known digest through the block function in use: SHA-256 of "abc" (FIPS 180-4's example),
    // the one padded block hashed from the initial state.
    unsigned char block[Sha256Blocks::BlockBytes] = {'a', 'b', 'c', 0x80};
    block[Sha256Blocks::BlockBytes - 1] = 24; // the message's length in bits
    quint32 state[8];
    std::copy(Sha256Blocks::InitialState, Sha256Blocks::InitialState + 8, state);
    Sha256Blocks::compress(state, block, 1);
    const quint32 expected[8] = {0xba7816bf, 0x8f01cfea, 0x414140de, 0x5dae2223,
                                 0xb00361a3, 0x96177a9c, 0xb410ff61, 0xf20015ad};
    QVERIFY(std::equal(state, state + 8, expected));

    if (!Sha256Blocks::accelerated())
        QSKIP("this processor has no SHA instructions: the portable code is the only one");
    // Random blocks, one to nine at a time, from random states: every block count the HMAC
    // code hands over, and states other than the initial one (a prepared key's midstate).
    QRandomGenerator random(20261203);
    for (int round = 0; round < 200; ++round) {
        const int count = 1 + round % 9;
        QByteArray data(count * Sha256Blocks::BlockBytes, Qt::Uninitialized);
        random.fillRange(reinterpret_cast<quint32 *>(data.data()), data.size() / int(sizeof(quint32)));
        quint32 fast[8];
        quint32 portable[8];
        random.fillRange(fast, 8);
        std::copy(fast, fast + 8, portable);
        const auto *blocks = reinterpret_cast<const unsigned char *>(data.constData());
        Sha256Blocks::compress(fast, blocks, count);
        Sha256Blocks::compressPortable(portable, blocks, count);
        QVERIFY2(std::equal(fast, fast + 8, portable), qPrintable(QStringLiteral("round %1, %2 blocks").arg(round).arg(count)));
    }
}

QTEST_GUILESS_MAIN(tst_WebhookSignature)
#include "tst_webhooksignature.moc"
