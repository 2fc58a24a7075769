// Draws a kind's state machine from the core/ tables: the current state and the transitions the
// current role may take highlighted, everything else dimmed.
#pragma once

#include "core/statemachine.h"

#include <QHash>
#include <QPainterPath>
#include <QRectF>
#include <QTransform>
#include <QWidget>

namespace OpsDeck {

class StateDiagramWidget final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StateDiagramWidget)

public:
    explicit StateDiagramWidget(QWidget *parent = nullptr);

    // Not owned: the machines are static tables in core/.
    void setMachine(const StateMachine *machine);
    const StateMachine *machine() const { return m_machine; }
    void setCurrentState(const QString &state);
    const QString &currentState() const { return m_currentState; }
    void setRole(Actor role);
    // Actions something else holds back now (a delivery's endpoint paused): not highlighted,
    // though the state and the role allow them.
    void setHeldActions(const QStringList &actions);

    // What the diagram highlights, for tests and the accessible description.
    QList<Transition> highlightedTransitions() const;
    // Where a state's box is drawn in unscaled diagram coordinates (empty when unknown).
    QRectF stateRect(const QString &state) const;
    // Where the label of the arrow from one state to another is drawn, in the same coordinates
    // (empty when there is no such arrow).
    QRectF labelRect(const QString &from, const QString &to) const;
    // From those coordinates to the widget's: centred across, from the top down, scaled down
    // when the widget is smaller than the diagram.
    QTransform diagramToWidget() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    void relayout();
    void layoutEdges();
    // The rectangle every state's box lies in.
    QRectF boxesExtent() const;
    QFont labelFont(bool bold) const;
    void updateDescription();
    QString stateLabel(const QString &state) const;
    QStringList orderedColumn(const QStringList &states) const;

    const StateMachine *m_machine = nullptr; // not owned
    QString m_currentState;
    Actor m_role = Actor::Operator;
    QStringList m_held;
    QHash<QString, QRectF> m_boxes;
    // One arrow per (from, to) pair, its label the actions that take it.
    struct Edge
    {
        QString from, to;
        QStringList labels;
        QPainterPath path;
        QRectF labelRect;
    };
    QList<Edge> m_edges;
    QSizeF m_diagramSize;
};

} // namespace OpsDeck
