// Wire and storage timestamps: RFC 3339 UTC text with milliseconds.
#include "timestamps.h"

namespace OpsDeck {

QString timestamp(const QDateTime &at)
{
    return at.toUTC().toString(Qt::ISODateWithMs);
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

} // namespace OpsDeck
