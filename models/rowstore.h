// The compact rows of one resource kind: one 8-byte cell per field, texts in a UTF-8 arena.
#pragma once

#include "core/resourcekind.h"
#include "textarena.h"

#include <QVariant>

#include <atomic>
#include <functional>
#include <vector>

namespace OpsDeck {

// Names a referenced object ("providers", 7 -> "Acme Hosting"); empty when unknown.
using ReferenceLookup = std::function<QString(const QString &kindName, qint64 id)>;

// A value type: the model owns one and shares it read-only (a snapshot) with filter workers; a
// shared store is copied before the model changes it, so a snapshot never changes under a reader.
class RowStore final
{
public:
    using Cell = quint64;
    // No id, version or timestamp comes near this, and as a double it is a NaN no arithmetic makes.
    static constexpr Cell kNull = 0x7FF4000000000001ULL;

    // kind must outlive the store (resourceKinds() entries do).
    explicit RowStore(const ResourceKind &kind);

    const ResourceKind &kind() const { return *m_kind; }
    int fieldCount() const { return m_fieldCount; }
    int rowCount() const { return m_fieldCount == 0 ? 0 : int(m_cells.size() / size_t(m_fieldCount)); }
    const Cell *row(int row) const { return m_cells.data() + size_t(row) * size_t(m_fieldCount); }
    Cell cell(int row, int field) const { return m_cells[size_t(row) * size_t(m_fieldCount) + size_t(field)]; }
    const TextArena &texts() const { return m_texts; }
    bool isTextField(int field) const { return m_textField[size_t(field)] != 0; }
    // Whether equal texts of this field share one number (false for texts unique per row).
    bool isInterned(int field) const { return m_interned[size_t(field)] != 0; }

    // The text number of a Text/State/Json cell, else -1.
    int textId(int row, int field) const;
    // The raw value as fieldRawValue() gives it; invalid for null.
    QVariant raw(int row, int field) const;
    // By one field's raw value, texts case-insensitively, nulls last; 0 when equal.
    int compare(int rowA, int rowB, int field) const;

    // Encodes an object's fields into `cells` (fieldCount() of them). `previous`, the row's cells
    // before, lets unchanged texts keep their numbers; may be null.
    void encode(const QJsonObject &object, Cell *cells, const Cell *previous);
    void appendRows(const Cell *cells, int count);
    void setRow(int row, const Cell *cells);
    void eraseRows(int first, int last);
    // Erases many rows in one pass; `rows` sorted ascending, unique.
    void eraseRows(const std::vector<int> &rows);
    void clear();
    void reserveRows(qsizetype rows);
    // Gives back growth reserves after a bulk load.
    void squeeze();
    qsizetype memoryUsage() const;

    // Snapshots being read on other threads. Taken and given back by their holder; a store with
    // readers must not change (its owner copies it instead). A copy of a store has none.
    void addReader() const { m_readers.count.fetch_add(1, std::memory_order_relaxed); }
    void releaseReader() const { m_readers.count.fetch_sub(1, std::memory_order_release); }
    // Acquires the readers' last reads when it answers false.
    bool hasReaders() const { return m_readers.count.load(std::memory_order_acquire) > 0; }

private:
    struct Readers
    {
        Readers() = default;
        Readers(const Readers &) { }
        Readers &operator=(const Readers &) { return *this; }
        std::atomic<int> count{0};
    };

    quint32 storeText(int field, const QString &text, const Cell *previous);

    const ResourceKind *m_kind;
    int m_fieldCount = 0;
    std::vector<Cell> m_cells; // row-major, m_fieldCount cells per row
    TextArena m_texts;
    std::vector<quint8> m_textField;
    std::vector<quint8> m_interned;
    // Per field: texts stored and texts found already there, to notice fields unique per row.
    std::vector<std::pair<quint32, quint32>> m_internStats;
    mutable Readers m_readers;
};

} // namespace OpsDeck
