// The query-line proxy: parses with core/query, filters and sorts the model's compact rows, big
// jobs on a worker thread.
#include "filterproxymodel.h"

#include <QDateTime>
#include <QScopeGuard>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <numeric>

namespace OpsDeck {

namespace {

constexpr int kAgeRefreshMs = 30 * 1000;
// A byte per source row each: 16 results of 250k rows hold 4 MB.
constexpr size_t kRememberedQueries = 16;

bool sortRelevant(const QList<int> &roles)
{
    return roles.isEmpty() || roles.contains(ResourceModel::SortRole) || roles.contains(ResourceModel::RawRole)
        || roles.contains(ResourceModel::ObjectRole);
}

bool isTimed(const Query &query)
{
    return std::any_of(query.terms.cbegin(), query.terms.cend(), [](const QueryTerm &t) { return t.ageMs.has_value(); });
}

// Both queries select the same rows whatever the rows hold.
bool sameQuery(const Query &a, const Query &b)
{
    return !isTimed(a) && !isTimed(b) && queryNarrows(a, b) && queryNarrows(b, a);
}

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

bool FilterProxyModel::setQuery(const QString &text)
{
    m_text = text;
    if (!m_source) {
        m_query = {};
        m_error = {};
        emit queryChanged(text);
        return true;
    }
    QueryParse parsed = parseQuery(m_text, m_source->kind());
    const QString oldMessage = m_error.message;
    const int oldPosition = m_error.position;
    m_error = parsed.error;
    if (parsed.ok()) {
        const Query &latest = m_pending && m_pendingFilter ? m_pendingQuery : m_matcher.query();
        if (sameQuery(parsed.query, latest)) {
            // "state:running" -> "state:running ": the same rows, already shown or on their way.
            m_query = std::move(parsed.query);
            m_lastTested = 0;
        } else {
            m_query = std::move(parsed.query);
            if (isTimed(m_query))
                m_ageTimer.start();
            else
                m_ageTimer.stop();
            refresh(false);
        }
    }
    emit queryChanged(text);
    if (oldMessage != m_error.message || oldPosition != m_error.position)
        emit errorChanged(m_error.message, m_error.position);
    return m_error.isNull();
}

void FilterProxyModel::cancelPending()
{
    if (!m_pending)
        return;
    m_pending = false;
    m_pendingStale = false;
    m_pendingDirty.clear();
    m_latest->store(++m_generation, std::memory_order_relaxed);
}

void FilterProxyModel::reportFiltering()
{
    if (m_reportedFiltering == m_pending)
        return;
    m_reportedFiltering = m_pending;
    emit filteringChanged(m_pending);
}

void FilterProxyModel::refresh(bool forceFilter)
{
    const auto report = qScopeGuard([this] { reportFiltering(); });
    if (!m_model)
        return;
    if (!m_source) {
        // Nothing to filter by: every row passes, sorted by the items' values.
        m_accepted.assign(size_t(m_model->rowCount()), 1);
        m_genericColumn = m_wantedColumn;
        m_genericOrder.clear();
        if (m_genericColumn >= 0) {
            m_genericOrder.resize(m_accepted.size());
            std::iota(m_genericOrder.begin(), m_genericOrder.end(), 0);
            std::sort(m_genericOrder.begin(), m_genericOrder.end(), [this](int a, int b) { return lessThanGeneric(a, b); });
        }
        publish();
        emit filterPublished();
        return;
    }
    forceFilter = forceFilter || m_filterStale; // stand-in flags narrow nothing and are not remembered
    const bool timed = isTimed(m_query);
    bool needFilter = forceFilter || timed || !sameQuery(m_query, m_matcher.query());
    const bool needSort = m_orderStale || m_wantedColumn != m_rowOrder.column()
        || (m_wantedColumn >= 0 && m_wantedOrder != m_rowOrder.order());
    cancelPending();
    const qint64 now = m_clock();
    if (needFilter && !timed && !forceFilter && recall(m_text)) {
        m_matcher = RowMatcher(m_query, now, m_lookup);
        m_shownText = m_text;
        m_lastTested = 0;
        needFilter = false;
        if (!needSort) {
            publish();
            emit filterPublished();
            return;
        }
    }
    if (!needFilter && !needSort) {
        emit filterPublished();
        return;
    }

    FilterJob job;
    job.latest = m_latest;
    job.generation = ++m_generation;
    m_latest->store(job.generation, std::memory_order_relaxed);
    job.store = m_source->snapshot();
    const qsizetype rows = job.store->rowCount();
    qsizetype cost = needSort ? rows : 0;
    if (needFilter) {
        job.filter = true;
        job.matcher = RowMatcher(m_query, now, m_lookup);
        // Only the rows shown can still match a narrower query; the others keep their "no".
        if (m_query.isEmpty()) {
            // Every row passes: nothing to test, nothing to wait for.
        } else if (!forceFilter && queryNarrows(m_query, m_matcher.query()) && m_accepted.size() == size_t(rows)) {
            job.base = m_accepted;
            cost += std::count(m_accepted.cbegin(), m_accepted.cend(), quint8(1));
        } else {
            cost += rows;
        }
    }
    job.sort = needSort;
    job.sortColumn = m_wantedColumn;
    job.sortOrder = m_wantedOrder;
    if (cost < m_asyncThreshold) {
        apply(FilterJob::run(std::move(job)), {}, m_text);
        return;
    }
    if (job.filter) {
        // The worker cannot call into other models: name every referenced object now.
        job.matcher.resolveReferences([this](int field) { return referencedIds(field); });
        job.matcher.setReferenceLookup({});
    }
    m_pending = true;
    m_pendingStale = false;
    m_pendingDirty.clear();
    m_pendingFilter = job.filter;
    m_pendingForced = forceFilter;
    m_pendingText = m_text;
    m_pendingQuery = m_query;
    const quint64 generation = job.generation;
    std::function<void()> help = job.filter && !job.matcher.isEmpty() ? job.share() : std::function<void()>();
    m_watcher->setFuture(QtConcurrent::run(m_pool, &FilterJob::run, std::move(job)));
    if (help) {
        // The second thread joins once this one is back in its event loop (after the repaint that
        // follows a keystroke), so testing rows on both cores does not slow this thread's work.
        QMetaObject::invokeMethod(
            this,
            [this, generation, help = std::move(help)] {
                if (m_pending && m_generation == generation)
                    m_pool->start(help);
            },
            Qt::QueuedConnection);
    }
}

void FilterProxyModel::onJobFinished()
{
    QFuture<FilterResult> future = m_watcher->future();
    if (!m_pending || !future.isValid() || future.resultCount() == 0)
        return;
    // Moved out, not copied: the flags, the order and the matcher's memos are megabytes on this thread.
    FilterResult result = future.takeResult();
    if (result.cancelled || result.generation != m_generation)
        return; // a newer job is on its way
    m_pending = false;
    if (m_pendingStale) {
        // Rows were removed or replaced under the snapshot: its row numbers mean nothing now.
        m_pendingStale = false;
        m_pendingDirty.clear();
        refresh(m_pendingForced);
        return;
    }
    std::vector<int> dirty;
    dirty.swap(m_pendingDirty);
    apply(std::move(result), std::move(dirty), m_pendingText);
    reportFiltering();
}

void FilterProxyModel::apply(FilterResult result, std::vector<int> dirty, const QString &text)
{
    const int rows = m_source->rowCount();
    for (int r = result.rows; r < rows; ++r)
        dirty.push_back(r); // arrived after the snapshot
    std::sort(dirty.begin(), dirty.end());
    dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
    while (!dirty.empty() && dirty.back() >= rows)
        dirty.pop_back();
    const RowStore &store = m_source->store();
    if (result.filtered) {
        m_filterStale = false;
        m_matcher = std::move(result.matcher);
        m_matcher.setReferenceLookup(m_lookup);
        m_accepted = std::move(result.accepted);
        m_accepted.resize(size_t(rows), 0);
        m_lastTested = result.tested;
        m_shownText = text;
        for (int r : dirty)
            m_accepted[size_t(r)] = m_matcher.accepts(store, r) ? 1 : 0;
    }
    if (result.sorted) {
        m_orderStale = false;
        m_rowOrder = std::move(result.order);
        m_rowOrder.mergeChanged(store, dirty);
    }
    publish();
    if (result.filtered && !m_matcher.isTimed())
        remember();
    emit filterPublished();
}

void FilterProxyModel::refreshTimeFilter()
{
    forgetResults();
    refresh(true);
}

void FilterProxyModel::testAllNow()
{
    // At once, whatever the size.
    cancelPending();
    reportFiltering();
    m_filterStale = false;
    m_orderStale = false;
    const int rows = m_model ? m_model->rowCount() : 0;
    m_lastTested = rows;
    if (!m_source) {
        m_accepted.assign(size_t(rows), 1);
        m_genericColumn = -1;
        m_genericOrder.clear();
        if (m_model && m_wantedColumn >= 0 && m_wantedColumn < m_model->columnCount()) {
            m_genericColumn = m_wantedColumn;
            m_genericOrder.resize(size_t(rows));
            std::iota(m_genericOrder.begin(), m_genericOrder.end(), 0);
            std::sort(m_genericOrder.begin(), m_genericOrder.end(), [this](int a, int b) { return lessThanGeneric(a, b); });
        }
        return;
    }
    m_matcher = RowMatcher(m_query, m_clock(), m_lookup);
    m_shownText = m_text;
    const RowStore &store = m_source->store();
    m_accepted.assign(size_t(rows), 1);
    if (!m_matcher.isEmpty()) {
        for (int r = 0; r < rows; ++r)
            m_accepted[size_t(r)] = m_matcher.accepts(store, r) ? 1 : 0;
    }
    m_rowOrder = RowOrder::build(store, m_wantedColumn < store.fieldCount() ? m_wantedColumn : -1, m_wantedOrder);
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

void FilterProxyModel::setClock(std::function<qint64()> clock)
{
    forgetResults();
    m_clock = std::move(clock);
    refresh(true);
}

void FilterProxyModel::remember()
{
    const auto it = std::find_if(m_recent.begin(), m_recent.end(), [this](const Remembered &r) { return r.text == m_shownText; });
    if (it != m_recent.end())
        m_recent.erase(it);
    if (m_recent.size() >= kRememberedQueries)
        m_recent.erase(m_recent.begin());
    m_recent.push_back(Remembered{m_shownText, m_accepted});
}

bool FilterProxyModel::recall(const QString &text)
{
    const auto it = std::find_if(m_recent.cbegin(), m_recent.cend(), [&](const Remembered &r) { return r.text == text; });
    if (it == m_recent.cend() || it->accepted.size() != m_accepted.size())
        return false;
    m_accepted = it->accepted;
    return true;
}

QSet<qint64> FilterProxyModel::referencedIds(int field)
{
    auto it = m_referenced.find(field);
    if (it == m_referenced.end()) {
        QSet<qint64> ids;
        const RowStore &store = m_source->store();
        for (int r = 0; r < store.rowCount(); ++r) {
            const RowStore::Cell id = store.cell(r, field);
            if (id != RowStore::kNull)
                ids.insert(qint64(id));
        }
        it = m_referenced.insert(field, ids);
    }
    return *it;
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
