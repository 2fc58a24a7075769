// The callback outbox in storage: claiming due deliveries with a lease and recording each attempt.
#include "deliveryrepository.h"

#include "writetransaction.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "server/http/jsonwriter.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QSqlError>
#include <QSqlQuery>
#include <QUuid>

#include <algorithm>

namespace OpsDeck {

namespace {

const QString kDelivery = QStringLiteral("delivery");
const QString kEndpoint = QStringLiteral("endpoint");
const QString kAlert = QStringLiteral("alert");
const QString kTestEvent = QStringLiteral("opsdeck.test");

QVariant nullText()
{
    return QVariant(QMetaType::fromType<QString>());
}

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? nullText() : QVariant(text);
}

QJsonValue nullable(const QVariant &v)
{
    return v.isNull() || v.toString().isEmpty() ? QJsonValue() : QJsonValue(v.toString());
}

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

Problem failed(const QSqlQuery &q)
{
    return Database::sqlProblem(q);
}

QString idList(const QList<qint64> &ids)
{
    QStringList parts;
    parts.reserve(ids.size());
    for (qint64 id : ids)
        parts.append(QString::number(id));
    return parts.join(QLatin1Char(','));
}

} // namespace

DeliveryRepository::DeliveryRepository(Database &db, Journal &journal, const RetrySchedule &schedule)
    : m_db(db)
    , m_journal(journal)
    , m_schedule(schedule)
{
}

QString DeliveryRepository::giveUpAt(const QDateTime &firstAttemptAt) const
{
    return timestamp(m_schedule.giveUpAt(firstAttemptAt));
}

const QString &DeliveryRepository::deliveryColumns()
{
    static const QString columns = QStringLiteral(
        "d.id, d.webhook_id, d.event_type, d.instance_id, d.provider_id, d.endpoint_id, d.state, d.attempts,"
        " d.next_attempt_at, d.give_up_at, d.last_status, d.last_error, d.created_at, d.updated_at, d.version, d.body");
    return columns;
}

QJsonObject DeliveryRepository::deliveryJson(const QSqlQuery &q, int f)
{
    return {{QStringLiteral("id"), q.value(f).toLongLong()},
            {QStringLiteral("webhook_id"), q.value(f + 1).toString()},
            {QStringLiteral("event_type"), q.value(f + 2).toString()},
            {QStringLiteral("instance_id"), q.value(f + 3).toLongLong()},
            {QStringLiteral("provider_id"), q.value(f + 4).toLongLong()},
            {QStringLiteral("endpoint_id"), q.value(f + 5).toLongLong()},
            {QStringLiteral("state"), q.value(f + 6).toString()},
            {QStringLiteral("attempts"), q.value(f + 7).toInt()},
            {QStringLiteral("next_attempt_at"), nullable(q.value(f + 8))},
            {QStringLiteral("give_up_at"), nullable(q.value(f + 9))},
            {QStringLiteral("last_status"), q.value(f + 10).isNull() ? QJsonValue() : QJsonValue(q.value(f + 10).toInt())},
            {QStringLiteral("last_error"), nullable(q.value(f + 11))},
            {QStringLiteral("created_at"), q.value(f + 12).toString()},
            {QStringLiteral("updated_at"), q.value(f + 13).toString()},
            {QStringLiteral("version"), q.value(f + 14).toLongLong()},
            {QStringLiteral("body"), QJsonDocument::fromJson(q.value(f + 15).toString().toUtf8()).object()}};
}

const QString &DeliveryRepository::endpointColumns()
{
    static const QString columns = QStringLiteral(
        "e.id, e.url, e.provider_id, e.state, e.consecutive_failures, e.last_success_at, e.success_count,"
        " e.failure_count, e.version, e.last_failure_at, e.paused_at, e.created_at, e.updated_at, s.failing_since");
    return columns;
}

const QString &DeliveryRepository::endpointFrom()
{
    static const QString from = QStringLiteral(
        "endpoints e LEFT JOIN outbox_endpoint_streaks s ON s.endpoint_id = e.id");
    return from;
}

QJsonObject DeliveryRepository::endpointJson(const QSqlQuery &q, int f)
{
    const qint64 successes = q.value(f + 6).toLongLong();
    const qint64 failures = q.value(f + 7).toLongLong();
    const double rate = successes + failures == 0 ? 0.0 : double(failures) / double(successes + failures);
    return {{QStringLiteral("id"), q.value(f).toLongLong()},
            {QStringLiteral("url"), q.value(f + 1).toString()},
            {QStringLiteral("provider_id"), q.value(f + 2).toLongLong()},
            {QStringLiteral("state"), q.value(f + 3).toString()},
            {QStringLiteral("consecutive_failures"), q.value(f + 4).toInt()},
            {QStringLiteral("last_success_at"), nullable(q.value(f + 5))},
            {QStringLiteral("failure_rate"), rate},
            {QStringLiteral("success_count"), successes},
            {QStringLiteral("failure_count"), failures},
            {QStringLiteral("version"), q.value(f + 8).toLongLong()},
            {QStringLiteral("last_failure_at"), nullable(q.value(f + 9))},
            {QStringLiteral("paused_at"), nullable(q.value(f + 10))},
            {QStringLiteral("created_at"), q.value(f + 11).toString()},
            {QStringLiteral("updated_at"), q.value(f + 12).toString()},
            {QStringLiteral("failing_since"), nullable(q.value(f + 13))}};
}

std::optional<QJsonObject> DeliveryRepository::delivery(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + deliveryColumns() + QStringLiteral(" FROM deliveries d WHERE d.id = ?"));
    q.addBindValue(id);
    std::optional<QJsonObject> o;
    if (!q.exec())
        *error = failed(q);
    else if (q.next())
        o = deliveryJson(q);
    else
        *error = Problem::make(404, QStringLiteral("not-found"), QStringLiteral("Not found"),
                               QStringLiteral("no delivery with id %1").arg(id));
    q.finish();
    return o;
}

std::optional<QJsonObject> DeliveryRepository::endpoint(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + endpointColumns() + QStringLiteral(" FROM ") + endpointFrom()
                              + QStringLiteral(" WHERE e.id = ?"));
    q.addBindValue(id);
    std::optional<QJsonObject> o;
    if (!q.exec())
        *error = failed(q);
    else if (q.next())
        o = endpointJson(q);
    else
        *error = Problem::make(404, QStringLiteral("not-found"), QStringLiteral("Not found"),
                               QStringLiteral("no endpoint with id %1").arg(id));
    q.finish();
    return o;
}

QList<DeliveryTarget> DeliveryRepository::claim(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil,
                                                int limit, const QList<qint64> &busyEndpoints, Problem *error,
                                                const std::optional<ClaimCursor> &after, ClaimCursor *last)
{
    if (limit <= 0)
        return {};
    WriteTransaction tx(m_db);
    QList<qint64> ids;
    if (!leaseDue(owner, nowAt, leaseUntil, limit, busyEndpoints, &ids, error, after) || ids.isEmpty()
        || !tx.commit(error))
        return {};
    return leasedTargets(ids, owner, nowAt, error, last);
}

bool DeliveryRepository::leaseDue(const QString &owner, const QDateTime &nowAt, const QDateTime &leaseUntil, int limit,
                                  const QList<qint64> &busyEndpoints, QList<qint64> *ids, Problem *error,
                                  const std::optional<ClaimCursor> &after)
{
    ids->clear();
    if (limit <= 0)
        return true;
    const QString now = timestamp(nowAt);
    const bool postgres = m_db.backend() == Database::Backend::Postgres;
    // An older row of the instance blocks a newer one while it is undelivered or still in flight
    // (a superseded row may be mid-attempt), so the provider sees one instance's changes in order.
    QString select = QStringLiteral(
        "SELECT d.id FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id"
        " WHERE d.state = 'PENDING' AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until < ?)"
        " AND e.state = 'ACTIVE'");
    // The busy endpoints as one JSON array parameter, so the statement's text (and its cached
    // preparation) does not change with them.
    if (!busyEndpoints.isEmpty())
        select += postgres ? QStringLiteral(" AND d.endpoint_id NOT IN (SELECT value::bigint FROM json_array_elements_text(?::json))")
                           : QStringLiteral(" AND d.endpoint_id NOT IN (SELECT value FROM json_each(?))");
    if (after)
        select += QStringLiteral(" AND d.next_attempt_at >= ? AND (d.next_attempt_at > ? OR d.id > ?)");
    select += QStringLiteral(
        " AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.instance_id = d.instance_id AND o.id < d.id"
        " AND o.event_type <> 'opsdeck.test' AND (o.state = 'PENDING' OR (o.lease_until IS NOT NULL AND o.lease_until >= ?)))"
        " ORDER BY d.next_attempt_at, d.id LIMIT ?");
    if (postgres)
        select += QStringLiteral(" FOR UPDATE OF d SKIP LOCKED");

    QSqlQuery &q = m_db.query(QStringLiteral("UPDATE deliveries SET lease_owner = ?, lease_until = ? WHERE id IN (") + select
                              + QStringLiteral(") AND (lease_until IS NULL OR lease_until < ?) RETURNING id"));
    q.addBindValue(owner);
    q.addBindValue(timestamp(leaseUntil));
    q.addBindValue(now);
    q.addBindValue(now);
    if (!busyEndpoints.isEmpty())
        q.addBindValue(QLatin1Char('[') + idList(busyEndpoints) + QLatin1Char(']'));
    if (after) {
        q.addBindValue(after->at);
        q.addBindValue(after->at);
        q.addBindValue(after->id);
    }
    q.addBindValue(now);
    q.addBindValue(limit);
    q.addBindValue(now);
    if (!q.exec()) {
        if (error)
            *error = failed(q);
        q.finish();
        return false;
    }
    while (q.next())
        ids->append(q.value(0).toLongLong());
    q.finish();
    return true;
}

QList<DeliveryTarget> DeliveryRepository::leasedTargets(const QList<qint64> &ids, const QString &owner,
                                                        const QDateTime &nowAt, Problem *error, ClaimCursor *last)
{
    QList<DeliveryTarget> targets;
    if (ids.isEmpty())
        return targets;
    const QString now = timestamp(nowAt);
    // One placeholder per id, so a statement is prepared once per claim size, not once per claim.
    QString marks;
    marks.reserve(3 * ids.size());
    for (qsizetype i = 0; i < ids.size(); ++i)
        marks += i == 0 ? QStringLiteral("?") : QStringLiteral(", ?");
    QSqlQuery &d = m_db.query(QStringLiteral(
        "SELECT d.id, d.webhook_id, d.event_type, d.instance_id, d.provider_id, d.endpoint_id, e.url,"
        " i.callback_signing, i.secret, g.previous_secret, g.valid_until, d.body, d.attempts, d.next_attempt_at"
        " FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id JOIN instances i ON i.id = d.instance_id"
        " LEFT JOIN outbox_secret_grace g ON g.instance_id = d.instance_id WHERE d.id IN (")
                              + marks + QStringLiteral(") ORDER BY d.id"));
    for (qint64 id : std::as_const(ids))
        d.addBindValue(id);
    if (!d.exec()) {
        if (error)
            *error = failed(d);
        d.finish();
        for (qint64 id : std::as_const(ids))
            release(id, owner);
        return targets;
    }
    while (d.next()) {
        DeliveryTarget t;
        t.id = d.value(0).toLongLong();
        t.webhookId = d.value(1).toString();
        t.eventType = d.value(2).toString();
        t.instanceId = d.value(3).toLongLong();
        t.providerId = d.value(4).toLongLong();
        t.endpointId = d.value(5).toLongLong();
        t.url = d.value(6).toString();
        t.signing = d.value(7).toString();
        if (!d.value(8).toString().isEmpty())
            t.secrets.append(d.value(8).toString());
        if (!d.value(9).toString().isEmpty() && d.value(10).toString() > now)
            t.secrets.append(d.value(9).toString());
        t.body = d.value(11).toString().toUtf8();
        t.attempts = d.value(12).toInt();
        targets.append(t);
        const ClaimCursor at{d.value(13).toString(), t.id};
        if (last && std::pair(at.at, at.id) > std::pair(last->at, last->id))
            *last = at;
    }
    d.finish();
    return targets;
}

void DeliveryRepository::release(qint64 id, const QString &owner)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "UPDATE deliveries SET lease_owner = NULL, lease_until = NULL WHERE id = ? AND lease_owner = ?"));
    q.addBindValue(id);
    q.addBindValue(owner);
    q.exec();
    q.finish();
}

qint64 DeliveryRepository::newestId(Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT COALESCE(MAX(id), 0) FROM deliveries"));
    qint64 id = -1;
    if (q.exec() && q.next())
        id = q.value(0).toLongLong();
    else
        *error = failed(q);
    q.finish();
    return id;
}

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

bool DeliveryRepository::updateEndpoint(const QList<AttemptRecord> &records, qsizetype first, qsizetype end,
                                        std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results,
                                        Problem *error)
{
    const DeliveryTarget &target = records.at(first).target;
    QSqlQuery &cur = m_db.query(
        QStringLiteral("SELECT e.state, e.consecutive_failures, s.failing_since FROM endpoints e"
                       " LEFT JOIN outbox_endpoint_streaks s ON s.endpoint_id = e.id WHERE e.id = ?")
        + (m_db.backend() == Database::Backend::Postgres ? QStringLiteral(" FOR UPDATE OF e") : QString()));
    cur.addBindValue(target.endpointId);
    if (!cur.exec() || !cur.next()) {
        *error = failed(cur);
        cur.finish();
        return false;
    }
    const QString initialState = cur.value(0).toString();
    int failures = cur.value(1).toInt();
    const QString initialFailingSince = cur.value(2).toString();
    cur.finish();

    // The attempts are applied in order in memory, as if recorded one by one; the endpoint is
    // written once with the outcome, and shows on the feed once if anything visible changed.
    struct Action
    {
        QString action;
        QString from;
        QString to;
        QString failingSince;
    };
    QString state = initialState;
    QString failingSince = initialFailingSince;
    int successes = 0;
    int failuresSeen = 0;
    QVariant lastSuccessAt = nullText();
    QVariant lastFailureAt = nullText();
    QVariant pausedAt = nullText();
    const AttemptRecord *lastSuccess = nullptr; // not owned; formatted once after the loop
    bool changed = false;
    QList<Action> actions;
    for (qsizetype i = first; i < end; ++i) {
        const AttemptRecord &r = records.at(i);
        bool stepChanged = false;
        if (r.outcome.verdict == AttemptOutcome::Verdict::Delivered) {
            stepChanged = failures > 0;
            failures = 0;
            failingSince.clear();
            ++successes;
            lastSuccess = &r;
        } else {
            const QString at = timestamp(r.attempt.at);
            if (failingSince.isEmpty()) {
                failingSince = at;
                stepChanged = true;
            }
            ++failures;
            ++failuresSeen;
            lastFailureAt = at;
            QString to;
            if (state == Endpoint::Active && r.outcome.disableEndpoint)
                to = Endpoint::Disabled;
            else if (state == Endpoint::Active
                     && failingSince <= timestamp(r.attempt.at.addMSecs(-qint64(autoPauseWindow.count()))))
                to = Endpoint::Paused;
            if (!to.isEmpty()) {
                actions.append({to == Endpoint::Disabled ? QStringLiteral("disable") : QStringLiteral("pause"), state, to,
                                failingSince});
                if (to == Endpoint::Paused)
                    pausedAt = at;
                state = to;
                stepChanged = true;
            }
        }
        (*results)[i].endpointChanged = stepChanged;
        changed = changed || stepChanged;
    }
    if (lastSuccess)
        lastSuccessAt = timestamp(lastSuccess->attempt.at);

    if (failingSince != initialFailingSince) {
        if (!initialFailingSince.isEmpty()) {
            QSqlQuery &del = m_db.query(QStringLiteral("DELETE FROM outbox_endpoint_streaks WHERE endpoint_id = ?"));
            del.addBindValue(target.endpointId);
            const bool ok = del.exec();
            if (!ok)
                *error = failed(del);
            del.finish();
            if (!ok)
                return false;
        }
        if (!failingSince.isEmpty()) {
            QSqlQuery &ins = m_db.query(QStringLiteral(
                "INSERT INTO outbox_endpoint_streaks (endpoint_id, failing_since) VALUES (?, ?)"));
            ins.addBindValue(target.endpointId);
            ins.addBindValue(failingSince);
            const bool ok = ins.exec();
            if (!ok)
                *error = failed(ins);
            ins.finish();
            if (!ok)
                return false;
        }
    }

    QSqlQuery &upd = m_db.query(QStringLiteral(
        "UPDATE endpoints SET consecutive_failures = ?, success_count = success_count + ?, failure_count = failure_count + ?,"
        " last_success_at = COALESCE(?, last_success_at), last_failure_at = COALESCE(?, last_failure_at),"
        " state = ?, paused_at = COALESCE(?, paused_at), version = version + ?, updated_at = ? WHERE id = ?"));
    upd.addBindValue(failures);
    upd.addBindValue(successes);
    upd.addBindValue(failuresSeen);
    upd.addBindValue(lastSuccessAt);
    upd.addBindValue(lastFailureAt);
    upd.addBindValue(state);
    upd.addBindValue(pausedAt);
    upd.addBindValue(changed ? 1 : 0);
    upd.addBindValue(nowTimestamp());
    upd.addBindValue(target.endpointId);
    if (!upd.exec()) {
        *error = failed(upd);
        upd.finish();
        return false;
    }
    upd.finish();
    if (!changed)
        return true;
    if (!emitEndpoint(target.endpointId, QStringLiteral("updated"), error))
        return false;
    for (const Action &a : std::as_const(actions)) {
        const bool disable = a.action == QLatin1String("disable");
        const QString why = disable ? QStringLiteral("the endpoint answered 410 Gone")
                                    : QStringLiteral("the endpoint has been failing since %1").arg(a.failingSince);
        if (!m_journal.audit(workerCaller(), {a.action, kEndpoint, target.endpointId, a.from, a.to, why},
                             Audience{target.providerId, {}, false}, error)
            || !alert(disable ? QStringLiteral("endpoint-disabled") : QStringLiteral("endpoint-paused"), target.endpointId,
                      0, target.providerId,
                      {{QStringLiteral("endpoint_id"), target.endpointId},
                       {QStringLiteral("url"), target.url},
                       {QStringLiteral("message"),
                        QStringLiteral("endpoint %1 (%2) %3: %4")
                            .arg(target.endpointId)
                            .arg(target.url, disable ? QStringLiteral("disabled") : QStringLiteral("paused"), why)}},
                      error))
            return false;
    }
    return true;
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

int DeliveryRepository::supersedeStale(Problem *error)
{
    const QString now = nowTimestamp();
    QList<std::pair<qint64, qint64>> rows; // id, provider
    {
        QSqlQuery &q = m_db.query(QStringLiteral(
            "SELECT d.id, d.provider_id FROM deliveries d WHERE d.state IN ('PENDING', 'FAILED') AND d.event_type <> 'opsdeck.test'"
            " AND (d.lease_until IS NULL OR d.lease_until < ?)"
            " AND EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id AND n.event_type = d.event_type"
            " AND n.id > d.id AND n.state <> 'CANCELLED') ORDER BY d.id LIMIT 1000"));
        q.addBindValue(now);
        if (!q.exec()) {
            *error = failed(q);
            q.finish();
            return -1;
        }
        while (q.next())
            rows.append({q.value(0).toLongLong(), q.value(1).toLongLong()});
        q.finish();
    }
    if (rows.isEmpty())
        return 0;
    WriteTransaction tx(m_db);
    int count = 0;
    for (const auto &[id, provider] : std::as_const(rows)) {
        QSqlQuery &u = m_db.query(QStringLiteral(
            "UPDATE deliveries SET state = 'SUPERSEDED', next_attempt_at = NULL, version = version + 1, updated_at = ?"
            " WHERE id = ? AND state IN ('PENDING', 'FAILED') AND (lease_until IS NULL OR lease_until < ?)"));
        u.addBindValue(now);
        u.addBindValue(id);
        u.addBindValue(now);
        const bool ok = u.exec();
        const int n = u.numRowsAffected();
        if (!ok)
            *error = failed(u);
        u.finish();
        if (!ok)
            return -1;
        if (n == 1) {
            if (!emitDelivery(id, QStringLiteral("updated"), error))
                return -1;
            ++count;
        }
        Q_UNUSED(provider)
    }
    if (!tx.commit(error))
        return -1;
    return count;
}

std::optional<QJsonObject> DeliveryRepository::enqueue(qint64 instanceId, const QString &eventType,
                                                       const QJsonObject &body, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "SELECT i.provider_id, e.id FROM instances i JOIN endpoints e ON e.provider_id = i.provider_id AND e.url = i.callback_url"
        " WHERE i.id = ?"));
    q.addBindValue(instanceId);
    if (!q.exec() || !q.next()) {
        *error = q.lastError().isValid() ? failed(q)
                                          : Problem::make(409, QStringLiteral("no-callback"), QStringLiteral("No callback"),
                                                          QStringLiteral("instance %1 has no registered callback endpoint")
                                                              .arg(instanceId));
        q.finish();
        return std::nullopt;
    }
    const qint64 provider = q.value(0).toLongLong();
    const qint64 endpoint = q.value(1).toLongLong();
    q.finish();

    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    QSqlQuery &ins = m_db.query(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, give_up_at, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, 'PENDING', ?, 0, ?, ?, ?, ?, 1)"
        " RETURNING id"));
    ins.addBindValue(newWebhookId());
    ins.addBindValue(eventType);
    ins.addBindValue(instanceId);
    ins.addBindValue(provider);
    ins.addBindValue(endpoint);
    ins.addBindValue(QString::fromUtf8(QJsonDocument(body).toJson(QJsonDocument::Compact)));
    ins.addBindValue(now);
    ins.addBindValue(giveUpAt(nowAt));
    ins.addBindValue(now);
    ins.addBindValue(now);
    if (!ins.exec() || !ins.next()) {
        *error = failed(ins);
        ins.finish();
        return std::nullopt;
    }
    const qint64 id = ins.value(0).toLongLong();
    ins.finish();
    if (eventType != kTestEvent) {
        QSqlQuery &old = m_db.query(QStringLiteral(
            "SELECT id FROM deliveries WHERE instance_id = ? AND event_type = ? AND id < ? AND state IN ('PENDING', 'FAILED')"
            " AND (lease_until IS NULL OR lease_until < ?)"));
        old.addBindValue(instanceId);
        old.addBindValue(eventType);
        old.addBindValue(id);
        old.addBindValue(now);
        QList<qint64> stale;
        if (old.exec())
            while (old.next())
                stale.append(old.value(0).toLongLong());
        old.finish();
        for (qint64 s : std::as_const(stale)) {
            QSqlQuery &u = m_db.query(QStringLiteral(
                "UPDATE deliveries SET state = 'SUPERSEDED', next_attempt_at = NULL, version = version + 1, updated_at = ?"
                " WHERE id = ?"));
            u.addBindValue(now);
            u.addBindValue(s);
            const bool ok = u.exec();
            u.finish();
            if (!ok || !emitDelivery(s, QStringLiteral("updated"), error))
                return std::nullopt;
        }
    }
    if (!emitDelivery(id, QStringLiteral("created"), error))
        return std::nullopt;
    return delivery(id, error);
}

bool DeliveryRepository::emitDelivery(qint64 id, const QString &op, Problem *error)
{
    const auto o = delivery(id, error);
    if (!o)
        return false;
    const qint64 provider = o->value(QStringLiteral("provider_id")).toInteger();
    return m_journal.event(kDelivery, id, o->value(QStringLiteral("version")).toInteger(), op, *o,
                           Audience{provider, {}, false}, error)
        != 0;
}

bool DeliveryRepository::emitEndpoint(qint64 id, const QString &op, Problem *error)
{
    const auto o = endpoint(id, error);
    if (!o)
        return false;
    const qint64 provider = o->value(QStringLiteral("provider_id")).toInteger();
    return m_journal.event(kEndpoint, id, o->value(QStringLiteral("version")).toInteger(), op, *o,
                           Audience{provider, {}, false}, error)
        != 0;
}

Caller DeliveryRepository::workerCaller()
{
    return Caller{Actor::Controller, QStringLiteral("delivery-worker"), 0};
}

QString DeliveryRepository::newWebhookId()
{
    return QStringLiteral("msg_") + QUuid::createUuid().toString(QUuid::Id128);
}

} // namespace OpsDeck
