// The demo provider's JSON-lines log: buffered in memory and written out periodically.
#include "requestlog.h"

namespace OpsDeck::DemoProvider {

RequestLog::RequestLog(QObject *parent)
    : QObject(parent)
{
    connect(&m_timer, &QTimer::timeout, this, &RequestLog::flush);
}

RequestLog::~RequestLog()
{
    flush();
}

QString RequestLog::open(const QString &path, int flushIntervalMs)
{
    m_file.setFileName(path);
    if (!m_file.open(QIODevice::WriteOnly | QIODevice::Append))
        return QStringLiteral("cannot open %1: %2").arg(path, m_file.errorString());
    m_timer.start(flushIntervalMs);
    return {};
}

void RequestLog::append(const QByteArray &line)
{
    if (!m_file.isOpen())
        return;
    m_buffer.append(line).append('\n');
    if (m_buffer.size() >= MaxBufferedBytes)
        flush();
}

void RequestLog::flush()
{
    if (!m_file.isOpen() || m_buffer.isEmpty())
        return;
    m_file.write(m_buffer);
    m_file.flush();
    m_buffer.clear();
}

} // namespace OpsDeck::DemoProvider
