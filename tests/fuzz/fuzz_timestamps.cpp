// Fuzz target: timestamps on the wire. The server writes them by hand (timestamp()) and the
// console reads them by hand (parseTimestamp() in core): both fast paths must agree with Qt's
// ISO 8601 code, which the server uses to read a timestamp a client sent. For any instant, the
// text is Qt's and reads back to the same millisecond on both sides; for any text, the console
// and the server take the same full timestamps, and read the same instant from them.
#include "fuzzsupport.h"

#include "core/resourcekind.h"
#include "server/storage/timestamps.h"

#include <QDateTime>

#include <cstring>

using namespace OpsDeck;

namespace {

constexpr qint64 kYear1 = -62135596800000;     // 0001-01-01T00:00:00Z
constexpr qint64 kYear10000 = 253402300800000; // 10000-01-01T00:00:00Z

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size >= 8) {
        qint64 raw = 0;
        std::memcpy(&raw, data, sizeof raw);
        const qint64 ms = kYear1 + qint64(quint64(raw) % quint64(kYear10000 - kYear1));
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
        const QString written = timestamp(at);
        FUZZ_CHECK(written == at.toString(Qt::ISODateWithMs));
        const std::optional<qint64> read = parseTimestamp(QStringView(written));
        FUZZ_CHECK(read && *read == ms);
        const std::optional<QDateTime> serverRead = parseTimestamp(written);
        FUZZ_CHECK(serverRead && serverRead->toMSecsSinceEpoch() == ms);
    }

    const QString text = QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size));
    const std::optional<qint64> console = parseTimestamp(QStringView(text));
    const std::optional<QDateTime> server = parseTimestamp(text);
    // Without seconds (under 20 characters) the server refuses what the console's filter line
    // takes ("created>2026-11-29T10:00"); from there on, the same rules.
    if (text.size() >= 20)
        FUZZ_CHECK(console.has_value() == server.has_value());
    if (console && server)
        FUZZ_CHECK(server->toMSecsSinceEpoch() == *console);
    return 0;
}
