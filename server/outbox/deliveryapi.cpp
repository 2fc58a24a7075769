// /api/v1/deliveries and /api/v1/endpoints: the failing-callback inspector's data and actions.
#include "deliveryapi.h"

#include "deliveryrepository.h"
#include "deliveryschedule.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "core/webhooksignature.h"
#include "server/api/apisupport.h"
#include "server/api/instancesapi.h"
#include "server/delivery/urlguard.h"
#include "server/feed/changefeed.h"
#include "server/http/router.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSqlQuery>

namespace OpsDeck {

using namespace ApiSupport;

namespace {

const QString kDelivery = QStringLiteral("delivery");
const QString kEndpoint = QStringLiteral("endpoint");
const QString kInstance = QStringLiteral("instance");
constexpr int kMaxBulk = 10000;

const QStringList &filterKeys()
{
    static const QStringList keys = {QStringLiteral("state"),    QStringLiteral("provider"),
                                     QStringLiteral("instance"), QStringLiteral("endpoint"),
                                     QStringLiteral("status"),   QStringLiteral("created_after"),
                                     QStringLiteral("created_before")};
    return keys;
}

qint64 providerOf(const Caller &who)
{
    bool ok = false;
    const qint64 id = who.subject.toLongLong(&ok);
    return ok ? id : -1;
}

Response failedQuery(QSqlQuery &q)
{
    const Problem p = Database::sqlProblem(q);
    q.finish();
    return Response::problem(p);
}

QJsonArray headersJson(const QString &text)
{
    return QJsonDocument::fromJson(text.toUtf8()).array();
}

Problem storageFailed(const Problem &problem)
{
    return problem.isNull() ? internal(QStringLiteral("commit failed")) : problem;
}

} // namespace

DeliveryApi::DeliveryApi(ApiContext context)
    : m_ctx(context)
    , m_repository(std::make_unique<DeliveryRepository>(context.db, context.journal,
                                                         retryScheduleFor(context.options).value_or(RetrySchedule())))
{
}

DeliveryApi::~DeliveryApi() = default;

void DeliveryApi::addRoutes(Router &router)
{
    const Actors inspectors = Actors(Actor::Operator) | Actor::Provider;
    router.add("GET", QStringLiteral("/api/v1/deliveries"), inspectors, false, [this](Request &r) { return list(r); });
    router.add("POST", QStringLiteral("/api/v1/deliveries/retry"), inspectors, true, [this](Request &r) { return bulkRetry(r); });
    router.add("GET", QStringLiteral("/api/v1/deliveries/{id}"), inspectors, false, [this](Request &r) { return get(r); });
    router.add("POST", QStringLiteral("/api/v1/deliveries/{id}/retry"), inspectors, true, [this](Request &r) { return retry(r); });
    router.add("POST", QStringLiteral("/api/v1/deliveries/{id}/cancel"), inspectors, true, [this](Request &r) { return cancel(r); });
    router.add("GET", QStringLiteral("/api/v1/endpoints"), inspectors, false, [this](Request &r) { return listEndpoints(r); });
    router.add("GET", QStringLiteral("/api/v1/endpoints/{id}"), inspectors, false, [this](Request &r) { return getEndpoint(r); });
    router.add("POST", QStringLiteral("/api/v1/endpoints/{id}/pause"), inspectors, true, [this](Request &r) { return pause(r); });
    router.add("POST", QStringLiteral("/api/v1/endpoints/{id}/resume"), inspectors, true, [this](Request &r) { return resume(r); });
    router.add("POST", QStringLiteral("/api/v1/endpoints/{id}/test"), inspectors, true, [this](Request &r) { return test(r); });
    router.add("POST", QStringLiteral("/api/v1/instances/{id}/rotate-secret"), inspectors, true,
               [this](Request &r) { return rotateSecret(r); });
}

std::optional<DeliveryApi::Filter> DeliveryApi::readFilter(const Caller &who,
                                                            const std::function<QString(const QString &)> &value,
                                                            const std::function<bool(const QString &)> &has, QChar pathPrefix,
                                                            Problem *error)
{
    Filter f;
    QStringList where;
    if (who.role == Actor::Provider) {
        where.append(QStringLiteral("d.provider_id = ?"));
        f.values.append(providerOf(who));
    }
    if (has(QStringLiteral("state"))) {
        const QString state = value(QStringLiteral("state")).toUpper();
        if (!Delivery::machine().isState(state)) {
            *error = invalid(pathPrefix + QStringLiteral("state"), QStringLiteral("expected one of %1")
                                                           .arg(Delivery::machine().states().join(QStringLiteral(", "))));
            return std::nullopt;
        }
        // Written into the statement, not bound: it is one of the machine's own state names, and
        // a literal lets the planner take the partial index of the settled-but-undelivered states
        // (a listing of FAILED rows reads those rows, not the whole table).
        where.append(QStringLiteral("d.state = '%1'").arg(state));
    }
    for (const auto &[key, column] : {std::pair{QStringLiteral("provider"), QStringLiteral("d.provider_id")},
                                      std::pair{QStringLiteral("instance"), QStringLiteral("d.instance_id")},
                                      std::pair{QStringLiteral("endpoint"), QStringLiteral("d.endpoint_id")}}) {
        if (!has(key))
            continue;
        const std::optional<qint64> id = canonicalId(value(key));
        if (!id) {
            *error = invalid(pathPrefix + key, QStringLiteral("expected a positive integer id"));
            return std::nullopt;
        }
        where.append(column + QStringLiteral(" = ?"));
        f.values.append(*id);
    }
    if (has(QStringLiteral("status"))) {
        // "5xx" (a class), "503" (exact) or "none" (no HTTP answer: timeouts, refused connections).
        const QString status = value(QStringLiteral("status")).toLower();
        static const QRegularExpression classPattern(QStringLiteral("^([1-5])xx$"));
        static const QRegularExpression exactPattern(QStringLiteral("^[1-5][0-9][0-9]$"));
        if (const auto m = classPattern.match(status); m.hasMatch()) {
            const int base = m.captured(1).toInt() * 100;
            where.append(QStringLiteral("d.last_status >= ? AND d.last_status < ?"));
            f.values.append(base);
            f.values.append(base + 100);
        } else if (exactPattern.match(status).hasMatch()) {
            where.append(QStringLiteral("d.last_status = ?"));
            f.values.append(status.toInt());
        } else if (status == QLatin1String("none")) {
            where.append(QStringLiteral("d.last_status IS NULL AND d.attempts > 0"));
        } else {
            *error = invalid(pathPrefix + QStringLiteral("status"),
                             QStringLiteral("expected a status class (5xx), a status (503) or none"));
            return std::nullopt;
        }
    }
    std::optional<QDateTime> lowerBound;
    for (const auto &[key, op] : {std::pair{QStringLiteral("created_after"), QStringLiteral(" > ?")},
                                  std::pair{QStringLiteral("created_before"), QStringLiteral(" < ?")}}) {
        if (!has(key))
            continue;
        const auto at = parseTimestamp(value(key));
        if (!at) {
            *error = invalid(pathPrefix + key, QStringLiteral("expected an RFC 3339 timestamp"));
            return std::nullopt;
        }
        // Both bounds are exclusive: a range that holds no instant is a mistake, not an empty answer.
        if (lowerBound && *at <= *lowerBound) {
            *error = invalid(pathPrefix + key, QStringLiteral("must be later than created_after"));
            return std::nullopt;
        }
        lowerBound = at;
        where.append(QStringLiteral("d.created_at") + op);
        f.values.append(timestamp(*at));
    }
    f.where = where.isEmpty() ? QStringLiteral("1 = 1") : where.join(QStringLiteral(" AND "));
    return f;
}

Response DeliveryApi::list(Request &req)
{
    Problem problem;
    if (auto p = checkQuery(req, filterKeys()))
        return Response::problem(*p);
    const auto page = readPage(req, &problem);
    if (!page)
        return Response::problem(problem);
    const auto filter = readFilter(
        req.who(), [&req](const QString &k) { return req.queryValue(k); }, [&req](const QString &k) { return req.hasQuery(k); },
        QLatin1Char('?'), &problem);
    if (!filter)
        return Response::problem(problem);
    QSqlQuery q(m_ctx.db.connection());
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT ") + DeliveryRepository::deliveryColumns() + QStringLiteral(" FROM deliveries d WHERE d.id > ? AND ")
              + filter->where + QStringLiteral(" ORDER BY d.id LIMIT ?"));
    q.addBindValue(page->afterId);
    for (const QVariant &v : filter->values)
        q.addBindValue(v);
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, [](const QSqlQuery &row) { return DeliveryRepository::deliveryJson(row); });
}

std::optional<Problem> DeliveryApi::lockRow(const QString &table, qint64 id)
{
    // Inside a write transaction: SQLite already holds the database's write lock; PostgreSQL
    // locks the row, so the worker recording an attempt meanwhile cannot make this a 412.
    if (m_ctx.db.backend() != Database::Backend::Postgres)
        return std::nullopt;
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT id FROM %1 WHERE id = ? FOR UPDATE").arg(table));
    q.addBindValue(id);
    std::optional<Problem> failure;
    if (!q.exec())
        failure = Database::sqlProblem(q); // a deadlock victim: the router runs the request again
    q.finish();
    return failure;
}

std::optional<QJsonObject> DeliveryApi::visibleDelivery(const Caller &who, qint64 id, Problem *error)
{
    auto d = m_repository->delivery(id, error);
    if (d && who.role == Actor::Provider && d->value(QStringLiteral("provider_id")).toInteger() != providerOf(who)) {
        *error = notFound(kDelivery, id);
        return std::nullopt;
    }
    return d;
}

std::optional<QJsonObject> DeliveryApi::visibleEndpoint(const Caller &who, qint64 id, Problem *error)
{
    auto e = m_repository->endpoint(id, error);
    if (e && who.role == Actor::Provider && e->value(QStringLiteral("provider_id")).toInteger() != providerOf(who)) {
        *error = notFound(kEndpoint, id);
        return std::nullopt;
    }
    return e;
}

Response DeliveryApi::get(Request &req)
{
    Problem problem;
    if (auto p = checkQuery(req, {}))
        return Response::problem(*p);
    auto d = visibleDelivery(req.who(), req.id(), &problem);
    if (!d)
        return Response::problem(problem);
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "SELECT attempt, at, request_headers, COALESCE(request_body, (SELECT body FROM deliveries WHERE id = delivery_id)),"
        " response_status, response_headers, response_body, latency_ms, error_class, error"
        " FROM delivery_attempts WHERE delivery_id = ? ORDER BY attempt"));
    q.addBindValue(req.id());
    if (!q.exec())
        return failedQuery(q);
    QJsonArray log;
    while (q.next()) {
        log.append(QJsonObject{
            {QStringLiteral("attempt"), q.value(0).toInt()},
            {QStringLiteral("at"), q.value(1).toString()},
            {QStringLiteral("request_headers"), headersJson(q.value(2).toString())},
            {QStringLiteral("request_body"), q.value(3).toString()},
            {QStringLiteral("response_status"), q.value(4).isNull() ? QJsonValue() : QJsonValue(q.value(4).toInt())},
            {QStringLiteral("response_headers"), q.value(5).isNull() ? QJsonValue() : QJsonValue(headersJson(q.value(5).toString()))},
            {QStringLiteral("response_body"), q.value(6).isNull() ? QJsonValue() : QJsonValue(q.value(6).toString())},
            {QStringLiteral("latency_ms"), q.value(7).toLongLong()},
            {QStringLiteral("error_class"), q.value(8).isNull() ? QJsonValue() : QJsonValue(q.value(8).toString())},
            {QStringLiteral("error"), q.value(9).isNull() ? QJsonValue() : QJsonValue(q.value(9).toString())}});
    }
    q.finish();
    d->insert(QStringLiteral("attempt_log"), log);
    return Response::json(200, *d).withETag(d->value(QStringLiteral("version")).toInteger());
}

bool DeliveryApi::applyDelivery(const Caller &who, const QJsonObject &before, const QString &action, const QString &reason,
                                QJsonObject *after, Problem *error)
{
    const qint64 id = before.value(QStringLiteral("id")).toInteger();
    const qint64 version = before.value(QStringLiteral("version")).toInteger();
    const QString from = before.value(QStringLiteral("state")).toString();
    Refusal refusal;
    const auto t = Delivery::machine().find(from, action, who.role, &refusal);
    if (!t) {
        *error = ApiSupport::refusal(refusal, kDelivery, from, action);
        return false;
    }
    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "UPDATE deliveries SET state = ?, next_attempt_at = ?,"
        " attempts = CASE WHEN ? THEN 0 ELSE attempts END, give_up_at = CASE WHEN ? THEN ? ELSE give_up_at END,"
        " version = version + 1, updated_at = ? WHERE id = ? AND version = ?"));
    const bool fresh = from != Delivery::Pending; // FAILED/CANCELLED start a fresh schedule
    const QVariant noText(QMetaType::fromType<QString>());
    q.addBindValue(t->to);
    q.addBindValue(t->to == Delivery::Pending ? QVariant(now) : noText);
    q.addBindValue(fresh);
    q.addBindValue(fresh || t->to != Delivery::Pending);
    q.addBindValue(t->to == Delivery::Pending ? QVariant(m_repository->giveUpAt(nowAt)) : noText);
    q.addBindValue(now);
    q.addBindValue(id);
    q.addBindValue(version);
    const bool executed = q.exec();
    const bool updated = executed && q.numRowsAffected() == 1;
    if (!executed)
        *error = Database::sqlProblem(q);
    q.finish();
    if (!executed)
        return false;
    if (!updated) {
        *error = Problem::make(412, QStringLiteral("precondition-failed"), QStringLiteral("Precondition failed"),
                               QStringLiteral("the delivery changed meanwhile"));
        return false;
    }
    const qint64 provider = before.value(QStringLiteral("provider_id")).toInteger();
    if (!m_ctx.journal.audit(who, {action, kDelivery, id, from, t->to, reason}, Audience{provider, {}, false}, error)
        || !m_repository->emitDelivery(id, QStringLiteral("updated"), error))
        return false;
    const auto o = m_repository->delivery(id, error);
    if (!o)
        return false;
    *after = *o;
    return true;
}

qint64 DeliveryApi::newerNotification(const QJsonObject &delivery, Problem *error)
{
    // Test events say nothing about the instance: none makes another one stale.
    if (delivery.value(QStringLiteral("event_type")).toString() == DeliveryRepository::TestEvent)
        return 0;
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "SELECT MAX(id) FROM deliveries WHERE instance_id = ? AND event_type = ? AND id > ?"));
    q.addBindValue(delivery.value(QStringLiteral("instance_id")).toInteger());
    q.addBindValue(delivery.value(QStringLiteral("event_type")).toString());
    q.addBindValue(delivery.value(QStringLiteral("id")).toInteger());
    if (!q.exec() || !q.next()) {
        *error = Database::sqlProblem(q);
        q.finish();
        return -1;
    }
    const qint64 newer = q.value(0).isNull() ? 0 : q.value(0).toLongLong();
    q.finish();
    return newer;
}

Response DeliveryApi::retry(Request &req)
{
    return deliveryTransition(req, QStringLiteral("retry"));
}

Response DeliveryApi::cancel(Request &req)
{
    return deliveryTransition(req, QStringLiteral("cancel"));
}

Response DeliveryApi::deliveryTransition(Request &req, const QString &action)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    WriteTransaction tx(m_ctx.db);
    if (auto p = lockRow(QStringLiteral("deliveries"), req.id()))
        return Response::problem(*p);
    Problem problem;
    const auto before = visibleDelivery(req.who(), req.id(), &problem);
    if (!before)
        return Response::problem(problem);
    if (auto p = checkIfMatch(req, before->value(QStringLiteral("version")).toInteger()))
        return Response::problem(*p);
    const QString from = before->value(QStringLiteral("state")).toString();
    if (action == QLatin1String("retry") && Delivery::machine().find(from, action, req.who().role)) {
        const qint64 newer = newerNotification(*before, &problem);
        if (newer < 0)
            return Response::problem(problem);
        if (newer > 0) {
            Problem p = Problem::make(409, QStringLiteral("delivery-superseded"), QStringLiteral("Superseded by a newer notification"),
                                      QStringLiteral("delivery %1 is newer for instance %2 and carries its current status; "
                                                     "retry that one instead")
                                          .arg(newer)
                                          .arg(before->value(QStringLiteral("instance_id")).toInteger()));
            p.with(QStringLiteral("newer_delivery_id"), newer);
            p.with(QStringLiteral("state"), from);
            return Response::problem(p);
        }
    }
    QJsonObject after;
    if (!applyDelivery(req.who(), *before, action, reason, &after, &problem) || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(200, after).withETag(after.value(QStringLiteral("version")).toInteger());
}

Response DeliveryApi::bulkRetry(Request &req)
{
    if (auto p = checkQuery(req, {QStringLiteral("dry_run")}))
        return Response::problem(*p);
    // Not a page: a limit or cursor would be ignored while the client believed it narrowed the retry.
    for (const QString &paging : {QStringLiteral("limit"), QStringLiteral("cursor")}) {
        if (req.hasQuery(paging))
            return Response::problem(invalid(QLatin1Char('?') + paging, QStringLiteral("a bulk retry is not paged; narrow the filter")));
    }
    JsonReader r = bodyReader(req);
    QHash<QString, QString> values;
    for (const QString &key : filterKeys()) {
        if (!r.object().contains(key))
            continue;
        const QJsonValue v = r.object().value(key);
        // Numbers as written (1.5 stays 1.5 and is refused), so nothing widens or shifts the filter.
        if (v.isDouble())
            values.insert(key, QString::number(v.toDouble(), 'g', 17));
        else if (v.isString())
            values.insert(key, v.toString());
        else if (v.isNull())
            r.addError(key, QStringLiteral("null would match every delivery; leave the field out for that"));
        else
            r.addError(key, QStringLiteral("expected a string or an integer"));
    }
    const std::optional<bool> bodyDryRun = r.optBoolean(QStringLiteral("dry_run"));
    const QString reason = readReason(r, req);
    r.rejectUnknown(filterKeys());
    if (!r.ok())
        return Response::problem(r.problem());
    bool dryRun = bodyDryRun.value_or(false);
    if (req.hasQuery(QStringLiteral("dry_run"))) {
        const QString q = req.queryValue(QStringLiteral("dry_run"));
        if (q != QLatin1String("true") && q != QLatin1String("false"))
            return Response::problem(invalid(QStringLiteral("?dry_run"), QStringLiteral("expected true or false")));
        dryRun = dryRun || q == QLatin1String("true");
    }
    Problem problem;
    const auto filter = readFilter(
        req.who(), [&values](const QString &k) { return values.value(k); },
        [&values](const QString &k) { return values.contains(k); }, QLatin1Char('/'), &problem);
    if (!filter)
        return Response::problem(problem);

    // Only the states retry leaves from; DELIVERED and SUPERSEDED are never touched, nor a
    // notification that a newer one of its instance replaces (see newerNotification()).
    const QStringList retryable = [] {
        QStringList states;
        for (const Transition &t : Delivery::machine().transitions())
            if (t.action == QLatin1String("retry") && !states.contains(t.from))
                states.append(t.from);
        return states;
    }();
    WriteTransaction tx(m_ctx.db);
    QSqlQuery q(m_ctx.db.connection());
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT ") + DeliveryRepository::deliveryColumns() + QStringLiteral(" FROM deliveries d WHERE ")
              + filter->where + QStringLiteral(" AND d.state IN ('") + retryable.join(QStringLiteral("', '"))
              + QStringLiteral("') AND (d.event_type = '") + DeliveryRepository::TestEvent
              + QStringLiteral("' OR NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id"
                               " AND n.event_type = d.event_type AND n.id > d.id)) ORDER BY d.id LIMIT ?")
              + (m_ctx.db.backend() == Database::Backend::Postgres ? QStringLiteral(" FOR UPDATE OF d") : QString()));
    for (const QVariant &v : filter->values)
        q.addBindValue(v);
    q.addBindValue(kMaxBulk + 1);
    if (!q.exec())
        return failedQuery(q);
    QList<QJsonObject> matches;
    QJsonObject states;
    while (q.next()) {
        const QJsonObject d = DeliveryRepository::deliveryJson(q);
        const QString state = d.value(QStringLiteral("state")).toString();
        states.insert(state, states.value(state).toInteger() + 1);
        matches.append(d);
    }
    q.finish();
    if (matches.size() > kMaxBulk)
        return Response::problem(Problem::make(422, QStringLiteral("too-many-matches"), QStringLiteral("Too many matches"),
                                               QStringLiteral("more than %1 deliveries match; narrow the filter").arg(kMaxBulk)));
    QJsonObject result{{QStringLiteral("dry_run"), dryRun},
                       {QStringLiteral("count"), qint64(matches.size())},
                       {QStringLiteral("states"), states}};
    if (dryRun)
        return Response::json(200, result);
    for (const QJsonObject &d : std::as_const(matches)) {
        QJsonObject after;
        if (!applyDelivery(req.who(), d, QStringLiteral("retry"), reason, &after, &problem))
            return Response::problem(storageFailed(problem));
    }
    if (!tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    result.insert(QStringLiteral("retried"), qint64(matches.size()));
    return Response::json(200, result);
}

Response DeliveryApi::listEndpoints(Request &req)
{
    Problem problem;
    if (auto p = checkQuery(req, {QStringLiteral("state"), QStringLiteral("provider")}))
        return Response::problem(*p);
    const auto page = readPage(req, &problem);
    if (!page)
        return Response::problem(problem);
    const auto provider = queryId(req, QStringLiteral("provider"), &problem);
    if (!problem.isNull())
        return Response::problem(problem);
    // Never a null QString: that would bind as SQL NULL and match nothing.
    const QString state = req.hasQuery(QStringLiteral("state")) ? req.queryValue(QStringLiteral("state")).toUpper()
                                                                 : QString(QLatin1String(""));
    if (req.hasQuery(QStringLiteral("state")) && !Endpoint::machine().isState(state))
        return Response::problem(invalid(QStringLiteral("?state"), QStringLiteral("expected one of %1")
                                                                       .arg(Endpoint::machine().states().join(QStringLiteral(", ")))));
    const qint64 own = req.who().role == Actor::Provider ? providerOf(req.who()) : 0;
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + DeliveryRepository::endpointColumns() + QStringLiteral(" FROM ")
                                  + DeliveryRepository::endpointFrom()
                                  + QStringLiteral(" WHERE e.id > ? AND (? = 0 OR e.provider_id = ?) AND (? = 0 OR e.provider_id = ?)"
                                                   " AND (? = '' OR e.state = ?) ORDER BY e.id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(own);
    q.addBindValue(own);
    q.addBindValue(provider.value_or(0));
    q.addBindValue(provider.value_or(0));
    q.addBindValue(state);
    q.addBindValue(state);
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, [](const QSqlQuery &row) { return DeliveryRepository::endpointJson(row); });
}

Response DeliveryApi::getEndpoint(Request &req)
{
    Problem problem;
    const auto e = visibleEndpoint(req.who(), req.id(), &problem);
    if (!e)
        return Response::problem(problem);
    return Response::json(200, *e).withETag(e->value(QStringLiteral("version")).toInteger());
}

Response DeliveryApi::pause(Request &req)
{
    return endpointTransition(req, {QStringLiteral("pause")});
}

Response DeliveryApi::resume(Request &req)
{
    // A disabled (410) endpoint is resumed the same way once its URL works again.
    return endpointTransition(req, {QStringLiteral("resume"), QStringLiteral("enable")});
}

Response DeliveryApi::endpointTransition(Request &req, const QStringList &actions)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    WriteTransaction tx(m_ctx.db);
    if (auto p = lockRow(QStringLiteral("endpoints"), req.id()))
        return Response::problem(*p);
    Problem problem;
    const auto before = visibleEndpoint(req.who(), req.id(), &problem);
    if (!before)
        return Response::problem(problem);
    const qint64 version = before->value(QStringLiteral("version")).toInteger();
    if (auto p = checkIfMatch(req, version))
        return Response::problem(*p);
    const QString from = before->value(QStringLiteral("state")).toString();
    std::optional<Transition> t;
    Refusal refusal;
    QString action;
    for (const QString &a : actions) {
        Refusal attempt;
        t = Endpoint::machine().find(from, a, req.who().role, &attempt);
        if (t) {
            action = a;
            break;
        }
        if (refusal.code.isEmpty())
            refusal = attempt;
    }
    if (!t) {
        // The API has no route for "enable": POST /resume enables a disabled endpoint.
        if (refusal.allowed.contains(QLatin1String("enable"))) {
            refusal.allowed.replaceInStrings(QRegularExpression(QStringLiteral("^enable$")), QStringLiteral("resume"));
            refusal.allowed.removeDuplicates();
            refusal.message.replace(QLatin1String("allowed: enable"), QLatin1String("allowed: resume"));
        }
        return Response::problem(ApiSupport::refusal(refusal, kEndpoint, from, actions.first()));
    }
    const QString now = nowTimestamp();
    const bool activating = t->to == Endpoint::Active;
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "UPDATE endpoints SET state = ?, paused_at = CASE WHEN ? THEN ? ELSE NULL END, version = version + 1, updated_at = ?"
        " WHERE id = ? AND version = ?"));
    q.addBindValue(t->to);
    q.addBindValue(t->to == Endpoint::Paused);
    q.addBindValue(now);
    q.addBindValue(now);
    q.addBindValue(req.id());
    q.addBindValue(version);
    if (!q.exec())
        return failedQuery(q);
    const bool updated = q.numRowsAffected() == 1;
    q.finish();
    if (!updated)
        return Response::problem(Problem::make(412, QStringLiteral("precondition-failed"), QStringLiteral("Precondition failed"),
                                               QStringLiteral("the endpoint changed meanwhile")));
    if (activating) {
        // A fresh start: the auto-pause window counts from the next failure, and what waited goes now.
        QSqlQuery &streak = m_ctx.db.query(QStringLiteral("DELETE FROM outbox_endpoint_streaks WHERE endpoint_id = ?"));
        streak.addBindValue(req.id());
        if (!streak.exec())
            return failedQuery(streak);
        streak.finish();
        // Every writer locks an endpoint before its deliveries and deliveries in id order (the
        // worker's group commit too), so this cannot deadlock with a batch being recorded.
        if (m_ctx.db.backend() == Database::Backend::Postgres) {
            QSqlQuery &lock = m_ctx.db.query(QStringLiteral(
                "SELECT id FROM deliveries WHERE endpoint_id = ? AND state = 'PENDING' AND next_attempt_at > ?"
                " ORDER BY id FOR UPDATE"));
            lock.addBindValue(req.id());
            lock.addBindValue(now);
            if (!lock.exec())
                return failedQuery(lock);
            lock.finish();
        }
        QSqlQuery &due = m_ctx.db.query(QStringLiteral(
            "UPDATE deliveries SET next_attempt_at = ? WHERE endpoint_id = ? AND state = 'PENDING' AND next_attempt_at > ?"));
        due.addBindValue(now);
        due.addBindValue(req.id());
        due.addBindValue(now);
        if (!due.exec())
            return failedQuery(due);
        due.finish();
    }
    const qint64 provider = before->value(QStringLiteral("provider_id")).toInteger();
    if (!m_ctx.journal.audit(req.who(), {action, kEndpoint, req.id(), from, t->to, reason}, Audience{provider, {}, false}, &problem)
        || !m_repository->emitEndpoint(req.id(), QStringLiteral("updated"), &problem))
        return Response::problem(storageFailed(problem));
    const auto after = m_repository->endpoint(req.id(), &problem);
    if (!after || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(200, *after).withETag(after->value(QStringLiteral("version")).toInteger());
}

Response DeliveryApi::test(Request &req)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    WriteTransaction tx(m_ctx.db);
    Problem problem;
    const auto endpoint = visibleEndpoint(req.who(), req.id(), &problem);
    if (!endpoint)
        return Response::problem(problem);
    // Nothing goes to a paused or disabled endpoint: a 202 would promise a test that waits unsent.
    const QString state = endpoint->value(QStringLiteral("state")).toString();
    if (state != Endpoint::Active) {
        Problem p = Problem::make(409, QStringLiteral("endpoint-not-active"), QStringLiteral("Endpoint not active"),
                                  QStringLiteral("endpoint %1 is %2 and nothing is sent to it until it is resumed; resume it, "
                                                 "then send the test event")
                                      .arg(req.id())
                                      .arg(state));
        p.with(QStringLiteral("state"), state);
        p.with(QStringLiteral("allowed"), QJsonArray{QStringLiteral("resume")});
        return Response::problem(p);
    }
    const QString url = endpoint->value(QStringLiteral("url")).toString();
    const Problem refused = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
    if (!refused.isNull())
        return Response::problem(refused);
    // Signed with the secret of the newest instance registered on this URL: the provider checks
    // it exactly as it checks real notifications.
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "SELECT id FROM instances WHERE provider_id = ? AND callback_url = ? AND secret IS NOT NULL ORDER BY id DESC LIMIT 1"));
    const qint64 provider = endpoint->value(QStringLiteral("provider_id")).toInteger();
    q.addBindValue(provider);
    q.addBindValue(url);
    if (!q.exec())
        return failedQuery(q);
    const qint64 instance = q.next() ? q.value(0).toLongLong() : 0;
    q.finish();
    if (instance == 0)
        return Response::problem(Problem::make(409, QStringLiteral("no-registered-instance"), QStringLiteral("No registered instance"),
                                               QStringLiteral("no instance is registered with %1, so there is no secret to sign with")
                                                   .arg(url)));
    const QJsonObject body{{QStringLiteral("type"), DeliveryRepository::TestEvent},
                           {QStringLiteral("endpoint_id"), req.id()},
                           {QStringLiteral("instance_id"), instance},
                           {QStringLiteral("sent_at"), nowTimestamp()}};
    const auto d = m_repository->enqueue(instance, DeliveryRepository::TestEvent, body, &problem);
    if (!d)
        return Response::problem(storageFailed(problem));
    const qint64 id = d->value(QStringLiteral("id")).toInteger();
    if (!m_ctx.journal.audit(req.who(), {QStringLiteral("test"), kEndpoint, req.id(), {}, {}, reason}, Audience{provider, {}, false},
                             &problem)
        || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(202, *d).withETag(1).withHeader(QByteArrayLiteral("Location"), "/api/v1/deliveries/" + QByteArray::number(id));
}

Response DeliveryApi::rotateSecret(Request &req)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    WriteTransaction tx(m_ctx.db);
    // The version read below must still hold when the new secret is written (another replica
    // stopping the instance meanwhile made this a 500).
    if (auto p = lockRow(QStringLiteral("instances"), req.id()))
        return Response::problem(*p);
    QSqlQuery &q = m_ctx.db.query(
        QStringLiteral("SELECT provider_id, callback_url, secret, version, owner, callback_signing FROM instances WHERE id = ?"));
    q.addBindValue(req.id());
    if (!q.exec())
        return failedQuery(q);
    if (!q.next() || (req.who().role == Actor::Provider && q.value(0).toLongLong() != providerOf(req.who()))) {
        q.finish();
        return Response::problem(notFound(kInstance, req.id()));
    }
    const qint64 provider = q.value(0).toLongLong();
    const QString url = q.value(1).toString();
    const QString oldSecret = q.value(2).toString();
    const qint64 version = q.value(3).toLongLong();
    const QString owner = q.value(4).toString();
    // X-Hub-Signature carries one signature, made with the current secret: no grace to promise.
    const bool grace = q.value(5).toString() != QLatin1String("x-hub-signature");
    q.finish();
    if (auto p = checkIfMatch(req, version))
        return Response::problem(*p);
    if (url.isEmpty() || oldSecret.isEmpty())
        return Response::problem(Problem::make(409, QStringLiteral("no-callback"), QStringLiteral("No callback"),
                                               QStringLiteral("instance %1 has not registered a callback").arg(req.id())));
    const Problem refused = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
    if (!refused.isNull())
        return Response::problem(refused);

    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    const QString validUntil = grace ? timestamp(nowAt.addMSecs(qint64(m_ctx.options.secretGracePeriod.count()))) : QString();
    const QString secret = WebhookSignature::generateSecret();
    QSqlQuery &del = m_ctx.db.query(QStringLiteral("DELETE FROM outbox_secret_grace WHERE instance_id = ?"));
    del.addBindValue(req.id());
    if (!del.exec())
        return failedQuery(del);
    del.finish();
    if (grace) {
        QSqlQuery &ins = m_ctx.db.query(QStringLiteral(
            "INSERT INTO outbox_secret_grace (instance_id, previous_secret, valid_until) VALUES (?, ?, ?)"));
        ins.addBindValue(req.id());
        ins.addBindValue(oldSecret);
        ins.addBindValue(validUntil);
        if (!ins.exec())
            return failedQuery(ins);
        ins.finish();
    }
    QSqlQuery &upd = m_ctx.db.query(QStringLiteral(
        "UPDATE instances SET secret = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ?"));
    upd.addBindValue(secret);
    upd.addBindValue(now);
    upd.addBindValue(req.id());
    upd.addBindValue(version);
    if (!upd.exec())
        return failedQuery(upd);
    const bool updated = upd.numRowsAffected() == 1;
    upd.finish();
    if (!updated)
        return Response::problem(Problem::make(412, QStringLiteral("precondition-failed"), QStringLiteral("Precondition failed"),
                                               QStringLiteral("the instance changed meanwhile")));
    QSqlQuery &load = m_ctx.db.query(QStringLiteral("SELECT ") + InstancesApi::columns() + QStringLiteral(" FROM instances WHERE id = ?"));
    load.addBindValue(req.id());
    if (!load.exec() || !load.next())
        return failedQuery(load);
    const QJsonObject instance = InstancesApi::instanceJson(load);
    load.finish();
    Problem problem;
    const Audience audience{provider, owner, false};
    if (!m_ctx.journal.audit(req.who(),
                             {QStringLiteral("rotate-secret"), kInstance, req.id(), {}, {},
                              !reason.isEmpty() ? reason
                              : grace           ? QStringLiteral("previous secret valid until %1").arg(validUntil)
                                                : QStringLiteral("previous secret no longer valid (X-Hub-Signature)")},
                             audience, &problem)
        || !m_ctx.journal.event(kInstance, req.id(), version + 1, QStringLiteral("updated"), instance, audience, &problem)
        || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    QJsonObject body = instance;
    body.insert(QStringLiteral("secret"), secret);
    body.insert(QStringLiteral("previous_secret_valid_until"), grace ? QJsonValue(validUntil) : QJsonValue());
    return Response::json(200, body).withETag(version + 1);
}

} // namespace OpsDeck
