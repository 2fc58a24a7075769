// The callback outbox in storage: claiming due deliveries with a lease and recording each attempt.
#pragma once

#include "core/problem.h"
#include "core/retryschedule.h"
#include "server/http/caller.h"

#include <QByteArray>
#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QSet>
#include <QString>
#include <QStringList>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <optional>

class QSqlQuery;

namespace OpsDeck {

class Statement;

class Database;
class Journal;

using HeaderPairs = QList<QPair<QByteArray, QByteArray>>;

// One claimed delivery and everything sending it needs.
struct DeliveryTarget
{
    qint64 id = 0;
    QString webhookId;
    QString eventType;
    qint64 instanceId = 0;
    qint64 providerId = 0;
    qint64 endpointId = 0;
    QString url;
    QString signing;      // "standard-webhooks" or "x-hub-signature"
    QStringList secrets;  // the current one first, then one still inside its rotation grace period
    QByteArray body;
    int attempts = 0;     // attempts already made in the current schedule run
};

// A position in the claim order (next_attempt_at, id).
struct ClaimCursor
{
    QString at;
    qint64 id = 0;
};

// What a claim's selection read: the rows it could have leased (with one row each for some
// endpoints, more than it leased) and, then, the last of them in claim order.
struct ClaimScan
{
    int candidates = 0;
    ClaimCursor last; // only with one row each (EndpointFilter::oneEachExcept)
};

// Which endpoints' due deliveries a claim may lease: any but the listed ones (the busy ones: the
// usual claim), or only the listed ones (when the worker has room for some endpoints only).
struct EndpointFilter
{
    enum class Mode { Except, Only };

    EndpointFilter() = default;
    EndpointFilter(std::initializer_list<qint64> except) : ids(except) {}
    EndpointFilter(const QList<qint64> &except) : ids(except) {}
    static EndpointFilter only(const QList<qint64> &endpoints)
    {
        EndpointFilter f(endpoints);
        f.mode = Mode::Only;
        return f;
    }

    // Whether the claim's statement names endpoints at all.
    bool names() const { return mode == Mode::Only || !ids.isEmpty(); }
    // Whether a claim can lease anything.
    bool admitsAny() const { return mode == Mode::Except || !ids.isEmpty(); }

    Mode mode = Mode::Except;
    QList<qint64> ids;
    // When set, a claim takes at most one row of each endpoint not listed here: the endpoints a
    // worker sends one attempt at a time (new, failing or hanging ones) would otherwise get a
    // claim's whole batch, all but one of it waiting leased, held from every other server.
    std::optional<QList<qint64>> oneEachExcept;
};

// One attempt as the log keeps it (spec §3).
struct AttemptLog
{
    QDateTime at;
    HeaderPairs requestHeaders; // signatures already redacted
    QByteArray requestBody;
    int status = 0;             // 0 when no HTTP answer arrived
    HeaderPairs responseHeaders;
    QByteArray responseBody;    // at most the first 4 KiB
    qint64 latencyMs = 0;
    QString errorClass;         // empty on success: dns, connect, tls, timeout, http, invalid-url
    QString error;
};

struct AttemptOutcome
{
    enum class Verdict { Delivered, Retry, Exhausted };
    Verdict verdict = Verdict::Retry;
    QDateTime nextAttemptAt;   // Retry
    QDateTime giveUpAt;        // Retry
    bool disableEndpoint = false; // 410 Gone
};

struct AttemptRecord
{
    DeliveryTarget target;
    AttemptLog attempt;
    AttemptOutcome outcome;
};

// What recording one attempt changed, so the worker can wake the feed and the tests can count.
struct RecordResult
{
    bool ok = false;
    bool leaseLost = false;  // another worker owns it now; only the attempt was logged
    int attempt = 0;         // the attempt's number in the delivery's log (1, 2, ... across retries)
    bool endpointChanged = false;
};

// Works on whichever connection it is given: the worker thread has its own, the API uses the
// HTTP thread's. Every method that writes runs one transaction that also appends the feed events.
class DeliveryRepository final
{
public:
    static constexpr int MaxLoggedBodyBytes = 4096;
    // Rows one multi-row statement writes at most (11 parameters each for the attempt log).
    static constexpr int MaxRowsPerStatement = 32;
    static inline const QString TestEvent = QStringLiteral("opsdeck.test"); // POST /endpoints/{id}/test

    // `schedule` gives a new delivery its give_up_at (the console shows it from the start).
    DeliveryRepository(Database &db, Journal &journal, const RetrySchedule &schedule = RetrySchedule());

    // When a delivery whose first attempt is due at `firstAttemptAt` gives up at the latest.
    QString giveUpAt(const QDateTime &firstAttemptAt) const;

    static const QString &deliveryColumns(); // SELECT list (alias d) that deliveryJson() reads
    static QJsonObject deliveryJson(const QSqlQuery &row, int first = 0);
    static const QString &endpointColumns(); // SELECT list (aliases e, s) that endpointJson() reads
    static const QString &endpointFrom();    // "endpoints e LEFT JOIN ... s": the FROM for endpointColumns()
    static QJsonObject endpointJson(const QSqlQuery &row, int first = 0);

    std::optional<QJsonObject> delivery(qint64 id, Problem *error);
    std::optional<QJsonObject> endpoint(qint64 id, Problem *error);

    // Leases up to `limit` due deliveries to `owner` until `leaseUntil`: PENDING, due, not leased
    // (or the lease expired: a crashed worker's work comes back), endpoint ACTIVE, and the oldest
    // undelivered one of its instance, so one instance's notifications go out in order. On
    // PostgreSQL the rows are locked with SKIP LOCKED, so two replicas never claim the same row.
    // With `after`, only rows past that position in the claim order; `last` (when given) is
    // raised to the position of the last row leased.
    QList<DeliveryTarget> claim(const QString &owner, const QDateTime &now, const QDateTime &leaseUntil, int limit,
                                const EndpointFilter &endpoints, Problem *error,
                                const std::optional<ClaimCursor> &after = std::nullopt, ClaimCursor *last = nullptr,
                                ClaimScan *scan = nullptr);
    // claim() in two steps, so the lease can share a transaction with other writes (one commit
    // instead of two): leaseDue() takes the leases inside the caller's transaction and gives
    // their ids; once that committed, leasedTargets() reads what sending them needs (and on
    // failure releases them).
    bool leaseDue(const QString &owner, const QDateTime &now, const QDateTime &leaseUntil, int limit,
                  const EndpointFilter &endpoints, QList<qint64> *ids, Problem *error,
                  const std::optional<ClaimCursor> &after = std::nullopt, ClaimScan *scan = nullptr);
    QList<DeliveryTarget> leasedTargets(const QList<qint64> &ids, const QString &owner, const QDateTime &now,
                                        Problem *error, ClaimCursor *last = nullptr);
    void release(qint64 id, const QString &owner);
    // The highest delivery id (0 when there is none, -1 on failure): new deliveries raise it.
    qint64 newestId(Problem *error);

    // Logs each attempt and applies its outcome to the delivery and its endpoint, with the feed
    // events, alerts and audit entries; attempts that finished together share one transaction
    // (group commit): all or none. `results` come in endpoint, delivery order. The records'
    // targets are as claim() returned them: their bodies go into the feed events as they are.
    // `alsoInTransaction` (when given) runs after the records, before the commit, in the same
    // transaction: false (with the problem set) rolls all back. It runs again when a deadlock
    // victim's batch is recorded again.
    bool recordBatch(QList<AttemptRecord> records, const QString &owner, std::chrono::milliseconds autoPauseWindow,
                     QList<RecordResult> *results, Problem *error,
                     const std::function<bool(Problem *)> &alsoInTransaction = {});

    // Endpoints whose health counters a recorded batch changed without showing it (at most one
    // such event per endpoint every HealthEventInterval): each gets its version and feed event
    // now, in one transaction: how many (-1 on failure). The store's upkeep calls it at every poll.
    int showHealth(Problem *error);
    static constexpr qint64 HealthEventIntervalMs = 1000;

    // Counts a silence for each endpoint (see DeliveryWorker::checkStalls()) at `at`, with the
    // endpoints' feed events, in one transaction.
    bool recordSilence(const QList<qint64> &endpointIds, const QDateTime &at, Problem *error);

    // Every path that queues a notification or makes one due again supersedes, in its own
    // transaction, the older undelivered (PENDING or FAILED) ones of the instance and kind: the
    // newer one carries the current state. One in flight keeps its live lease. Not for test events.
    bool supersedeOlder(qint64 instanceId, const QString &eventType, qint64 newerId, const QString &now, Problem *error);
    // The same as a pass over the whole outbox, for what no such path saw: rows written before an
    // upgrade, or by anything else that bypassed them. At most StalePassLimit rows a call.
    int supersedeStale(Problem *error);
    static constexpr int StalePassLimit = 1000;

    // The statements the outbox runs on a poll, claim or enqueue, for the tests that check
    // their plans (none may walk a whole growing table) and for the methods that run them.
    static const QString &staleSql();         // supersedeStale()'s candidates; binds now twice
    static const QString &olderSiblingsSql(); // supersedeOlder()'s rows; binds instance, kind, id
    // leaseDue()'s statements, as they are spelled for the backend, with or without a list of
    // endpoints (`endpoints`: none, the busy ones left out, or the only ones) and a cursor: the
    // due rows (`withEndpoint`: their claim order and endpoint too, for one row each), and their
    // lease in one statement, or that of the ids picked among them (one row each).
    enum class EndpointClause { None, Except, Only };
    static QString selectionSql(bool postgres, EndpointClause endpoints, bool after, bool withEndpoint);
    static QString leaseSql(bool postgres, EndpointClause endpoints, bool after);
    static QString leaseIdsSql(qsizetype count); // for `count` ids
    static QString leasedTargetsSql(qsizetype count); // leasedTargets() for `count` ids
    static const QString &newestIdSql();

    // Queues a notification for an instance's registered callback (destruction, test event);
    // supersedes the older undelivered ones of the same kind. The new delivery, or nullopt.
    std::optional<QJsonObject> enqueue(qint64 instanceId, const QString &eventType, const QJsonObject &body,
                                       Problem *error);

    // Lets go of the delivery's lease if it expired before `now` (its worker gone), logging the
    // attempt it held as interrupted (logInterrupted(), without a feed event: the caller changes
    // the row and appends one), inside the caller's transaction. Every path that clears another
    // worker's lease goes through here, so no such attempt goes unlogged.
    // `letGo` (when given) says whether there was such a lease.
    bool letGoOfExpiredLease(qint64 id, const QString &now, Problem *error, bool *letGo = nullptr);
    // The same for the settled deliveries (cancelled or superseded while in flight, test events
    // too) whose worker's lease expired, which no claim takes: at most StalePassLimit of them, in one
    // transaction, each with its feed event. How many (-1 on failure). Part of the store's upkeep.
    int letGoOfExpiredSettledLeases(Problem *error);
    // Gives back the deliveries `owner` still holds whose attempts were made but could not be
    // recorded (`why`), logging each attempt as interrupted, in one transaction: sent again, and
    // a second arrival at the provider has its entry. How many (-1 on failure: their leases then
    // expire, and whoever takes them over logs them).
    int releaseUnrecorded(QList<qint64> ids, const QString &owner, const QString &why, Problem *error);
    static const QString &expiredSettledLeasesSql(); // binds now

    // Appends the delivery's feed event ("delivery", op) inside the caller's transaction.
    bool emitDelivery(qint64 id, const QString &op, Problem *error);
    // The endpoint's event; its version into *version when asked.
    bool emitEndpoint(qint64 id, const QString &op, Problem *error, qint64 *version = nullptr);
    // Endpoint URLs (and the instances' callback URLs with them) stored before registration kept
    // one spelling of each (CallbackUrlGuard::canonical()), brought to that spelling, each on the
    // feed; one whose canonical spelling another endpoint of its provider has already is left.
    // How many changed, or -1.
    int canonicalizeEndpointUrls(Problem *error);

    static Caller workerCaller();
    static QString newWebhookId();

private:
    // "UPDATE ... WHERE id IN (<select>) AND the lease is free RETURNING ...".
    static QString leaseWhereSql(const QString &select);
    static QString placeholders(qsizetype count); // "?, ?, ..."
    // " (SELECT ... )" of the ids in one JSON array parameter.
    static QString jsonIdsSql(bool postgres);
    // Runs `candidates` (selectionSql() with the endpoint) and picks from its rows every one of
    // an `exempt` endpoint and the oldest of each other endpoint; `scan` counts the rows read.
    static bool pickOneEach(Statement &candidates, const QList<qint64> &exempt, QList<qint64> *picked, ClaimScan *scan,
                            Problem *error);
    bool recordBatchOnce(const QList<AttemptRecord> &records, const QString &owner,
                         std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results, Problem *error,
                         const std::function<bool(Problem *)> &alsoInTransaction);
    bool lockForRecording(const QList<AttemptRecord> &records, Problem *error);
    // The attempt rows of a batch, several per statement, numbered as recording the delivery
    // rows counted them (`results`).
    bool logAttempts(const QList<AttemptRecord> &records, const QList<RecordResult> &results, Problem *error);
    // Delivered attempts of PENDING deliveries this owner holds, several per statement; marks
    // their results ok. The others are left to recordOne.
    bool settleDelivered(const QList<AttemptRecord> &records, const QString &owner, QList<RecordResult> *results,
                         Problem *error);
    RecordResult recordOne(const DeliveryTarget &target, const AttemptLog &attempt, const AttemptOutcome &outcome,
                           const QString &owner, Problem *error);
    // Logs an attempt of unknown outcome (error class "interrupted", with the message beside the
    // delivery's id) for each delivery, in the caller's transaction, each with a new version and
    // (with `emitEvents`) its feed event.
    bool logInterrupted(const QList<std::pair<qint64, QString>> &deliveries, const QString &now, Problem *error,
                        bool emitEvents = true);
    static QString expiredLeaseMessage(const QString &holder);
    // Applies the outcomes of the records (sorted by endpoint) to their endpoints' health: each
    // endpoint read once and written once per batch, all of them by a few statements.
    bool updateEndpoints(const QList<AttemptRecord> &records, std::chrono::milliseconds autoPauseWindow,
                         QList<RecordResult> *results, Problem *error);
    bool alert(const QString &type, qint64 objectId, qint64 version, qint64 providerId, const QJsonObject &details,
               Problem *error);
    // Runs `each` on every row in one transaction: the sum of what it returned, or -1 as soon as
    // one returns -1 (with the problem set), when all is rolled back.
    int eachInOneTransaction(const QList<qint64> &rows, Problem *error, const std::function<int(qint64, Problem *)> &each);
    // A new version and feed event for each endpoint, with `set` ("column = ?, " each, bound to
    // `values` in order) applied, in one transaction.
    bool touchEndpoints(QList<qint64> ids, const QString &set, const QStringList &values, Problem *error);

    Database &m_db;
    Journal &m_journal;
    RetrySchedule m_schedule;
    // Recording: when each endpoint's health last showed on the feed (ms on m_clock), and those
    // changed since without showing.
    QElapsedTimer m_clock;
    QHash<qint64, qint64> m_healthShownAt;
    QSet<qint64> m_healthUnshown;
    QList<std::pair<qint64, bool>> m_healthDecided; // by the batch being recorded: endpoint, shown
    // The batch being recorded committed (or not): its decisions on showing health stand (or go).
    void healthCommitted(bool committed);
};

} // namespace OpsDeck
