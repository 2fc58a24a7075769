// The callback retry schedule: delays between attempts with jitter, the give-up time and Retry-After.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include <chrono>
#include <functional>
#include <optional>

namespace OpsDeck {

// Attempts are numbered from 1; attempt 1 is sent at once, attempt n + 1 waits delays[n - 1]
// after attempt n failed. With the default nine delays a delivery gets ten attempts over about
// three days (Standard Webhooks' example schedule) before it is FAILED.
//
// Each delay is stretched or shrunk by up to jitterFraction (default 10%) so that endpoints that
// failed together do not all come back in the same second. The random source is injectable so
// that tests are deterministic.
class RetrySchedule final
{
public:
    using Delay = std::chrono::milliseconds;
    using RandomSource = std::function<double()>; // uniform in [0, 1)

    struct ParsedDelays
    {
        QList<Delay> delays;
        QString error; // empty when the text was valid

        bool ok() const { return error.isEmpty(); }
    };

    static constexpr double DefaultJitterFraction = 0.1;
    static constexpr std::chrono::hours MaxRetryAfter{24};
    static constexpr std::chrono::hours MaxDelay{24 * 7};
    static constexpr int MaxDelayCount = 100;

    // The default schedule: 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h, 24h.
    RetrySchedule();
    // delays must be non-empty and positive (use parseDelays() on configuration text);
    // an empty random source means QRandomGenerator::global().
    explicit RetrySchedule(QList<Delay> delays, RandomSource random = {},
                           double jitterFraction = DefaultJitterFraction);

    static QList<Delay> defaultDelays();
    // "5s,5m,30m,2h" (units ms, s, m, h, d; spaces allowed around commas).
    static ParsedDelays parseDelays(const QString &text);
    // The inverse of parseDelays(), in the largest exact unit: "5s,5m,30m,2h".
    static QString formatDelays(const QList<Delay> &delays);

    const QList<Delay> &delays() const { return m_delays; }
    double jitterFraction() const { return m_jitter; }
    // The first attempt plus one per delay.
    int maxAttempts() const { return int(m_delays.size()) + 1; }

    // The configured delay before attempt `attempt` without jitter: 0 for attempt 1, nullopt
    // when the schedule has no such attempt.
    std::optional<Delay> nominalDelayBeforeAttempt(int attempt) const;
    // The same with jitter applied (draws one random number).
    std::optional<Delay> delayBeforeAttempt(int attempt) const;

    // When to try again after `failedAttempts` attempts have failed, the last one at `now`;
    // nullopt when the schedule is exhausted (the delivery becomes FAILED). A Retry-After from a
    // 429/503 answer can only push the next attempt later, never earlier.
    std::optional<QDateTime> nextAttemptAt(int failedAttempts, const QDateTime &now,
                                           const std::optional<QDateTime> &retryAfter = std::nullopt) const;

    // The latest moment the last attempt can happen (every delay at its maximum jitter), for the
    // console's "gives up at" column.
    QDateTime giveUpAt(const QDateTime &firstAttemptAt) const;
    // The same for a delivery in progress: attempt failedAttempts + 1 is due at nextAttemptAt.
    QDateTime giveUpAt(int failedAttempts, const QDateTime &nextAttemptAt) const;

    // A Retry-After header value (RFC 9110 §10.2.3): delta-seconds or an HTTP-date
    // (IMF-fixdate; the obsolete RFC 850 and asctime forms are accepted as the RFC asks).
    // nullopt for anything else. A date in the past means now; anything later than
    // now + MaxRetryAfter is capped there, so one answer cannot park a delivery forever.
    static std::optional<QDateTime> parseRetryAfter(const QByteArray &value, const QDateTime &now);
    // An HTTP-date, as parseRetryAfter() reads it; nullopt when it is not one.
    static std::optional<QDateTime> parseHttpDate(const QByteArray &value);

private:
    Delay jittered(Delay delay) const;
    Delay maxJittered(Delay delay) const;

    QList<Delay> m_delays;
    RandomSource m_random;
    double m_jitter = DefaultJitterFraction;
};

} // namespace OpsDeck
