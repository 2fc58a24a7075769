// The row order: texts ranked once, rows sorted by integers, changed rows merged back per batch.
#include "roworder.h"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace OpsDeck {

RowOrder RowOrder::build(const RowStore &store, int column, Qt::SortOrder order, const std::function<bool()> &cancelled)
{
    RowOrder result;
    result.m_column = column;
    result.m_order = order;
    result.m_idField = store.kind().fieldIndex(u"id");
    const int rows = store.rowCount();
    if (column < 0 || column >= store.fieldCount())
        return result;
    if (store.isTextField(column)) {
        // Case-insensitive string comparisons dominate a sort of 250k texts: rank each distinct
        // text once, then rows compare by integers.
        std::vector<int> ids;
        ids.reserve(size_t(rows));
        for (int r = 0; r < rows; ++r) {
            const int id = store.textId(r, column);
            if (id >= 0)
                ids.push_back(id);
        }
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        if (cancelled && cancelled())
            return {};
        const TextArena &texts = store.texts();
        std::sort(ids.begin(), ids.end(), [&](int x, int y) { return texts.compareIgnoringCase(quint32(x), quint32(y)) < 0; });
        result.m_rank.assign(ids.empty() ? 0 : size_t(*std::max_element(ids.cbegin(), ids.cend())) + 1, -1);
        int rank = -1;
        for (size_t i = 0; i < ids.size(); ++i) {
            if (i == 0 || texts.compareIgnoringCase(quint32(ids[i]), quint32(ids[i - 1])) != 0)
                ++rank;
            result.m_rank[size_t(ids[i])] = rank;
        }
    }
    if (cancelled && cancelled())
        return {};
    result.m_rows.resize(size_t(rows));
    std::iota(result.m_rows.begin(), result.m_rows.end(), 0);
    std::sort(result.m_rows.begin(), result.m_rows.end(), [&](int a, int b) { return result.lessThan(store, a, b); });
    return result;
}

RowOrder RowOrder::placed(const RowStore &store, int column, Qt::SortOrder order, std::vector<int> rows)
{
    RowOrder result;
    result.m_column = column < store.fieldCount() ? column : -1;
    result.m_order = order;
    result.m_idField = store.kind().fieldIndex(u"id");
    if (result.m_column >= 0)
        result.m_rows = std::move(rows);
    return result;
}

int RowOrder::rank(const RowStore &store, int row) const
{
    if (m_rank.empty())
        return -1;
    const int id = store.textId(row, m_column);
    return id >= 0 && size_t(id) < m_rank.size() ? m_rank[size_t(id)] : -1;
}

bool RowOrder::lessThan(const RowStore &store, int a, int b) const
{
    const int ra = rank(store, a);
    const int rb = rank(store, b);
    int order = ra >= 0 && rb >= 0 ? (ra < rb ? -1 : (rb < ra ? 1 : 0)) : store.compare(a, b, m_column);
    if (order == 0) {
        // Ties by id keep the order stable across refreshes.
        const qint64 ia = qint64(store.cell(a, m_idField));
        const qint64 ib = qint64(store.cell(b, m_idField));
        order = ia < ib ? -1 : (ib < ia ? 1 : 0);
    }
    if (order == 0)
        order = a < b ? -1 : (b < a ? 1 : 0);
    return m_order == Qt::AscendingOrder ? order < 0 : order > 0;
}

bool RowOrder::mergeChanged(const RowStore &store, const std::vector<int> &changed)
{
    if (m_column < 0 || changed.empty())
        return false;
    std::vector<quint8> isChanged(size_t(store.rowCount()), 0);
    for (int r : changed)
        isChanged[size_t(r)] = 1;
    std::vector<int> kept;
    kept.reserve(m_rows.size());
    std::copy_if(m_rows.cbegin(), m_rows.cend(), std::back_inserter(kept),
                 [&](int r) { return size_t(r) < isChanged.size() && !isChanged[size_t(r)]; });
    std::vector<int> moved = changed;
    auto less = [&](int a, int b) { return lessThan(store, a, b); };
    std::sort(moved.begin(), moved.end(), less);
    // A page of a listing merged into 250k rows: a binary search per moved row compares k log n
    // times where std::merge compares n times (each a text comparison for rows not ranked yet); the
    // rows between are copied without comparing. The same result as std::merge.
    std::vector<int> merged;
    merged.reserve(kept.size() + moved.size());
    auto from = kept.cbegin();
    for (int row : moved) {
        const auto at = std::upper_bound(from, kept.cend(), row, less);
        merged.insert(merged.end(), from, at);
        merged.push_back(row);
        from = at;
    }
    merged.insert(merged.end(), from, kept.cend());
    const bool differs = merged != m_rows;
    m_rows = std::move(merged);
    return differs;
}

void RowOrder::removeRows(int first, int last)
{
    const int count = last - first + 1;
    std::vector<int> kept;
    kept.reserve(m_rows.size());
    for (int r : m_rows) {
        if (r < first)
            kept.push_back(r);
        else if (r > last)
            kept.push_back(r - count);
    }
    m_rows = std::move(kept);
}

} // namespace OpsDeck
