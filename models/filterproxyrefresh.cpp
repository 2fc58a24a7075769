// The query-line proxy's refresh: parses with core/query, filters and sorts the model's compact
// rows at once or, for big jobs, on a worker thread; remembers recent results.
#include "filterproxymodel.h"

#include <QScopeGuard>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <numeric>

namespace OpsDeck {

namespace {

// A byte per source row each: 16 results of 250k rows hold 4 MB.
constexpr size_t kRememberedQueries = 16;

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

} // namespace OpsDeck
