// Saves a PNG of each view once the window shows data, then quits (opsdeck --screenshot DIR):
// how the documentation's screenshots are made.
#pragma once

#include <QObject>
#include <QStringList>

class QTimer;

namespace OpsDeck {

class MainWindow;

class Screenshotter final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Screenshotter)

public:
    // window: not owned, outlives this object.
    Screenshotter(MainWindow *window, const QString &directory, QObject *parent = nullptr);

    void start();

private:
    void waitForData();
    void nextStep();
    void save(QWidget *widget, const QString &name);
    // Shows the detail pane's tab that holds the widget named content and saves target.
    void showTab(const QString &content, QWidget *target, const QString &name);

    MainWindow *m_window = nullptr; // not owned
    QString m_directory;
    QTimer *m_timer = nullptr;
    int m_waited = 0;
    int m_step = 0;
};

} // namespace OpsDeck
