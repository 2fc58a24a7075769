// The delivery benchmark's idle part: what an outbox holding a backlog costs while nothing is due.
#pragma once

#include <QString>

namespace OpsDeck::Bench {

struct IdleUpkeep
{
    double startMs = 0;     // this process's CPU in the server's first seconds (its first poll)
    double perSecondMs = 0; // and per second after that, while the backlog waits
    double backendStartMs = -1;     // PostgreSQL only: the same for the database backends serving it
    double backendPerSecondMs = -1;
};

// Seeds `count` undelivered notifications due in a month (a dead endpoint's backlog) on the
// database at `url`, starts the control plane on it and reads this process's CPU time over its
// first `settleSeconds`, then over `seconds` more (on PostgreSQL also its backends' CPU time).
IdleUpkeep idleUpkeep(const QString &url, int count, int settleSeconds, int seconds);

} // namespace OpsDeck::Bench
