// The dashboard: per kind, how many objects are in each state, and the connection at a glance.
#pragma once

#include "core/resourcekind.h"

#include <QAbstractItemModel>
#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QWidget>

class QGridLayout;
class QLabel;
class QTimer;

namespace OpsDeck {

class StateBadgeLabel;

class DashboardPage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DashboardPage)

public:
    explicit DashboardPage(QWidget *parent = nullptr);
    ~DashboardPage() override;

    // model: the kind's unfiltered model (not owned); its column `kind.stateField` is counted.
    // A kind no page shows (openable false) gets a card that counts and opens nothing.
    void addKind(const ResourceKind &kind, QAbstractItemModel *model, bool openable = true);
    // A new model for a kind's card (after connecting elsewhere); not owned.
    void setModel(const QString &kindName, QAbstractItemModel *model);
    void setConnectionText(const QString &text);
    // A kind the current role does not see (an owner's callbacks): its card goes, rather than
    // count 0 as if there were none; the cards after it close up.
    void setKindHidden(const QString &kindName, bool hidden);
    // The server's delivery worker as /healthz reported it at `asOf` (its "delivery_worker"
    // object): a card of its own, added at the first report. An empty object (the server says
    // nothing of one) hides it.
    void setDeliveryWorker(const QJsonObject &worker, const QDateTime &asOf);
    // The worker's figures are the whole server's: for operators only. Hidden, the card stays
    // hidden whatever the reports say.
    void setDeliveryWorkerHidden(bool hidden);
    // Offline: the card keeps its last figures but no longer says how the worker is doing.
    void setDeliveryWorkerUnknown();
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
        bool openable = true;
    };
    void watch(QAbstractItemModel *model);
    void scheduleRefresh();
    void refresh();
    void rebuildChips(Card &card);
    void placeCards();
    QWidget *newCard(const QString &objectName, const QString &title, const QString &kindName);

    QList<Card> m_cards;
    QGridLayout *m_grid = nullptr;
    QList<QWidget *> m_frames; // every card, in the order they were made
    QLabel *m_connection = nullptr;
    QTimer *m_refresh = nullptr;
    QWidget *m_workerCard = nullptr;
    bool m_workerHidden = false;
    StateBadgeLabel *m_workerBadge = nullptr;
    QHash<QString, QLabel *> m_workerFigures; // "attempts_in_flight.answering" -> its figure
    QLabel *m_workerNote = nullptr;
    QLabel *m_workerAsOf = nullptr;
    QDateTime m_workerAsOfTime;
};

} // namespace OpsDeck
