// Helpers shared by the test binaries.
#include "testsupport.h"

#include "server/delivery/epolleventdispatcher.h"

#include <QTemporaryDir>

namespace OpsDeck::Test {

QString scratchDir()
{
    static QTemporaryDir dir;
    return dir.path();
}

void useRequestedEventDispatcher()
{
    const QByteArray wanted = qgetenv("OPSDECK_TEST_EVENT_DISPATCHER");
    if (wanted.isEmpty())
        return;
    if (wanted != "epoll")
        qFatal("OPSDECK_TEST_EVENT_DISPATCHER=%s: only epoll is known", wanted.constData());
    if (!EpollEventDispatcher::install())
        qFatal("OPSDECK_TEST_EVENT_DISPATCHER=epoll: the kernel refused an epoll or an eventfd");
}

} // namespace OpsDeck::Test
