// Turns SIGTERM and SIGINT into a Qt signal, so the demo provider can flush its log and exit cleanly.
#pragma once

#include <QObject>

class QSocketNotifier;

namespace OpsDeck::DemoProvider {

// The self-pipe pattern from Qt's "Calling Qt Functions From Unix Signal Handlers": the
// handler only writes a byte; the event loop reads it and emits. One instance per process.
class SignalWatcher final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SignalWatcher)

public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

    bool isActive() const { return m_notifier != nullptr; }

signals:
    void terminationRequested(int signalNumber);

private:
    static void handle(int signalNumber);
    void onReadable();

    QSocketNotifier *m_notifier = nullptr; // child
};

} // namespace OpsDeck::DemoProvider
