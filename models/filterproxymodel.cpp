// The query-line proxy: parses with core/query, matches against the model's compact rows.
#include "filterproxymodel.h"

#include <QDateTime>

namespace OpsDeck {

namespace {

constexpr int kAgeRefreshMs = 30 * 1000;

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

} // namespace

FilterProxyModel::FilterProxyModel(QObject *parent)
    : QSortFilterProxyModel(parent)
    , m_clock([] { return QDateTime::currentMSecsSinceEpoch(); })
{
    setSortRole(ResourceModel::SortRole);
    setSortCaseSensitivity(Qt::CaseInsensitive);
    setDynamicSortFilter(true);
    m_ageTimer.setInterval(kAgeRefreshMs);
    connect(&m_ageTimer, &QTimer::timeout, this, &FilterProxyModel::refreshTimeFilter);
}

FilterProxyModel::~FilterProxyModel() = default;

void FilterProxyModel::setSourceModel(QAbstractItemModel *model)
{
    if (m_source)
        disconnect(m_source, nullptr, this, nullptr);
    m_source = qobject_cast<ResourceModel *>(model);
    m_memo.reset();
    if (m_source) {
        // A reset renumbers the model's texts; the memo keyed by them must go first.
        connect(m_source, &QAbstractItemModel::modelAboutToBeReset, this, [this] { m_memo.reset(); });
    }
    QSortFilterProxyModel::setSourceModel(model);
    reparse();
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
        invalidateFilter();
        return;
    }
    QueryParse parsed = parseQuery(m_text, m_source->kind());
    const QString oldMessage = m_error.message;
    const int oldPosition = m_error.position;
    m_error = parsed.error;
    if (parsed.ok()) {
        m_query = std::move(parsed.query);
        m_memo.reset();
        m_now = m_clock();
        const bool timed = std::any_of(m_query.terms.cbegin(), m_query.terms.cend(),
                                       [](const QueryTerm &t) { return t.ageMs.has_value(); });
        if (timed)
            m_ageTimer.start();
        else
            m_ageTimer.stop();
        // A new query rebuilds the mapping in one pass: invalidateFilter() inserts and removes rows
        // range by range, which costs seconds when a narrow filter is widened on 250k rows.
        invalidate();
    }
    if (oldMessage != m_error.message || oldPosition != m_error.position)
        emit errorChanged(m_error.message, m_error.position);
}

void FilterProxyModel::refreshTimeFilter()
{
    m_now = m_clock();
    invalidateFilter();
}

QStringList FilterProxyModel::completions(const QString &token) const
{
    return m_source ? queryCompletions(token, m_source->kind()) : QStringList();
}

void FilterProxyModel::setReferenceLookup(ReferenceLookup lookup)
{
    m_lookup = std::move(lookup);
    invalidateFilter();
}

void FilterProxyModel::setClock(std::function<qint64()> clock)
{
    m_clock = std::move(clock);
    m_now = m_clock();
    invalidateFilter();
}

bool FilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!m_source || sourceParent.isValid() || m_query.isEmpty())
        return true;
    return matches(m_query, ModelRow(*m_source, sourceRow, m_lookup), m_now, &m_memo);
}

bool FilterProxyModel::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    // The same order as comparing SortRole values, straight from the compact cells.
    if (m_source && sortRole() == ResourceModel::SortRole && left.model() == m_source && right.model() == m_source
        && left.column() == right.column()) {
        const int order = m_source->compareRows(left.row(), right.row(), left.column());
        if (order != 0)
            return order < 0;
        // Ties by id keep the order stable across refreshes.
        return m_source->idAt(left.row()) < m_source->idAt(right.row());
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace OpsDeck
