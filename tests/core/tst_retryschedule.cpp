// The retry schedule: attempts, jitter bounds, exhaustion, give-up time and Retry-After forms.
#include "core/retryschedule.h"

#include <QtTest>

using namespace OpsDeck;
using namespace std::chrono_literals;

using Delay = RetrySchedule::Delay;

namespace {

RetrySchedule::RandomSource fixed(double value)
{
    return [value] { return value; };
}

QDateTime at(const char *iso)
{
    return QDateTime::fromString(QString::fromLatin1(iso), Qt::ISODate);
}

} // namespace

class tst_RetrySchedule final : public QObject
{
    Q_OBJECT

private slots:
    void defaultSchedule_data();
    void defaultSchedule();
    void jitterBounds_data();
    void jitterBounds();
    void jitterCoversTheRange();
    void exhaustedAfterTheLast();
    void nextAttemptHonoursRetryAfter_data();
    void nextAttemptHonoursRetryAfter();
    void giveUpAt();
    void parseDelays_data();
    void parseDelays();
    void formatRoundTrip();
    void retryAfter_data();
    void retryAfter();
};

void tst_RetrySchedule::defaultSchedule_data()
{
    QTest::addColumn<int>("attempt");
    QTest::addColumn<qint64>("expectedMs");
    const qint64 expected[] = {0, 5'000, 300'000, 1'800'000, 7'200'000, 18'000'000, 36'000'000,
                               50'400'000, 72'000'000, 86'400'000};
    for (int attempt = 1; attempt <= 10; ++attempt)
        QTest::addRow("attempt %d", attempt) << attempt << expected[attempt - 1];
}

void tst_RetrySchedule::defaultSchedule()
{
    QFETCH(int, attempt);
    QFETCH(qint64, expectedMs);
    // 0.5 is the middle of [0, 1): no jitter at all.
    const RetrySchedule schedule(RetrySchedule::defaultDelays(), fixed(0.5));
    QCOMPARE(schedule.maxAttempts(), 10);
    QCOMPARE(schedule.nominalDelayBeforeAttempt(attempt), std::optional<Delay>(Delay(expectedMs)));
    QCOMPARE(schedule.delayBeforeAttempt(attempt), std::optional<Delay>(Delay(expectedMs)));
}

void tst_RetrySchedule::jitterBounds_data()
{
    QTest::addColumn<double>("random");
    QTest::addColumn<qint64>("expectedMs");
    // Attempt 3 waits 5 min = 300 000 ms nominally; jitter is ±10%.
    QTest::newRow("lowest") << 0.0 << qint64(270'000);
    QTest::newRow("quarter") << 0.25 << qint64(285'000);
    QTest::newRow("middle") << 0.5 << qint64(300'000);
    QTest::newRow("three quarters") << 0.75 << qint64(315'000);
    QTest::newRow("almost one") << 0.999999 << qint64(329'999);
    QTest::newRow("out of range high is clamped") << 7.0 << qint64(329'999);
    QTest::newRow("out of range low is clamped") << -3.0 << qint64(270'000);
}

void tst_RetrySchedule::jitterBounds()
{
    QFETCH(double, random);
    QFETCH(qint64, expectedMs);
    const RetrySchedule schedule(RetrySchedule::defaultDelays(), fixed(random));
    const std::optional<Delay> delay = schedule.delayBeforeAttempt(3);
    QVERIFY(delay);
    QVERIFY2(qAbs(delay->count() - expectedMs) <= 1, qPrintable(QString::number(delay->count())));
}

void tst_RetrySchedule::jitterCoversTheRange()
{
    // A deterministic sweep over [0, 1) stands in for the real generator.
    int step = 0;
    const RetrySchedule schedule({100s}, [&step] { return (step++ % 100) / 100.0; });
    qint64 lowest = std::numeric_limits<qint64>::max();
    qint64 highest = 0;
    for (int i = 0; i < 100; ++i) {
        const qint64 ms = schedule.delayBeforeAttempt(2)->count();
        QVERIFY(ms >= 90'000 && ms <= 110'000);
        lowest = qMin(lowest, ms);
        highest = qMax(highest, ms);
    }
    QCOMPARE(lowest, qint64(90'000));
    QCOMPARE(highest, qint64(109'800));

    // And the default generator stays inside the bounds too.
    const RetrySchedule real({100s});
    for (int i = 0; i < 1000; ++i) {
        const qint64 ms = real.delayBeforeAttempt(2)->count();
        QVERIFY(ms >= 90'000 && ms <= 110'000);
    }
}

void tst_RetrySchedule::exhaustedAfterTheLast()
{
    const RetrySchedule schedule({5s, 1min}, fixed(0.5));
    const QDateTime now = at("2026-01-01T00:00:00Z");
    QCOMPARE(schedule.maxAttempts(), 3);
    QCOMPARE(schedule.nextAttemptAt(0, now), std::optional<QDateTime>(now));
    QCOMPARE(schedule.nextAttemptAt(1, now), std::optional<QDateTime>(now.addSecs(5)));
    QCOMPARE(schedule.nextAttemptAt(2, now), std::optional<QDateTime>(now.addSecs(60)));
    QCOMPARE(schedule.nextAttemptAt(3, now), std::nullopt);
    QCOMPARE(schedule.nextAttemptAt(3, now, now.addSecs(10)), std::nullopt);
    QCOMPARE(schedule.delayBeforeAttempt(4), std::nullopt);
    QCOMPARE(schedule.delayBeforeAttempt(0), std::nullopt);

    const RetrySchedule standard(RetrySchedule::defaultDelays(), fixed(0.5));
    QVERIFY(standard.nextAttemptAt(9, now));
    QCOMPARE(standard.nextAttemptAt(10, now), std::nullopt);
}

void tst_RetrySchedule::nextAttemptHonoursRetryAfter_data()
{
    QTest::addColumn<int>("failedAttempts");
    QTest::addColumn<qint64>("retryAfterSecs"); // -1: none
    QTest::addColumn<qint64>("expectedSecs");
    QTest::newRow("no retry-after") << 2 << qint64(-1) << qint64(300);
    QTest::newRow("retry-after sooner than schedule") << 2 << qint64(60) << qint64(300);
    QTest::newRow("retry-after later than schedule") << 2 << qint64(3600) << qint64(3600);
    QTest::newRow("retry-after equal") << 1 << qint64(5) << qint64(5);
    QTest::newRow("retry-after after first failure") << 1 << qint64(120) << qint64(120);
}

void tst_RetrySchedule::nextAttemptHonoursRetryAfter()
{
    QFETCH(int, failedAttempts);
    QFETCH(qint64, retryAfterSecs);
    QFETCH(qint64, expectedSecs);
    const RetrySchedule schedule(RetrySchedule::defaultDelays(), fixed(0.5));
    const QDateTime now = at("2026-03-01T12:00:00Z");
    std::optional<QDateTime> retryAfter;
    if (retryAfterSecs >= 0)
        retryAfter = now.addSecs(retryAfterSecs);
    QCOMPARE(schedule.nextAttemptAt(failedAttempts, now, retryAfter),
             std::optional<QDateTime>(now.addSecs(expectedSecs)));
}

void tst_RetrySchedule::giveUpAt()
{
    const RetrySchedule schedule(RetrySchedule::defaultDelays(), fixed(0.5));
    const QDateTime first = at("2026-01-01T00:00:00Z");
    // 5s+5m+30m+2h+5h+10h+14h+20h+24h = 75h35m5s, +10% worst-case jitter = 83h8m35.5s.
    const qint64 nominalMs = ((75 * 60 + 35) * 60 + 5) * 1000LL;
    QCOMPARE(schedule.giveUpAt(first), first.addMSecs(nominalMs + nominalMs / 10));
    QCOMPARE(schedule.giveUpAt(0, first), schedule.giveUpAt(first));
    // After 8 failures only the 24 h delay remains before the tenth attempt.
    const QDateTime next = at("2026-01-03T00:00:00Z");
    QCOMPARE(schedule.giveUpAt(8, next), next.addSecs(24 * 3600 + 24 * 360));
    QCOMPARE(schedule.giveUpAt(9, next), next);

    // Whatever the random source, no attempt happens after giveUpAt().
    int step = 0;
    const RetrySchedule random(RetrySchedule::defaultDelays(), [&step] { return (step++ % 10) / 10.0 + 0.0999; });
    QDateTime t = first;
    for (int failed = 1; failed < random.maxAttempts(); ++failed) {
        t = *random.nextAttemptAt(failed, t);
        QVERIFY(t <= random.giveUpAt(first));
    }
}

void tst_RetrySchedule::parseDelays_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expected"); // formatted delays, or empty for an error
    QTest::addColumn<QString>("error");    // part of the error
    QTest::newRow("example") << "5s,5m,30m,2h" << "5s,5m,30m,2h" << "";
    QTest::newRow("spaces") << " 5s , 1d " << "5s,1d" << "";
    QTest::newRow("milliseconds") << "250ms,1500ms" << "250ms,1500ms" << "";
    QTest::newRow("normalised") << "60s,120m" << "1m,2h" << "";
    QTest::newRow("empty") << "" << "" << "empty";
    QTest::newRow("blank") << "  " << "" << "empty";
    QTest::newRow("no unit") << "5" << "" << "\"5\" is not a delay";
    QTest::newRow("unknown unit") << "5w" << "" << "\"5w\" is not a delay";
    QTest::newRow("negative") << "-5s" << "" << "\"-5s\" is not a delay";
    QTest::newRow("zero") << "0s" << "" << "more than 0";
    QTest::newRow("too long") << "8d" << "" << "at most 7d";
    QTest::newRow("empty item") << "5s,,5m" << "" << "\"\" is not a delay";
    QTest::newRow("fraction") << "1.5h" << "" << "is not a delay";
    QTest::newRow("too many") << QStringList(101, QStringLiteral("1s")).join(QLatin1Char(',')) << ""
                              << "more than 100";
}

void tst_RetrySchedule::parseDelays()
{
    QFETCH(QString, text);
    QFETCH(QString, expected);
    QFETCH(QString, error);
    const RetrySchedule::ParsedDelays parsed = RetrySchedule::parseDelays(text);
    if (expected.isEmpty()) {
        QVERIFY(!parsed.ok());
        QVERIFY(parsed.delays.isEmpty());
        QVERIFY2(parsed.error.contains(error), qPrintable(parsed.error));
    } else {
        QVERIFY2(parsed.ok(), qPrintable(parsed.error));
        QCOMPARE(RetrySchedule::formatDelays(parsed.delays), expected);
    }
}

void tst_RetrySchedule::formatRoundTrip()
{
    QCOMPARE(RetrySchedule::formatDelays(RetrySchedule::defaultDelays()),
             QStringLiteral("5s,5m,30m,2h,5h,10h,14h,20h,1d"));
    const RetrySchedule::ParsedDelays parsed =
        RetrySchedule::parseDelays(RetrySchedule::formatDelays(RetrySchedule::defaultDelays()));
    QVERIFY(parsed.ok());
    QCOMPARE(parsed.delays, RetrySchedule::defaultDelays());
}

void tst_RetrySchedule::retryAfter_data()
{
    QTest::addColumn<QByteArray>("value");
    QTest::addColumn<qint64>("expectedSecs"); // from now; -1 = rejected
    // now is Sun, 06 Nov 1994 08:49:37 GMT, the RFC's example date.
    QTest::newRow("delta seconds") << QByteArray("120") << qint64(120);
    QTest::newRow("zero") << QByteArray("0") << qint64(0);
    QTest::newRow("padded") << QByteArray("  30 ") << qint64(30);
    QTest::newRow("capped delta") << QByteArray("999999") << qint64(86400);
    QTest::newRow("huge delta") << QByteArray("99999999999999999999999") << qint64(86400);
    QTest::newRow("imf-fixdate") << QByteArray("Sun, 06 Nov 1994 08:51:37 GMT") << qint64(120);
    QTest::newRow("imf-fixdate same") << QByteArray("Sun, 06 Nov 1994 08:49:37 GMT") << qint64(0);
    QTest::newRow("date in the past") << QByteArray("Sat, 05 Nov 1994 08:49:37 GMT") << qint64(0);
    QTest::newRow("date far away capped") << QByteArray("Wed, 09 Nov 1994 08:49:37 GMT") << qint64(86400);
    QTest::newRow("rfc 850") << QByteArray("Sunday, 06-Nov-94 09:49:37 GMT") << qint64(3600);
    QTest::newRow("asctime") << QByteArray("Sun Nov  6 08:50:37 1994") << qint64(60);
    QTest::newRow("negative") << QByteArray("-5") << qint64(-1);
    QTest::newRow("fraction") << QByteArray("1.5") << qint64(-1);
    QTest::newRow("empty") << QByteArray("") << qint64(-1);
    QTest::newRow("garbage") << QByteArray("soon") << qint64(-1);
    QTest::newRow("not gmt") << QByteArray("Sun, 06 Nov 1994 08:51:37 CET") << qint64(-1);
    QTest::newRow("bad month") << QByteArray("Sun, 06 Foo 1994 08:51:37 GMT") << qint64(-1);
    QTest::newRow("bad day") << QByteArray("Sun, 31 Nov 1994 08:51:37 GMT") << qint64(-1);
    QTest::newRow("bad hour") << QByteArray("Sun, 06 Nov 1994 25:51:37 GMT") << qint64(-1);
    QTest::newRow("lowercase") << QByteArray("sun, 06 nov 1994 08:51:37 gmt") << qint64(-1);
    QTest::newRow("iso 8601") << QByteArray("1994-11-06T08:51:37Z") << qint64(-1);
}

void tst_RetrySchedule::retryAfter()
{
    QFETCH(QByteArray, value);
    QFETCH(qint64, expectedSecs);
    const QDateTime now = at("1994-11-06T08:49:37Z");
    const std::optional<QDateTime> parsed = RetrySchedule::parseRetryAfter(value, now);
    if (expectedSecs < 0) {
        QCOMPARE(parsed, std::nullopt);
    } else {
        QVERIFY(parsed);
        QCOMPARE(parsed->toUTC(), now.addSecs(expectedSecs).toUTC());
    }
}

QTEST_GUILESS_MAIN(tst_RetrySchedule)
#include "tst_retryschedule.moc"
