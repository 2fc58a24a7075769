// The UTF-8 text arena: appends, interning through an index of numbers keyed by the bytes.
#include "textarena.h"

#include <QHashFunctions>

#include <cstring>

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
