// opsdeck-server as a real child process, for restart, kill and command-line tests.
#pragma once

#include <QProcess>
#include <QStringList>
#include <QUrl>

namespace OpsDeck::Test {

struct CommandResult
{
    int exitCode = -1;
    QByteArray out;
    QByteArray err;
};

class ServerProcess final
{
public:
    ServerProcess() = default;
    ~ServerProcess(); // kills the child if still running
    ServerProcess(const ServerProcess &) = delete;
    ServerProcess &operator=(const ServerProcess &) = delete;

    static QString binary(); // OPSDECK_BINARY_DIR "/server/opsdeck-server"
    // Runs `opsdeck-server <args>` to completion (for migrate, token, seed).
    static CommandResult run(const QStringList &args, int timeoutMs = 60000);

    // `opsdeck-server serve --listen 127.0.0.1:0 --database <url> <extra>` (an empty url: only
    // `serve <extra>`); waits for the "listening on" line. False (see error()) when it exits or
    // does not report within timeoutMs.
    bool start(const QString &databaseUrl, const QStringList &extraArgs = {}, int timeoutMs = 20000);
    QUrl baseUrl() const { return m_url; }
    QString error() const { return m_error; }
    qint64 pid() const { return m_process.processId(); }
    bool isRunning() const { return m_process.state() == QProcess::Running; }

    void kill();              // SIGKILL, waits for the exit
    int terminate(int timeoutMs = 10000); // SIGTERM, waits; the exit code (-1 if it crashed)
    QByteArray stderrText();

private:
    QProcess m_process;
    QUrl m_url;
    QString m_error;
    QByteArray m_stderr;
};

} // namespace OpsDeck::Test
