// Helpers shared by the test binaries.
#pragma once

#include <QString>

namespace OpsDeck::Test {

// A fresh, empty directory for one test, removed when the process ends.
QString scratchDir();

// From a test class's static initMain(), before the application exists: with
// OPSDECK_TEST_EVENT_DISPATCHER=epoll the main thread runs on EpollEventDispatcher, the sending
// thread's, so the callback sender's tests run on both event loops (tests/server/extra.cmake).
void useRequestedEventDispatcher();

} // namespace OpsDeck::Test
