// A row the server has announced but the view may not show yet (a new delivery on its way through
// the change feed or the next list page): selected once it arrives, unless the operator has moved on.
#pragma once

#include <QObject>
#include <QPointer>

#include <functional>

namespace OpsDeck {

class ResourceView;

class PendingSelection final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PendingSelection)

public:
    // view: not owned. stillWanted says whether selecting the row is still welcome: false once the
    // operator has selected something else or gone to another page.
    PendingSelection(ResourceView *view, qint64 id, std::function<bool()> stillWanted, QObject *parent = nullptr);

    qint64 id() const { return m_id; }
    // Tries at once, then whenever the view's rows change. The object deletes itself once the row
    // is selected or selecting it is no longer wanted.
    void start();
    // The operator did something: gives up when selecting is no longer welcome.
    void check();

signals:
    void selected(qint64 id);
    void abandoned(qint64 id);

private:
    void trySelect();
    void finish();

    QPointer<ResourceView> m_view; // not owned
    qint64 m_id = 0;
    std::function<bool()> m_stillWanted;
    bool m_done = false;
};

} // namespace OpsDeck
