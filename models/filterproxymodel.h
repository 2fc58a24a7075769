// The filter and sort proxy over a ResourceModel: applies the query line and sorts by raw values.
#pragma once

#include "core/query.h"
#include "resourcemodel.h"

#include <QPointer>
#include <QSortFilterProxyModel>
#include <QTimer>

#include <functional>

namespace OpsDeck {

class FilterProxyModel final : public QSortFilterProxyModel
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

signals:
    // message is empty when the current text is a valid query; position is 0-based.
    void errorChanged(const QString &message, int position);
    void queryChanged(const QString &text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    void reparse();
    void refreshTimeFilter();

    QPointer<ResourceModel> m_source;
    QString m_text;
    Query m_query;
    QueryError m_error;
    ReferenceLookup m_lookup;
    std::function<qint64()> m_clock;
    qint64 m_now = 0;
    mutable QueryTextMemo m_memo; // filterAcceptsRow() is const; the memo is a cache
    QTimer m_ageTimer; // age>1h drifts with time: refilter now and then while such a term is active
};

} // namespace OpsDeck
