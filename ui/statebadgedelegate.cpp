// Paints a state cell as a coloured rounded badge.
#include "statebadgedelegate.h"

#include "tonepalette.h"

#include "models/resourcemodel.h"

#include <QApplication>
#include <QPainter>

#include <algorithm>

namespace OpsDeck {

namespace {

constexpr int kPadX = 8;
constexpr int kPadY = 2;
constexpr int kNoteGap = 6; // between the badge and its note

QString noteOf(const QModelIndex &index)
{
    return index.data(ResourceModel::StateNoteRole).toString();
}

QFont badgeFont(const QFont &base)
{
    QFont f = base;
    f.setBold(true);
    f.setPointSizeF(base.pointSizeF() * 0.85);
    return f;
}

} // namespace

StateBadgeDelegate::StateBadgeDelegate(QObject *parent)
    : QStyledItemDelegate(parent)
{
}

QSize StateBadgeDelegate::badgeSize(const QString &state, const QFont &font)
{
    const QFontMetrics fm(badgeFont(font));
    return {fm.horizontalAdvance(state) + 2 * kPadX, fm.height() + 2 * kPadY};
}

QRect StateBadgeDelegate::paintBadge(QPainter *painter, const QRect &rect, const QString &state,
                                     const QPalette &palette, const QFont &font, Qt::Alignment alignment)
{
    if (state.isEmpty())
        return {};
    const StateTone tone = stateTone(state);
    const ToneColors colors = toneColors(tone, palette);
    const QFont f = badgeFont(font);
    QSize size = badgeSize(state, font).boundedTo(rect.size());
    QRect badge(QPoint(), size);
    if (alignment & Qt::AlignHCenter)
        badge.moveCenter(rect.center());
    else
        badge.moveTopLeft(QPoint(rect.left() + 4, rect.top()));
    badge.moveTop(rect.top() + (rect.height() - size.height()) / 2);

    painter->save();
    painter->setRenderHint(QPainter::Antialiasing);
    painter->setPen(QPen(colors.border, 1));
    painter->setBrush(colors.background);
    const qreal radius = badge.height() / 2.0;
    painter->drawRoundedRect(QRectF(badge).adjusted(0.5, 0.5, -0.5, -0.5), radius, radius);
    painter->setFont(f);
    painter->setPen(colors.foreground);
    painter->drawText(badge, Qt::AlignCenter, state);
    painter->restore();
    return badge;
}

void StateBadgeDelegate::paint(QPainter *painter, const QStyleOptionViewItem &option,
                               const QModelIndex &index) const
{
    QStyleOptionViewItem opt = option;
    initStyleOption(&opt, index);
    const QString state = opt.text;
    // The style draws selection and focus; the badge replaces the text.
    opt.text.clear();
    const QWidget *widget = option.widget;
    QStyle *style = widget ? widget->style() : QApplication::style();
    style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, widget);
    const QRect rect = option.rect.adjusted(0, 1, 0, -1);
    const QRect badge = paintBadge(painter, rect, state, option.palette, option.font);
    const QString note = noteOf(index);
    if (note.isEmpty() || badge.isNull())
        return;
    // Beside the badge, in the muted colour of secondary text (the selection's own when selected).
    QRect text = rect;
    text.setLeft(badge.right() + 1 + kNoteGap);
    painter->save();
    const bool selected = option.state & QStyle::State_Selected;
    painter->setPen(option.palette.color(selected ? QPalette::HighlightedText : QPalette::PlaceholderText));
    painter->setFont(option.font);
    painter->drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                      option.fontMetrics.elidedText(note, Qt::ElideRight, std::max(0, text.width())));
    painter->restore();
}

QSize StateBadgeDelegate::sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QSize base = QStyledItemDelegate::sizeHint(option, index);
    QSize badge = badgeSize(index.data().toString(), option.font) + QSize(8, 4);
    if (const QString note = noteOf(index); !note.isEmpty())
        badge.rwidth() += kNoteGap + option.fontMetrics.horizontalAdvance(note);
    return base.expandedTo(badge);
}

} // namespace OpsDeck
