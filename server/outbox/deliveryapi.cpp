// /api/v1/deliveries and /api/v1/endpoints: routes, filters, listing and reading deliveries.
#include "deliveryapi.h"

#include "deliveryapisupport.h"
#include "deliveryrepository.h"
#include "deliveryschedule.h"
#include "deliverysql.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "server/api/apisupport.h"
#include "server/http/router.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QSqlQuery>

namespace OpsDeck {

using namespace ApiSupport;
using namespace DeliveryApiSupport;

namespace DeliveryApiSupport {

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

Problem endpointNotActive(qint64 endpointId, const QString &state, const QString &then)
{
    // A disabled endpoint is "enabled" again in the console; both go through the resume route.
    const QString detail = state == Endpoint::Disabled
                               ? QStringLiteral("endpoint %1 is DISABLED and nothing is sent to it until it is enabled "
                                                "again (POST /endpoints/%1/resume); enable it, then %2")
                                     .arg(endpointId)
                                     .arg(then)
                               : QStringLiteral("endpoint %1 is %2 and nothing is sent to it until it is resumed; resume it, then %3")
                                     .arg(endpointId)
                                     .arg(state, then);
    Problem p = Problem::make(409, QStringLiteral("endpoint-not-active"), QStringLiteral("Endpoint not active"), detail);
    p.with(QStringLiteral("state"), state);
    p.with(QStringLiteral("allowed"), QJsonArray{QStringLiteral("resume")});
    return p;
}

} // namespace DeliveryApiSupport

namespace {

QJsonArray headersJson(const QString &text)
{
    return QJsonDocument::fromJson(text.toUtf8()).array();
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
    std::optional<TimestampBound> lowerBound;
    for (const auto &[key, after] : {std::pair{QStringLiteral("created_after"), true},
                                     std::pair{QStringLiteral("created_before"), false}}) {
        if (!has(key))
            continue;
        const auto at = parseTimestampBound(value(key));
        if (!at) {
            *error = invalid(pathPrefix + key, QStringLiteral("expected an RFC 3339 timestamp"));
            return std::nullopt;
        }
        // Both bounds are exclusive: a range that holds no instant is a mistake, not an empty answer.
        if (lowerBound && !lowerBound->isBefore(*at)) {
            *error = invalid(pathPrefix + key, QStringLiteral("must be later than created_after"));
            return std::nullopt;
        }
        lowerBound = at;
        where.append(QStringLiteral("d.created_at") + (after ? QStringLiteral(" > ?") : QStringLiteral(" < ?")));
        f.values.append(timestamp(after ? at->afterIt() : at->beforeIt()));
    }
    f.where = where.isEmpty() ? QStringLiteral("1 = 1") : where.join(QStringLiteral(" AND "));
    return f;
}

Response DeliveryApi::list(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, filterKeys(), &problem);
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

namespace {

// A locking read inside the caller's write transaction, on PostgreSQL only: SQLite's write
// transaction already keeps every other writer out. A deadlock victim's problem is
// "storage-conflict", and the router runs the request again. A statement with an id to bind is
// prepared once (its text never changes); one with the ids in its text is run once.
std::optional<Problem> lockOnPostgres(Database &db, const QString &sql, std::optional<qint64> id = std::nullopt)
{
    if (db.backend() != Database::Backend::Postgres)
        return std::nullopt;
    QSqlQuery once(db.connection());
    QSqlQuery &q = id ? db.query(sql) : once;
    if (id)
        q.addBindValue(*id);
    std::optional<Problem> failure;
    if (!(id ? q.exec() : q.exec(sql)))
        failure = Database::sqlProblem(q);
    q.finish();
    return failure;
}

} // namespace

std::optional<Problem> DeliveryApi::lockRow(const QString &table, qint64 id)
{
    // PostgreSQL locks the row, so the worker recording an attempt meanwhile cannot make this a 412.
    return lockOnPostgres(m_ctx.db, QStringLiteral("SELECT id FROM %1 WHERE id = ? FOR UPDATE").arg(table), id);
}

std::optional<Problem> DeliveryApi::lockInstanceOf(qint64 deliveryId)
{
    // FOR UPDATE, not FOR NO KEY UPDATE: it also waits for a writer that has queued a notification
    // of the instance (the foreign key's share lock on the row). The destruction sweep queues one,
    // supersedes the older ones and then updates the instance: with a weaker lock, a retry of one
    // of those older ones could deadlock with it.
    return lockOnPostgres(
        m_ctx.db, QStringLiteral("SELECT id FROM instances WHERE id = (SELECT instance_id FROM deliveries WHERE id = ?) FOR UPDATE"),
        deliveryId);
}

std::optional<Problem> DeliveryApi::lockInstances(const QList<qint64> &instances)
{
    if (instances.isEmpty())
        return std::nullopt;
    // In id order, as every writer that locks several rows of a table takes them, so two bulk
    // retries over overlapping instances wait for each other instead of deadlocking.
    return lockOnPostgres(m_ctx.db, QStringLiteral("SELECT id FROM instances WHERE id IN (%1) ORDER BY id FOR UPDATE")
                                        .arg(DeliverySql::idList(instances)));
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
            {QStringLiteral("latency_ms"), q.value(7).isNull() ? QJsonValue() : QJsonValue(q.value(7).toLongLong())},
            {QStringLiteral("error_class"), q.value(8).isNull() ? QJsonValue() : QJsonValue(q.value(8).toString())},
            {QStringLiteral("error"), q.value(9).isNull() ? QJsonValue() : QJsonValue(q.value(9).toString())}});
    }
    q.finish();
    d->insert(QStringLiteral("attempt_log"), log);
    return Response::json(200, *d).withETag(d->value(QStringLiteral("version")).toInteger());
}

} // namespace OpsDeck
