// /api/v1/deliveries: retry and cancel one delivery, and the bulk retry by filter.
#include "deliveryapi.h"

#include "deliveryapisupport.h"
#include "deliveryrepository.h"
#include "deliverysql.h"
#include "writetransaction.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "server/api/apisupport.h"
#include "server/feed/changefeed.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QSet>
#include <QSqlQuery>

#include <algorithm>

namespace OpsDeck {

using namespace ApiSupport;
using namespace DeliveryApiSupport;

namespace {

// The states retry leaves from, in the machine's order.
QStringList retryableStates()
{
    QStringList states;
    for (const Transition &t : Delivery::machine().transitions()) {
        if (t.action == QLatin1String("retry") && !states.contains(t.from))
            states.append(t.from);
    }
    return states;
}

// A bulk retry's states: each one retry leaves from, in any case, none twice (a repeat is a
// client's mistake, not a wider filter). A state given alone (`alone`, at /state) is read as a
// list of one, so "DELIVERED" is refused as ["DELIVERED"] is instead of matching nothing. The
// states in upper case, or the problem naming the first bad entry by its path.
std::optional<QStringList> readStateList(const QStringList &names, const QStringList &retryable, bool alone,
                                         Problem *error)
{
    const QString listed = retryable.join(QStringLiteral(", "));
    const QString expected = QStringLiteral("expected one of %1").arg(listed);
    if (names.isEmpty()) {
        *error = invalid(QStringLiteral("/state"),
                         QStringLiteral("expected at least one of %1; leave the field out for all of them").arg(listed));
        return std::nullopt;
    }
    QStringList states;
    for (qsizetype i = 0; i < names.size(); ++i) {
        const QString path = alone ? QStringLiteral("/state") : QStringLiteral("/state/%1").arg(i);
        const QString state = names.at(i).toUpper();
        if (!Delivery::machine().isState(state)) {
            *error = invalid(path, QStringLiteral("unknown state; %1").arg(expected));
            return std::nullopt;
        }
        if (!retryable.contains(state)) {
            *error = invalid(path, QStringLiteral("%1 cannot be retried; %2").arg(state, expected));
            return std::nullopt;
        }
        if (const qsizetype first = states.indexOf(state); first >= 0) {
            *error = invalid(path, QStringLiteral("%1 is already listed at /state/%2").arg(state).arg(first));
            return std::nullopt;
        }
        states.append(state);
    }
    return states;
}

} // namespace

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
    if (!updateVersioned(q, kDelivery, error))
        return false;
    // A lease whose worker is gone (expired: abandoned at shutdown, or a crash) is let go, its
    // attempt logged as interrupted: the row then leaves the claim's in-flight index. A live one
    // stays, its attempt still on the wire.
    if (!m_repository->letGoOfExpiredLease(id, now, error))
        return false;
    // Retry is refused while a newer notification of the instance exists (retrySuperseded()), so
    // this one is the newest again, and the older ones still undelivered (left while this one
    // was cancelled or failed) are stale now.
    if (t->to == Delivery::Pending
        && !m_repository->supersedeOlder(before.value(QStringLiteral("instance_id")).toInteger(),
                                         before.value(QStringLiteral("event_type")).toString(), id, now, error))
        return false;
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
    TransitionSpec retry = deliveryTransitions();
    // The instance first, then the delivery (a status change's order: it updates the instance,
    // then queues and supersedes). On PostgreSQL a status change on another replica that has not
    // committed yet is then waited for, and the check below sees its newer notification; without
    // the instance's lock the check missed it, this one became PENDING beside the newer, and
    // could reach the provider after it. Cancel needs none: it makes nothing due.
    retry.lock = [this](qint64 id) -> std::optional<Problem> {
        if (auto p = lockInstanceOf(id))
            return p;
        return lockRow(QStringLiteral("deliveries"), id);
    };
    retry.check = [this](const TransitionStep &step) -> std::optional<Problem> {
        if (auto p = retrySuperseded(step.before))
            return p;
        return retryHeldByEndpoint(step.before);
    };
    return runTransition(m_ctx, req, retry, QStringLiteral("retry"));
}

Response DeliveryApi::cancel(Request &req)
{
    return runTransition(m_ctx, req, deliveryTransitions(), QStringLiteral("cancel"));
}

TransitionSpec DeliveryApi::outboxTransitions(const QString &kind, const StateMachine &machine, const QString &table,
                                              VisibleRow load)
{
    TransitionSpec spec;
    spec.kind = kind;
    spec.machine = &machine;
    spec.stateField = QStringLiteral("state");
    spec.lock = [this, table](qint64 id) { return lockRow(table, id); };
    spec.load = [this, load](const Caller &who, qint64 id, Problem *error) { return (this->*load)(who, id, error); };
    return spec;
}

TransitionSpec DeliveryApi::deliveryTransitions()
{
    TransitionSpec spec = outboxTransitions(kDelivery, Delivery::machine(), QStringLiteral("deliveries"), &DeliveryApi::visibleDelivery);
    spec.write = [this](TransitionStep &step, QJsonObject *after, Problem *error) {
        return applyDelivery(step.request.who(), step.before, step.action, step.reason, after, error);
    };
    return spec;
}

std::optional<Problem> DeliveryApi::retrySuperseded(const QJsonObject &delivery)
{
    Problem problem;
    const qint64 newer = newerNotification(delivery, &problem);
    if (newer < 0)
        return problem;
    if (newer == 0)
        return std::nullopt;
    Problem p = Problem::make(409, QStringLiteral("delivery-superseded"), QStringLiteral("Superseded by a newer notification"),
                              QStringLiteral("delivery %1 is newer for instance %2 and carries its current status; "
                                             "retry that one instead")
                                  .arg(newer)
                                  .arg(delivery.value(QStringLiteral("instance_id")).toInteger()));
    p.with(QStringLiteral("newer_delivery_id"), newer);
    p.with(QStringLiteral("state"), delivery.value(QStringLiteral("state")).toString());
    return p;
}

std::optional<Problem> DeliveryApi::retryHeldByEndpoint(const QJsonObject &delivery)
{
    // "Now" would be a promise the worker does not keep: it sends nothing to the endpoint until it
    // is resumed, and resuming makes the endpoint's waiting deliveries due anyway.
    const qint64 endpoint = delivery.value(QStringLiteral("endpoint_id")).toInteger();
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT state FROM endpoints WHERE id = ?"));
    q.addBindValue(endpoint);
    Problem problem;
    const auto row = loadRow(
        q, [](const QSqlQuery &r) { return QJsonObject{{QStringLiteral("state"), r.value(0).toString()}}; }, kEndpoint,
        endpoint, &problem);
    if (!row)
        return problem;
    const QString state = row->value(QStringLiteral("state")).toString();
    if (state == Endpoint::Active)
        return std::nullopt;
    return endpointNotActive(endpoint, state, QStringLiteral("retry (its PENDING deliveries are sent at once on resume)"));
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
    // The states are read here, not by readFilter(): they name retryable states only, and each
    // is checked at its own path once the body as a whole is sound.
    std::optional<QStringList> stateList;
    bool stateAlone = false;
    for (const QString &key : filterKeys()) {
        if (!r.object().contains(key))
            continue;
        const QJsonValue v = r.object().value(key);
        if (key == QLatin1String("state") && v.isArray()) {
            stateList = r.optStringList(key);
            continue;
        }
        if (key == QLatin1String("state") && v.isString()) {
            stateList = QStringList{v.toString()};
            stateAlone = true;
            continue;
        }
        // Numbers as written (1.5 stays 1.5 and is refused), so nothing widens or shifts the filter.
        if (v.isDouble())
            values.insert(key, QString::number(v.toDouble(), 'g', 17));
        else if (v.isString())
            values.insert(key, v.toString());
        else if (v.isNull())
            r.addError(key, QStringLiteral("null would match every delivery; leave the field out for that"));
        else if (key == QLatin1String("state"))
            r.addError(key, QStringLiteral("expected a state or a list of states"));
        else
            r.addError(key, QStringLiteral("expected a string or an integer"));
    }
    // A null dry_run would read as "not a dry run": the retry would run while the client meant
    // to leave the choice open, or only to count.
    if (r.object().contains(QStringLiteral("dry_run")) && r.object().value(QStringLiteral("dry_run")).isNull())
        r.addError(QStringLiteral("dry_run"), QStringLiteral("null: send true to count, false (or nothing) to retry"));
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
    // An empty body would retry every retryable delivery the caller sees, all at once: a stray
    // POST, or a client that lost its filter on the way, should not be able to. A dry run may
    // count them; a retry names what it retries (every retryable state, if that is the intent).
    if (!dryRun && values.isEmpty() && !stateList)
        return Response::problem(Problem::make(
            422, QStringLiteral("filter-required"), QStringLiteral("Filter required"),
            QStringLiteral("a bulk retry without a filter would retry every retryable delivery you can see: name at"
                           " least one of %1 (\"state\": [\"PENDING\", \"FAILED\", \"CANCELLED\"] for all of them),"
                           " or count them first with dry_run")
                .arg(filterKeys().join(QStringLiteral(", ")))));
    Problem problem;
    const auto filter = readFilter(
        req.who(), [&values](const QString &k) { return values.value(k); },
        [&values](const QString &k) { return values.contains(k); }, QLatin1Char('/'), &problem);
    if (!filter)
        return Response::problem(problem);

    // Only the states retry leaves from; DELIVERED and SUPERSEDED are never touched, nor a
    // notification that a newer one of its instance replaces (see newerNotification()).
    QStringList states = retryableStates();
    if (stateList) {
        Problem refused;
        const auto chosen = readStateList(*stateList, states, stateAlone, &refused);
        if (!chosen)
            return Response::problem(refused);
        states = *chosen;
    }
    WriteTransaction tx(m_ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    const bool postgres = m_ctx.db.backend() == Database::Backend::Postgres;
    QString matching = filter->where + QStringLiteral(" AND d.state IN ('") + states.join(QStringLiteral("', '"))
                       + QStringLiteral("') AND (d.event_type = '") + DeliveryRepository::TestEvent
                       + QStringLiteral("' OR NOT EXISTS (SELECT 1 FROM deliveries n WHERE n.instance_id = d.instance_id"
                                        " AND n.event_type = d.event_type AND n.id > d.id))");
    // Both reads below run the filter the same way: up to one more row than a bulk retry takes.
    const auto readMatching = [&](QSqlQuery &query, const QString &columns, const QString &tail) {
        query.setForwardOnly(true);
        query.prepare(QStringLiteral("SELECT ") + columns + QStringLiteral(" FROM deliveries d WHERE ") + matching
                      + QStringLiteral(" ORDER BY d.id LIMIT ?") + tail);
        for (const QVariant &v : filter->values)
            query.addBindValue(v);
        query.addBindValue(kMaxBulk + 1);
        return query.exec();
    };
    const auto tooMany = [] {
        return Response::problem(Problem::make(422, QStringLiteral("too-many-matches"), QStringLiteral("Too many matches"),
                                               QStringLiteral("more than %1 deliveries match; narrow the filter").arg(kMaxBulk)));
    };
    if (postgres && !dryRun) {
        // As the single retry: the instances before the deliveries, so a status change that has
        // not committed yet is waited for and the "no newer one" test below sees its notification.
        // A plain read finds the instances, which are then locked in id order. Too many matches
        // are refused here already: rows that stop matching before the locking read must not
        // shrink an oversized retry into a partial one.
        QSqlQuery candidates(m_ctx.db.connection());
        if (!readMatching(candidates, QStringLiteral("d.instance_id"), QString()))
            return failedQuery(candidates);
        QList<qint64> instances;
        while (candidates.next())
            instances.append(candidates.value(0).toLongLong());
        candidates.finish();
        if (instances.size() > kMaxBulk)
            return tooMany();
        std::sort(instances.begin(), instances.end());
        instances.erase(std::unique(instances.begin(), instances.end()), instances.end());
        if (auto p = lockInstances(instances))
            return Response::problem(*p);
        // A row that became retryable after that read belongs to an instance this retry may not
        // hold: it is left out, as if it had changed after the retry.
        matching += instances.isEmpty()
                        ? QStringLiteral(" AND 1 = 0")
                        : QStringLiteral(" AND d.instance_id IN (%1)").arg(DeliverySql::idList(instances));
    }
    QSqlQuery q(m_ctx.db.connection());
    if (!readMatching(q, DeliveryRepository::deliveryColumns(), postgres ? QStringLiteral(" FOR UPDATE OF d") : QString()))
        return failedQuery(q);
    QList<QJsonObject> matches;
    QJsonObject byState;
    while (q.next()) {
        const QJsonObject d = DeliveryRepository::deliveryJson(q);
        const QString state = d.value(QStringLiteral("state")).toString();
        byState.insert(state, byState.value(state).toInteger() + 1);
        matches.append(d);
    }
    q.finish();
    if (matches.size() > kMaxBulk)
        return tooMany();
    // Retried, those of a paused or disabled endpoint still wait for its resume: say how many,
    // so "retried" is not read as "sent".
    QSet<qint64> endpoints;
    for (const QJsonObject &d : std::as_const(matches))
        endpoints.insert(d.value(QStringLiteral("endpoint_id")).toInteger());
    QSet<qint64> heldBy;
    if (!endpoints.isEmpty()) {
        QSqlQuery e(m_ctx.db.connection());
        e.setForwardOnly(true);
        if (!e.exec(QStringLiteral("SELECT id FROM endpoints WHERE state <> '%1' AND id IN (%2)")
                        .arg(Endpoint::Active, DeliverySql::idList(QList<qint64>(endpoints.cbegin(), endpoints.cend())))))
            return failedQuery(e);
        while (e.next())
            heldBy.insert(e.value(0).toLongLong());
    }
    const qint64 held = std::count_if(matches.cbegin(), matches.cend(), [&heldBy](const QJsonObject &d) {
        return heldBy.contains(d.value(QStringLiteral("endpoint_id")).toInteger());
    });
    QJsonObject result{{QStringLiteral("dry_run"), dryRun},
                       {QStringLiteral("count"), qint64(matches.size())},
                       {QStringLiteral("states"), byState},
                       {QStringLiteral("held"), held}};
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

} // namespace OpsDeck
