// Draws a kind's state machine from the core/ tables.
#include "statediagramwidget.h"

#include "valueformat.h"

#include <QEvent>
#include <QPainter>
#include <QPainterPath>
#include <QQueue>
#include <QtMath>

#include <algorithm>
#include <numeric>

namespace OpsDeck {

namespace {

constexpr qreal kBoxHeight = 30;
constexpr qreal kGapX = 96;  // room for the action labels between columns
constexpr qreal kGapY = 54;  // room for the labels of vertical arrows
constexpr qreal kMargin = 12;
constexpr qreal kLoopRoom = 30;  // above the boxes, for self transitions
constexpr qreal kCurveRoom = 26; // below the boxes, for transitions that jump back over columns

// Where the segment from the centre of `rect` towards `target` leaves the rectangle.
QPointF borderPoint(const QRectF &rect, const QPointF &target)
{
    const QPointF c = rect.center();
    const qreal dx = target.x() - c.x();
    const qreal dy = target.y() - c.y();
    if (qFuzzyIsNull(dx) && qFuzzyIsNull(dy))
        return c;
    const qreal sx = qFuzzyIsNull(dx) ? 1e9 : (rect.width() / 2) / qAbs(dx);
    const qreal sy = qFuzzyIsNull(dy) ? 1e9 : (rect.height() / 2) / qAbs(dy);
    const qreal s = qMin(sx, sy);
    return {c.x() + dx * s, c.y() + dy * s};
}

// A long label on two lines, broken at the space nearest its middle: one line of it would
// reach over the next column.
QString wrapped(const QString &label)
{
    if (label.size() <= 24)
        return label;
    const qsizetype middle = label.size() / 2;
    qsizetype best = -1;
    for (qsizetype i = 0; i < label.size(); ++i) {
        if (label.at(i) == QLatin1Char(' ') && (best < 0 || qAbs(i - middle) < qAbs(best - middle)))
            best = i;
    }
    return best < 0 ? label : label.left(best) + QLatin1Char('\n') + label.mid(best + 1);
}

void drawArrowHead(QPainter &p, const QPointF &tip, qreal angleDegrees, const QColor &color)
{
    // QPainterPath angles are counter-clockwise with y pointing up; convert to screen radians.
    const qreal a = qDegreesToRadians(-angleDegrees);
    const qreal len = 8;
    const qreal spread = 0.45;
    const QPointF p1 = tip - QPointF(len * qCos(a - spread), len * qSin(a - spread));
    const QPointF p2 = tip - QPointF(len * qCos(a + spread), len * qSin(a + spread));
    p.save();
    p.setPen(Qt::NoPen);
    p.setBrush(color);
    p.drawPolygon(QPolygonF{tip, p1, p2});
    p.restore();
}

} // namespace

StateDiagramWidget::StateDiagramWidget(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("stateDiagram"));
    setAccessibleName(tr("State diagram"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
}

void StateDiagramWidget::setMachine(const StateMachine *machine)
{
    if (m_machine == machine)
        return;
    m_machine = machine;
    relayout();
    updateDescription();
    updateGeometry();
    update();
}

void StateDiagramWidget::setCurrentState(const QString &state)
{
    if (m_currentState == state)
        return;
    m_currentState = state;
    updateDescription();
    update();
}

void StateDiagramWidget::setRole(Actor role)
{
    if (m_role == role)
        return;
    m_role = role;
    updateDescription();
    update();
}

void StateDiagramWidget::setHeldActions(const QStringList &actions)
{
    if (m_held == actions)
        return;
    m_held = actions;
    updateDescription();
    update();
}

QList<Transition> StateDiagramWidget::highlightedTransitions() const
{
    if (!m_machine || m_currentState.isEmpty())
        return {};
    QList<Transition> allowed = m_machine->allowed(m_currentState, m_role);
    allowed.removeIf([this](const Transition &t) { return m_held.contains(t.action); });
    return allowed;
}

QRectF StateDiagramWidget::stateRect(const QString &state) const
{
    return m_boxes.value(state);
}

QRectF StateDiagramWidget::labelRect(const QString &from, const QString &to) const
{
    for (const Edge &e : m_edges) {
        if (e.from == from && e.to == to)
            return e.labelRect;
    }
    return {};
}

QStringList StateDiagramWidget::orderedColumn(const QStringList &states) const
{
    // A vertical arrow between boxes of one column runs straight through the boxes between
    // them (DELIVERED ← CANCELLED through FAILED and SUPERSEDED): order the column so such
    // arrows join neighbours, keeping the table's order among equally good ones.
    auto crossed = [this](const QStringList &order) {
        int boxes = 0;
        for (const Transition &t : m_machine->transitions()) {
            const qsizetype a = order.indexOf(t.from);
            const qsizetype b = order.indexOf(t.to);
            if (a >= 0 && b >= 0 && a != b)
                boxes += int(qAbs(a - b) - 1);
        }
        return boxes;
    };
    QList<int> index(states.size());
    std::iota(index.begin(), index.end(), 0);
    QStringList best = states;
    int bestCrossed = crossed(states);
    // Columns hold a handful of states; beyond eight the table's order stays.
    if (states.size() > 8)
        return best;
    while (bestCrossed > 0 && std::next_permutation(index.begin(), index.end())) {
        QStringList order;
        for (int i : std::as_const(index))
            order.append(states.at(i));
        const int c = crossed(order);
        if (c < bestCrossed) {
            bestCrossed = c;
            best = order;
        }
    }
    return best;
}

QString StateDiagramWidget::stateLabel(const QString &state) const
{
    QString label = state;
    return label.replace(QLatin1Char('+'), QStringLiteral(" + "));
}

void StateDiagramWidget::relayout()
{
    m_boxes.clear();
    m_edges.clear();
    m_diagramSize = {};
    if (!m_machine || m_machine->states().isEmpty())
        return;

    // Columns by distance from the first state, so the diagram reads left to right the way
    // the lifecycle moves.
    const QStringList &states = m_machine->states();
    QHash<QString, int> column;
    QQueue<QString> queue;
    column.insert(states.first(), 0);
    queue.enqueue(states.first());
    while (!queue.isEmpty()) {
        const QString s = queue.dequeue();
        for (const Transition &t : m_machine->transitions()) {
            if (t.from == s && !column.contains(t.to)) {
                column.insert(t.to, column.value(s) + 1);
                queue.enqueue(t.to);
            }
        }
    }
    int maxColumn = 0;
    for (int c : std::as_const(column))
        maxColumn = qMax(maxColumn, c);
    for (const QString &s : states) {
        if (!column.contains(s))
            column.insert(s, maxColumn + 1);
    }

    QList<QStringList> columns;
    for (const QString &s : states) {
        const int c = column.value(s);
        while (columns.size() <= c)
            columns.append(QStringList());
        columns[c].append(s);
    }
    columns.removeAll(QStringList());
    for (QStringList &c : columns)
        c = orderedColumn(c);

    QFont bold = font();
    bold.setBold(true);
    const QFontMetricsF fm(bold);
    qreal boxWidth = 0;
    for (const QString &s : states)
        boxWidth = qMax(boxWidth, fm.horizontalAdvance(stateLabel(s)) + 24);

    int tallest = 0;
    for (const QStringList &c : std::as_const(columns))
        tallest = qMax(tallest, int(c.size()));
    const qreal height = tallest * kBoxHeight + (tallest - 1) * kGapY;
    for (int i = 0; i < columns.size(); ++i) {
        const QStringList &c = columns.at(i);
        const qreal columnHeight = c.size() * kBoxHeight + (c.size() - 1) * kGapY;
        qreal y = kMargin + kLoopRoom + (height - columnHeight) / 2;
        for (const QString &s : c) {
            m_boxes.insert(s, QRectF(kMargin + i * (boxWidth + kGapX), y, boxWidth, kBoxHeight));
            y += kBoxHeight + kGapY;
        }
    }
    layoutEdges();

    // The diagram's extent: its boxes, arrows and labels (a label beside the last column's arrows
    // reaches past its boxes), moved to start at the margin.
    QRectF bounds = boxesExtent();
    for (const Edge &e : std::as_const(m_edges))
        bounds |= e.path.boundingRect() | e.labelRect;
    const QPointF shift = QPointF(kMargin, kMargin) - bounds.topLeft();
    for (QRectF &r : m_boxes)
        r.translate(shift);
    for (Edge &e : m_edges) {
        e.path.translate(shift);
        e.labelRect.translate(shift);
    }
    m_diagramSize = bounds.size() + QSizeF(2 * kMargin, 2 * kMargin);
}

QRectF StateDiagramWidget::boxesExtent() const
{
    QRectF extent;
    for (const QRectF &r : std::as_const(m_boxes))
        extent |= r;
    return extent;
}

void StateDiagramWidget::layoutEdges()
{
    // One arrow per (from, to) pair; its label joins the actions that take it.
    for (const Transition &t : m_machine->transitions()) {
        auto it = std::find_if(m_edges.begin(), m_edges.end(),
                               [&t](const Edge &e) { return e.from == t.from && e.to == t.to; });
        const QString label = wrapped(transitionLabel(t));
        if (it == m_edges.end())
            m_edges.append({t.from, t.to, {label}, {}, {}});
        else if (!it->labels.contains(label))
            it->labels.append(label);
    }

    // Measured in bold, as a highlighted label is drawn: the room is the same either way.
    const QFontMetricsF fm(labelFont(true));
    const QRectF boxes = boxesExtent();
    const qreal boxesBottom = boxes.bottom();
    const qreal rightmost = boxes.right();
    int curveIndex = 0;
    for (Edge &e : m_edges) {
        const QRectF a = m_boxes.value(e.from);
        const QRectF b = m_boxes.value(e.to);
        const bool reverseExists = std::any_of(m_edges.cbegin(), m_edges.cend(), [&e](const Edge &o) {
            return o.from == e.to && o.to == e.from;
        });
        // Jumps back over whole columns: bow under the diagram instead of crossing boxes.
        const bool curved = e.from != e.to && qAbs(a.center().x() - b.center().x()) > a.width() + 1.5 * kGapX;
        QPainterPath path;
        if (e.from == e.to) {
            const QPointF s(a.center().x() - a.width() / 5, a.top());
            const QPointF t(a.center().x() + a.width() / 5, a.top());
            path.moveTo(s);
            path.cubicTo(s + QPointF(-10, -kLoopRoom), t + QPointF(10, -kLoopRoom), t);
        } else if (curved) {
            const qreal y = boxesBottom + kCurveRoom * (1 + curveIndex++ * 0.6);
            const QPointF s(a.center().x(), a.bottom());
            const QPointF t(b.center().x(), b.bottom());
            path.moveTo(s);
            path.cubicTo(QPointF(s.x(), y), QPointF(t.x(), y), t);
        } else {
            QPointF s = borderPoint(a, b.center());
            QPointF t = borderPoint(b, a.center());
            if (reverseExists) {
                // Two opposite arrows side by side rather than on top of each other.
                const QLineF line(s, t);
                QLineF normal = line.normalVector();
                normal.setLength(5);
                const QPointF offset = normal.p2() - normal.p1();
                s += offset;
                t += offset;
            }
            path.moveTo(s);
            path.lineTo(t);
        }
        e.path = path;

        // Several actions on one arrow stack up rather than widen the label.
        const QStringList lines = e.labels;
        qreal labelWidth = 0;
        int lineCount = 0;
        for (const QString &label : lines) {
            for (const QString &line : label.split(QLatin1Char('\n'))) {
                labelWidth = qMax(labelWidth, fm.horizontalAdvance(line));
                ++lineCount;
            }
        }
        QRectF labelRect(QPointF(), QSizeF(labelWidth + 8, fm.height() * lineCount + 2));
        const bool straight = e.from != e.to && !curved;
        const bool diagonal = straight && qAbs(b.center().y() - a.center().y()) > 4
                              && qAbs(b.center().x() - a.center().x()) > 1;
        // Labels of diagonal arrows sit nearer their source, where fanning arrows are apart;
        // of a pair of opposite ones nearer still, so that the labels on the outer sides of
        // two neighbouring pairs do not meet between them.
        QPointF mid = path.pointAtPercent(diagonal ? (reverseExists ? 0.25 : 0.42) : 0.5);
        if (straight) {
            const bool vertical = qAbs(b.center().x() - a.center().x()) < 1;
            if (vertical) {
                // Beside the arrow: downwards on the right, upwards on the left, so a pair of
                // opposite arrows keeps its labels apart. A lone arrow of the last column has its
                // label on the right, clear of the arrows coming in from the left (Cancel across
                // "Delivered (in flight when cancelled)").
                const bool down = b.center().y() > a.center().y();
                const bool right = down || (!reverseExists && a.right() >= rightmost - 0.5);
                mid += QPointF(right ? labelRect.width() / 2 + 4 : -labelRect.width() / 2 - 4, 0);
            } else {
                // Outside a fan of diagonal arrows (below the ones going down, above the ones
                // going up); level arrows: above rightwards, below leftwards, so opposite
                // arrows keep their labels apart.
                const qreal dx = b.center().x() - a.center().x();
                const qreal dy = b.center().y() - a.center().y();
                const bool below = qAbs(dy) > 4 ? dy > 0 : dx < 0;
                // Move the label off its arrow along the arrow's normal, by as much as the
                // label reaches in that direction, so steep arrows keep their labels clear too.
                const qreal length = qSqrt(dx * dx + dy * dy);
                QPointF normal(-dy / length, dx / length);
                if (reverseExists) {
                    // Of two opposite arrows side by side, each label goes on its own arrow's
                    // outer side (the way the arrow was moved), never between the two.
                    normal = QPointF(dy / length, -dx / length);
                } else if ((normal.y() > 0) != below) {
                    normal = -normal;
                }
                const qreal reach = qAbs(normal.x()) * labelRect.width() / 2
                                    + qAbs(normal.y()) * labelRect.height() / 2 + 2;
                mid += normal * reach;
            }
        }
        labelRect.moveCenter(mid);
        e.labelRect = labelRect;
    }
}

QFont StateDiagramWidget::labelFont(bool bold) const
{
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    f.setBold(bold);
    return f;
}

void StateDiagramWidget::updateDescription()
{
    if (!m_machine) {
        setAccessibleDescription(QString());
        return;
    }
    QStringList allowed;
    for (const Transition &t : highlightedTransitions())
        allowed.append(tr("%1 (to %2)").arg(transitionLabel(t), t.to));
    setAccessibleDescription(
        allowed.isEmpty()
            ? tr("Current state %1; no transition allowed for the %2 role").arg(m_currentState, roleText(m_role))
            : tr("Current state %1; allowed for the %2 role: %3")
                  .arg(m_currentState, roleText(m_role), allowed.join(QStringLiteral(", "))));
}

QTransform StateDiagramWidget::diagramToWidget() const
{
    if (m_diagramSize.isEmpty())
        return {};
    const qreal scale = qMin<qreal>(1.0, qMin(width() / m_diagramSize.width(), height() / m_diagramSize.height()));
    // Centred across, from the top down: a tall tab leaves its room below the diagram.
    QTransform t;
    t.translate((width() - m_diagramSize.width() * scale) / 2, 0);
    t.scale(scale, scale);
    return t;
}

QSize StateDiagramWidget::sizeHint() const
{
    if (m_diagramSize.isEmpty())
        return {320, 120};
    return m_diagramSize.toSize() + QSize(1, 1);
}

QSize StateDiagramWidget::minimumSizeHint() const
{
    const QSize hint = sizeHint();
    return {qMin(hint.width(), 200), qMin(hint.height(), 100)};
}

void StateDiagramWidget::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        relayout();
        updateGeometry();
    }
    QWidget::changeEvent(event);
}

void StateDiagramWidget::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    if (!m_machine || m_boxes.isEmpty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("This kind has no state machine"));
        return;
    }

    p.setTransform(diagramToWidget(), true);

    const QPalette pal = palette();
    QColor dim = pal.color(QPalette::Text);
    dim.setAlphaF(0.28);
    // Dimmed, and still above 4.5:1 on the base (half the text's ink was 3.9:1).
    QColor dimText = pal.color(QPalette::Text);
    dimText.setAlphaF(0.62);
    const QColor accent = pal.color(QPalette::Highlight);

    const QList<Transition> highlighted = highlightedTransitions();
    auto isHighlighted = [&highlighted](const QString &from, const QString &to) {
        for (const Transition &t : highlighted) {
            if (t.from == from && t.to == to)
                return true;
        }
        return false;
    };

    // Dimmed arrows first so highlighted ones are drawn on top; the labels after every arrow, so
    // that an arrow crossing another's label (Cancel across "Delivered (in flight when
    // cancelled)") does not strike it through.
    for (int pass = 0; pass < 2; ++pass) {
        for (const Edge &e : std::as_const(m_edges)) {
            const bool hot = isHighlighted(e.from, e.to);
            if (hot != (pass == 1))
                continue;
            const QColor color = hot ? accent : dim;
            p.setPen(QPen(color, hot ? 2.2 : 1.2));
            p.setBrush(Qt::NoBrush);
            p.drawPath(e.path);
            drawArrowHead(p, e.path.pointAtPercent(1.0), e.path.angleAtPercent(0.98), color);
        }
    }
    const QColor labelBg = pal.color(QPalette::Base);
    const QFont plainLabel = labelFont(false);
    const QFont boldLabel = labelFont(true);
    for (const Edge &e : std::as_const(m_edges)) {
        const bool hot = isHighlighted(e.from, e.to);
        p.setPen(Qt::NoPen);
        p.setBrush(labelBg);
        p.drawRoundedRect(e.labelRect, 3, 3);
        p.setFont(hot ? boldLabel : plainLabel);
        p.setPen(hot ? accent : dimText);
        p.drawText(e.labelRect, Qt::AlignCenter, e.labels.join(QLatin1Char('\n')));
    }

    QFont boxFont = font();
    boxFont.setBold(true);
    p.setFont(boxFont);
    QStringList reachable;
    for (const Transition &t : highlighted)
        reachable.append(t.to);
    for (auto it = m_boxes.cbegin(); it != m_boxes.cend(); ++it) {
        const bool current = it.key() == m_currentState;
        const bool target = reachable.contains(it.key());
        QColor fill = current ? accent : pal.color(QPalette::Base);
        QColor border = current ? accent : (target ? accent : dim);
        QColor text = current ? pal.color(QPalette::HighlightedText) : (target ? pal.color(QPalette::Text) : dimText);
        p.setPen(QPen(border, current || target ? 2 : 1.2, target && !current ? Qt::DashLine : Qt::SolidLine));
        p.setBrush(fill);
        p.drawRoundedRect(it.value(), 8, 8);
        p.setPen(text);
        p.drawText(it.value(), Qt::AlignCenter, stateLabel(it.key()));
    }
}

} // namespace OpsDeck
