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

} // namespace OpsDeck
