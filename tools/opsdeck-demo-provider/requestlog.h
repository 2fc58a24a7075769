// The demo provider's JSON-lines log: buffered in memory and written out periodically.
#pragma once

#include <QFile>
#include <QObject>
#include <QTimer>

namespace OpsDeck::DemoProvider {

// The provider is used in throughput benchmarks, so a request never waits for the disk: lines
// are buffered and written every flush interval, when the buffer grows large, on flush() (the
// SIGTERM/SIGINT path) and on destruction. Nothing is fsync'ed; a kill -9 loses at most one
// interval, which is acceptable for a test receiver.
class RequestLog final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(RequestLog)

public:
    static constexpr qsizetype MaxBufferedBytes = 1024 * 1024;

    explicit RequestLog(QObject *parent = nullptr);
    ~RequestLog() override;

    // Opens (appending) the file; returns an error message or an empty string.
    QString open(const QString &path, int flushIntervalMs);
    bool isOpen() const { return m_file.isOpen(); }

    void append(const QByteArray &line);
    void flush();

private:
    QFile m_file;
    QTimer m_timer;
    QByteArray m_buffer;
};

} // namespace OpsDeck::DemoProvider
