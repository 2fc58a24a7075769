// The sort order of every row of a RowStore by one column, kept across filter changes.
#pragma once

#include "rowstore.h"

#include <Qt>

#include <functional>
#include <vector>

namespace OpsDeck {

// A value type: built on a worker from a snapshot, then kept up to date by the proxy per batch.
// Texts of the column are ranked once (by their case-folded order) so rows compare by integers;
// texts added after the ranking compare as strings, which orders them the same way.
class RowOrder final
{
public:
    RowOrder() = default;
    // Every row of store by column, ties by id then row. Gives up (an empty order) when
    // `cancelled` (may be empty) answers true between its steps.
    static RowOrder build(const RowStore &store, int column, Qt::SortOrder order,
                          const std::function<bool()> &cancelled = {});

    // Rows in an order the caller already knows, unranked (texts compare as strings): a stand-in
    // shown until build()'s answer for the same column arrives.
    static RowOrder placed(const RowStore &store, int column, Qt::SortOrder order, std::vector<int> rows);

    int column() const { return m_column; }
    Qt::SortOrder order() const { return m_order; }
    const std::vector<int> &rows() const { return m_rows; }
    bool lessThan(const RowStore &store, int a, int b) const;
    // Takes `changed` (source rows, sorted, unique, possibly not in the order yet) out and merges
    // them back at their places; returns whether the order changed.
    bool mergeChanged(const RowStore &store, const std::vector<int> &changed);
    // Rows first..last are gone; later rows move up.
    void removeRows(int first, int last);

private:
    int rank(const RowStore &store, int row) const;

    int m_column = -1;
    int m_idField = 0;
    Qt::SortOrder m_order = Qt::AscendingOrder;
    std::vector<int> m_rows; // every source row in sort order
    std::vector<int> m_rank; // by text number: the text's place in the column's order, -1 unranked
};

} // namespace OpsDeck
