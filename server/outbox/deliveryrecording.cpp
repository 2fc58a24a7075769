// The callback outbox in storage: recording a batch of attempts, their outcomes and feed events.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "server/http/jsonwriter.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
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

void appendJsonString(QString &out, const QString &text)
{
    out += QLatin1Char('"');
    for (const QChar c : text) {
        switch (c.unicode()) {
        case '"': out += QLatin1String("\\\""); break;
        case '\\': out += QLatin1String("\\\\"); break;
        case '\n': out += QLatin1String("\\n"); break;
        case '\r': out += QLatin1String("\\r"); break;
        case '\t': out += QLatin1String("\\t"); break;
        default:
            if (c.unicode() < 0x20)
                out += QStringLiteral("\\u%1").arg(int(c.unicode()), 4, 16, QLatin1Char('0'));
            else
                out += c;
        }
    }
    out += QLatin1Char('"');
}

// [["name", "value"], ...] as compact JSON, written directly: every attempt logs two of these.
QString headersText(const HeaderPairs &headers)
{
    QString out;
    out.reserve(64 * int(headers.size()) + 2);
    out += QLatin1Char('[');
    for (const auto &[name, value] : headers) {
        if (out.size() > 1)
            out += QLatin1Char(',');
        out += QLatin1Char('[');
        appendJsonString(out, QString::fromLatin1(name));
        out += QLatin1Char(',');
        appendJsonString(out, QString::fromUtf8(value));
        out += QLatin1Char(']');
    }
    out += QLatin1Char(']');
    return out;
}

// deliveryColumns() without the alias and without the body, which never changes after the
// insert: recording has it from the claim already and need not read it back.
const QString &eventColumns()
{
    static const QString columns =
        QString(DeliveryRepository::deliveryColumns()).remove(QStringLiteral("d.")).remove(QStringLiteral(", body"));
    return columns;
}

// deliveryJson()'s object as compact JSON, written directly (the members in QJsonObject's order,
// so the bytes are those QJsonDocument would write) from a row read with eventColumns() and the
// delivery's body: every recorded attempt puts one on the feed.
QByteArray deliveryEventObject(const QSqlQuery &q, const QByteArray &body)
{
    JsonWriter out(512 + body.size());
    out.beginObject();
    out.key("attempts").value(q.value(7).toLongLong());
    // Stored bodies are compact JSON objects written by QJsonDocument: embedded as they are.
    out.key("body");
    if (body.startsWith('{') && body.endsWith('}'))
        out.raw(body);
    else
        out.raw(QJsonDocument(QJsonDocument::fromJson(body).object()).toJson(QJsonDocument::Compact));
    out.key("created_at").value(q.value(12).toString());
    out.key("endpoint_id").value(q.value(5).toLongLong());
    out.key("event_type").value(q.value(2).toString());
    out.key("give_up_at").nullableValue(q.value(9).toString());
    out.key("id").value(q.value(0).toLongLong());
    out.key("instance_id").value(q.value(3).toLongLong());
    out.key("last_error").nullableValue(q.value(11).toString());
    out.key("last_status");
    if (q.value(10).isNull())
        out.null();
    else
        out.value(q.value(10).toLongLong());
    out.key("next_attempt_at").nullableValue(q.value(8).toString());
    out.key("provider_id").value(q.value(4).toLongLong());
    out.key("state").value(q.value(6).toString());
    out.key("updated_at").value(q.value(13).toString());
    out.key("version").value(q.value(14).toLongLong());
    out.key("webhook_id").value(q.value(1).toString());
    out.endObject();
    return out.data();
}

// The feed event of a delivery row read with eventColumns().
FeedEvent deliveryEvent(const QSqlQuery &q, const QByteArray &body)
{
    return FeedEvent{kDelivery, q.value(0).toLongLong(), q.value(14).toLongLong(), QStringLiteral("updated"),
                     deliveryEventObject(q, body), Audience{q.value(4).toLongLong(), {}, false}};
}

} // namespace

bool DeliveryRepository::recordBatch(QList<AttemptRecord> records, const QString &owner,
                                     std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results,
                                     Problem *error, const std::function<bool(Problem *)> &alsoInTransaction)
{
    std::sort(records.begin(), records.end(), [](const AttemptRecord &a, const AttemptRecord &b) {
        return std::pair(a.target.endpointId, a.target.id) < std::pair(b.target.endpointId, b.target.id);
    });
    // A deadlock victim's transaction was rolled back whole: recording it again is safe, and
    // better than releasing the batch, which would send those attempts a second time.
    constexpr int kMaxAttempts = 3;
    for (int attempt = 1;; ++attempt) {
        Problem problem;
        if (recordBatchOnce(records, owner, autoPauseWindow, results, &problem, alsoInTransaction))
            return true;
        if (attempt == kMaxAttempts || !Database::isConflict(problem)) {
            *error = problem;
            return false;
        }
    }
}

bool DeliveryRepository::lockForRecording(const QList<AttemptRecord> &records, Problem *error)
{
    // The one lock order of every writer on PostgreSQL: endpoints before deliveries, each in id
    // order (an endpoint resume and a bulk retry take theirs the same way), so a batch and an
    // API call never wait on each other in a cycle.
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
    if (!logAttempts(records, error) || !settleDelivered(records, owner, &done, error))
        return false;
    for (qsizetype i = 0; i < records.size(); ++i) {
        if (done.at(i).ok)
            continue;
        const AttemptRecord &r = records.at(i);
        done[i] = recordOne(r.target, r.attempt, r.outcome, owner, error);
        if (!done.at(i).ok)
            return false;
    }
    // Records come sorted by endpoint: each endpoint's health is read and written once per batch.
    for (qsizetype first = 0; first < records.size();) {
        qsizetype end = first + 1;
        while (end < records.size() && records.at(end).target.endpointId == records.at(first).target.endpointId)
            ++end;
        if (!updateEndpoint(records, first, end, autoPauseWindow, &done, error))
            return false;
        first = end;
    }
    if ((alsoInTransaction && !alsoInTransaction(error)) || !tx.commit(error))
        return false;
    *results = done;
    return true;
}

bool DeliveryRepository::logAttempts(const QList<AttemptRecord> &records, Problem *error)
{
    // Multi-row INSERTs: one statement per MaxRowsPerStatement attempts instead of one each.
    static const QString head = QStringLiteral(
        "INSERT INTO delivery_attempts (delivery_id, attempt, at, request_headers, request_body, response_status,"
        " response_headers, response_body, latency_ms, error_class, error) VALUES ");
    static const QString row = QStringLiteral(
        "(?, (SELECT COALESCE(MAX(a.attempt), 0) + 1 FROM delivery_attempts a WHERE a.delivery_id = ?),"
        " ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (qsizetype first = 0; first < records.size(); first += MaxRowsPerStatement) {
        const qsizetype n = std::min<qsizetype>(MaxRowsPerStatement, records.size() - first);
        QString sql = head;
        for (qsizetype i = 0; i < n; ++i)
            sql += (i == 0 ? QString() : QStringLiteral(", ")) + row;
        QSqlQuery &log = m_db.query(sql);
        for (qsizetype i = first; i < first + n; ++i) {
            const DeliveryTarget &target = records.at(i).target;
            const AttemptLog &attempt = records.at(i).attempt;
            log.addBindValue(target.id);
            log.addBindValue(target.id);
            log.addBindValue(timestamp(attempt.at));
            log.addBindValue(headersText(attempt.requestHeaders));
            log.addBindValue(QString::fromUtf8(attempt.requestBody));
            log.addBindValue(attempt.status > 0 ? QVariant(attempt.status) : QVariant(QMetaType::fromType<int>()));
            log.addBindValue(attempt.status > 0 ? QVariant(headersText(attempt.responseHeaders)) : nullText());
            log.addBindValue(attempt.status > 0 ? QVariant(QString::fromUtf8(attempt.responseBody.left(MaxLoggedBodyBytes)))
                                                : nullText());
            log.addBindValue(attempt.latencyMs);
            log.addBindValue(textOrNull(attempt.errorClass));
            log.addBindValue(textOrNull(attempt.error));
        }
        const bool ok = log.exec();
        if (!ok)
            *error = failed(log);
        log.finish();
        if (!ok)
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
            QSqlQuery &upd = m_db.query(QStringLiteral(
                "UPDATE deliveries SET state = 'DELIVERED', attempts = attempts + 1, next_attempt_at = NULL, give_up_at = NULL,"
                " last_status = ?, last_error = NULL, lease_owner = NULL, lease_until = NULL, updated_at = ?, version = version + 1"
                " WHERE lease_owner = ? AND state = 'PENDING' AND id IN (") + ids + QStringLiteral(") RETURNING ") + eventColumns());
            upd.addBindValue(group.key() > 0 ? QVariant(group.key()) : QVariant(QMetaType::fromType<int>()));
            upd.addBindValue(now);
            upd.addBindValue(owner);
            for (qsizetype i = first; i < first + n; ++i)
                upd.addBindValue(records.at(rows.at(i)).target.id);
            if (!upd.exec()) {
                *error = failed(upd);
                upd.finish();
                return false;
            }
            QList<FeedEvent> events;
            events.reserve(n);
            while (upd.next()) {
                const qsizetype at = index.value(upd.value(0).toLongLong(), -1);
                Q_ASSERT(at >= 0);
                events.append(deliveryEvent(upd, records.at(at).target.body));
                (*results)[at].ok = true;
            }
            upd.finish();
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
    QVariant next = nullText();
    QVariant giveUp = nullText();
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
    QSqlQuery &fast = m_db.query(QStringLiteral(
        "UPDATE deliveries SET state = ?, attempts = attempts + 1, next_attempt_at = ?, give_up_at = ?, last_status = ?,"
        " last_error = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?, version = version + 1"
        " WHERE id = ? AND lease_owner = ? AND state = 'PENDING' RETURNING ") + eventColumns());
    fast.addBindValue(newState);
    fast.addBindValue(next);
    fast.addBindValue(giveUp);
    fast.addBindValue(status);
    fast.addBindValue(textOrNull(lastError));
    fast.addBindValue(now);
    fast.addBindValue(target.id);
    fast.addBindValue(owner);
    if (!fast.exec()) {
        *error = failed(fast);
        fast.finish();
        return result;
    }
    std::optional<FeedEvent> updated;
    if (fast.next())
        updated = deliveryEvent(fast, target.body);
    fast.finish();

    if (updated) {
        if (!m_journal.events({*updated}, error))
            return result;
    } else {
        // Another worker owns it now, or it was superseded or cancelled meanwhile: the attempt is
        // logged and counted, the state stays.
        QSqlQuery &cur = m_db.query(QStringLiteral("SELECT state, lease_owner FROM deliveries WHERE id = ?"));
        cur.addBindValue(target.id);
        if (!cur.exec() || !cur.next()) {
            *error = failed(cur);
            cur.finish();
            return result;
        }
        result.leaseLost = cur.value(1).toString() != owner;
        cur.finish();
        QSqlQuery &upd = m_db.query(QStringLiteral(
            "UPDATE deliveries SET attempts = attempts + 1, last_status = ?, last_error = ?,"
            " lease_owner = CASE WHEN ? THEN NULL ELSE lease_owner END, lease_until = CASE WHEN ? THEN NULL ELSE lease_until END,"
            " updated_at = ?, version = version + 1 WHERE id = ?"));
        upd.addBindValue(status);
        upd.addBindValue(textOrNull(lastError));
        upd.addBindValue(!result.leaseLost);
        upd.addBindValue(!result.leaseLost);
        upd.addBindValue(now);
        upd.addBindValue(target.id);
        if (!upd.exec()) {
            *error = failed(upd);
            upd.finish();
            return result;
        }
        upd.finish();
        if (!emitDelivery(target.id, QStringLiteral("updated"), error))
            return result;
    }

    if (updated && outcome.verdict == AttemptOutcome::Verdict::Exhausted) {
        if (!m_journal.audit(workerCaller(),
                             {QStringLiteral("exhaust"), kDelivery, target.id, Delivery::Pending, Delivery::Failed,
                              QStringLiteral("retry schedule exhausted; last error: %1").arg(lastError)},
                             Audience{target.providerId, {}, false}, error))
            return result;
        if (!alert(QStringLiteral("delivery-failed"), target.id, 0, target.providerId,
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
