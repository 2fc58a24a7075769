// The callback outbox in storage: recording a batch of attempts, their outcomes and feed events.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "server/delivery/attemptresult.h"
#include "server/http/jsonwriter.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/statement.h"
#include "server/storage/timestamps.h"

#include <QHash>
#include <QJsonDocument>
#include <QMap>
#include <QSqlError>
#include <QSqlQuery>

#include <algorithm>

namespace OpsDeck {

using namespace DeliverySql;

namespace {

const QString kAlert = QStringLiteral("alert");

// Text from the network as valid UTF-8: as it is when it is ASCII (the usual case), else decoded
// (an invalid sequence becomes U+FFFD) and encoded again.
QByteArray validUtf8(const QByteArray &bytes)
{
    for (const char c : bytes) {
        if (static_cast<unsigned char>(c) >= 0x80)
            return QString::fromUtf8(bytes).toUtf8();
    }
    return bytes;
}

// The first `max` bytes of a response body, without the start of a character the limit (or the
// sender's own 4 KiB cut) split: stored, it would read as U+FFFD where the provider sent none. A
// shorter body was not cut: whatever it ends with is what the provider sent.
QByteArray loggedBody(const QByteArray &body, qsizetype max)
{
    if (body.size() < max)
        return body;
    QByteArray head = body.left(max);
    // The last lead byte among the final four, and whether all of its continuation bytes are there.
    for (qsizetype back = 1; back <= std::min<qsizetype>(4, head.size()); ++back) {
        const auto c = static_cast<unsigned char>(head.at(head.size() - back));
        if ((c & 0xC0) == 0x80)
            continue; // a continuation byte: its lead is further back
        const int length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (length > back)
            head.chop(back);
        break;
    }
    return head;
}

// [["name", "value"], ...] as compact JSON, written directly: every attempt logs two of these.
QByteArray headersJson(const HeaderPairs &headers)
{
    JsonWriter out(64 * headers.size() + 2);
    out.beginArray();
    for (const auto &[name, value] : headers)
        out.beginArray().utf8Value(validUtf8(name)).utf8Value(validUtf8(value)).endArray();
    out.endArray();
    return out.data();
}

// deliveryColumns() without the alias and without the body, which never changes after the
// insert: recording has it from the claim already and need not read it back.
const QString &eventColumns()
{
    static const QString columns =
        QString(DeliveryRepository::deliveryColumns()).remove(QStringLiteral("d.")).remove(QStringLiteral(", body"));
    return columns;
}

// eventColumns() and the delivery's count of logged attempts (column 15), which recording adds
// one to: the number of the attempt it logs.
const QString &recordedColumns()
{
    static const QString columns = eventColumns() + QStringLiteral(", logged_attempts");
    return columns;
}
constexpr int kLoggedAttemptsColumn = 15;

// deliveryJson()'s object as compact JSON, written directly (the members in QJsonObject's order,
// so the bytes are those QJsonDocument would write) from a row read with eventColumns() and the
// delivery's body: every recorded attempt puts one on the feed.
QByteArray deliveryEventObject(const Statement &q, const QByteArray &body)
{
    JsonWriter out(512 + body.size());
    out.beginObject();
    out.key("attempts").value(q.integer(7));
    // Stored bodies are compact JSON objects written by QJsonDocument: embedded as they are.
    out.key("body");
    if (body.startsWith('{') && body.endsWith('}'))
        out.raw(body);
    else
        out.raw(QJsonDocument(QJsonDocument::fromJson(body).object()).toJson(QJsonDocument::Compact));
    out.key("created_at").utf8Value(q.text(12));
    out.key("endpoint_id").value(q.integer(5));
    out.key("event_type").utf8Value(q.text(2));
    out.key("give_up_at").nullableUtf8Value(q.text(9));
    out.key("id").value(q.integer(0));
    out.key("instance_id").value(q.integer(3));
    out.key("last_error").nullableUtf8Value(q.text(11));
    out.key("last_status");
    if (q.isNull(10))
        out.null();
    else
        out.value(q.integer(10));
    out.key("next_attempt_at").nullableUtf8Value(q.text(8));
    out.key("provider_id").value(q.integer(4));
    out.key("state").utf8Value(q.text(6));
    out.key("updated_at").utf8Value(q.text(13));
    out.key("version").value(q.integer(14));
    out.key("webhook_id").utf8Value(q.text(1));
    out.endObject();
    return out.data();
}

// The feed event of a delivery row read with eventColumns().
FeedEvent deliveryEvent(const Statement &q, const QByteArray &body)
{
    return FeedEvent{kDelivery, q.integer(0), q.integer(14), QStringLiteral("updated"), deliveryEventObject(q, body),
                     Audience{q.integer(4), {}, false}};
}

} // namespace

bool DeliveryRepository::recordBatch(QList<AttemptRecord> records, const QString &owner,
                                     std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results,
                                     Problem *error, const std::function<bool(Problem *)> &alsoInTransaction)
{
    std::sort(records.begin(), records.end(), [](const AttemptRecord &a, const AttemptRecord &b) {
        return std::pair(a.target.endpointId, a.target.id) < std::pair(b.target.endpointId, b.target.id);
    });
    // A deadlock victim's batch is recorded again: better than releasing it, which would send
    // those attempts a second time.
    return runAgainOnConflict(
        [&](Problem *problem) {
            const bool committed = recordBatchOnce(records, owner, autoPauseWindow, results, problem, alsoInTransaction);
            healthCommitted(committed);
            return committed;
        },
        error);
}

bool DeliveryRepository::lockForRecording(const QList<AttemptRecord> &records, Problem *error)
{
    // The one lock order of every writer on PostgreSQL: endpoints before deliveries, each in id
    // order (an endpoint resume and a bulk retry take theirs the same way), so a batch and an
    // API call never wait on each other in a cycle. One exception: superseding locks an instance's
    // older PENDING or FAILED rows after the newer row that replaces them, and no batch holds such
    // a row together with a newer one of its instance (the claim sends an instance's
    // notifications one at a time, oldest first). A deadlock victim is run again either way
    // (recordBatch() here, the HTTP router for a request).
    if (m_db.backend() != Database::Backend::Postgres || records.isEmpty())
        return true;
    QList<qint64> endpoints;
    QList<qint64> deliveries;
    for (const AttemptRecord &r : records) {
        endpoints.append(r.target.endpointId);
        deliveries.append(r.target.id);
    }
    for (QList<qint64> *ids : {&endpoints, &deliveries}) {
        std::sort(ids->begin(), ids->end());
        ids->erase(std::unique(ids->begin(), ids->end()), ids->end());
    }
    QSqlQuery q(m_db.connection());
    q.setForwardOnly(true);
    if (!q.exec(QStringLiteral("SELECT id FROM endpoints WHERE id IN (%1) ORDER BY id FOR UPDATE").arg(idList(endpoints)))
        || !q.exec(QStringLiteral("SELECT id FROM deliveries WHERE id IN (%1) ORDER BY id FOR UPDATE").arg(idList(deliveries)))) {
        *error = failed(q);
        return false;
    }
    return true;
}

bool DeliveryRepository::recordBatchOnce(const QList<AttemptRecord> &records, const QString &owner,
                                         std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results,
                                         Problem *error, const std::function<bool(Problem *)> &alsoInTransaction)
{
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        *error = Problem::make(500, QStringLiteral("storage-unavailable"), QStringLiteral("Storage unavailable"),
                               QStringLiteral("cannot begin a transaction: %1").arg(m_db.connection().lastError().text()));
        return false;
    }
    if (!lockForRecording(records, error))
        return false;
    QList<RecordResult> done(records.size());
    if (!settleDelivered(records, owner, &done, error))
        return false;
    for (qsizetype i = 0; i < records.size(); ++i) {
        if (done.at(i).ok)
            continue;
        const AttemptRecord &r = records.at(i);
        done[i] = recordOne(r.target, r.attempt, r.outcome, owner, error);
        if (!done.at(i).ok)
            return false;
    }
    // After the delivery rows: each counted its attempt and said its number.
    if (!logAttempts(records, done, error))
        return false;
    // Records come sorted by endpoint: each endpoint's health is read and written once per batch.
    if (!updateEndpoints(records, autoPauseWindow, &done, error))
        return false;
    if ((alsoInTransaction && !alsoInTransaction(error)) || !tx.commit(error))
        return false;
    *results = done;
    return true;
}

bool DeliveryRepository::logAttempts(const QList<AttemptRecord> &records, const QList<RecordResult> &results,
                                     Problem *error)
{
    // Multi-row INSERTs: one statement per MaxRowsPerStatement attempts instead of one each.
    static const QString head = QStringLiteral(
        "INSERT INTO delivery_attempts (delivery_id, attempt, at, request_headers, request_body, response_status,"
        " response_headers, response_body, latency_ms, error_class, error) VALUES ");
    static const QString row = QStringLiteral("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (qsizetype first = 0; first < records.size(); first += MaxRowsPerStatement) {
        const qsizetype n = std::min<qsizetype>(MaxRowsPerStatement, records.size() - first);
        QString sql = head;
        for (qsizetype i = 0; i < n; ++i)
            sql += (i == 0 ? QString() : QStringLiteral(", ")) + row;
        Statement log(m_db, sql);
        for (qsizetype i = first; i < first + n; ++i) {
            const DeliveryTarget &target = records.at(i).target;
            const AttemptLog &attempt = records.at(i).attempt;
            Q_ASSERT(results.at(i).attempt > 0);
            log.bind(target.id).bind(results.at(i).attempt).bindText(timestamp(attempt.at));
            // The body sent is the delivery's own (one copy in `deliveries`): NULL says so, and readers
            // take the delivery's. Only a body that differs (none does today) is kept here.
            log.bindText(headersJson(attempt.requestHeaders))
                .bindText(attempt.requestBody == target.body ? QByteArray() : attempt.requestBody);
            if (attempt.status > 0)
                log.bind(attempt.status)
                    .bindText(headersJson(attempt.responseHeaders))
                    .bindText(validUtf8(loggedBody(attempt.responseBody, MaxLoggedBodyBytes)));
            else
                log.bindNull().bindNull().bindNull();
            log.bind(attempt.latencyMs).bindText(emptyAsNull(attempt.errorClass)).bindText(emptyAsNull(attempt.error));
        }
        if (!log.exec(error))
            return false;
    }
    return true;
}

bool DeliveryRepository::settleDelivered(const QList<AttemptRecord> &records, const QString &owner,
                                         QList<RecordResult> *results, Problem *error)
{
    // The usual outcome, a PENDING delivery of this lease holder answered 2xx, settles many rows
    // per UPDATE (grouped by the status they answered); the rows it does not return (lease lost,
    // cancelled meanwhile) go through recordOne.
    QMap<int, QList<qsizetype>> byStatus;
    for (qsizetype i = 0; i < records.size(); ++i)
        if (records.at(i).outcome.verdict == AttemptOutcome::Verdict::Delivered)
            byStatus[records.at(i).attempt.status].append(i);
    const QString now = nowTimestamp();
    for (auto group = byStatus.cbegin(); group != byStatus.cend(); ++group) {
        const QList<qsizetype> &rows = group.value();
        for (qsizetype first = 0; first < rows.size(); first += MaxRowsPerStatement) {
            const qsizetype n = std::min<qsizetype>(MaxRowsPerStatement, rows.size() - first);
            QHash<qint64, qsizetype> index;
            QString ids;
            for (qsizetype i = first; i < first + n; ++i) {
                ids += i == first ? QStringLiteral("?") : QStringLiteral(", ?");
                index.insert(records.at(rows.at(i)).target.id, rows.at(i));
            }
            Statement upd(m_db, QStringLiteral(
                "UPDATE deliveries SET state = 'DELIVERED', attempts = attempts + 1, logged_attempts = logged_attempts + 1,"
                " next_attempt_at = NULL, give_up_at = NULL, last_status = ?, last_error = NULL, lease_owner = NULL,"
                " lease_until = NULL, updated_at = ?, version = version + 1"
                " WHERE lease_owner = ? AND state = 'PENDING' AND id IN (") + ids + QStringLiteral(") RETURNING ") + recordedColumns());
            if (group.key() > 0)
                upd.bind(group.key());
            else
                upd.bindNull();
            upd.bindText(now).bindText(owner);
            for (qsizetype i = first; i < first + n; ++i)
                upd.bind(records.at(rows.at(i)).target.id);
            if (!upd.exec(error))
                return false;
            QList<FeedEvent> events;
            events.reserve(n);
            while (upd.next()) {
                const qsizetype at = index.value(upd.integer(0), -1);
                Q_ASSERT(at >= 0);
                events.append(deliveryEvent(upd, records.at(at).target.body));
                (*results)[at].ok = true;
                (*results)[at].attempt = int(upd.integer(kLoggedAttemptsColumn));
            }
            if (upd.failed()) {
                *error = upd.problem();
                return false;
            }
            // One multi-row append for the statement's rows, in the order it returned them.
            if (!m_journal.events(events, error))
                return false;
        }
    }
    return true;
}

RecordResult DeliveryRepository::recordOne(const DeliveryTarget &target, const AttemptLog &attempt,
                                           const AttemptOutcome &outcome, const QString &owner, Problem *error)
{
    RecordResult result;
    const QString now = nowTimestamp();
    const QString lastError = attempt.errorClass.isEmpty()
                                  ? QString()
                                  : attempt.errorClass + QStringLiteral(": ") + attempt.error;
    QString newState = Delivery::Pending;
    QString next; // NULL unless retried
    QString giveUp;
    switch (outcome.verdict) {
    case AttemptOutcome::Verdict::Delivered:
        newState = Delivery::Delivered;
        break;
    case AttemptOutcome::Verdict::Exhausted:
        newState = Delivery::Failed;
        break;
    case AttemptOutcome::Verdict::Retry:
        next = timestamp(outcome.nextAttemptAt);
        giveUp = timestamp(outcome.giveUpAt);
        break;
    }
    const QVariant status = attempt.status > 0 ? QVariant(attempt.status) : QVariant(QMetaType::fromType<int>());

    // The usual case, the lease holder recording a PENDING delivery, in one statement that also
    // returns the row for its feed event. Rows are locked (PostgreSQL: lockForRecording) or the
    // write lock is held (SQLite: BEGIN IMMEDIATE), so nothing changes between the two paths.
    std::optional<FeedEvent> updated;
    {
        Statement fast(m_db, QStringLiteral(
            "UPDATE deliveries SET state = ?, attempts = attempts + 1, logged_attempts = logged_attempts + 1,"
            " next_attempt_at = ?, give_up_at = ?, last_status = ?, last_error = ?, lease_owner = NULL, lease_until = NULL,"
            " updated_at = ?, version = version + 1"
            " WHERE id = ? AND lease_owner = ? AND state = 'PENDING' RETURNING ") + recordedColumns());
        fast.bindText(newState).bindText(next).bindText(giveUp);
        if (attempt.status > 0)
            fast.bind(attempt.status);
        else
            fast.bindNull();
        fast.bindText(emptyAsNull(lastError)).bindText(now).bind(target.id).bindText(owner);
        if (!fast.exec(error))
            return result;
        if (fast.next()) {
            updated = deliveryEvent(fast, target.body);
            result.attempt = int(fast.integer(kLoggedAttemptsColumn));
        }
        else if (fast.failed()) {
            *error = fast.problem();
            return result;
        }
    }

    if (updated) {
        if (!m_journal.events({*updated}, error))
            return result;
    } else {
        // Another worker owns it now, or it was superseded or cancelled meanwhile: the attempt is
        // logged and counted, the state stays. Except that one this worker still held and the
        // provider acknowledged was delivered: the provider has it, whatever the cancel meant to
        // spare it or the newer notification made of it (that one waited for this attempt).
        QSqlQuery &cur = m_db.query(QStringLiteral("SELECT state, lease_owner FROM deliveries WHERE id = ?"));
        cur.addBindValue(target.id);
        if (!cur.exec() || !cur.next()) {
            *error = failed(cur);
            cur.finish();
            return result;
        }
        const QString state = cur.value(0).toString();
        result.leaseLost = cur.value(1).toString() != owner;
        cur.finish();
        const bool deliveredAnyway = !result.leaseLost && (state == Delivery::Cancelled || state == Delivery::Superseded)
                                     && outcome.verdict == AttemptOutcome::Verdict::Delivered;
        QSqlQuery &upd = m_db.query(QStringLiteral(
            "UPDATE deliveries SET attempts = attempts + 1, logged_attempts = logged_attempts + 1, last_status = ?,"
            " last_error = ?, lease_owner = CASE WHEN ? THEN NULL ELSE lease_owner END,"
            " lease_until = CASE WHEN ? THEN NULL ELSE lease_until END,"
            " state = CASE WHEN ? THEN 'DELIVERED' ELSE state END, updated_at = ?, version = version + 1 WHERE id = ?"
            " RETURNING logged_attempts"));
        upd.addBindValue(status);
        upd.addBindValue(textOrNull(lastError));
        upd.addBindValue(!result.leaseLost);
        upd.addBindValue(!result.leaseLost);
        upd.addBindValue(deliveredAnyway);
        upd.addBindValue(now);
        upd.addBindValue(target.id);
        if (!upd.exec() || !upd.next()) {
            *error = failed(upd);
            upd.finish();
            return result;
        }
        result.attempt = upd.value(0).toInt();
        upd.finish();
        if (deliveredAnyway
            && !m_journal.audit(workerCaller(),
                                {QStringLiteral("deliver"), kDelivery, target.id, state, Delivery::Delivered,
                                 state == Delivery::Cancelled
                                     ? QStringLiteral("the provider acknowledged an attempt that was in flight when the "
                                                      "delivery was cancelled")
                                     : QStringLiteral("the provider acknowledged an attempt that was in flight when a "
                                                      "newer notification superseded the delivery")},
                                Audience{target.providerId, {}, false}, error))
            return result;
        if (!emitDelivery(target.id, QStringLiteral("updated"), error))
            return result;
    }

    if (updated && outcome.verdict == AttemptOutcome::Verdict::Exhausted) {
        if (!m_journal.audit(workerCaller(),
                             {QStringLiteral("exhaust"), kDelivery, target.id, Delivery::Pending, Delivery::Failed,
                              QStringLiteral("retry schedule exhausted; last error: %1").arg(lastError)},
                             Audience{target.providerId, {}, false}, error))
            return result;
        if (!alert(QStringLiteral("delivery-failed"), target.id, updated->version, target.providerId,
                   {{QStringLiteral("delivery_id"), target.id},
                    {QStringLiteral("instance_id"), target.instanceId},
                    {QStringLiteral("endpoint_id"), target.endpointId},
                    {QStringLiteral("webhook_id"), target.webhookId},
                    {QStringLiteral("message"),
                     QStringLiteral("delivery %1 to %2 failed after its last scheduled attempt: %3")
                         .arg(target.id)
                         .arg(target.url, lastError)}},
                   error))
            return result;
    }
    result.ok = true;
    return result;
}

QString DeliveryRepository::expiredLeaseMessage(const QString &holder)
{
    return QStringLiteral("worker %1 held this delivery until its lease expired and recorded no outcome;"
                          " the request may have reached the endpoint")
        .arg(holder);
}

bool DeliveryRepository::logInterrupted(const QList<std::pair<qint64, QString>> &deliveries, const QString &now,
                                        Problem *error, bool emitEvents)
{
    // The holder may have sent the request, and the provider may have processed it: the attempt
    // is logged so that a second arrival of its webhook-id has an entry to match. It does not
    // count towards the retry schedule (`attempts`): the stop was the control plane's, not the
    // endpoint's. Rare (once per lease a holder left behind): a few statements per delivery.
    for (const auto &[id, message] : deliveries) {
        qint64 attempt = 0;
        {
            Statement upd(m_db, QStringLiteral(
                "UPDATE deliveries SET logged_attempts = logged_attempts + 1, last_status = NULL, last_error = ?,"
                " updated_at = ?, version = version + 1 WHERE id = ? RETURNING logged_attempts"));
            upd.bindText(AttemptResult::Interrupted + QStringLiteral(": ") + message).bindText(now).bind(id);
            if (!upd.exec(error))
                return false;
            if (!upd.next()) {
                *error = upd.failed() ? upd.problem()
                                      : Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
                                                      QStringLiteral("delivery %1 vanished while leased").arg(id));
                return false;
            }
            attempt = upd.integer(0);
        }
        Statement log(m_db, QStringLiteral(
            "INSERT INTO delivery_attempts (delivery_id, attempt, at, request_headers, latency_ms, error_class, error)"
            " VALUES (?, ?, ?, '[]', NULL, ?, ?)"));
        log.bind(id).bind(attempt).bindText(now).bindText(AttemptResult::Interrupted).bindText(message);
        if (!log.exec(error) || (emitEvents && !emitDelivery(id, QStringLiteral("updated"), error)))
            return false;
    }
    return true;
}

bool DeliveryRepository::letGoOfExpiredLease(qint64 id, const QString &now, Problem *error, bool *letGo)
{
    QString holder;
    {
        Statement q(m_db, QStringLiteral(
            "UPDATE deliveries SET previous_lease_owner = lease_owner, lease_owner = NULL, lease_until = NULL"
            " WHERE id = ? AND lease_owner IS NOT NULL AND lease_until < ? RETURNING previous_lease_owner"));
        q.bind(id).bindText(now);
        if (!q.exec(error))
            return false;
        if (q.next())
            holder = q.string(0);
        else if (q.failed()) {
            *error = q.problem();
            return false;
        }
    }
    if (letGo)
        *letGo = !holder.isNull();
    return holder.isNull() || logInterrupted({{id, expiredLeaseMessage(holder)}}, now, error, false);
}

int DeliveryRepository::releaseUnrecorded(QList<qint64> ids, const QString &owner, const QString &why, Problem *error)
{
    const QString now = nowTimestamp();
    const QString message = QStringLiteral("worker %1 could not record this attempt's outcome (%2) and let it go to be"
                                           " sent again; the request may have reached the endpoint")
                                .arg(owner, why);
    std::sort(ids.begin(), ids.end()); // the lock order of every writer on PostgreSQL
    return eachInOneTransaction(ids, error, [&](qint64 id, Problem *problem) {
        bool held = false;
        {
            Statement q(m_db, QStringLiteral("UPDATE deliveries SET lease_owner = NULL, lease_until = NULL"
                                             " WHERE id = ? AND lease_owner = ? RETURNING id"));
            q.bind(id).bindText(owner);
            if (!q.exec(problem))
                return -1;
            held = q.next();
            if (!held && q.failed()) {
                *problem = q.problem();
                return -1;
            }
        }
        return !held ? 0 : logInterrupted({{id, message}}, now, problem) ? 1 : -1;
    });
}

const QString &DeliveryRepository::expiredSettledLeasesSql()
{
    // deliveries_settled_in_flight's condition term for term (the form in which SQLite takes a partial
    // index): the index holds only settled rows still leased, a handful.
    static const QString sql = QStringLiteral(
        "SELECT id FROM deliveries WHERE state <> 'PENDING' AND lease_until IS NOT NULL AND lease_until < ? LIMIT %1")
                                   .arg(StalePassLimit);
    return sql;
}

int DeliveryRepository::letGoOfExpiredSettledLeases(Problem *error)
{
    const QString now = nowTimestamp();
    QList<qint64> rows;
    {
        Statement q(m_db, expiredSettledLeasesSql());
        q.bindText(now);
        if (!q.exec(error))
            return -1;
        while (q.next())
            rows.append(q.integer(0));
        if (q.failed()) {
            *error = q.problem();
            return -1;
        }
    }
    std::sort(rows.begin(), rows.end()); // locked in id order, as every writer on PostgreSQL does
    return eachInOneTransaction(rows, error, [&](qint64 id, Problem *problem) {
        // Another replica's pass may have let go of it since it was read.
        bool letGo = false;
        if (!letGoOfExpiredLease(id, now, problem, &letGo) || (letGo && !emitDelivery(id, QStringLiteral("updated"), problem)))
            return -1;
        return letGo ? 1 : 0;
    });
}

int DeliveryRepository::eachInOneTransaction(const QList<qint64> &rows, Problem *error,
                                             const std::function<int(qint64, Problem *)> &each)
{
    if (rows.isEmpty())
        return 0;
    WriteTransaction tx(m_db);
    if (!tx.isActive()) {
        *error = tx.problem();
        return -1;
    }
    int count = 0;
    for (const qint64 id : rows) {
        const int n = each(id, error);
        if (n < 0)
            return -1;
        count += n;
    }
    return tx.commit(error) ? count : -1;
}

bool DeliveryRepository::alert(const QString &type, qint64 objectId, qint64 version, qint64 providerId,
                               const QJsonObject &details, Problem *error)
{
    QJsonObject object = details;
    object.insert(QStringLiteral("type"), type);
    object.insert(QStringLiteral("at"), nowTimestamp());
    return m_journal.event(kAlert, objectId, version, QStringLiteral("created"), object, Audience{providerId, {}, false},
                           error)
        != 0;
}

} // namespace OpsDeck
