// Wire and storage timestamps: RFC 3339 UTC text with milliseconds, which sorts as text.
#pragma once

#include <QDateTime>
#include <QString>

#include <optional>

namespace OpsDeck {

QString timestamp(const QDateTime &at);
QString nowTimestamp();
// Accepts any RFC 3339 / ISO 8601 date-time with an offset or Z; nullopt otherwise.
std::optional<QDateTime> parseTimestamp(const QString &text);

// An RFC 3339 timestamp given as an exclusive bound of a range of stored times, which have
// milliseconds. QDateTime rounds digits beyond the third of a fraction to the nearest millisecond,
// which moves an exclusive bound across a stored time (after .5015 is .502 on, not .503 on): the
// bound is kept as the millisecond it falls in and the digits beyond.
struct TimestampBound
{
    QDateTime millisecond; // the start of the millisecond it falls in
    QString beyond;        // its fraction's digits after the third, trailing zeros dropped

    // Stored times (milliseconds) after it are those after this.
    QDateTime afterIt() const { return millisecond; }
    // Stored times before it are those before this.
    QDateTime beforeIt() const { return beyond.isEmpty() ? millisecond : millisecond.addMSecs(1); }
    bool isBefore(const TimestampBound &other) const;
};
std::optional<TimestampBound> parseTimestampBound(const QString &text);

} // namespace OpsDeck
