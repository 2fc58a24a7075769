// The query-line proxy's answers to its source's signals: resets, inserted, removed and changed rows.
#include "filterproxymodel.h"

#include <algorithm>
#include <numeric>

namespace OpsDeck {

namespace {

bool sortRelevant(const QList<int> &roles)
{
    return roles.isEmpty() || roles.contains(ResourceModel::SortRole) || roles.contains(ResourceModel::RawRole)
        || roles.contains(ResourceModel::ObjectRole);
}

} // namespace

void FilterProxyModel::onSourceDestroyed()
{
    // No row may stay behind pointing into a model that is gone.
    cancelPending();
    reportFiltering();
    beginResetModel();
    m_rows.clear();
    m_proxyOf.clear();
    m_accepted.clear();
    m_rowOrder = {};
    m_genericOrder.clear();
    m_changed.clear();
    m_referenced.clear();
    m_filterStale = false;
    m_orderStale = false;
    forgetResults();
    endResetModel();
}

void FilterProxyModel::onSourceAboutToBeReset()
{
    beginResetModel();
    m_shownIds.clear();
    if (!m_source)
        return;
    // Read while the source still holds the rows they name.
    m_shownIds.reserve(m_rows.size());
    for (int sourceRow : m_rows)
        m_shownIds.push_back(m_source->idAt(sourceRow));
}

void FilterProxyModel::onSourceReset()
{
    // A reset renumbers the model's texts: nothing remembered survives it.
    forgetResults();
    m_changed.clear();
    m_referenced.clear();
    const qsizetype rows = m_model ? m_model->rowCount() : 0;
    const qsizetype cost = (m_query.isEmpty() ? 0 : rows) + (m_wantedColumn >= 0 ? rows : 0);
    if (!m_source || cost == 0 || cost < m_asyncThreshold) {
        testAllNow();
        rebuildRows();
        m_shownIds.clear();
        endResetModel();
        return;
    }
    keepShownRows();
    endResetModel();
    refresh(true);
}

void FilterProxyModel::keepShownRows()
{
    cancelPending();
    m_filterStale = true;
    m_orderStale = m_wantedColumn >= 0;
    m_matcher = RowMatcher(m_query, m_clock(), m_lookup);
    m_shownText = m_text;
    const RowStore &store = m_source->store();
    m_accepted.assign(size_t(store.rowCount()), 0);
    std::vector<int> kept;
    kept.reserve(m_shownIds.size());
    for (qint64 id : std::as_const(m_shownIds)) {
        const int row = m_source->rowOfId(id);
        if (row >= 0 && !m_accepted[size_t(row)]) {
            m_accepted[size_t(row)] = 1;
            kept.push_back(row);
        }
    }
    m_shownIds.clear();
    m_rowOrder = RowOrder::placed(store, m_wantedColumn, m_wantedOrder, std::move(kept));
    rebuildRows();
}

void FilterProxyModel::onRowsInserted(const QModelIndex &parent, int first, int last)
{
    if (parent.isValid())
        return;
    // Rows arrive in the middle only from other models; shift every stored source row.
    forgetResults();
    const int count = last - first + 1;
    auto shift = [&](std::vector<int> *rows) {
        for (int &r : *rows) {
            if (r >= first)
                r += count;
        }
    };
    if (first < int(m_accepted.size())) {
        shift(&m_genericOrder);
        shift(&m_changed);
        m_pendingStale = m_pendingStale || m_pending;
        if (m_source) // a ResourceModel appends; another order would need a rebuild
            m_rowOrder = RowOrder::build(m_source->store(), m_rowOrder.column(), m_rowOrder.order());
    }
    // The newcomers stay hidden until the batch ends: a ResourceModel changes the cells of other
    // rows before it inserts, so the order can only be merged once every changed row is known.
    m_accepted.insert(m_accepted.begin() + first, size_t(count), 0);
    rebuildRows(); // the same rows in the same places, renumbered
    for (int r = first; r <= last; ++r)
        m_changed.push_back(r);
    if (!m_changeScheduled) {
        m_changeScheduled = true;
        QMetaObject::invokeMethod(this, &FilterProxyModel::applyChangedRows, Qt::QueuedConnection);
    }
}

void FilterProxyModel::onRowsAboutToBeRemoved(const QModelIndex &parent, int first, int last)
{
    Q_UNUSED(first)
    Q_UNUSED(last)
    if (parent.isValid())
        return;
    applyChangedRows(); // their row numbers are about to shift
    emit layoutAboutToBeChanged();
    m_removing = persistentIndexList();
    m_removingSource.clear();
    for (const QModelIndex &index : std::as_const(m_removing)) {
        const bool valid = index.isValid() && size_t(index.row()) < m_rows.size();
        m_removingSource.emplace_back(valid ? m_rows[size_t(index.row())] : -1, index.column());
    }
}

void FilterProxyModel::onRowsRemoved(const QModelIndex &parent, int first, int last)
{
    if (parent.isValid())
        return;
    forgetResults();
    m_pendingStale = m_pendingStale || m_pending;
    const int count = last - first + 1;
    auto shifted = [&](int r) { return r < first ? r : (r > last ? r - count : -1); };
    m_accepted.erase(m_accepted.begin() + first, m_accepted.begin() + last + 1);
    m_rowOrder.removeRows(first, last);
    if (m_genericColumn >= 0) {
        std::vector<int> kept;
        kept.reserve(m_genericOrder.size());
        for (int r : m_genericOrder) {
            const int s = shifted(r);
            if (s >= 0)
                kept.push_back(s);
        }
        m_genericOrder = std::move(kept);
    }
    rebuildRows();
    QModelIndexList to;
    to.reserve(m_removing.size());
    for (const auto &[sourceRow, column] : m_removingSource) {
        const int s = sourceRow < 0 ? -1 : shifted(sourceRow);
        const int row = s < 0 ? -1 : m_proxyOf[size_t(s)];
        to << (row < 0 ? QModelIndex() : index(row, column));
    }
    changePersistentIndexList(m_removing, to);
    m_removing.clear();
    m_removingSource.clear();
    emit layoutChanged();
}

void FilterProxyModel::onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles)
{
    if (!topLeft.isValid() || !bottomRight.isValid() || topLeft.parent().isValid())
        return;
    const int first = topLeft.row();
    const int last = bottomRight.row();
    // The new values are shown at once where the rows are; whether they still pass the filter and
    // where they sort is settled once per batch (a batch signals one range per changed row).
    int low = -1;
    int high = -1;
    for (int r = first; r <= last; ++r) {
        const int p = m_proxyOf[size_t(r)];
        if (p < 0)
            continue;
        low = low < 0 ? p : std::min(low, p);
        high = std::max(high, p);
    }
    if (low >= 0)
        emit dataChanged(index(low, topLeft.column()), index(high, bottomRight.column()), roles);
    if (!sortRelevant(roles))
        return;
    for (int r = first; r <= last; ++r)
        m_changed.push_back(r);
    if (!m_changeScheduled) {
        m_changeScheduled = true;
        QMetaObject::invokeMethod(this, &FilterProxyModel::applyChangedRows, Qt::QueuedConnection);
    }
}

void FilterProxyModel::applyChangedRows()
{
    m_changeScheduled = false;
    if (m_changed.empty())
        return;
    forgetResults();
    std::vector<int> changed;
    changed.swap(m_changed);
    std::sort(changed.begin(), changed.end());
    changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
    const int rows = int(m_accepted.size());
    while (!changed.empty() && changed.back() >= rows)
        changed.pop_back(); // gone since (removals are applied before they arrive here)
    if (m_pending)
        m_pendingDirty.insert(m_pendingDirty.end(), changed.cbegin(), changed.cend());
    bool layout = false;
    if (m_source) {
        const RowStore &store = m_source->store();
        for (auto it = m_referenced.begin(); it != m_referenced.end(); ++it) {
            for (int r : changed) {
                const RowStore::Cell id = store.cell(r, it.key());
                if (id != RowStore::kNull)
                    it->insert(qint64(id));
            }
        }
        for (int r : changed) {
            const quint8 now = m_matcher.accepts(store, r) ? 1 : 0;
            if (now != m_accepted[size_t(r)]) {
                m_accepted[size_t(r)] = now;
                layout = true;
            }
        }
        layout = m_rowOrder.mergeChanged(store, changed) || layout;
    } else {
        for (int r : changed) {
            if (!m_accepted[size_t(r)]) {
                m_accepted[size_t(r)] = 1;
                layout = true;
            }
        }
        if (m_genericColumn >= 0) {
            m_genericOrder.resize(m_accepted.size());
            std::iota(m_genericOrder.begin(), m_genericOrder.end(), 0);
            std::sort(m_genericOrder.begin(), m_genericOrder.end(), [this](int a, int b) { return lessThanGeneric(a, b); });
            layout = true;
        }
    }
    if (layout)
        publish();
}

} // namespace OpsDeck
