// Saves a PNG of each view once the window shows data, then quits (opsdeck --screenshot DIR):
// how the documentation's screenshots are made.
#pragma once

#include <QObject>
#include <QPalette>
#include <QStringList>

#include <functional>

class QTimer;

namespace OpsDeck {

class EmbeddedServer;
class MainWindow;

class Screenshotter final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(Screenshotter)

public:
    // window: not owned, outlives this object. server: the embedded server the window is
    // connected to (not owned; stopped for the offline shot): the walk acts on what it shows, so
    // it never runs against a real server.
    Screenshotter(MainWindow *window, const QString &directory, EmbeddedServer *server, QObject *parent = nullptr);

    void start();

private:
    void waitForData();
    void nextStep();
    void save(QWidget *widget, const QString &name);
    // Shows the detail pane's tab that holds the widget named content and saves target.
    void showTab(const QString &content, QWidget *target, const QString &name);

    // The bulk retry: two pending callbacks of the provider with the most cancelled from the
    // detail pane, then the dialog opened on a third, every state checked, the provider's scope.
    void watch();
    void cancelPending();
    void cancelTwo(const QList<qint64> &pending);
    void cancelAgain();
    void openBulkRetry(qint64 deliveryId);
    qint64 busiestProvider() const;
    // The provider's pending callbacks, the ones least likely to be delivered soon first.
    QList<qint64> pendingOf(qint64 provider) const;
    // The provider's (any provider's for 0) active endpoint failing most (failing: 0 when none
    // fails) or least, the first of those.
    qint64 activeEndpoint(qint64 provider, bool failing) const;
    // Send test event on an active endpoint, until its delivery is selected and delivered.
    void sendTestEvent();
    void darkPalette();
    void saveDark();
    // The server goes away: the window on its cache, counting down to the next try.
    void goOffline();
    // Selects the row of this id in the view and triggers the detail pane's action on it the way
    // the operator would, giving reason when the console asks why; false when that is not offered.
    bool runPaneAction(const QString &view, qint64 id, const QString &action, const QString &reason);

    // Goes on with then once ready() holds: looked at again whenever the deliveries or endpoints
    // change, the current object changes or the bulk retry counts (check()). After a timeout that
    // is said on stderr and the steps go on with skip.
    void await(const QString &what, std::function<bool()> ready, std::function<void()> then,
               std::function<void()> skip, int timeoutMs);
    void check();
    void giveUp();
    // On stderr; fail() also makes the run end with 1: a shot is missing.
    void say(const QString &message);
    void fail(const QString &message);

    MainWindow *m_window = nullptr; // not owned
    EmbeddedServer *m_server = nullptr; // not owned
    QString m_directory;
    QString m_lightStyle; // what the dark shot replaces, put back after it
    QPalette m_lightPalette;
    QTimer *m_timer = nullptr;
    QTimer *m_deadline = nullptr; // of await()
    QString m_awaited;
    std::function<bool()> m_ready;
    std::function<void()> m_then;
    std::function<void()> m_skip;
    int m_waited = 0;
    int m_step = 0;
    int m_cancelRounds = 0;
    bool m_settling = false; // check() found what it waits for: the shot follows kSettleMs later
    bool m_failed = false;
};

} // namespace OpsDeck
