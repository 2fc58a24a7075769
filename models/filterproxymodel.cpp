// The query-line proxy: its source, its public setters and the flat mapping between proxy and
// source rows; the refresh is in filterproxyrefresh.cpp, the source's signals in filterproxysource.cpp.
#include "filterproxymodel.h"

#include <QDateTime>

namespace OpsDeck {

namespace {

constexpr int kAgeRefreshMs = 30 * 1000;
// A sync's pages of a referenced kind come a few a second: one refilter after them.
constexpr int kNamesRefreshMs = 250;

} // namespace

FilterProxyModel::FilterProxyModel(QObject *parent)
    : QAbstractProxyModel(parent)
    , m_clock([] { return QDateTime::currentMSecsSinceEpoch(); })
    , m_pool(new QThreadPool(this))
    , m_watcher(new QFutureWatcher<FilterResult>(this))
    , m_latest(std::make_shared<std::atomic<quint64>>(0))
{
    // A job and its helper: rows are tested on two threads while the GUI thread waits for the
    // result anyway. A job overtaken by a newer keystroke stops at its next chunk, its helper too.
    m_pool->setMaxThreadCount(2);
    m_ageTimer.setInterval(kAgeRefreshMs);
    connect(&m_ageTimer, &QTimer::timeout, this, &FilterProxyModel::refreshTimeFilter);
    m_namesTimer.setSingleShot(true);
    m_namesTimer.setInterval(kNamesRefreshMs);
    connect(&m_namesTimer, &QTimer::timeout, this, [this] {
        forgetResults();
        refresh(true);
    });
    connect(m_watcher, &QFutureWatcherBase::finished, this, &FilterProxyModel::onJobFinished);
}

FilterProxyModel::~FilterProxyModel()
{
    // A running worker holds only its own copies; it stops at its next check, and the pool (a child)
    // waits for that.
    cancelPending();
}

void FilterProxyModel::setSourceModel(QAbstractItemModel *model)
{
    cancelPending();
    beginResetModel();
    for (const QMetaObject::Connection &c : std::as_const(m_connections))
        disconnect(c);
    m_connections.clear();
    m_model = model;
    m_source = qobject_cast<ResourceModel *>(model);
    QAbstractProxyModel::setSourceModel(model);
    if (model) {
        m_connections
            << connect(model, &QObject::destroyed, this, &FilterProxyModel::onSourceDestroyed)
            << connect(model, &QAbstractItemModel::modelAboutToBeReset, this, &FilterProxyModel::onSourceAboutToBeReset)
            << connect(model, &QAbstractItemModel::modelReset, this, &FilterProxyModel::onSourceReset)
            << connect(model, &QAbstractItemModel::rowsInserted, this, &FilterProxyModel::onRowsInserted)
            << connect(model, &QAbstractItemModel::rowsAboutToBeRemoved, this, &FilterProxyModel::onRowsAboutToBeRemoved)
            << connect(model, &QAbstractItemModel::rowsRemoved, this, &FilterProxyModel::onRowsRemoved)
            << connect(model, &QAbstractItemModel::dataChanged, this, &FilterProxyModel::onDataChanged)
            << connect(model, &QAbstractItemModel::headerDataChanged, this, &QAbstractItemModel::headerDataChanged);
    }
    if (m_source) // the end of a batch: settle its changed rows in the same turn
        m_connections << connect(m_source, &ResourceModel::batchApplied, this, &FilterProxyModel::applyChangedRows);
    m_changed.clear();
    m_referenced.clear();
    forgetResults();
    m_query = {};
    m_error = {};
    if (m_source) {
        QueryParse parsed = parseQuery(m_text, m_source->kind());
        m_error = parsed.error;
        if (parsed.ok())
            m_query = std::move(parsed.query);
    }
    testAllNow();
    rebuildRows();
    endResetModel();
}

QStringList FilterProxyModel::completions(const QString &token) const
{
    return m_source ? queryCompletions(token, m_source->kind()) : QStringList();
}

void FilterProxyModel::setReferenceLookup(ReferenceLookup lookup)
{
    forgetResults();
    m_lookup = std::move(lookup);
    refresh(true);
}

void FilterProxyModel::referencedNamesChanged()
{
    if (RowMatcher::readsReferenceNames(m_query) && !m_namesTimer.isActive())
        m_namesTimer.start();
}

void FilterProxyModel::setClock(std::function<qint64()> clock)
{
    forgetResults();
    m_clock = std::move(clock);
    refresh(true);
}

bool FilterProxyModel::lessThanGeneric(int a, int b) const
{
    const QVariant va = m_model->index(a, m_genericColumn).data();
    const QVariant vb = m_model->index(b, m_genericColumn).data();
    int order = QVariant::compare(va, vb) == QPartialOrdering::Less ? -1
        : QVariant::compare(vb, va) == QPartialOrdering::Less       ? 1
                                                                     : 0;
    if (order == 0)
        order = a < b ? -1 : (b < a ? 1 : 0);
    return m_wantedOrder == Qt::AscendingOrder ? order < 0 : order > 0;
}

void FilterProxyModel::rebuildRows()
{
    m_rows.clear();
    m_proxyOf.assign(m_accepted.size(), -1);
    auto take = [this](int sourceRow) {
        if (size_t(sourceRow) < m_accepted.size() && m_accepted[size_t(sourceRow)]) {
            m_proxyOf[size_t(sourceRow)] = int(m_rows.size());
            m_rows.push_back(sourceRow);
        }
    };
    if (sorted()) {
        for (int sourceRow : m_source ? m_rowOrder.rows() : m_genericOrder)
            take(sourceRow);
    } else {
        for (int sourceRow = 0; sourceRow < int(m_accepted.size()); ++sourceRow)
            take(sourceRow);
    }
}

void FilterProxyModel::publish()
{
    // One layout change for the whole new row set (QSortFilterProxyModel::invalidate() does the
    // same); persistent indexes (selection, current row) follow their source rows.
    emit layoutAboutToBeChanged();
    const QModelIndexList from = persistentIndexList();
    std::vector<std::pair<int, int>> sources;
    sources.reserve(size_t(from.size()));
    for (const QModelIndex &index : from) {
        const bool valid = index.isValid() && size_t(index.row()) < m_rows.size();
        sources.emplace_back(valid ? m_rows[size_t(index.row())] : -1, index.column());
    }
    rebuildRows();
    QModelIndexList to;
    to.reserve(from.size());
    for (const auto &[sourceRow, column] : sources) {
        const int row = sourceRow < 0 ? -1 : m_proxyOf[size_t(sourceRow)];
        to << (row < 0 ? QModelIndex() : index(row, column));
    }
    changePersistentIndexList(from, to);
    emit layoutChanged();
}

void FilterProxyModel::sort(int column, Qt::SortOrder order)
{
    column = m_model && column < m_model->columnCount() ? column : -1;
    if (column == m_wantedColumn && order == m_wantedOrder)
        return;
    m_wantedColumn = column;
    m_wantedOrder = order;
    refresh(false);
}

QModelIndex FilterProxyModel::index(int row, int column, const QModelIndex &parent) const
{
    if (parent.isValid() || row < 0 || column < 0 || row >= rowCount() || column >= columnCount())
        return {};
    return createIndex(row, column);
}

QModelIndex FilterProxyModel::parent(const QModelIndex &child) const
{
    Q_UNUSED(child)
    return {};
}

int FilterProxyModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FilterProxyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() || !m_model ? 0 : m_model->columnCount();
}

bool FilterProxyModel::hasChildren(const QModelIndex &parent) const
{
    return !parent.isValid() && !m_rows.empty();
}

QModelIndex FilterProxyModel::mapToSource(const QModelIndex &proxyIndex) const
{
    if (!m_model || !proxyIndex.isValid() || proxyIndex.model() != this || size_t(proxyIndex.row()) >= m_rows.size())
        return {};
    return m_model->index(m_rows[size_t(proxyIndex.row())], proxyIndex.column());
}

QModelIndex FilterProxyModel::mapFromSource(const QModelIndex &sourceIndex) const
{
    if (!m_model || !sourceIndex.isValid() || sourceIndex.model() != m_model
        || size_t(sourceIndex.row()) >= m_proxyOf.size())
        return {};
    const int row = m_proxyOf[size_t(sourceIndex.row())];
    return row < 0 ? QModelIndex() : index(row, sourceIndex.column());
}

} // namespace OpsDeck
