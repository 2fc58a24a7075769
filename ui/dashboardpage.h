// The dashboard: per kind, how many objects are in each state, and the connection at a glance.
#pragma once

#include "core/resourcekind.h"

#include <QAbstractItemModel>
#include <QHash>
#include <QPointer>
#include <QWidget>

class QGridLayout;
class QLabel;
class QTimer;

namespace OpsDeck {

class DashboardPage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DashboardPage)

public:
    explicit DashboardPage(QWidget *parent = nullptr);
    ~DashboardPage() override;

    // model: the kind's unfiltered model (not owned); its column `kind.stateField` is counted.
    void addKind(const ResourceKind &kind, QAbstractItemModel *model);
    // A new model for a kind's card (after connecting elsewhere); not owned.
    void setModel(const QString &kindName, QAbstractItemModel *model);
    void setConnectionText(const QString &text);
    // Counts per state of one kind as last computed, for tests.
    QHash<QString, int> stateCounts(const QString &kindName) const;

signals:
    // A card or a state chip was clicked: open that view with this query (may be empty).
    void openViewRequested(const QString &kindName, const QString &query);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    struct Card
    {
        const ResourceKind *kind = nullptr; // not owned
        QPointer<QAbstractItemModel> model; // not owned; may go before the page
        QWidget *frame = nullptr;
        QLabel *total = nullptr;
        QWidget *chips = nullptr;
        QHash<QString, int> counts;
    };
    void watch(QAbstractItemModel *model);
    void scheduleRefresh();
    void refresh();
    void rebuildChips(Card &card);

    QList<Card> m_cards;
    QGridLayout *m_grid = nullptr;
    QLabel *m_connection = nullptr;
    QTimer *m_refresh = nullptr;
};

} // namespace OpsDeck
