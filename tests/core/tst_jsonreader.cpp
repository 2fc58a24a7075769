// Strict JSON decoding: every error with its field path, nothing accepted by accident.
#include "core/jsonreader.h"

#include <QtTest>

#include <limits>

using namespace OpsDeck;

class tst_JsonReader final : public QObject
{
    Q_OBJECT

private slots:
    void malformed_data();
    void malformed();
    void surrogatePairsAreText();
    void namesRefuseWhatCannotBeReadOrStored_data();
    void namesRefuseWhatCannotBeReadOrStored();
    void repeatedNames_data();
    void repeatedNames();
    void limitsCountCharacters();
    void fieldErrors_data();
    void fieldErrors();
    void integerRangesNameWhatCanBeSent();
    void rawControlCharactersAreMalformed();
    void nestedPathsAndUnknownFields();
    void problemCarriesEveryError();
    void problemOfThousandsOfErrorsStaysSmall();
    void problemRoundTrip();
};

void tst_JsonReader::malformed_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("code");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("malformed-json");
    QTest::newRow("truncated") << QByteArray("{\"name\": \"a") << QStringLiteral("malformed-json");
    QTest::newRow("trailing comma") << QByteArray("{\"a\":1,}") << QStringLiteral("malformed-json");
    QTest::newRow("array") << QByteArray("[1,2]") << QStringLiteral("invalid-request");
    QTest::newRow("string") << QByteArray("\"x\"") << QStringLiteral("malformed-json");
    // Qt would pair the high half with the next escape (U+10041) or keep it alone.
    QTest::newRow("high surrogate before a letter") << QByteArray(R"({"name": "hi \ud800\u0041 x"})") << QStringLiteral("malformed-json");
    QTest::newRow("high surrogate alone") << QByteArray(R"({"name": "lone \ud800 surrogate"})") << QStringLiteral("malformed-json");
    QTest::newRow("low surrogate alone") << QByteArray(R"({"name": "\udc00"})") << QStringLiteral("malformed-json");
    QTest::newRow("high surrogate at the end") << QByteArray(R"({"name": "\uD83D"})") << QStringLiteral("malformed-json");
}

void tst_JsonReader::malformed()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, code);
    JsonReader r(body);
    // What a route reads from it adds nothing: the body's own error is the whole answer.
    r.string(QStringLiteral("name"));
    r.string(QStringLiteral("organization_id"));
    QVERIFY(!r.ok());
    QCOMPARE(r.problem().status, 400);
    QCOMPARE(r.problem().code, code);
    QCOMPARE(r.errors().first().path, QStringLiteral("/"));
    QCOMPARE(r.problem().extensions.value(QStringLiteral("errors")).toArray().size(), 1);
}

void tst_JsonReader::limitsCountCharacters()
{
    // 150 emoji are 150 characters (300 UTF-16 units): within a limit of 200.
    QString emoji;
    for (int i = 0; i < 150; ++i)
        emoji += QString(QChar(0xD83D)) + QChar(0xDE00);
    JsonReader r(QJsonObject{{QStringLiteral("name"), emoji}, {QStringLiteral("tags"), QJsonArray{emoji}}});
    QCOMPARE(r.string(QStringLiteral("name"), 200), emoji);
    QCOMPARE(r.optStringList(QStringLiteral("tags"), 10, 200).value_or(QStringList()), QStringList{emoji});
    QVERIFY(r.ok());
    JsonReader over(QJsonObject{{QStringLiteral("name"), emoji}});
    over.string(QStringLiteral("name"), 149);
    QVERIFY(!over.ok());
}

void tst_JsonReader::repeatedNames_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("path"); // empty: accepted
    QTest::newRow("top level") << QByteArray(R"({"name": "a", "name": "b"})") << QStringLiteral("/name");
    QTest::newRow("escaped the second time") << QByteArray(R"({"name": "a", "n\u0061me": "b"})") << QStringLiteral("/name");
    QTest::newRow("a pair escaped, then as text") << QByteArray("{\"\\ud83d\\ude00\": 1, \"\xF0\x9F\x98\x80\": 2}") << QStringLiteral("/\U0001F600");
    QTest::newRow("control escapes") << QByteArray(R"({"a\tb\n": 1, "a\u0009b\u000a": 2})") << QStringLiteral("/a\tb\n");
    QTest::newRow("escaped slash and quote") << QByteArray(R"({"\/\"": 1, "/\u0022": 2})") << QStringLiteral("/~1\"");
        QTest::newRow("in a nested object") << QByteArray(R"({"a": {"x": 1, "y": 2, "x": 3}})") << QStringLiteral("/a/x");
    QTest::newRow("in an array's object") << QByteArray(R"({"list": [{"k": 1}, {"k": 1, "k": 2}]})") << QStringLiteral("/list/1/k");
    QTest::newRow("empty name") << QByteArray(R"({"": 1, "": 2})") << QStringLiteral("/");
    QTest::newRow("slash in a name") << QByteArray(R"({"a/b": 1, "a/b": 2})") << QStringLiteral("/a~1b");
    // The same name in sibling objects, as a value, or inside a string is no repetition.
    QTest::newRow("siblings") << QByteArray(R"({"a": {"k": 1}, "b": {"k": 1}, "k": "k"})") << QString();
    QTest::newRow("name inside a value") << QByteArray(R"({"a": "\"a\": 1", "b": ["a", "a"]})") << QString();
    QTest::newRow("after a nested object") << QByteArray(R"({"a": {"b": 1}, "b": 2})") << QString();
    QTest::newRow("escapes that differ") << QByteArray(R"({"a\n": 1, "a\r": 2, "\u00e9": 3, "e\u0301": 4})") << QString();
}

void tst_JsonReader::repeatedNames()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, path);
    JsonReader r(body);
    if (path.isEmpty()) {
        QVERIFY2(r.ok(), qPrintable(r.problem().detail));
        return;
    }
    r.string(QStringLiteral("name"));
    QVERIFY(!r.ok());
    QCOMPARE(r.problem().status, 400);
    QCOMPARE(r.problem().code, QStringLiteral("invalid-request"));
    QCOMPARE(r.errors().size(), 1);
    QCOMPARE(r.errors().first().path, path);
    QCOMPARE(r.errors().first().message, QStringLiteral("appears twice in one object"));
}

void tst_JsonReader::surrogatePairsAreText()
{
    // A pair is one character, and an escaped backslash before "ud800" is no escape.
    JsonReader r(QByteArray(R"({"a": "\ud83d\ude00", "b": "\\ud800"})"));
    QVERIFY2(r.ok(), qPrintable(r.problem().detail));
    QCOMPARE(r.string(QStringLiteral("a")), QString(QChar(0xD83D)) + QChar(0xDE00));
    QCOMPARE(r.string(QStringLiteral("b")), QStringLiteral("\\ud800"));
}

void tst_JsonReader::fieldErrors_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("expected");
    QTest::newRow("missing") << QByteArray("{}") << QStringLiteral("/name: required");
    QTest::newRow("wrong type") << QByteArray(R"({"name": 3, "status": "RUNNING", "count": 1})")
                                << QStringLiteral("/name: expected a string, got number");
    QTest::newRow("enum") << QByteArray(R"({"name": "a", "status": "BROKEN", "count": 1})")
                          << QStringLiteral("/status: expected one of RUNNING, STOPPED");
    QTest::newRow("fraction") << QByteArray(R"({"name": "a", "status": "RUNNING", "count": 1.5})")
                              << QStringLiteral("/count: expected an integer, got 1.5");
    QTest::newRow("range") << QByteArray(R"({"name": "a", "status": "RUNNING", "count": 99})")
                           << QStringLiteral("/count: expected an integer between 0 and 10, got 99");
    QTest::newRow("too long") << QByteArray(R"({"name": "abcdefghijk", "status": "RUNNING", "count": 1})")
                              << QStringLiteral("/name: longer than 10 characters");
}

void tst_JsonReader::integerRangesNameWhatCanBeSent()
{
    // A JSON number keeps integers exact up to 2^53 - 1: the range told is the one that can be sent.
    constexpr qint64 top = std::numeric_limits<qint64>::max() / 2;
    JsonReader beyond(QByteArray(R"({"id": 4611686018427387903})"));
    beyond.integer(QStringLiteral("id"), 1, top);
    QVERIFY(!beyond.ok());
    QCOMPARE(beyond.errors().first().toString(),
             QStringLiteral("/id: expected an integer between 1 and 9007199254740991, got 4.6116860184273879e+18"));
    JsonReader largest(QByteArray(R"({"id": 9007199254740991})"));
    QCOMPARE(largest.integer(QStringLiteral("id"), 1, top), Q_INT64_C(9007199254740991));
    QVERIFY(largest.ok());
}

void tst_JsonReader::rawControlCharactersAreMalformed()
{
    // JSON has them escaped inside strings; QJsonDocument takes them as they are.
    JsonReader raw(QByteArray("{\"name\": \"a\tb\"}"));
    QVERIFY(!raw.ok());
    QVERIFY2(raw.errors().first().toString().contains(QLatin1String("U+0009")), qPrintable(raw.errors().first().toString()));
    JsonReader escaped(QByteArray(R"({"name": "a\tb"})"));
    QCOMPARE(escaped.string(QStringLiteral("name")), QStringLiteral("a\tb"));
    QVERIFY(escaped.ok());
}

void tst_JsonReader::fieldErrors()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, expected);
    JsonReader r(body);
    r.string(QStringLiteral("name"), 10);
    r.oneOf(QStringLiteral("status"), {QStringLiteral("RUNNING"), QStringLiteral("STOPPED")});
    r.integer(QStringLiteral("count"), 0, 10);
    QVERIFY(!r.ok());
    QCOMPARE(r.errors().first().toString(), expected);
}

void tst_JsonReader::nestedPathsAndUnknownFields()
{
    JsonReader r(QByteArray(R"({"callback": {"url": 5, "x/y": 1}, "colour": "red", "tags": ["a", 2]})"));
    JsonReader cb = r.child(QStringLiteral("callback"));
    QVERIFY(cb.isPresent());
    cb.string(QStringLiteral("url"));
    cb.rejectUnknown();
    r.optStringList(QStringLiteral("tags"));
    r.rejectUnknown();
    QStringList got;
    for (const FieldError &e : r.errors())
        got << e.toString();
    QCOMPARE(got, (QStringList{QStringLiteral("/callback/url: expected a string, got number"),
                               QStringLiteral("/callback/x~1y: unknown field"),
                               QStringLiteral("/tags/1: expected a string, got number"),
                               QStringLiteral("/colour: unknown field")}));
}

void tst_JsonReader::problemCarriesEveryError()
{
    JsonReader r(QByteArray(R"({"a": true})"));
    r.string(QStringLiteral("a"));
    r.integer(QStringLiteral("b"));
    const Problem p = r.problem();
    QCOMPARE(p.code, QStringLiteral("invalid-request"));
    QCOMPARE(p.extensions.value(QStringLiteral("errors")).toArray().size(), 2);
    QVERIFY(p.detail.contains(QStringLiteral("/b: required")));
}

void tst_JsonReader::problemOfThousandsOfErrorsStaysSmall()
{
    QJsonObject body;
    for (int i = 0; i < 20000; ++i)
        body.insert(QStringLiteral("field%1").arg(i), i);
    JsonReader r(body);
    r.rejectUnknown();
    const Problem p = r.problem();
    QCOMPARE(p.extensions.value(QStringLiteral("errors")).toArray().size(), JsonReader::MaxListedErrors);
    QCOMPARE(p.extensions.value(QStringLiteral("errors_omitted")).toInteger(), 20000 - JsonReader::MaxListedErrors);
    QVERIFY2(p.detail.endsWith(QStringLiteral("; and %1 more").arg(20000 - JsonReader::MaxErrorsInDetail)), qPrintable(p.detail));
    QVERIFY2(p.toBytes().size() < 16 * 1024, qPrintable(QString::number(p.toBytes().size())));
}

void tst_JsonReader::problemRoundTrip()
{
    Problem p = Problem::make(409, QStringLiteral("organization-has-instances"), QStringLiteral("Organization has instances"),
                              QStringLiteral("2 instances are not STOPPED"));
    p.with(QStringLiteral("blocking_instances"), QJsonArray{1, 2});
    const Problem back = Problem::fromJson(409, p.toBytes());
    QCOMPARE(back.code, p.code);
    QCOMPARE(back.title, p.title);
    QCOMPARE(back.detail, p.detail);
    QCOMPARE(back.type(), QStringLiteral("urn:opsdeck:problem:organization-has-instances"));
    QCOMPARE(back.extensions.value(QStringLiteral("blocking_instances")).toArray().size(), 2);

    const Problem html = Problem::fromJson(502, QByteArray("<html>bad gateway</html>"));
    QCOMPARE(html.status, 502);
    QCOMPARE(html.code, QStringLiteral("unexpected-response"));
    QVERIFY(html.detail.contains(QStringLiteral("bad gateway")));
}

void tst_JsonReader::namesRefuseWhatCannotBeReadOrStored_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("error"); // the start of the message, empty when the name is fine
    const auto text = [](std::initializer_list<char16_t> units) { return QString(reinterpret_cast<const QChar *>(units.begin()), qsizetype(units.size())); };
    QTest::newRow("letters, accents and CJK") << QStringLiteral("Café 日本") << QString();
    QTest::newRow("an emoji with a joiner") << text({0xD83D, 0xDC69, 0x200D, 0xD83D, 0xDCBB}) << QString();
    QTest::newRow("Hebrew with a right-to-left mark") << text({0x05E9, 0x05DC, 0x05D5, 0x05DD, 0x200F}) << QString();
    QTest::newRow("a no-break space") << text({'a', 0x00A0, 'b'}) << QString();
    QTest::newRow("half a surrogate pair") << text({'a', 0xD800}) << QStringLiteral("must be valid Unicode text");
    QTest::newRow("a NUL") << text({'a', 0x0000, 'b'}) << QStringLiteral("must not contain control characters or line breaks (U+0000)");
    QTest::newRow("a paragraph separator") << text({'a', 0x2029, 'b'}) << QStringLiteral("must not contain control characters or line breaks (U+2029)");
    QTest::newRow("a right-to-left override") << text({'a', 0x202E, 'b'}) << QStringLiteral("must not contain invisible or direction-overriding characters (U+202E)");
    QTest::newRow("an isolate") << text({'a', 0x2067, 'b'}) << QStringLiteral("must not contain invisible or direction-overriding characters (U+2067)");
    QTest::newRow("a zero-width space") << text({'a', 0x200B, 'b'}) << QStringLiteral("must not contain invisible or direction-overriding characters (U+200B)");
    QTest::newRow("a byte order mark") << text({0xFEFF, 'a'}) << QStringLiteral("must not contain invisible or direction-overriding characters (U+FEFF)");
}

void tst_JsonReader::namesRefuseWhatCannotBeReadOrStored()
{
    QFETCH(QString, name);
    QFETCH(QString, error);
    JsonReader r(QJsonObject{{QStringLiteral("name"), QStringLiteral("  ") + name + QStringLiteral("\t")}});
    const QString read = r.name(QStringLiteral("name"));
    if (error.isEmpty()) {
        QVERIFY2(r.ok(), qPrintable(r.problem().detail));
        QCOMPARE(read, name); // without the white space around it
    } else {
        QVERIFY(!r.ok());
        QCOMPARE(r.errors().size(), 1);
        QVERIFY2(r.errors().first().message.startsWith(error), qPrintable(r.errors().first().message));
    }
    QCOMPARE(JsonReader::characterError(name).isEmpty(), error.isEmpty());
}

QTEST_APPLESS_MAIN(tst_JsonReader)
#include "tst_jsonreader.moc"
