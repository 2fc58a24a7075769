// Stands in for a view whose kind this server does not offer yet, so it is never an empty table.
#pragma once

#include <QWidget>

class QLabel;

namespace OpsDeck {

class UnavailablePage final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UnavailablePage)

public:
    UnavailablePage(const QString &viewName, const QString &title, QWidget *parent = nullptr);

    void setReason(const QString &reason);
    QString text() const;

protected:
    void changeEvent(QEvent *event) override;

private:
    void updateMeasure();

    QLabel *m_title = nullptr;
    QLabel *m_reason = nullptr;
};

} // namespace OpsDeck
