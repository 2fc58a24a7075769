// What the fuzz targets share: a failed property stops the run with a message, and one input is
// cut into pieces the way a network might deliver it.
#pragma once

#include <QByteArrayView>
#include <QList>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

// Unlike Q_ASSERT, also in release builds: libFuzzer keeps the input that made it fail, and the
// corpus replay (tst_fuzz_*) fails its test.
#define FUZZ_CHECK(condition)                                                                     \
    do {                                                                                          \
        if (!(condition)) {                                                                       \
            std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition); \
            std::abort();                                                                         \
        }                                                                                         \
    } while (false)

namespace OpsDeck::Fuzz {

// `data` cut into pieces whose sizes come from `seed` (1 to 16 bytes, now and then larger), so a
// line, a header or a length may end up split anywhere.
inline QList<QByteArrayView> pieces(QByteArrayView data, std::uint32_t seed)
{
    QList<QByteArrayView> out;
    std::uint32_t state = seed * 2654435761u + 1;
    for (qsizetype at = 0; at < data.size();) {
        state = state * 1103515245u + 12345u;
        const std::uint32_t r = state >> 16;
        const qsizetype size = (r % 8 == 0) ? qsizetype(r % 512) + 1 : qsizetype(r % 16) + 1;
        const qsizetype take = std::min(size, data.size() - at);
        out.append(data.sliced(at, take));
        at += take;
    }
    return out;
}

// The bytes one at a time.
inline QList<QByteArrayView> oneByOne(QByteArrayView data)
{
    QList<QByteArrayView> out;
    out.reserve(data.size());
    for (qsizetype i = 0; i < data.size(); ++i)
        out.append(data.sliced(i, 1));
    return out;
}

// An input of the targets that feed bytes as a connection would: its first two bytes choose how
// pieces() cuts the rest, which is what is fed. Nothing for an input too short to hold them.
struct StreamInput
{
    std::uint32_t seed = 0;
    QByteArrayView bytes;
};

inline std::optional<StreamInput> streamInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 2)
        return std::nullopt;
    return StreamInput{std::uint32_t(data[0] | (data[1] << 8)),
                       QByteArrayView(reinterpret_cast<const char *>(data) + 2, qsizetype(size) - 2)};
}

} // namespace OpsDeck::Fuzz
