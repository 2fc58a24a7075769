// One table of a resource kind: query line with completion, sortable table with state badges,
// column chooser, remembered layout and query, context menu (copy id / JSON) and CSV export.
#pragma once

#include "core/resourcekind.h"

#include <QAbstractItemModel>
#include <QJsonObject>
#include <QKeySequence>
#include <QPointer>
#include <QWidget>

class QCompleter;
class QLabel;
class QLineEdit;
class QMenu;
class QStringListModel;
class QTableView;
class QTimer;

namespace OpsDeck {

class ResourceView final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ResourceView)

public:
    // kind: a static description (not owned).
    explicit ResourceView(const ResourceKind &kind, QWidget *parent = nullptr);
    ~ResourceView() override;

    const ResourceKind &kind() const { return m_kind; }
    // The filtered, sortable model the table shows (not owned; it outlives the view). Its
    // columns are the kind's fields in order; objectRole gives each row's full QJsonObject.
    void setModel(QAbstractItemModel *model, int objectRole);
    QTableView *table() const { return m_table; }
    QLineEdit *queryEdit() const { return m_query; }
    // The "Filtering…" note beside the row count, shown while a filter or sort order computed on
    // a worker takes longer than kFilteringDelayMs to arrive.
    QLabel *filteringIndicator() const { return m_filtering; }
    static constexpr int kFilteringDelayMs = 150;

    QString queryText() const;
    void setQueryText(const QString &text);
    // The inline message under the query line; empty when the query is fine.
    QString queryError() const;
    void focusQuery();
    // The window's shortcut that focuses this view's query line, named in its placeholder; only
    // the page's main table has one.
    void setQueryShortcut(const QKeySequence &shortcut);
    // What the table says when it has no rows and no filter hides any (why it is empty).
    void setEmptyText(const QString &text);

    QJsonObject currentObject() const;
    // The row chosen, which the detail pane shows: the current row once it is selected, else none.
    QJsonObject chosenObject() const;
    // Makes the row of this id the current, selected and visible one; false when no row shows it
    // (not synced yet, or hidden by the filter).
    bool selectId(qint64 id);
    QJsonObject objectAt(int proxyRow) const;
    // Writes the rows and columns as shown (filter, order, visible columns) to a CSV file.
    bool exportCsv(const QString &path, QString *error = nullptr) const;
    QString csv() const;

    void saveLayout() const;
    // The header's context menu: one checkable entry per column, then "Reset columns".
    // The caller owns the menu.
    QMenu *createColumnMenu();
    void copyCurrentId() const;
    void copyCurrentJson() const;

signals:
    // The query text to apply (already validated: it parses, or is empty).
    void queryChanged(const QString &text);
    // The current row changed (another object, or none).
    void currentObjectChanged(const QJsonObject &object);
    // The current row's object changed on the server (a newer version arrived).
    void currentObjectUpdated(const QJsonObject &object);

protected:
    void changeEvent(QEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    // Widgets, query line and counts (resourceview.cpp).
    void updateErrorColour();
    void onQueryEdited();
    void applyQuery();
    void updateCompletions();
    void insertCompletion(const QString &completion);
    void updateCounts();
    // Lays the empty table's hint over the table's visible part.
    void placeEmptyHint();
    void onFilteringChanged(bool filtering);
    QString tokenUnderCursor(int *start = nullptr) const;

    // Column layout and the header's menu (resourceviewlayout.cpp).
    void restoreLayout();
    void applyDefaultLayout();
    void scheduleLayoutSave();
    void showHeaderMenu(const QPoint &pos);
    QString settingsKey(const QString &what) const;
    QStringList columnKeys() const;

    // The row menu and CSV export (resourceviewexport.cpp).
    void showTableMenu(const QPoint &pos);
    void chooseCsvFile();

    // Rows by id (resourceviewselection.cpp).
    // A reset loses the selection and the current row: they are held by id across it.
    void holdSelection();
    void restoreSelection();
    // A layout change moves them along, but a current row it drops goes without a signal.
    void onLayoutAboutToBeChanged();
    void onLayoutChanged();
    qint64 idAt(int row) const;
    int rowOfId(qint64 id) const; // -1 when not shown

    const ResourceKind &m_kind;
    QPointer<QAbstractItemModel> m_model; // not owned; may go before the view
    int m_objectRole = -1;
    QLineEdit *m_query = nullptr;
    QString m_placeholder; // the query line's placeholder without a shortcut
    QString m_emptyText;   // empty: a plain "Nothing here yet."
    QString m_queryHelp;   // the query line's tooltip while the query reads
    bool m_queryBroken = false; // the query line does not read: the rows are the last good filter's
    QStringList m_unknownStates; // state values of the applied filter that no known state starts with
    QLabel *m_queryError = nullptr;
    QLabel *m_counts = nullptr;
    QLabel *m_filtering = nullptr;
    QTimer *m_filteringDelay = nullptr; // so a filter answered at once never flashes the note
    QMetaObject::Connection m_filteringConnection;
    QLabel *m_emptyHint = nullptr;
    QTableView *m_table = nullptr;
    QCompleter *m_completer = nullptr;
    QStringListModel *m_completions = nullptr;
    QTimer *m_queryTimer = nullptr;
    QTimer *m_layoutTimer = nullptr;
    bool m_restoringLayout = false;
    QList<qint64> m_heldSelection; // the selected rows' ids between modelAboutToBeReset and modelReset
    qint64 m_heldCurrent = -1;     // the current row's id then, or across a layout change
    int m_heldCurrentColumn = 0;
    bool m_currentInSight = false; // whether the current row was in sight before a layout change
};

} // namespace OpsDeck
