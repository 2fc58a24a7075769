// A standalone state badge.
#include "statebadgelabel.h"

#include "statebadgedelegate.h"

#include "core/resourcekind.h"

#include <QPainter>

namespace OpsDeck {

StateBadgeLabel::StateBadgeLabel(QWidget *parent)
    : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Fixed, QSizePolicy::Fixed);
}

void StateBadgeLabel::setState(const QString &state)
{
    if (m_state == state)
        return;
    m_state = state;
    updateAccessibleName();
    updateGeometry();
    update();
}

void StateBadgeLabel::setTitle(const QString &title)
{
    m_title = title;
    updateAccessibleName();
}

void StateBadgeLabel::updateAccessibleName()
{
    setAccessibleName(tr("%1: %2").arg(m_title.isEmpty() ? tr("State") : m_title, stateName(m_state)));
}

QSize StateBadgeLabel::sizeHint() const
{
    return StateBadgeDelegate::badgeSize(m_state.isEmpty() ? QStringLiteral("X") : m_state, font())
           + QSize(8, 4);
}

void StateBadgeLabel::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    StateBadgeDelegate::paintBadge(&p, rect(), m_state, palette(), font());
}

} // namespace OpsDeck
