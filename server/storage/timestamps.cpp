// Wire and storage timestamps: RFC 3339 UTC text with milliseconds.
#include "timestamps.h"

#include <QRegularExpression>

namespace OpsDeck {

namespace {

constexpr qint64 kMsPerDay = 24 * 60 * 60 * 1000;
// 10000-01-01T00:00:00Z: four-digit years only on the fast path, the ones that sort as text.
constexpr qint64 kEndOfYear9999 = 253402300800000;

void putDigits(char *out, int value, int width)
{
    for (int i = width - 1; i >= 0; --i) {
        out[i] = char('0' + value % 10);
        value /= 10;
    }
}

} // namespace

QString timestamp(const QDateTime &at)
{
    // Every recorded attempt, claim and feed event writes a few of these: written directly, it
    // costs a small fraction of QDateTime::toString(), which goes through the calendar and the
    // format machinery each time. The text is the same (tst_timestamps compares them).
    const qint64 ms = at.isValid() ? at.toMSecsSinceEpoch() : -1;
    if (ms < 0 || ms >= kEndOfYear9999)
        return at.toUTC().toString(Qt::ISODateWithMs);
    const qint64 msOfDay = ms % kMsPerDay;
    // Days since 1970-01-01 to a proleptic Gregorian date, counted in 400-year eras from 0000-03-01
    // so that the leap day ends each year of the count.
    const qint64 days = ms / kMsPerDay + 719468;
    const qint64 era = days / 146097;
    const qint64 dayOfEra = days - era * 146097;
    const qint64 yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365;
    const qint64 dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    const qint64 monthFromMarch = (5 * dayOfYear + 2) / 153;
    const int day = int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1);
    const int month = int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9);
    const int year = int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0));

    char text[24] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0', 'T', '0',
                     '0', ':', '0', '0', ':', '0', '0', '.', '0', '0', '0', 'Z'};
    putDigits(text, year, 4);
    putDigits(text + 5, month, 2);
    putDigits(text + 8, day, 2);
    putDigits(text + 11, int(msOfDay / 3600000), 2);
    putDigits(text + 14, int(msOfDay / 60000 % 60), 2);
    putDigits(text + 17, int(msOfDay / 1000 % 60), 2);
    putDigits(text + 20, int(msOfDay % 1000), 3);
    return QString::fromLatin1(text, sizeof text);
}

QString nowTimestamp()
{
    return timestamp(QDateTime::currentDateTimeUtc());
}

std::optional<QDateTime> parseTimestamp(const QString &text)
{
    if (text.size() < 20)
        return std::nullopt;
    const QDateTime at = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!at.isValid() || at.timeSpec() == Qt::LocalTime)
        return std::nullopt;
    return at.toUTC();
}

std::optional<TimestampBound> parseTimestampBound(const QString &text)
{
    // A fraction of the seconds (…T12:34:56.5015Z, also with "t" or a space, and a comma as Qt
    // reads it): its digits past the third are cut off before QDateTime reads it, and kept. Only
    // after hh:mm:ss: Qt also reads a fraction of a minute (T12:34.5Z), which is left to it.
    static const QRegularExpression seconds(QStringLiteral("^\\d{4}-\\d{2}-\\d{2}[Tt ]\\d{2}:\\d{2}:\\d{2}[.,]([0-9]+)"));
    TimestampBound bound;
    QString cut = text;
    if (const QRegularExpressionMatch m = seconds.match(text); m.hasMatch() && m.capturedLength(1) > 3) {
        const qsizetype first = m.capturedStart(1);
        bound.beyond = m.captured(1).mid(3);
        while (bound.beyond.endsWith(QLatin1Char('0')))
            bound.beyond.chop(1);
        cut = text.left(first + 3) + text.mid(m.capturedEnd(1));
    }
    const auto at = parseTimestamp(cut);
    if (!at)
        return std::nullopt;
    bound.millisecond = *at;
    return bound;
}

bool TimestampBound::isBefore(const TimestampBound &other) const
{
    if (millisecond != other.millisecond)
        return millisecond < other.millisecond;
    // Digit strings without trailing zeros compare as the fractions they are.
    return beyond < other.beyond;
}

} // namespace OpsDeck
