// Storage and wire timestamps: the text written directly is the text QDateTime writes, and it
// reads back as the same instant.
#include "server/storage/timestamps.h"

#include <QtTest>

#include <QRandomGenerator>

using namespace OpsDeck;

class tst_Timestamps final : public QObject
{
    Q_OBJECT

private slots:
    void sameTextAsQt_data();
    void sameTextAsQt();
    void sameTextAsQtAcrossTheRange();
    void roundTrips();
    void boundsKeepDigitsPastTheMillisecond_data();
    void boundsKeepDigitsPastTheMillisecond();
    void boundsInOrder();
};

void tst_Timestamps::sameTextAsQt_data()
{
    QTest::addColumn<QDateTime>("at");
    QTest::addColumn<QString>("text");
    const auto utc = [](int y, int mo, int d, int h, int mi, int s, int ms) {
        return QDateTime(QDate(y, mo, d), QTime(h, mi, s, ms), Qt::UTC);
    };
    QTest::newRow("epoch") << utc(1970, 1, 1, 0, 0, 0, 0) << QStringLiteral("1970-01-01T00:00:00.000Z");
    QTest::newRow("leap day of a century divisible by 400")
        << utc(2000, 2, 29, 23, 59, 59, 999) << QStringLiteral("2000-02-29T23:59:59.999Z");
    QTest::newRow("March after a leap day") << utc(2024, 3, 1, 0, 0, 0, 1) << QStringLiteral("2024-03-01T00:00:00.001Z");
    QTest::newRow("no leap day in 2100") << utc(2100, 3, 1, 12, 0, 0, 0) << QStringLiteral("2100-03-01T12:00:00.000Z");
    QTest::newRow("end of a year") << utc(2026, 12, 31, 23, 59, 59, 999) << QStringLiteral("2026-12-31T23:59:59.999Z");
    QTest::newRow("last instant of four-digit years")
        << utc(9999, 12, 31, 23, 59, 59, 999) << QStringLiteral("9999-12-31T23:59:59.999Z");
    QTest::newRow("local time is written in UTC")
        << QDateTime(QDate(2026, 11, 30), QTime(10, 0), Qt::OffsetFromUTC, 2 * 3600)
        << QStringLiteral("2026-11-30T08:00:00.000Z");
    // Outside the fast path: whatever Qt writes.
    QTest::newRow("before the epoch") << utc(1969, 12, 31, 23, 59, 59, 500)
                                      << utc(1969, 12, 31, 23, 59, 59, 500).toString(Qt::ISODateWithMs);
    QTest::newRow("invalid") << QDateTime() << QString();
}

void tst_Timestamps::sameTextAsQt()
{
    QFETCH(QDateTime, at);
    QFETCH(QString, text);
    QCOMPARE(timestamp(at), text);
    QCOMPARE(timestamp(at), at.toUTC().toString(Qt::ISODateWithMs));
}

void tst_Timestamps::sameTextAsQtAcrossTheRange()
{
    // Fixed seed: a failure names an instant that fails again.
    QRandomGenerator random(20261130);
    constexpr qint64 end = 253402300800000; // 10000-01-01T00:00:00Z
    for (int i = 0; i < 200000; ++i) {
        const qint64 ms = qint64(random.bounded(quint64(end)));
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
        const QString expected = at.toString(Qt::ISODateWithMs);
        if (timestamp(at) != expected)
            QFAIL(qPrintable(QStringLiteral("%1 ms: %2, expected %3").arg(ms).arg(timestamp(at), expected)));
    }
    // Every day of a 400-year cycle, at its last millisecond.
    for (qint64 day = 0; day < 146097; ++day) {
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(day * 86400000 + 86399999, Qt::UTC);
        if (timestamp(at) != at.toString(Qt::ISODateWithMs))
            QFAIL(qPrintable(QStringLiteral("day %1: %2, expected %3").arg(day).arg(timestamp(at), at.toString(Qt::ISODateWithMs))));
    }
}

void tst_Timestamps::roundTrips()
{
    const QDateTime at = QDateTime::fromMSecsSinceEpoch(1796025600123, Qt::UTC);
    const auto back = parseTimestamp(timestamp(at));
    QVERIFY(back.has_value());
    QCOMPARE(*back, at);
    QCOMPARE(parseTimestamp(nowTimestamp())->timeSpec(), Qt::UTC);
}

void tst_Timestamps::boundsKeepDigitsPastTheMillisecond_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("afterIt"); // "": not a timestamp
    QTest::addColumn<QString>("beforeIt");
    QTest::newRow("milliseconds") << "2026-12-02T14:12:05.502Z" << "2026-12-02T14:12:05.502Z" << "2026-12-02T14:12:05.502Z";
    QTest::newRow("half past a millisecond")
        << "2026-12-02T14:12:05.5015Z" << "2026-12-02T14:12:05.501Z" << "2026-12-02T14:12:05.502Z";
    QTest::newRow("nearly the next") << "2026-12-02T14:12:05.5029999Z" << "2026-12-02T14:12:05.502Z" << "2026-12-02T14:12:05.503Z";
    QTest::newRow("zeros past it") << "2026-12-02T14:12:05.502000Z" << "2026-12-02T14:12:05.502Z" << "2026-12-02T14:12:05.502Z";
    QTest::newRow("seconds only") << "2026-12-02T14:12:05Z" << "2026-12-02T14:12:05.000Z" << "2026-12-02T14:12:05.000Z";
    QTest::newRow("last of a day, with an offset")
        << "2026-12-02T23:59:59.9995+01:00" << "2026-12-02T22:59:59.999Z" << "2026-12-02T23:00:00.000Z";
    QTest::newRow("lower-case t and z") << "2026-12-02t14:12:05.5015z" << "2026-12-02T14:12:05.501Z" << "2026-12-02T14:12:05.502Z";
    QTest::newRow("a space for the T") << "2026-12-02 14:12:05.5015Z" << "2026-12-02T14:12:05.501Z" << "2026-12-02T14:12:05.502Z";
    QTest::newRow("a decimal comma") << "2026-12-02T14:12:05,5015Z" << "2026-12-02T14:12:05.501Z" << "2026-12-02T14:12:05.502Z";
    // Not RFC 3339, but read by Qt as a fraction of the minute, as before.
    QTest::newRow("a fraction of a minute") << "2026-12-02T14:12.5015Z" << "2026-12-02T14:12:30.090Z" << "2026-12-02T14:12:30.090Z";
    QTest::newRow("no zone") << "2026-12-02T14:12:05.5015" << "" << "";
    QTest::newRow("not a time") << "yesterday" << "" << "";
}

void tst_Timestamps::boundsKeepDigitsPastTheMillisecond()
{
    QFETCH(QString, text);
    QFETCH(QString, afterIt);
    QFETCH(QString, beforeIt);
    const auto bound = parseTimestampBound(text);
    QCOMPARE(bound.has_value(), !afterIt.isEmpty());
    if (!bound)
        return;
    QCOMPARE(timestamp(bound->afterIt()), afterIt);
    QCOMPARE(timestamp(bound->beforeIt()), beforeIt);
}

void tst_Timestamps::boundsInOrder()
{
    const auto at = [](const char *text) { return *parseTimestampBound(QString::fromLatin1(text)); };
    QVERIFY(at("2026-12-02T14:12:05.5015Z").isBefore(at("2026-12-02T14:12:05.5024Z")));
    QVERIFY(at("2026-12-02T14:12:05.5015Z").isBefore(at("2026-12-02T14:12:05.502Z")));
    QVERIFY(at("2026-12-02T14:12:05.502Z").isBefore(at("2026-12-02T14:12:05.50201Z")));
    QVERIFY(at("2026-12-02T14:12:05.50149Z").isBefore(at("2026-12-02T14:12:05.5015Z")));
    QVERIFY(!at("2026-12-02T14:12:05.5016Z").isBefore(at("2026-12-02T14:12:05.5015Z")));
    QVERIFY(!at("2026-12-02T14:12:05.5015Z").isBefore(at("2026-12-02T14:12:05.50150Z")));
    QVERIFY(!at("2026-12-02T14:12:05.50150Z").isBefore(at("2026-12-02T14:12:05.5015Z")));
}

QTEST_GUILESS_MAIN(tst_Timestamps)
#include "tst_timestamps.moc"
