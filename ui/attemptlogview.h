// A delivery's attempts: one row each (when, status, latency, error class) and the chosen
// attempt's request and response side by side.
#pragma once

#include <QJsonArray>
#include <QWidget>

class QLabel;
class QSplitter;
class QPlainTextEdit;
class QTreeWidget;

namespace OpsDeck {

class AttemptLogView final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AttemptLogView)

public:
    explicit AttemptLogView(QWidget *parent = nullptr);

    // The "attempt_log" of GET /deliveries/{id}; the newest attempt is shown in full.
    void setAttempts(const QJsonArray &attempts);
    // A line above the list (loading, a failure to load, why there is nothing yet).
    void setMessage(const QString &message);
    void clear();

    int attemptCount() const;
    QString message() const;
    QString requestText() const;
    QString responseText() const;

    // Request and response side by side when the view is wide, one above the other when not:
    // side by side in a pane a third of the window wide, a header line broke mid-word.
    Qt::Orientation sidesOrientation() const;

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void showAttempt(int row);

    QJsonArray m_attempts;
    QLabel *m_message = nullptr;
    QTreeWidget *m_list = nullptr;
    QSplitter *m_sides = nullptr;
    QPlainTextEdit *m_request = nullptr;
    QPlainTextEdit *m_response = nullptr;
};

} // namespace OpsDeck
