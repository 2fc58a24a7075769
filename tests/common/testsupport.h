// Helpers shared by the test binaries.
#pragma once

#include <QString>
#include <QTcpSocket>

namespace OpsDeck::Test {

// A fresh, empty directory for one test, removed when the process ends.
QString scratchDir();

// From a test class's static initMain(), before the application exists: with
// OPSDECK_TEST_EVENT_DISPATCHER=epoll the main thread runs on EpollEventDispatcher, the sending
// thread's, so the callback sender's tests run on both event loops (tests/server/extra.cmake).
void useRequestedEventDispatcher();

// A loopback port that refuses connections, and that nobody else can listen on while this lives:
// bound, never listening. A port found free by listening and closing again is the next one the
// system hands out, and another test's provider listening there would get this test's requests.
class RefusingPort
{
public:
    RefusingPort() { m_socket.bind(QHostAddress::LocalHost, 0, QAbstractSocket::DontShareAddress); }
    quint16 port() const { return m_socket.localPort(); }
    // http://127.0.0.1:<port><path>
    QString url(const QString &path = {}) const { return QStringLiteral("http://127.0.0.1:%1%2").arg(port()).arg(path); }

private:
    QTcpSocket m_socket;
};

} // namespace OpsDeck::Test
