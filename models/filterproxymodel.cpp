// The query-line proxy: parses with core/query, matches against the model's compact rows.
#include "filterproxymodel.h"

#include <QDateTime>

#include <algorithm>
#include <numeric>

namespace OpsDeck {

namespace {

constexpr int kAgeRefreshMs = 30 * 1000;
// A byte per source row each: 16 results of 250k rows hold 4 MB.
constexpr size_t kRememberedQueries = 16;

// Reads one source row straight from the model's cells, without building display strings.
class ModelRow final : public QueryRow
{
public:
    ModelRow(const ResourceModel &model, int row, const ReferenceLookup &lookup)
        : m_model(model), m_row(row), m_lookup(lookup)
    {
    }
    QVariant value(int field) const override { return m_model.rawValue(m_row, field); }
    QString text(int field) const override { return m_model.cellText(m_row, field); }
    int textId(int field) const override { return m_model.textIdAt(m_row, field); }
    QString referenceName(const QString &kindName, qint64 id) const override
    {
        return m_lookup ? m_lookup(kindName, id) : QString();
    }

private:
    const ResourceModel &m_model;
    int m_row;
    const ReferenceLookup &m_lookup;
};

bool isInterned(FieldSpec::Type type)
{
    return type == FieldSpec::Type::Text || type == FieldSpec::Type::State || type == FieldSpec::Type::Json;
}

// A word can only be found in a number's decimal text when it is made of digits and '-'.
bool numericWord(QStringView word)
{
    return std::all_of(word.begin(), word.end(), [](QChar c) { return (c >= u'0' && c <= u'9') || c == u'-'; });
}

bool sortRelevant(const QList<int> &roles)
{
    return roles.isEmpty() || roles.contains(ResourceModel::SortRole) || roles.contains(ResourceModel::RawRole)
        || roles.contains(ResourceModel::ObjectRole);
}

} // namespace

FilterProxyModel::FilterProxyModel(QObject *parent)
    : QAbstractProxyModel(parent)
    , m_clock([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    m_ageTimer.setInterval(kAgeRefreshMs);
    connect(&m_ageTimer, &QTimer::timeout, this, &FilterProxyModel::refreshTimeFilter);
}

FilterProxyModel::~FilterProxyModel() = default;

void FilterProxyModel::setSourceModel(QAbstractItemModel *model)
{
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
    forgetResults();
    m_query = {};
    m_error = {};
    if (m_source) {
        QueryParse parsed = parseQuery(m_text, m_source->kind());
        m_error = parsed.error;
        if (parsed.ok())
            m_query = std::move(parsed.query);
    }
    clearMemos();
    m_now = m_clock();
    testAll();
    rebuildOrder();
    rebuildRows();
    endResetModel();
}

bool FilterProxyModel::setQuery(const QString &text)
{
    m_text = text;
    reparse();
    emit queryChanged(text);
    return m_error.isNull();
}

void FilterProxyModel::reparse()
{
    if (!m_source) {
        m_query = {};
        m_error = {};
        return;
    }
    QueryParse parsed = parseQuery(m_text, m_source->kind());
    const QString oldMessage = m_error.message;
    const int oldPosition = m_error.position;
    m_error = parsed.error;
    if (parsed.ok()) {
        const bool narrows = queryNarrows(parsed.query, m_query);
        const bool same = narrows && queryNarrows(m_query, parsed.query);
        const bool wasTimed = std::any_of(m_query.terms.cbegin(), m_query.terms.cend(),
                                          [](const QueryTerm &t) { return t.ageMs.has_value(); });
        m_query = std::move(parsed.query);
        if (same && !wasTimed) {
            // "state:running" -> "state:running ": the same rows; the memos stay right too.
            m_lastTested = 0;
            if (oldMessage != m_error.message || oldPosition != m_error.position)
                emit errorChanged(m_error.message, m_error.position);
            return;
        }
        clearMemos();
        m_now = m_clock();
        const bool timed = std::any_of(m_query.terms.cbegin(), m_query.terms.cend(),
                                       [](const QueryTerm &t) { return t.ageMs.has_value(); });
        if (timed)
            m_ageTimer.start();
        else
            m_ageTimer.stop();
        if (!timed && recall()) {
            m_lastTested = 0;
        } else if (narrows) {
            // Only the rows shown can still match; the others keep their "no". Walked in source
            // order: the cells are read in memory order, not scattered by the sort.
            qsizetype tested = 0;
            for (size_t r = 0; r < m_accepted.size(); ++r) {
                if (m_accepted[r]) {
                    m_accepted[r] = accepts(int(r)) ? 1 : 0;
                    ++tested;
                }
            }
            m_lastTested = tested;
        } else {
            testAll();
        }
        if (!timed)
            remember();
        publish();
    }
    if (oldMessage != m_error.message || oldPosition != m_error.position)
        emit errorChanged(m_error.message, m_error.position);
}

void FilterProxyModel::refreshTimeFilter()
{
    forgetResults();
    m_now = m_clock();
    testAll();
    publish();
}

void FilterProxyModel::clearMemos()
{
    m_wordMemo.reset();
    m_termMemo.assign(size_t(m_query.terms.size()), {});
    m_referenceMemo.assign(size_t(m_query.terms.size()), {});
    m_foldedWords.clear();
    for (const QueryWord &word : std::as_const(m_query.words))
        m_foldedWords << word.text.toCaseFolded();
}

QStringList FilterProxyModel::completions(const QString &token) const
{
    return m_source ? queryCompletions(token, m_source->kind()) : QStringList();
}

void FilterProxyModel::setReferenceLookup(ReferenceLookup lookup)
{
    forgetResults();
    m_lookup = std::move(lookup);
    clearMemos();
    testAll();
    publish();
}

void FilterProxyModel::setClock(std::function<qint64()> clock)
{
    forgetResults();
    m_clock = std::move(clock);
    m_now = m_clock();
    testAll();
    publish();
}

void FilterProxyModel::remember()
{
    const auto it = std::find_if(m_recent.begin(), m_recent.end(), [this](const Remembered &r) { return r.text == m_text; });
    if (it != m_recent.end())
        m_recent.erase(it);
    if (m_recent.size() >= kRememberedQueries)
        m_recent.erase(m_recent.begin());
    m_recent.push_back(Remembered{m_text, m_accepted});
}

bool FilterProxyModel::recall()
{
    const auto it = std::find_if(m_recent.cbegin(), m_recent.cend(), [this](const Remembered &r) { return r.text == m_text; });
    if (it == m_recent.cend() || it->accepted.size() != m_accepted.size())
        return false;
    m_accepted = it->accepted;
    return true;
}

bool FilterProxyModel::accepts(int sourceRow) const
{
    if (!m_source || m_query.isEmpty())
        return true;
    const ResourceModel &model = *m_source;
    const ModelRow row(model, sourceRow, m_lookup);
    for (qsizetype t = 0; t < m_query.terms.size(); ++t) {
        const QueryTerm &term = m_query.terms.at(t);
        bool match = false;
        const int textId = isInterned(term.type) ? model.textIdAt(sourceRow, term.fieldIndex) : -1;
        if (textId >= 0) {
            std::vector<qint8> &memo = m_termMemo[size_t(t)];
            if (size_t(textId) >= memo.size())
                memo.resize(size_t(textId) + 1 + memo.size() / 2, qint8(-1));
            if (memo[size_t(textId)] < 0)
                memo[size_t(textId)] = termMatches(term, row, m_now) ? 1 : 0;
            match = memo[size_t(textId)] == 1;
        } else if (term.type == FieldSpec::Type::Id && term.integers.isEmpty() && !term.references.isEmpty()) {
            // provider:acme: one name lookup per referenced object, not per row.
            const QVariant id = model.rawValue(sourceRow, term.fieldIndex);
            if (id.isValid()) {
                QHash<qint64, bool> &memo = m_referenceMemo[size_t(t)];
                const qint64 key = id.toLongLong();
                auto it = memo.constFind(key);
                if (it == memo.cend())
                    it = memo.insert(key, termMatches(term, row, m_now));
                match = *it;
            }
        } else {
            match = termMatches(term, row, m_now);
        }
        if (match == term.negated)
            return false;
    }
    for (int w = 0; w < m_query.words.size(); ++w) {
        if (wordFound(w, sourceRow) == m_query.words.at(w).negated)
            return false;
    }
    return true;
}

bool FilterProxyModel::wordFound(int word, int sourceRow) const
{
    const ResourceModel &model = *m_source;
    const QString &text = m_query.words.at(word).text;
    const QString &folded = m_foldedWords.at(word);
    for (int field : std::as_const(m_query.textFields)) {
        const FieldSpec::Type type = model.kind().fields.at(field).type;
        if (isInterned(type)) {
            const int id = model.textIdAt(sourceRow, field);
            if (id < 0)
                continue;
            int known = m_wordMemo.lookup(word, id);
            if (known < 0) {
                known = containsIgnoringCase(model.textOfId(id), text, folded) ? 1 : 0;
                m_wordMemo.store(word, id, known == 1);
            }
            if (known == 1)
                return true;
        } else if (numericWord(text)) {
            const QVariant v = model.rawValue(sourceRow, field);
            if (v.isValid() && QString::number(v.toLongLong()).contains(text))
                return true;
        }
    }
    return false;
}

void FilterProxyModel::testAll()
{
    const int rows = m_model ? m_model->rowCount() : 0;
    m_accepted.assign(size_t(rows), 1);
    if (m_source && !m_query.isEmpty()) {
        for (int r = 0; r < rows; ++r)
            m_accepted[size_t(r)] = accepts(r) ? 1 : 0;
    }
    m_lastTested = rows;
}

bool FilterProxyModel::lessThan(int a, int b) const
{
    int order = 0;
    if (m_source) {
        const int ra = textRank(a);
        const int rb = textRank(b);
        order = ra >= 0 && rb >= 0 ? (ra < rb ? -1 : (rb < ra ? 1 : 0)) : m_source->compareRows(a, b, m_sortColumn);
        if (order == 0) {
            // Ties by id keep the order stable across refreshes.
            const qint64 ia = m_source->idAt(a);
            const qint64 ib = m_source->idAt(b);
            order = ia < ib ? -1 : (ib < ia ? 1 : 0);
        }
    } else {
        const QVariant va = m_model->index(a, m_sortColumn).data();
        const QVariant vb = m_model->index(b, m_sortColumn).data();
        order = QVariant::compare(va, vb) == QPartialOrdering::Less ? -1
            : QVariant::compare(vb, va) == QPartialOrdering::Less   ? 1
                                                                     : 0;
    }
    if (order == 0)
        order = a < b ? -1 : (b < a ? 1 : 0);
    return m_sortOrder == Qt::AscendingOrder ? order < 0 : order > 0;
}

int FilterProxyModel::textRank(int sourceRow) const
{
    if (m_rank.empty())
        return -1;
    const int id = m_source->textIdAt(sourceRow, m_sortColumn);
    return id >= 0 && size_t(id) < m_rank.size() ? m_rank[size_t(id)] : -1;
}

void FilterProxyModel::sortOrderOf(std::vector<int> *rows) const
{
    std::sort(rows->begin(), rows->end(), [this](int a, int b) { return lessThan(a, b); });
}

void FilterProxyModel::rebuildOrder()
{
    m_order.clear();
    m_rank.clear();
    if (m_sortColumn < 0 || !m_model)
        return;
    m_rank.clear();
    const int rows = m_model->rowCount();
    if (m_source && isInterned(m_source->kind().fields.at(m_sortColumn).type)) {
        // Case-insensitive string comparisons dominate a sort of 250k texts: rank each distinct
        // text once by its case-folded form, then rows compare by integers. Texts interned later
        // have no rank and compare as strings, which orders them the same way.
        std::vector<int> ids;
        for (int r = 0; r < rows; ++r) {
            const int id = m_source->textIdAt(r, m_sortColumn);
            if (id >= 0)
                ids.push_back(id);
        }
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        std::vector<QString> folded(ids.empty() ? 0 : size_t(ids.back()) + 1);
        for (int id : ids)
            folded[size_t(id)] = m_source->textOfId(id).toString().toCaseFolded();
        std::sort(ids.begin(), ids.end(), [&](int x, int y) { return folded[size_t(x)] < folded[size_t(y)]; });
        m_rank.assign(folded.size(), -1);
        int rank = -1;
        for (size_t i = 0; i < ids.size(); ++i) {
            if (i == 0 || folded[size_t(ids[i])] != folded[size_t(ids[i - 1])])
                ++rank;
            m_rank[size_t(ids[i])] = rank;
        }
    }
    m_order.resize(size_t(rows));
    std::iota(m_order.begin(), m_order.end(), 0);
    sortOrderOf(&m_order);
}

void FilterProxyModel::rebuildRows()
{
    m_rows.clear();
    m_proxyOf.assign(m_accepted.size(), -1);
    auto take = [this](int sourceRow) {
        if (m_accepted[size_t(sourceRow)]) {
            m_proxyOf[size_t(sourceRow)] = int(m_rows.size());
            m_rows.push_back(sourceRow);
        }
    };
    if (m_sortColumn >= 0) {
        for (int sourceRow : m_order)
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
    if (column == m_sortColumn && order == m_sortOrder)
        return;
    m_sortColumn = m_model && column < m_model->columnCount() ? column : -1;
    m_sortOrder = order;
    rebuildOrder();
    publish();
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
    beginResetModel();
    m_rows.clear();
    m_proxyOf.clear();
    m_accepted.clear();
    m_order.clear();
    m_rank.clear();
    m_changed.clear();
    forgetResults();
    endResetModel();
}

void FilterProxyModel::onSourceAboutToBeReset()
{
    beginResetModel();
}

void FilterProxyModel::onSourceReset()
{
    forgetResults();
    m_changed.clear();
    clearMemos(); // a reset renumbers the model's texts
    testAll();
    rebuildOrder();
    rebuildRows();
    endResetModel();
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
    shift(&m_order);
    shift(&m_changed);
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
    const int count = last - first + 1;
    auto shifted = [&](int r) { return r < first ? r : (r > last ? r - count : -1); };
    m_accepted.erase(m_accepted.begin() + first, m_accepted.begin() + last + 1);
    if (m_sortColumn >= 0) {
        std::vector<int> kept;
        kept.reserve(m_order.size());
        for (int r : m_order) {
            const int s = shifted(r);
            if (s >= 0)
                kept.push_back(s);
        }
        m_order = std::move(kept);
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
    bool layout = false;
    for (int r : changed) {
        const quint8 now = accepts(r) ? 1 : 0;
        if (now != m_accepted[size_t(r)]) {
            m_accepted[size_t(r)] = now;
            layout = true;
        }
    }
    if (m_sortColumn >= 0 && !changed.empty()) {
        // Take the changed rows out of the order and merge them back in at their new places.
        std::vector<quint8> isChanged(m_accepted.size(), 0);
        for (int r : changed)
            isChanged[size_t(r)] = 1;
        std::vector<int> kept;
        kept.reserve(m_order.size());
        std::copy_if(m_order.cbegin(), m_order.cend(), std::back_inserter(kept),
                     [&](int r) { return !isChanged[size_t(r)]; });
        sortOrderOf(&changed);
        std::vector<int> merged;
        merged.reserve(m_order.size());
        std::merge(kept.cbegin(), kept.cend(), changed.cbegin(), changed.cend(), std::back_inserter(merged),
                   [this](int a, int b) { return lessThan(a, b); });
        layout = layout || merged != m_order;
        m_order = std::move(merged);
    }
    if (layout)
        publish();
}

} // namespace OpsDeck
