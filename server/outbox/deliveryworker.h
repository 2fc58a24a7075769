// The delivery worker: claims due callbacks, sends them with bounded concurrency and records the outcome.
#pragma once

#include "deliveryrepository.h"
#include "outboxstore.h"

#include "core/problem.h"
#include "core/retryschedule.h"
#include "server/delivery/attemptresult.h"
#include "server/serveroptions.h"

#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QObject>
#include <QTimer>
#include <QUrl>

#include <set>

namespace OpsDeck {

class CallbackSender;

// Lives in its own thread, so a slow provider never holds up an HTTP answer. Every statement
// (claims, recording, the poll's supersede and destruction sweep) runs in a second thread
// (OutboxStore) with its own connection, so this thread only sends and never waits for a commit
// or the SQLite write lock.
//
// Concurrency is bounded per process (deliveryConcurrency) and per endpoint
// (endpointConcurrency, but 1 while the endpoint is failing), so hanging endpoints occupy one
// slot each and the others keep their throughput. An endpoint that answered well and then stops
// answering is treated as failing once it has been silent for a while (checkStalls()), not only
// when its attempts time out. Work is claimed with a lease that outlives the attempt's timeout;
// a crashed worker's leases expire and another worker (or this one after a restart) takes the
// work over: delivery is at least once.
class DeliveryWorker final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeliveryWorker)

public:
    explicit DeliveryWorker(ServerOptions options, QObject *parent = nullptr);
    ~DeliveryWorker() override;

    // Called in the worker thread: opens the connection and starts polling.
    void start();
    // A new outbox row may have been committed: claim at once.
    void wake();
    // Stops claiming; attempts in flight are abandoned (their leases expire).
    void shutdown();

    const QString &leaseOwner() const { return m_owner; }

    // In flight plus claimed-and-waiting a proven endpoint with `limit` slots may have before it
    // stops asking for work: its slots, and waiting beside them what it answers (one every
    // `answerGapUs`; 0 when not known yet) in ClaimHorizonRounds of the store's recent answer
    // times to a claim (`claimRoundTripUs`), at least ClaimHorizonFloorUs of its answers, between
    // `limit` and MaxClaimAheadFactor times it; so 2 to 9 times `limit`. Beyond twice `limit`, no
    // more than `budgetShare`: its part of the budget the endpoints holding work here share
    // (waiting attempts count against it too).
    static int claimAheadFor(int limit, qint64 answerGapUs, qint64 claimRoundTripUs, qsizetype budgetShare);
    static constexpr qint64 ClaimHorizonRounds = 4;
    static constexpr qint64 ClaimHorizonFloorUs = 2000;
    static constexpr int MaxClaimAheadFactor = 8;
    // A claim answered later than this counts as this much in the store's answer time: one that
    // waited out a busy database would hold every fast endpoint at the ceiling for a minute.
    static constexpr qint64 ClaimRoundTripCapUs = 50000;

Q_SIGNALS:
    // Feed events were committed by this worker.
    void committed();
    // A storage or configuration failure the worker could not handle itself.
    void failed(const QString &detail);
    // After failed(): a whole poll cycle (supersede, destruction sweep, claim) went through again.
    void recovered();
    // At every poll, for /metrics: attempts in flight and claimed attempts waiting for a slot,
    // each in all and of them for endpoints that answer well; the endpoints this worker keeps
    // state for, and of them those that answer well.
    void load(int inFlight, int inFlightAnswering, int waiting, int waitingAnswering, int endpoints,
              int endpointsAnswering);

private:
    void pump();
    void schedulePump();
    void poll();
    void onClaimed(const QList<DeliveryTarget> &targets, bool full, const QDateTime &leaseUntil, const Problem &problem);
    void send(const DeliveryTarget &target);
    struct Claimed;
    // Sends from an endpoint's queue while it has free slots; what could no longer finish inside
    // its lease goes to `expired`, to be released.
    void sendQueued(QList<Claimed> &queue, qint64 endpointId, const QDateTime &now, QList<qint64> *expired);
    void finish(const DeliveryTarget &target, const AttemptResult &result);
    // Hands every attempt that finished since the last hand-over to the store, which records it.
    void flushDone();
    // flushDone() once the store has answered the last hand-over and outboxRecordPacing has
    // passed since it (at once after a quiet spell).
    void scheduleFlush();
    void onRecorded(const QList<AttemptRecord> &records, const Problem &problem);
    // Times the retries of `records` fall due, and the timer for the earliest one still ahead.
    void armRetryTimer(const QList<AttemptRecord> &records = {});
    void stopStore();
    // Gives back, unlogged, the deliveries in `unsent` (attempts the sender never wrote) and
    // every other one claimed here and not sent: queued, or in a claim still on its way.
    void releaseUnsent(QList<qint64> unsent);
    int endpointLimit(qint64 endpointId) const;
    // In flight plus claimed-and-waiting an endpoint may have before claims pass it over.
    int claimAhead(qint64 endpointId) const;
    bool wantsWork(qint64 endpointId) const;
    // Takes what was claimed for the endpoint and waits for one of its slots: their ids.
    QList<qint64> takeQueued(qint64 endpointId);
    // The endpoints with attempts in flight or waiting here, and those sent one attempt at a time
    // whose last one is not recorded yet.
    QList<qint64> heldEndpoints() const;
    // Every one of them, for a claim that leaves them out.
    EndpointFilter holdersLeftOut() const;
    void postClaim(const QDateTime &now, int batch, const EndpointFilter &endpoints, OutboxStore::ClaimMode mode);
    // An endpoint that answered well is stalled once silent for this many times its slowest recent
    // answer, and never sooner than StallFloorMs (a provider's short pause is no stall).
    static constexpr qint64 StallFactor = 8;
    static constexpr qint64 StallFloorMs = 250;
    // Endpoints that answered well but then nothing for a while with attempts out get one attempt
    // at a time, and so do the other endpoints of their hosts; what was claimed for a silent
    // endpoint and waits goes back.
    void checkStalls(); // deliveryworkerstalls.cpp, with stallAfterMs() and forgetIdleEndpoints()
    // How long an endpoint that answered well may be silent with attempts out.
    qint64 stallAfterMs(qint64 endpointId) const;
    // Forgets what it knows of the endpoints it has sent nothing to for outboxForgetIdleAfter,
    // with nothing in flight or waiting: an endpoint of a stopped instance is not kept for ever,
    // and one that comes back is proven anew (one attempt until it answers well).
    void forgetIdleEndpoints();
    struct Budget
    {
        int used = 0;    // in flight or waiting here, for endpoints that answer well
        int probing = 0; // the same for the others (slow start: one attempt each)
        int usedInFlight = 0;    // of `used`, in flight
        int probingInFlight = 0; // of `probing`, in flight
    };
    Budget budget() const;
    void reportFailure(const QString &detail);
    // A running average that weighs each new sample an eighth; 0 means none yet.
    static qint64 averaged(qint64 average, qint64 sample);
    // After a poll and its claim: recovered() if nothing failed since the poll began.
    void endCycle();

    struct Claimed
    {
        DeliveryTarget target;
        QDateTime leaseUntil;
    };

    ServerOptions m_options;
    RetrySchedule m_schedule;
    QString m_owner;
    CallbackSender *m_sender = nullptr; // child
    QThread *m_storeThread = nullptr;   // child
    OutboxStore *m_store = nullptr;     // owned, lives in m_storeThread; deleted after it stopped
    QTimer m_pollTimer;
    QHash<qint64, int> m_inFlight;        // endpoint -> attempts in flight
    QHash<qint64, quint64> m_sendIds;     // delivery in flight -> its attempt's id in m_sender
    QSet<qint64> m_proven;                  // endpoints whose last attempt succeeded
    QHash<qint64, qint64> m_lastAnswer;     // endpoint with attempts in flight -> its last answer, or when
                                            // the first of them went out (ms on m_clock)
    QHash<qint64, qint64> m_slowAnswer;     // endpoint -> its slowest recent good answer (ms, decaying)
    struct Known
    {
        QString urlText;   // its URL as stored
        QUrl url;          // parsed
        QString host;      // its URL's host and port
        qint64 lastSent = 0; // ms on m_clock
        qint64 lastAnsweredUs = -1; // its last good answer (µs on m_clock)
        qint64 answerGapUs = 0;     // between its good answers, averaged (0: not known yet)
    };
    QHash<qint64, Known> m_known;           // endpoint sent to -> what the worker keeps of it
    QHash<QString, QSet<qint64>> m_hostEndpoints; // host and port -> its endpoints in m_known
    qint64 m_lastForget = 0;                // ms on m_clock
    QElapsedTimer m_clock;
    QTimer m_stallTimer;                    // runs while attempts are in flight
    QSet<qint64> m_busyInstances;           // instances with a claimed attempt here (per-instance order)
    QHash<qint64, QList<Claimed>> m_queued; // endpoint -> claimed, waiting for one of its slots
    QList<AttemptRecord> m_done;            // finished, not yet recorded
    QHash<qint64, int> m_unrecorded;        // endpoint -> its finished attempts not recorded yet
    bool m_pumpQueued = false;
    bool m_mayHaveWork = true;              // claiming could find something
    QSet<qint64> m_wanting;                 // endpoints that took less than their claim-ahead when last seen
    bool m_woken = false;                   // a wake came: new deliveries may have been inserted
    bool m_recording = false;               // the store has not answered the last hand-over yet
    QTimer m_flushTimer;                    // runs while flushDone() is due
    QTimer m_retryTimer;                    // the earliest of m_retryTimes falls due
    std::set<qint64> m_retryTimes;          // when retries this worker scheduled fall due (ms since the epoch)
    QElapsedTimer m_lastFlush;              // since the last hand-over
    bool m_claimPending = false;            // a claim was posted to the store and not answered yet
    qint64 m_claimPostedUs = 0;             // when it was (µs on m_clock)
    qint64 m_claimRoundTripUs = 0;          // from a claim's posting to its answer, averaged
    bool m_othersClaimDue = false;          // set by the poll for its pump: with the budget full, a claim for
                                            // the endpoints holding none of it
    bool m_othersClaimPending = false;      // the claim on its way is that one
    int m_othersClaimPolls = 1;             // polls between such claims
    int m_pollsSinceOthersClaim = 0;
    bool m_cycleClaim = false;              // that claim's answer ends the current poll cycle
    bool m_running = false;
    bool m_failing = false;                 // failed() was the last report
    bool m_cycleFailed = false;             // something failed since the current poll began
};

} // namespace OpsDeck
