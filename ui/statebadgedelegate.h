// Paints a state cell as a coloured rounded badge whose colour follows the state's tone.
#pragma once

#include <QStyledItemDelegate>

#include <functional>

namespace OpsDeck {

class StateBadgeDelegate final : public QStyledItemDelegate
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StateBadgeDelegate)

public:
    // What a row's state alone does not say (a PENDING callback its endpoint holds): a word drawn
    // beside the badge, and the sentence its tooltip gives. Empty: nothing to add.
    struct Note
    {
        QString text;
        QString toolTip;
    };
    using NoteLookup = std::function<Note(const QModelIndex &index)>;

    explicit StateBadgeDelegate(QObject *parent = nullptr);

    void setNoteLookup(NoteLookup lookup) { m_note = std::move(lookup); }
    Note noteFor(const QModelIndex &index) const { return m_note ? m_note(index) : Note(); }

    void paint(QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override;
    bool helpEvent(QHelpEvent *event, QAbstractItemView *view, const QStyleOptionViewItem &option,
                   const QModelIndex &index) override;

    // Draws one badge and answers where (null for no state); the dashboard and the detail pane
    // use it too.
    static QRect paintBadge(QPainter *painter, const QRect &rect, const QString &state, const QPalette &palette,
                           const QFont &font, Qt::Alignment alignment = Qt::AlignLeft | Qt::AlignVCenter);
    static QSize badgeSize(const QString &state, const QFont &font);

private:
    NoteLookup m_note;
};

} // namespace OpsDeck
