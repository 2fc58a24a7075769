// Everything that configures one control plane: where it listens, its storage and its limits.
#pragma once

#include <QString>

#include <chrono>

namespace OpsDeck {

struct ServerOptions
{
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 0;                  // 0 = ephemeral; ControlPlane::port() tells the real one
    QString databaseUrl;               // empty = Database::defaultUrl()
    bool allowPrivateCallbacks = false; // callback URLs on loopback/private networks (tests, demo)
    QString tlsCert;                   // PEM files; both set = HTTPS
    QString tlsKey;
    int feedRetention = 100000;        // change-feed events kept; older cursors get 410
    std::chrono::seconds instanceRetention{std::chrono::hours(24 * 7)}; // STOPPED -> DESTROYED
    int maxBodyBytes = 1024 * 1024;    // larger bodies get 413
    int maxWaitSeconds = 60;           // long-poll ceiling
    // A connection waits this long after its last answer (or its start) for a whole request:
    // then it is closed, with 408 if part of one arrived. A long poll's wait is not counted.
    std::chrono::milliseconds idleTimeout{std::chrono::seconds(75)};
    // Callback delivery (spec §3); tests shorten the times.
    bool deliveryWorker = true;        // false: deliveries are queued but never sent
    QString retrySchedule;             // "5s,5m,30m" (RetrySchedule::parseDelays); empty = the default
    std::chrono::milliseconds deliveryTimeout{15000};
    int deliveryConcurrency = 256;     // attempts in flight per process to endpoints that answer well; twice as many may probe the others
    int endpointConcurrency = 16;      // attempts (and connections) in flight per endpoint once it answers well; 1 while it is not
    // An endpoint that answered well but then answers nothing while attempts are out (a provider
    // host that stops answering) gets one attempt at a time again, like a failing one, without
    // waiting for deliveryTimeout: its attempts no longer hold the others' slots. Silent for
    // eight times its slowest recent answer, at least 250 ms, at most this (never under twice
    // that answer); the other endpoints of its host start over then too.
    std::chrono::milliseconds endpointStallAfter{5000};
    std::chrono::milliseconds autoPauseWindow{std::chrono::hours(24 * 5)}; // failing this long -> PAUSED
    std::chrono::milliseconds secretGracePeriod{std::chrono::hours(24)};   // old secret still signs
    std::chrono::milliseconds outboxPollInterval{1000}; // due retries, expired leases, retention
    // The pass over every undelivered notification for stale ones (the paths that queue a newer
    // one supersede the older ones themselves): at start, then this often.
    std::chrono::milliseconds outboxSupersedeInterval{std::chrono::minutes(1)};
    // Finished attempts are recorded in one transaction at most this often (the first after a
    // quiet spell at once): under load a commit then carries dozens of attempts, not a handful.
    std::chrono::milliseconds outboxRecordPacing{4};
    // The delivery worker forgets an endpoint it has sent nothing to for this long (checked at
    // most every minute): its state is not kept for every endpoint it ever sent to, and one that
    // comes back is proven anew.
    std::chrono::milliseconds outboxForgetIdleAfter{std::chrono::minutes(10)};
    // The sending thread waits on epoll (EpollEventDispatcher), not on Qt's poll()-based loop,
    // whose every turn costs as much as the connections open. False only to measure the difference.
    bool epollSending = true;
};

} // namespace OpsDeck
