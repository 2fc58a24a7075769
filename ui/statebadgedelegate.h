// Paints a state cell as a coloured rounded badge whose colour follows the state's tone, with the
// model's note beside it (ResourceModel::StateNoteRole) when the state alone does not say enough.
#pragma once

#include <QStyledItemDelegate>

namespace OpsDeck {

class StateBadgeDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StateBadgeDelegate)

public:
    explicit StateBadgeDelegate(QObject *parent = nullptr);

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;

    // Draws one badge and answers where (null for no state); the dashboard and the detail pane
    // use it too.
    static QRect paintBadge(QPainter *painter, const QRect &rect, const QString &state, const QPalette &palette,
                           const QFont &font, Qt::Alignment alignment = Qt::AlignLeft | Qt::AlignVCenter);
    static QSize badgeSize(const QString &state, const QFont &font);
};

} // namespace OpsDeck
