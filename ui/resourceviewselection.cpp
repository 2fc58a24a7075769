// A resource view's rows by id: the selection and the current row kept across resets and layout changes.
#include "resourceview.h"

#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QAbstractItemModel>
#include <QItemSelectionModel>
#include <QTableView>

#include <algorithm>
#include <utility>
#include <vector>

namespace OpsDeck {

qint64 ResourceView::idAt(int row) const
{
    const QVariant id = m_model->index(row, 0).data(ResourceModel::IdRole);
    return id.isValid() ? id.toLongLong() : objectAt(row).value(QStringLiteral("id")).toInteger(-1);
}

bool ResourceView::selectId(qint64 id)
{
    const int row = m_model ? rowOfId(id) : -1;
    if (row < 0)
        return false;
    m_table->selectRow(row);
    m_table->scrollTo(m_model->index(row, 0));
    return true;
}

int ResourceView::rowOfId(qint64 id) const
{
    if (const auto *proxy = qobject_cast<const FilterProxyModel *>(m_model.data()); proxy && proxy->resourceModel()) {
        const ResourceModel *source = proxy->resourceModel();
        const int sourceRow = source->rowOfId(id);
        return sourceRow < 0 ? -1 : proxy->mapFromSource(source->index(sourceRow, 0)).row();
    }
    if (const auto *resources = qobject_cast<const ResourceModel *>(m_model.data()))
        return resources->rowOfId(id);
    for (int row = 0; row < m_model->rowCount(); ++row) {
        if (idAt(row) == id)
            return row;
    }
    return -1;
}

void ResourceView::holdSelection()
{
    m_heldSelection.clear();
    m_heldCurrent = -1;
    const QItemSelectionModel *selection = m_table->selectionModel();
    if (!m_model || !selection)
        return;
    // Read while the rows are still there; a range covers every column of its rows.
    std::vector<int> rows;
    for (const QItemSelectionRange &range : selection->selection()) {
        for (int row = range.top(); row <= range.bottom(); ++row)
            rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    m_heldSelection.reserve(qsizetype(rows.size()));
    for (int row : rows)
        m_heldSelection.append(idAt(row));
    const QModelIndex current = selection->currentIndex();
    if (current.isValid()) {
        m_heldCurrent = idAt(current.row());
        m_heldCurrentColumn = current.column();
    }
}

void ResourceView::restoreSelection()
{
    const QList<qint64> held = std::exchange(m_heldSelection, {});
    const qint64 heldCurrent = std::exchange(m_heldCurrent, -1);
    QItemSelectionModel *selection = m_table->selectionModel();
    if (!m_model || !selection || (held.isEmpty() && heldCurrent < 0))
        return;
    std::vector<int> rows;
    rows.reserve(size_t(held.size()));
    for (qint64 id : held) {
        const int row = rowOfId(id);
        if (row >= 0)
            rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    // One range per run of adjacent rows, so a large selection stays a few ranges.
    QItemSelection restored;
    const int lastColumn = std::max(0, m_model->columnCount() - 1);
    for (size_t i = 0; i < rows.size();) {
        size_t end = i + 1;
        while (end < rows.size() && rows[end] == rows[end - 1] + 1)
            ++end;
        restored.select(m_model->index(rows[i], 0), m_model->index(rows[end - 1], lastColumn));
        i = end;
    }
    selection->select(restored, QItemSelectionModel::Select);
    const int currentRow = heldCurrent < 0 ? -1 : rowOfId(heldCurrent);
    if (currentRow >= 0) {
        // NoUpdate: the selection was restored above; the view's focus is left where it is.
        const QModelIndex current = m_model->index(currentRow, std::clamp(m_heldCurrentColumn, 0, lastColumn));
        selection->setCurrentIndex(current, QItemSelectionModel::NoUpdate);
        m_table->scrollTo(current);
    } else if (heldCurrent >= 0) {
        // The reset cleared the current row without a signal: whoever shows it learns it is gone.
        emit currentObjectChanged({});
    }
}

void ResourceView::onLayoutAboutToBeChanged()
{
    const QModelIndex current = m_table->currentIndex();
    m_heldCurrent = current.isValid() ? idAt(current.row()) : -1;
    m_currentInSight = current.isValid() && m_table->viewport()->rect().intersects(m_table->visualRect(current));
}

void ResourceView::onLayoutChanged()
{
    // The current row's persistent index followed it, or went invalid with it (filtered out or
    // removed) without currentRowChanged.
    const qint64 heldCurrent = std::exchange(m_heldCurrent, -1);
    const bool wasInSight = std::exchange(m_currentInSight, false);
    const QModelIndex current = m_table->currentIndex();
    if (heldCurrent >= 0 && !current.isValid())
        emit currentObjectChanged({});
    // A row the operator was looking at stays in sight wherever the new order puts it (a relist
    // sorted on a worker arrives as a reset, then as a layout change).
    else if (current.isValid() && wasInSight)
        m_table->scrollTo(current);
}

QJsonObject ResourceView::objectAt(int proxyRow) const
{
    if (!m_model || proxyRow < 0 || proxyRow >= m_model->rowCount())
        return {};
    return m_model->index(proxyRow, 0).data(m_objectRole).toJsonObject();
}

QJsonObject ResourceView::currentObject() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? objectAt(current.row()) : QJsonObject();
}

QJsonObject ResourceView::chosenObject() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() && m_table->selectionModel()->isSelected(current) ? objectAt(current.row()) : QJsonObject();
}

} // namespace OpsDeck
