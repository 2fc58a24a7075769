// Texts of a model's cells as UTF-8 in one buffer, addressed by number, optionally interned.
#pragma once

#include <QByteArrayView>
#include <QString>
#include <QStringView>
#include <QUtf8StringView>

#include <optional>
#include <vector>

namespace OpsDeck {

// Every text costs its UTF-8 bytes plus a 4-byte end offset; an interned text also a 4-byte
// slot of the index (kept at most half full). Texts are only ever appended: a number stays valid
// until clear(), and the bytes of a text replaced in its row stay until then too.
class TextArena final
{
public:
    // Adds text without an index entry: for texts unique per row (names), which nothing would
    // ever find again by value.
    quint32 add(QStringView text);
    // Equal texts added through intern() get the same number.
    quint32 intern(QStringView text);
    // Whether text `id` holds exactly these bytes.
    bool equals(quint32 id, QUtf8StringView utf8) const;

    quint32 size() const { return quint32(m_ends.size()); }
    QUtf8StringView utf8(quint32 id) const;
    QString text(quint32 id) const;
    // As QString::compare(a, b, Qt::CaseInsensitive), decoding only texts that are not ASCII.
    int compareIgnoringCase(quint32 a, quint32 b) const;
    // Whether text `id` contains `foldedNeedle` (ASCII, lower case, not empty) with A-Z matching
    // a-z, searched 16 bytes at a time: what QString::contains(needle, Qt::CaseInsensitive) answers
    // for ASCII texts. nullopt when this cannot tell: the needle was not found and the text holds
    // non-ASCII bytes (some fold to ASCII: the Kelvin sign to 'k'), or the text ends within 15
    // bytes of the buffer's end (containsIgnoringCase() of core/query answers both).
    std::optional<bool> containsAscii(quint32 id, QByteArrayView foldedNeedle) const;

    void clear();
    // Gives back the growth reserve after a bulk load.
    void squeeze();
    qsizetype memoryUsage() const;

private:
    quint32 append(const QByteArray &utf8);
    void growIndex();

    std::vector<char> m_bytes;
    std::vector<quint32> m_ends;  // text i is m_bytes[end(i-1), m_ends[i])
    std::vector<quint32> m_slots; // open addressing, text number + 1, 0 for a free slot
    quint32 m_interned = 0;
};

} // namespace OpsDeck
