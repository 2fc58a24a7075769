// opsdeck-server as a real child process, for restart, kill and command-line tests.
#include "serverprocess.h"

#include <QDeadlineTimer>
#include <QRegularExpression>

#include <csignal>

namespace OpsDeck::Test {

ServerProcess::~ServerProcess()
{
    if (m_process.state() != QProcess::NotRunning)
        kill();
}

QString ServerProcess::binary()
{
    return QStringLiteral(OPSDECK_BINARY_DIR "/server/opsdeck-server");
}

CommandResult ServerProcess::run(const QStringList &args, int timeoutMs)
{
    QProcess p;
    p.start(binary(), args);
    CommandResult r;
    if (!p.waitForStarted(10000)) {
        r.err = p.errorString().toUtf8();
        return r;
    }
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished(5000);
        r.err = "timed out";
        return r;
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

bool ServerProcess::start(const QString &databaseUrl, const QStringList &extraArgs, int timeoutMs)
{
    QStringList args{QStringLiteral("serve")};
    if (!databaseUrl.isEmpty())
        args += {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"), QStringLiteral("--database"), databaseUrl};
    args += extraArgs;
    m_url.clear();
    m_stderr.clear();
    m_process.start(binary(), args);
    if (!m_process.waitForStarted(10000)) {
        m_error = m_process.errorString();
        return false;
    }
    static const QRegularExpression line(QStringLiteral("listening on (https?://[^\\s]+)"));
    QByteArray out;
    QDeadlineTimer deadline(timeoutMs);
    while (!deadline.hasExpired()) {
        if (m_process.canReadLine() || m_process.waitForReadyRead(int(qMax<qint64>(1, deadline.remainingTime())))) {
            out += m_process.readAllStandardOutput();
            const auto match = line.match(QString::fromUtf8(out));
            if (match.hasMatch()) {
                m_url = QUrl(match.captured(1));
                return true;
            }
        }
        if (m_process.state() == QProcess::NotRunning)
            break;
    }
    m_stderr += m_process.readAllStandardError();
    m_error = QStringLiteral("no 'listening on' line; stdout: %1; stderr: %2")
                  .arg(QString::fromUtf8(out), QString::fromUtf8(m_stderr));
    kill();
    return false;
}

void ServerProcess::kill()
{
    if (m_process.state() == QProcess::NotRunning)
        return;
    m_process.kill();
    m_process.waitForFinished(10000);
    m_stderr += m_process.readAllStandardError();
}

int ServerProcess::terminate(int timeoutMs)
{
    if (m_process.state() == QProcess::NotRunning)
        return m_process.exitCode();
    ::kill(pid_t(m_process.processId()), SIGTERM);
    if (!m_process.waitForFinished(timeoutMs)) {
        kill();
        return -1;
    }
    m_stderr += m_process.readAllStandardError();
    return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
}

QByteArray ServerProcess::stderrText()
{
    m_stderr += m_process.readAllStandardError();
    return m_stderr;
}

} // namespace OpsDeck::Test
