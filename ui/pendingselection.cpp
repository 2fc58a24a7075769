// Selects an announced row once it arrives in its view, unless the operator has moved on.
#include "pendingselection.h"

#include "resourceview.h"

#include <QAbstractItemModel>
#include <QTableView>

namespace OpsDeck {

PendingSelection::PendingSelection(ResourceView *view, qint64 id, std::function<bool()> stillWanted, QObject *parent)
    : QObject(parent)
    , m_view(view)
    , m_id(id)
    , m_stillWanted(std::move(stillWanted))
{
}

void PendingSelection::start()
{
    const QAbstractItemModel *model = m_view ? m_view->table()->model() : nullptr;
    if (!model) {
        check();
        return;
    }
    // A feed event inserts the row; a relist or a filter computed on a worker resets or re-lays
    // the rows out.
    connect(model, &QAbstractItemModel::rowsInserted, this, &PendingSelection::trySelect);
    connect(model, &QAbstractItemModel::modelReset, this, &PendingSelection::trySelect);
    connect(model, &QAbstractItemModel::layoutChanged, this, &PendingSelection::trySelect);
    trySelect();
}

void PendingSelection::check()
{
    if (m_done)
        return;
    if (!m_view || !m_stillWanted()) {
        finish();
        emit abandoned(m_id);
    }
}

void PendingSelection::trySelect()
{
    check();
    if (m_done)
        return;
    // selectId() makes the row current and scrolls to it; the keyboard focus stays where it is.
    // Done first: this selection is not the operator moving on.
    m_done = true;
    if (!m_view->selectId(m_id)) {
        m_done = false;
        return;
    }
    finish();
    emit selected(m_id);
}

void PendingSelection::finish()
{
    m_done = true;
    if (m_view && m_view->table()->model())
        disconnect(m_view->table()->model(), nullptr, this, nullptr);
    deleteLater();
}

} // namespace OpsDeck
