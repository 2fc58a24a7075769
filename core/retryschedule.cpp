// The callback retry schedule: delays between attempts with jitter, the give-up time and Retry-After.
#include "retryschedule.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTimeZone>

#include <cmath>

namespace OpsDeck {

namespace {

using namespace std::chrono_literals;

struct Unit
{
    const char *suffix;
    std::chrono::milliseconds length;
};

// Largest first, so formatDelays() picks the most readable exact unit.
constexpr Unit Units[] = {{"d", 24h}, {"h", 1h}, {"m", 1min}, {"s", 1s}, {"ms", 1ms}};

int monthFromName(QStringView name)
{
    static const QStringList months = {
        QStringLiteral("Jan"), QStringLiteral("Feb"), QStringLiteral("Mar"), QStringLiteral("Apr"),
        QStringLiteral("May"), QStringLiteral("Jun"), QStringLiteral("Jul"), QStringLiteral("Aug"),
        QStringLiteral("Sep"), QStringLiteral("Oct"), QStringLiteral("Nov"), QStringLiteral("Dec")};
    const qsizetype index = months.indexOf(name.toString());
    return index < 0 ? 0 : int(index) + 1;
}

std::optional<QDateTime> makeUtc(int year, int month, int day, int hour, int minute, int second)
{
    const QDate date(year, month, day);
    const QTime time(hour, minute, second);
    if (!date.isValid() || !time.isValid())
        return std::nullopt;
    return QDateTime(date, time, QTimeZone::utc());
}

} // namespace

RetrySchedule::RetrySchedule()
    : RetrySchedule(defaultDelays())
{
}

RetrySchedule::RetrySchedule(QList<Delay> delays, RandomSource random, double jitterFraction)
    : m_delays(std::move(delays))
    , m_random(std::move(random))
    , m_jitter(jitterFraction)
{
    Q_ASSERT(!m_delays.isEmpty());
    Q_ASSERT(m_jitter >= 0.0 && m_jitter < 1.0);
    if (!m_random)
        m_random = [] { return QRandomGenerator::global()->generateDouble(); };
}

QList<RetrySchedule::Delay> RetrySchedule::defaultDelays()
{
    return {5s, 5min, 30min, 2h, 5h, 10h, 14h, 20h, 24h};
}

RetrySchedule::ParsedDelays RetrySchedule::parseDelays(const QString &text)
{
    static const QRegularExpression item(QStringLiteral("^([0-9]{1,9})(ms|s|m|h|d)$"));
    ParsedDelays result;
    const QStringList parts = text.split(QLatin1Char(','));
    if (text.trimmed().isEmpty()) {
        result.error = QStringLiteral("the retry schedule is empty");
        return result;
    }
    if (parts.size() > MaxDelayCount) {
        result.error = QStringLiteral("the retry schedule has more than %1 delays").arg(MaxDelayCount);
        return result;
    }
    for (const QString &raw : parts) {
        const QString part = raw.trimmed();
        const QRegularExpressionMatch match = item.match(part);
        if (!match.hasMatch()) {
            result.error = QStringLiteral("\"%1\" is not a delay like 5s, 30m, 2h or 1d").arg(part);
            result.delays.clear();
            return result;
        }
        const qint64 count = match.captured(1).toLongLong();
        const QString suffix = match.captured(2);
        Delay delay{0};
        for (const Unit &unit : Units) {
            if (suffix == QLatin1String(unit.suffix))
                delay = unit.length * count;
        }
        if (delay <= Delay::zero() || delay > MaxDelay) {
            result.error = QStringLiteral("\"%1\" must be more than 0 and at most 7d").arg(part);
            result.delays.clear();
            return result;
        }
        result.delays.append(delay);
    }
    return result;
}

QString RetrySchedule::formatDelays(const QList<Delay> &delays)
{
    QStringList parts;
    for (const Delay delay : delays) {
        for (const Unit &unit : Units) {
            if (delay.count() % unit.length.count() == 0) {
                parts.append(QString::number(delay.count() / unit.length.count())
                             + QLatin1String(unit.suffix));
                break;
            }
        }
    }
    return parts.join(QLatin1Char(','));
}

std::optional<RetrySchedule::Delay> RetrySchedule::nominalDelayBeforeAttempt(int attempt) const
{
    if (attempt < 1 || attempt > maxAttempts())
        return std::nullopt;
    if (attempt == 1)
        return Delay::zero();
    return m_delays.at(attempt - 2);
}

std::optional<RetrySchedule::Delay> RetrySchedule::delayBeforeAttempt(int attempt) const
{
    const std::optional<Delay> nominal = nominalDelayBeforeAttempt(attempt);
    if (!nominal || *nominal == Delay::zero())
        return nominal;
    return jittered(*nominal);
}

std::optional<QDateTime> RetrySchedule::nextAttemptAt(int failedAttempts, const QDateTime &now,
                                                      const std::optional<QDateTime> &retryAfter) const
{
    Q_ASSERT(failedAttempts >= 0);
    const std::optional<Delay> delay = delayBeforeAttempt(failedAttempts + 1);
    if (!delay)
        return std::nullopt;
    const QDateTime scheduled = now.addMSecs(delay->count());
    if (retryAfter && retryAfter->isValid() && *retryAfter > scheduled)
        return *retryAfter;
    return scheduled;
}

QDateTime RetrySchedule::giveUpAt(const QDateTime &firstAttemptAt) const
{
    return giveUpAt(0, firstAttemptAt);
}

QDateTime RetrySchedule::giveUpAt(int failedAttempts, const QDateTime &nextAttemptAt) const
{
    Delay total{0};
    for (int attempt = failedAttempts + 2; attempt <= maxAttempts(); ++attempt)
        total += maxJittered(m_delays.at(attempt - 2));
    return nextAttemptAt.addMSecs(total.count());
}

RetrySchedule::Delay RetrySchedule::jittered(Delay delay) const
{
    double r = m_random();
    // A source that strays out of [0, 1) must not break the ±jitter promise.
    if (!(r >= 0.0))
        r = 0.0;
    if (r >= 1.0)
        r = std::nextafter(1.0, 0.0);
    const double factor = 1.0 + m_jitter * (2.0 * r - 1.0);
    return Delay(std::llround(double(delay.count()) * factor));
}

RetrySchedule::Delay RetrySchedule::maxJittered(Delay delay) const
{
    // The epsilon keeps binary rounding (5000 * 1.1 = 5500.000000001) from adding a millisecond.
    return Delay(qint64(std::ceil(double(delay.count()) * (1.0 + m_jitter) - 1e-6)));
}

std::optional<QDateTime> RetrySchedule::parseRetryAfter(const QByteArray &value, const QDateTime &now)
{
    const QByteArray text = value.trimmed();
    if (text.isEmpty())
        return std::nullopt;
    const QDateTime cap = now.addSecs(std::chrono::seconds(MaxRetryAfter).count());

    bool allDigits = true;
    for (const char c : text)
        allDigits = allDigits && c >= '0' && c <= '9';
    if (allDigits) {
        // More digits than fit in the cap are simply "very long".
        if (text.size() > 9)
            return cap;
        const QDateTime at = now.addSecs(text.toLongLong());
        return at > cap ? cap : at;
    }

    const std::optional<QDateTime> date = parseHttpDate(text);
    if (!date)
        return std::nullopt;
    if (*date < now)
        return now;
    return *date > cap ? cap : *date;
}

std::optional<QDateTime> RetrySchedule::parseHttpDate(const QByteArray &value)
{
    static const QRegularExpression imfFixdate(QStringLiteral(
        "^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ([A-Z][a-z]{2}) ([0-9]{4}) "
        "([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$"));
    static const QRegularExpression rfc850(QStringLiteral(
        "^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-([A-Z][a-z]{2})-([0-9]{2}) "
        "([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$"));
    static const QRegularExpression asctime(QStringLiteral(
        "^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ 0-9][0-9]) "
        "([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$"));

    const QString text = QString::fromLatin1(value.trimmed());
    QRegularExpressionMatch m = imfFixdate.match(text);
    if (m.hasMatch()) {
        const int month = monthFromName(m.capturedView(2));
        if (month == 0)
            return std::nullopt;
        return makeUtc(m.captured(3).toInt(), month, m.captured(1).toInt(), m.captured(4).toInt(),
                       m.captured(5).toInt(), m.captured(6).toInt());
    }
    m = rfc850.match(text);
    if (m.hasMatch()) {
        const int month = monthFromName(m.capturedView(2));
        if (month == 0)
            return std::nullopt;
        // Two-digit years: RFC 9110 wants the most recent matching year; the 70 pivot is what
        // every HTTP implementation of this obsolete form does.
        const int yy = m.captured(3).toInt();
        return makeUtc(yy >= 70 ? 1900 + yy : 2000 + yy, month, m.captured(1).toInt(),
                       m.captured(4).toInt(), m.captured(5).toInt(), m.captured(6).toInt());
    }
    m = asctime.match(text);
    if (m.hasMatch()) {
        const int month = monthFromName(m.capturedView(1));
        if (month == 0)
            return std::nullopt;
        return makeUtc(m.captured(6).toInt(), month, m.captured(2).trimmed().toInt(), m.captured(3).toInt(),
                       m.captured(4).toInt(), m.captured(5).toInt());
    }
    return std::nullopt;
}

} // namespace OpsDeck
