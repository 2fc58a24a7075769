// The filter and sort proxy over a ResourceModel: applies the query line and sorts by raw values.
#pragma once

#include "core/query.h"
#include "filterjob.h"
#include "resourcemodel.h"

#include <QAbstractProxyModel>
#include <QFutureWatcher>
#include <QPersistentModelIndex>
#include <QPointer>
#include <QSet>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace OpsDeck {

// A flat proxy that keeps two vectors instead of QSortFilterProxyModel's per-row mappings: the
// sort order of every source row (rebuilt only when the sort column changes, merged per batch)
// and the accepted flag of every source row. A new filter or sort order over many rows is
// computed on a worker thread from a snapshot of the source's rows; the newest request wins and
// its result is applied with one layout change. Until then the previous rows stay shown. A reset of
// a large source (a relist) is filtered and sorted the same way: until the worker answers, the rows
// shown before the reset stay shown where they are (by id, with their new values).
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
    // reports the error (errorChanged); returns whether the text was accepted. The rows it
    // selects are shown at once when few rows must be tested, else when filterPublished() comes.
    bool setQuery(const QString &text);
    QString queryText() const { return m_text; }
    const QueryError &error() const { return m_error; }
    const Query &query() const { return m_query; }
    QStringList completions(const QString &token) const;

    // provider:acme and free words need names of other kinds' objects.
    void setReferenceLookup(ReferenceLookup lookup);
    // Objects the rows name came or went (the referenced kind's model was listed or grew): a
    // filter that read their names is run again soon, several such changes at once.
    void referencedNamesChanged();
    // The clock age>1h compares with (tests pin it); ms since the epoch.
    void setClock(std::function<qint64()> clock);

    // The sort asked for last (shown once published).
    int sortColumn() const { return m_wantedColumn; }
    Qt::SortOrder sortOrder() const { return m_wantedOrder; }
    // How many rows the last published filter change tested (all rows, only those shown when it
    // narrowed, none when it was remembered).
    qsizetype lastTestedRows() const { return m_lastTested; }
    // True while a filter or sort order computed on a worker is not yet shown (filteringChanged()).
    bool isFiltering() const { return m_pending; }
    // Work on fewer rows than this (rows to test, plus every row when sorting) is done at once on
    // this thread; more goes to a worker. 0 sends everything to the worker (tests).
    void setAsyncThreshold(qsizetype rows) { m_asyncThreshold = rows; }
    static constexpr qsizetype kAsyncThreshold = 8192;

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
    // The rows of the current query in the current sort order are shown (after every setQuery()
    // or sort() that changed them, at once or when the worker's result was applied).
    void filterPublished();
    // isFiltering() changed, as seen once a request was handled (a keystroke that overtakes a
    // running job keeps it true without a signal): for a view's "filtering…" indicator.
    void filteringChanged(bool filtering);

private:
    // Brings the shown rows to the wanted query and sort order, at once or through a worker.
    void refresh(bool forceFilter);
    // After a reset too large to filter and sort at once: the rows shown before it, found again by
    // id, stand in (unsorted and untested) until the worker's answer.
    void keepShownRows();
    void cancelPending();
    void reportFiltering();
    void onJobFinished();
    // Takes a result in; `dirty` are source rows changed since its snapshot was taken, `text`
    // the query line it answers.
    void apply(FilterResult result, std::vector<int> dirty, const QString &text);
    void refreshTimeFilter();
    void testAllNow();
    bool lessThanGeneric(int a, int b) const;
    // Recomputes the shown rows from the order and the accepted flags inside a layout change.
    void publish();
    void rebuildRows();
    bool sorted() const { return m_source ? m_rowOrder.column() >= 0 : m_genericColumn >= 0; }

    void onSourceDestroyed();
    void onSourceAboutToBeReset();
    void onSourceReset();
    void onRowsInserted(const QModelIndex &parent, int first, int last);
    void onRowsAboutToBeRemoved(const QModelIndex &parent, int first, int last);
    void onRowsRemoved(const QModelIndex &parent, int first, int last);
    void onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight, const QList<int> &roles);
    // Re-tests and re-places the rows changed since the last call, with at most one layout change.
    void applyChangedRows();
    // Results of recent queries, so erasing a character does not test every row again.
    void remember();
    bool recall(const QString &text);
    void forgetResults() { m_recent.clear(); }
    // The ids the rows name in a reference field (a superset once rows changed or went away).
    QSet<qint64> referencedIds(int field);

    QPointer<QAbstractItemModel> m_model;
    QPointer<ResourceModel> m_source; // m_model when it is a ResourceModel
    QList<QMetaObject::Connection> m_connections;

    std::vector<int> m_rows;        // proxy row -> source row
    std::vector<int> m_proxyOf;     // source row -> proxy row, -1 when filtered out
    std::vector<quint8> m_accepted; // per source row, by m_matcher's query
    RowOrder m_rowOrder;            // the shown order of a ResourceModel's rows
    std::vector<int> m_genericOrder; // the shown order of another model's rows
    int m_genericColumn = -1;
    std::vector<int> m_changed;     // source rows whose values changed, until applyChangedRows()
    std::vector<qint64> m_shownIds; // the rows shown between a source's modelAboutToBeReset and modelReset
    // Since a reset, the accepted flags / the order are stand-ins until a worker's answer replaces them.
    bool m_filterStale = false;
    bool m_orderStale = false;
    bool m_changeScheduled = false;
    int m_wantedColumn = -1;
    Qt::SortOrder m_wantedOrder = Qt::AscendingOrder;

    // Persistent indexes between a source's rowsAboutToBeRemoved and rowsRemoved, by source row.
    QModelIndexList m_removing;
    std::vector<std::pair<int, int>> m_removingSource;

    struct Remembered
    {
        QString text;
        std::vector<quint8> accepted;
    };
    std::vector<Remembered> m_recent; // newest last; cleared by any change of the source rows
    QHash<int, QSet<qint64>> m_referenced; // by field, built on first use, grown per batch
    QString m_text;     // as typed last
    Query m_query;      // the last good query: what should be shown
    QString m_shownText;
    RowMatcher m_matcher; // the query shown, with its remembered answers
    QueryError m_error;
    ReferenceLookup m_lookup;
    std::function<qint64()> m_clock;
    qsizetype m_lastTested = 0;
    qsizetype m_asyncThreshold = kAsyncThreshold;

    // The worker: one job at a time is awaited; older ones stop early and their results are dropped.
    QThreadPool *m_pool; // a child, one thread
    QFutureWatcher<FilterResult> *m_watcher;
    std::shared_ptr<std::atomic<quint64>> m_latest;
    quint64 m_generation = 0;
    bool m_pending = false;
    bool m_reportedFiltering = false; // what filteringChanged() said last
    bool m_pendingStale = false;   // rows were removed or reset since the job's snapshot
    QString m_pendingText;
    Query m_pendingQuery;
    bool m_pendingFilter = false;
    bool m_pendingForced = false;  // asked to test every row again (the clock or the lookup changed)
    std::vector<int> m_pendingDirty; // rows changed since the job's snapshot
    QTimer m_ageTimer; // age>1h drifts with time: refilter now and then while such a term is active
    QTimer m_namesTimer; // referencedNamesChanged(): one refilter for a burst of them
};

} // namespace OpsDeck
