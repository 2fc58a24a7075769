// Tests for the UTF-8 text arena: interning, plain appends, reading back, case-insensitive order.
#include "models/textarena.h"

#include <QTest>

#include <algorithm>

using namespace OpsDeck;

class tst_TextArena final : public QObject
{
    Q_OBJECT

private slots:
    void internSharesNumbers();
    void addNeverShares();
    void roundTrip_data();
    void roundTrip();
    void compareIgnoringCaseAsQt_data();
    void compareIgnoringCaseAsQt();
    void containsAsciiAsQt_data();
    void containsAsciiAsQt();
    void indexGrowsWithoutLosingTexts();
};

void tst_TextArena::internSharesNumbers()
{
    TextArena arena;
    const quint32 a = arena.intern(u"RUNNING");
    const quint32 b = arena.intern(u"STOPPED");
    QVERIFY(a != b);
    QCOMPARE(arena.intern(u"RUNNING"), a);
    QCOMPARE(arena.intern(u"STOPPED"), b);
    QCOMPARE(arena.size(), 2u);
}

void tst_TextArena::addNeverShares()
{
    TextArena arena;
    const quint32 a = arena.add(u"app-1");
    const quint32 b = arena.add(u"app-1");
    QVERIFY(a != b);
    QCOMPARE(arena.text(a), arena.text(b));
    QVERIFY(arena.equals(a, "app-1"));
    QVERIFY(!arena.equals(a, "app-10"));
    // An appended text is not found by interning: a new number.
    const quint32 c = arena.intern(u"app-1");
    QVERIFY(c != a && c != b);
}

void tst_TextArena::roundTrip_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("empty") << "";
    QTest::newRow("ascii") << "dataviz-acme-000123";
    QTest::newRow("umlaut") << "wiki-ÄRGER";
    QTest::newRow("kelvin sign") << "KELVIN-\u212A";
    QTest::newRow("outside the BMP") << "emoji \U0001F600 end";
}

void tst_TextArena::roundTrip()
{
    QFETCH(QString, text);
    TextArena arena;
    arena.add(u"before");
    const quint32 added = arena.add(text);
    const quint32 interned = arena.intern(text);
    arena.add(u"after");
    QCOMPARE(arena.text(added), text);
    QCOMPARE(arena.text(interned), text);
    QCOMPARE(arena.utf8(added).size(), text.toUtf8().size());
    QCOMPARE(arena.text(arena.size()), QString()); // out of range reads as empty
}

void tst_TextArena::compareIgnoringCaseAsQt_data()
{
    QTest::addColumn<QString>("a");
    QTest::addColumn<QString>("b");
    QTest::newRow("equal but case") << "Alpha" << "alpha";
    QTest::newRow("prefix") << "crm" << "crm-acme";
    QTest::newRow("upper after lower") << "b" << "A";
    QTest::newRow("underscore between cases") << "a_b" << "aBc";
    QTest::newRow("non-ascii") << "ärger" << "Ärger";
    QTest::newRow("non-ascii against ascii") << "über" << "zebra";
    QTest::newRow("empty") << "" << "a";
}

void tst_TextArena::compareIgnoringCaseAsQt()
{
    QFETCH(QString, a);
    QFETCH(QString, b);
    TextArena arena;
    const quint32 x = arena.add(a);
    const quint32 y = arena.add(b);
    const auto sign = [](int v) { return v < 0 ? -1 : (v > 0 ? 1 : 0); };
    QCOMPARE(sign(arena.compareIgnoringCase(x, y)), sign(QString::compare(a, b, Qt::CaseInsensitive)));
    QCOMPARE(sign(arena.compareIgnoringCase(y, x)), sign(QString::compare(b, a, Qt::CaseInsensitive)));
}

void tst_TextArena::containsAsciiAsQt_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("needle");
    QTest::newRow("at the start") << "dataviz-acme-000123" << "data";
    QTest::newRow("at the end") << "dataviz-acme-000123" << "0123";
    QTest::newRow("in the middle, other case") << "dataviz-ACME-000123" << "Acme";
    QTest::newRow("absent") << "dataviz-acme-000123" << "globex";
    QTest::newRow("first and last bytes only") << "d-x-e-acxe-acme" << "acme";
    QTest::newRow("first and last bytes, absent") << "d-acxe-abce-aaae" << "acme";
    QTest::newRow("one byte") << "billing" << "G";
    QTest::newRow("the whole text") << "crm" << "CRM";
    QTest::newRow("longer than the text") << "crm" << "crm-acme";
    QTest::newRow("past 16 bytes") << "analytics-initech-000042-eu-west" << "west";
    QTest::newRow("across the 16-byte step") << "analytics-initech-000042-eu-west" << "initech-0000";
    QTest::newRow("past 32 bytes, absent") << "analytics-initech-000042-eu-west-and-more-text" << "texts";
    QTest::newRow("past 32 bytes, at the end") << "analytics-initech-000042-eu-west-and-more-text" << "E-TEXT";
    QTest::newRow("bits 0x20 apart, not letters") << "a@b[c" << "`";
    QTest::newRow("digits and dash") << "host-10-20" << "0-2";
    QTest::newRow("non-ascii text, found") << "wiki-ÄRGER-3" << "wiki";
    QTest::newRow("non-ascii text, absent") << "wiki-ÄRGER-3" << "zebra";
    QTest::newRow("kelvin sign against k") << "KELVIN-\u212A" << "-k";
    QTest::newRow("non-ascii past 16 bytes") << "dataviz-acme-0001-ä" << "acme";
}

void tst_TextArena::containsAsciiAsQt()
{
    QFETCH(QString, text);
    QFETCH(QString, needle);
    const QByteArray folded = needle.toCaseFolded().toLatin1();
    const bool expected = text.contains(needle, Qt::CaseInsensitive);
    const bool ascii = std::all_of(text.cbegin(), text.cend(), [](QChar c) { return c.unicode() < 0x80; });
    TextArena arena;
    arena.add(u"before");
    const quint32 id = arena.add(text);
    arena.add(u"after-after-after");
    const quint32 last = arena.add(text); // too near the buffer's end to read 16 bytes at a time
    const std::optional<bool> found = arena.containsAscii(id, folded);
    // Only a non-ASCII text where the bytes do not show the needle is left to Qt's rules.
    QVERIFY(found.has_value() || !ascii);
    if (found.has_value())
        QCOMPARE(*found, expected);
    if (text.toUtf8().size() >= folded.size())
        QVERIFY(!arena.containsAscii(last, folded).has_value());
}

void tst_TextArena::indexGrowsWithoutLosingTexts()
{
    TextArena arena;
    for (int i = 0; i < 5000; ++i)
        QCOMPARE(arena.intern(QString::number(i)), quint32(i));
    for (int i = 0; i < 5000; i += 7)
        QCOMPARE(arena.intern(QString::number(i)), quint32(i));
    QCOMPARE(arena.size(), 5000u);
    QCOMPARE(arena.text(4321), QStringLiteral("4321"));
}

QTEST_GUILESS_MAIN(tst_TextArena)
#include "tst_textarena.moc"
