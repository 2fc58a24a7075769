// The filter and sort proxy over a ResourceModel: applies the query line and sorts by raw values.
#pragma once

#include "core/query.h"
#include "resourcemodel.h"

#include <QAbstractProxyModel>
#include <QHash>
#include <QPersistentModelIndex>
#include <QPointer>
#include <QTimer>

#include <functional>
#include <vector>

namespace OpsDeck {

// A flat proxy that keeps two vectors instead of QSortFilterProxyModel's per-row mappings: the
// sort order of every source row (rebuilt only when the sort column changes, merged per batch)
// and the accepted flag of every source row. A keystroke that narrows the query re-tests only the
// rows shown; any new filter is applied with one layout change.
class FilterProxyModel final : public QAbstractProxyModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(FilterProxyModel)

public:
    explicit FilterProxyModel(QObject *parent = nullptr);
    ~FilterProxyModel() override;

    // Only a ResourceModel can be filtered by a query; other models pass every row.
    void setSourceModel(QAbstractItemModel *model) override;
    ResourceModel *resourceModel() const { return m_source; }

    // Parses text for the source's kind. A bad query keeps the previous filter in force and
    // reports the error (errorChanged); returns whether the text was accepted.
    bool setQuery(const QString &text);
    QString queryText() const { return m_text; }
    const QueryError &error() const { return m_error; }
    const Query &query() const { return m_query; }
    QStringList completions(const QString &token) const;

    // provider:acme needs names of other kinds' objects.
    void setReferenceLookup(ReferenceLookup lookup);
    // The clock age>1h compares with (tests pin it); ms since the epoch.
    void setClock(std::function<qint64()> clock);

    int sortColumn() const { return m_sortColumn; }
    Qt::SortOrder sortOrder() const { return m_sortOrder; }
    // How many rows the last filter change tested (all rows, or only those shown when it narrowed).
    qsizetype lastTestedRows() const { return m_lastTested; }

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    bool hasChildren(const QModelIndex &parent = {}) const override;
    QModelIndex mapToSource(const QModelIndex &proxyIndex) const override;
    QModelIndex mapFromSource(const QModelIndex &sourceIndex) const override;
    // By SortRole (raw values, texts case-insensitively, ties by id); column -1 is source order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

signals:
    // message is empty when the current text is a valid query; position is 0-based.
    void errorChanged(const QString &message, int position);
    void queryChanged(const QString &text);

private:
    void reparse();
    void refreshTimeFilter();
    void clearMemos();
    bool accepts(int sourceRow) const;
    bool wordFound(int word, int sourceRow) const;
    void testAll();
    bool lessThan(int a, int b) const;
    void sortOrderOf(std::vector<int> *rows) const;
    void rebuildOrder();
    // Recomputes the shown rows from the order and the accepted flags inside a layout change.
    void publish();
    void rebuildRows();

    void onSourceDestroyed();
    void onSourceAboutToBeReset();
    void onSourceReset();
    void onRowsInserted(const QModelIndex &parent, int first, int last);
    void onRowsAboutToBeRemoved(const QModelIndex &parent, int first, int last);
    void onRowsRemoved(const QModelIndex &parent, int first, int last);
    void onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles);
    // Re-tests and re-places the rows changed since the last call, with at most one layout change.
    void applyChangedRows();
    int textRank(int sourceRow) const;
    // Results of recent queries, so erasing a character does not test every row again.
    void remember();
    bool recall();
    void forgetResults() { m_recent.clear(); }

    QPointer<QAbstractItemModel> m_model;
    QPointer<ResourceModel> m_source; // m_model when it is a ResourceModel
    QList<QMetaObject::Connection> m_connections;

    std::vector<int> m_rows;      // proxy row -> source row
    std::vector<int> m_proxyOf;   // source row -> proxy row, -1 when filtered out
    std::vector<quint8> m_accepted; // per source row
    std::vector<int> m_order;     // every source row in sort order; empty while unsorted
    std::vector<int> m_rank;      // by text id: the text's place in the sort column's order
    std::vector<int> m_changed;   // source rows whose values changed, until applyChangedRows()
    bool m_changeScheduled = false;
    int m_sortColumn = -1;
    Qt::SortOrder m_sortOrder = Qt::AscendingOrder;

    // Persistent indexes between a source's rowsAboutToBeRemoved and rowsRemoved, by source row.
    QModelIndexList m_removing;
    std::vector<std::pair<int, int>> m_removingSource;

    struct Remembered
    {
        QString text;
        std::vector<quint8> accepted;
    };
    std::vector<Remembered> m_recent; // newest last; cleared by any change of the source rows
    QString m_text;
    Query m_query;
    QueryError m_error;
    QStringList m_foldedWords;
    ReferenceLookup m_lookup;
    std::function<qint64()> m_clock;
    qint64 m_now = 0;
    qsizetype m_lastTested = 0;
    // Answers per interned text, so equal texts are tested once per query: the memos are caches,
    // filled from const accepts().
    mutable QueryTextMemo m_wordMemo;
    mutable std::vector<std::vector<qint8>> m_termMemo;       // per term, by text id
    mutable std::vector<QHash<qint64, bool>> m_referenceMemo; // per term, by referenced id
    QTimer m_ageTimer; // age>1h drifts with time: refilter now and then while such a term is active
};

} // namespace OpsDeck
