// A standalone state badge, for headers and forms outside item views.
#pragma once

#include <QWidget>

namespace OpsDeck {

class StateBadgeLabel final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(StateBadgeLabel)

public:
    explicit StateBadgeLabel(QWidget *parent = nullptr);

    void setState(const QString &state);
    const QString &state() const { return m_state; }
    // What the state is of, read aloud before it ("Status: running"); "State" unless set.
    void setTitle(const QString &title);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override { return sizeHint(); }

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void updateAccessibleName();

    QString m_state;
    QString m_title;
};

} // namespace OpsDeck
