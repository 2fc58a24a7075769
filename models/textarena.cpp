// The UTF-8 text arena: appends, interning through an index of numbers keyed by the bytes.
#include "textarena.h"

#include <QHashFunctions>
#include <QtAlgorithms>

#include <algorithm>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace OpsDeck {

namespace {

constexpr size_t kFirstIndexSize = 64;

size_t hashOf(QUtf8StringView utf8)
{
    return qHashBits(utf8.data(), size_t(utf8.size()));
}

bool isAscii(QUtf8StringView utf8)
{
    for (const char c : utf8) {
        if (uchar(c) >= 0x80)
            return false;
    }
    return true;
}

uchar foldAscii(uchar c)
{
    return c >= 'A' && c <= 'Z' ? uchar(c + 32) : c;
}

// The needle at h, A-Z as a-z.
bool matchesAt(const uchar *h, const uchar *needle, qsizetype m)
{
    for (qsizetype j = 0; j < m; ++j) {
        if (foldAscii(h[j]) != needle[j])
            return false;
    }
    return true;
}

#if defined(__SSE2__)
// Sixteen start positions at a time: a position is a candidate when its byte and the byte m - 1
// further both equal the needle's first and last bytes with bit 0x20 set (that folds A-Z to a-z,
// and maps a few other bytes together too, which the exact comparison then rejects). `h` may be
// read up to 15 bytes past size.
std::optional<bool> containsAsciiWide(const uchar *h, qsizetype size, const uchar *needle, qsizetype m)
{
    const __m128i caseBit = _mm_set1_epi8(0x20);
    const __m128i first = _mm_set1_epi8(char(needle[0] | 0x20));
    const __m128i last = _mm_set1_epi8(char(needle[m - 1] | 0x20));
    bool ascii = true;
    for (qsizetype i = 0; i < size; i += 16) {
        const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i *>(h + i));
        const qsizetype inText = std::min<qsizetype>(16, size - i);
        const unsigned textMask = inText == 16 ? 0xFFFFu : (1u << inText) - 1;
        if (unsigned(_mm_movemask_epi8(block)) & textMask)
            ascii = false;
        if (i > size - m)
            continue; // no start position left, only bytes to check for ASCII
        const __m128i ends = _mm_loadu_si128(reinterpret_cast<const __m128i *>(h + i + m - 1));
        const __m128i both = _mm_and_si128(_mm_cmpeq_epi8(_mm_or_si128(block, caseBit), first),
                                           _mm_cmpeq_epi8(_mm_or_si128(ends, caseBit), last));
        const qsizetype starts = std::min<qsizetype>(16, size - m - i + 1);
        unsigned candidates = unsigned(_mm_movemask_epi8(both)) & (starts == 16 ? 0xFFFFu : (1u << starts) - 1);
        while (candidates != 0) {
            const uint at = qCountTrailingZeroBits(candidates);
            if (matchesAt(h + i + at, needle, m))
                return true;
            candidates &= candidates - 1;
        }
    }
    return ascii ? std::optional<bool>(false) : std::nullopt;
}
#endif

} // namespace

quint32 TextArena::append(const QByteArray &utf8)
{
    Q_ASSERT(m_bytes.size() + size_t(utf8.size()) < size_t(0xFFFFFFFFU));
    m_bytes.insert(m_bytes.end(), utf8.cbegin(), utf8.cend());
    m_ends.push_back(quint32(m_bytes.size()));
    return quint32(m_ends.size() - 1);
}

quint32 TextArena::add(QStringView text)
{
    return append(text.toUtf8());
}

quint32 TextArena::intern(QStringView text)
{
    const QByteArray utf8 = text.toUtf8();
    const QUtf8StringView view(utf8.constData(), utf8.size());
    if (size_t(m_interned + 1) * 2 > m_slots.size())
        growIndex();
    const size_t mask = m_slots.size() - 1;
    size_t slot = hashOf(view) & mask;
    while (m_slots[slot] != 0) {
        const quint32 id = m_slots[slot] - 1;
        if (equals(id, view))
            return id;
        slot = (slot + 1) & mask;
    }
    const quint32 id = append(utf8);
    m_slots[slot] = id + 1;
    ++m_interned;
    return id;
}

void TextArena::growIndex()
{
    std::vector<quint32> old;
    old.swap(m_slots);
    m_slots.assign(old.empty() ? kFirstIndexSize : old.size() * 2, 0);
    const size_t mask = m_slots.size() - 1;
    for (const quint32 entry : old) {
        if (entry == 0)
            continue;
        size_t slot = hashOf(utf8(entry - 1)) & mask;
        while (m_slots[slot] != 0)
            slot = (slot + 1) & mask;
        m_slots[slot] = entry;
    }
}

bool TextArena::equals(quint32 id, QUtf8StringView utf8) const
{
    const QUtf8StringView mine = this->utf8(id);
    return mine.size() == utf8.size() && std::memcmp(mine.data(), utf8.data(), size_t(utf8.size())) == 0;
}

QUtf8StringView TextArena::utf8(quint32 id) const
{
    if (id >= m_ends.size())
        return {};
    const quint32 begin = id == 0 ? 0 : m_ends[id - 1];
    return QUtf8StringView(m_bytes.data() + begin, qsizetype(m_ends[id] - begin));
}

QString TextArena::text(quint32 id) const
{
    return utf8(id).toString();
}

int TextArena::compareIgnoringCase(quint32 a, quint32 b) const
{
    const QUtf8StringView x = utf8(a);
    const QUtf8StringView y = utf8(b);
    if (!isAscii(x) || !isAscii(y))
        return QString::compare(x.toString(), y.toString(), Qt::CaseInsensitive);
    // For ASCII, Qt folds A-Z to a-z and compares code units: the same on bytes.
    const qsizetype n = std::min(x.size(), y.size());
    for (qsizetype i = 0; i < n; ++i) {
        uchar cx = uchar(x.data()[i]);
        uchar cy = uchar(y.data()[i]);
        cx = cx >= 'A' && cx <= 'Z' ? uchar(cx + 32) : cx;
        cy = cy >= 'A' && cy <= 'Z' ? uchar(cy + 32) : cy;
        if (cx != cy)
            return cx < cy ? -1 : 1;
    }
    return x.size() == y.size() ? 0 : (x.size() < y.size() ? -1 : 1);
}

std::optional<bool> TextArena::containsAscii(quint32 id, QByteArrayView foldedNeedle) const
{
    if (id >= m_ends.size())
        return false;
    const quint32 begin = id == 0 ? 0 : m_ends[id - 1];
    const qsizetype size = qsizetype(m_ends[id] - begin);
    const qsizetype m = foldedNeedle.size();
    Q_ASSERT(m > 0);
    const auto *h = reinterpret_cast<const uchar *>(m_bytes.data()) + begin;
    const auto *needle = reinterpret_cast<const uchar *>(foldedNeedle.data());
    if (m > size) {
        // A text of fewer UTF-8 bytes has fewer UTF-16 units than the needle: Qt finds nothing either.
        return false;
    }
#if defined(__SSE2__)
    if (size_t(m_ends[id]) + 15 <= m_bytes.size())
        return containsAsciiWide(h, size, needle, m);
#else
    Q_UNUSED(h)
    Q_UNUSED(needle)
#endif
    return std::nullopt; // the last bytes of the buffer: not read 16 at a time
}

void TextArena::clear()
{
    m_bytes = {};
    m_ends = {};
    m_slots = {};
    m_interned = 0;
}

void TextArena::squeeze()
{
    m_bytes.shrink_to_fit();
    m_ends.shrink_to_fit();
}

qsizetype TextArena::memoryUsage() const
{
    return qsizetype(m_bytes.capacity() + m_ends.capacity() * sizeof(quint32) + m_slots.capacity() * sizeof(quint32));
}

} // namespace OpsDeck
