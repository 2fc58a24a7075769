// /api/v1/instances: app instances, their registration by the provider, stop and start.
#include "instancesapi.h"

#include "apisupport.h"
#include "core/delivery.h"
#include "core/endpoint.h"
#include "core/instance.h"
#include "core/organization.h"
#include "core/webhooksignature.h"
#include "server/delivery/urlguard.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/deliveryschedule.h"
#include "server/outbox/writetransaction.h"
#include "server/feed/changefeed.h"
#include "server/http/jsonwriter.h"
#include "server/http/router.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlQuery>
#include <QUrl>
#include <QUuid>

namespace OpsDeck {

using namespace ApiSupport;

namespace {

const QString kInstance = QStringLiteral("instance");

QJsonValue nullable(const QVariant &v)
{
    return v.isNull() || v.toString().isEmpty() ? QJsonValue() : QJsonValue(v.toString());
}

Audience audienceOf(const QJsonObject &instance)
{
    Audience a;
    a.provider = instance.value(QStringLiteral("provider_id")).toInteger();
    a.owner = instance.value(QStringLiteral("owner")).toString();
    return a;
}

QString visibility(const Caller &who)
{
    switch (who.role) {
    case Actor::Provider: return QStringLiteral("provider_id = ?");
    case Actor::Owner: return QStringLiteral("owner = ?");
    default: return QStringLiteral("(1 = 1 OR ? = '')");
    }
}

void bindVisibility(QSqlQuery &q, const Caller &who)
{
    if (who.role == Actor::Provider) {
        bool ok = false;
        const qint64 id = who.subject.toLongLong(&ok);
        q.addBindValue(ok ? id : qint64(-1));
    } else {
        q.addBindValue(Database::text(who.subject));
    }
}

} // namespace

const QString &InstancesApi::columns()
{
    static const QString c = QStringLiteral(
        "id, name, organization_id, provider_id, application, owner, status, version, created_at, updated_at,"
        " status_changed_at, callback_url, callback_signing, awaiting_ack_reason, awaiting_ack_delivery, destroy_after,"
        " awaiting_ack_event");
    return c;
}

QJsonObject InstancesApi::instanceJson(const QSqlQuery &q)
{
    QJsonObject o{{QStringLiteral("id"), q.value(0).toLongLong()},
                  {QStringLiteral("name"), q.value(1).toString()},
                  {QStringLiteral("organization_id"), q.value(2).toLongLong()},
                  {QStringLiteral("provider_id"), q.value(3).toLongLong()},
                  {QStringLiteral("application"), q.value(4).toString()},
                  {QStringLiteral("owner"), q.value(5).toString()},
                  {QStringLiteral("status"), q.value(6).toString()},
                  {QStringLiteral("version"), q.value(7).toLongLong()},
                  {QStringLiteral("created_at"), q.value(8).toString()},
                  {QStringLiteral("updated_at"), q.value(9).toString()},
                  {QStringLiteral("status_changed_at"), q.value(10).toString()},
                  {QStringLiteral("destroy_after"), nullable(q.value(15))}};
    const QString url = q.value(11).toString();
    o.insert(QStringLiteral("callback"), url.isEmpty() ? QJsonValue()
                                                       : QJsonObject{{QStringLiteral("url"), url},
                                                                     {QStringLiteral("signing"), q.value(12).toString()}});
    o.insert(QStringLiteral("awaiting_ack"),
             q.value(13).isNull() ? QJsonValue()
                                  : QJsonObject{{QStringLiteral("reason"), q.value(13).toString()},
                                                {QStringLiteral("delivery_id"), q.value(14).toLongLong()},
                                                {QStringLiteral("event_type"), q.value(16).toString()}});
    return o;
}

void InstancesApi::writeInstance(JsonWriter &out, const QSqlQuery &q)
{
    out.beginObject();
    out.key("id").value(q.value(0).toLongLong());
    out.key("name").value(q.value(1).toString());
    out.key("organization_id").value(q.value(2).toLongLong());
    out.key("provider_id").value(q.value(3).toLongLong());
    out.key("application").value(q.value(4).toString());
    out.key("owner").value(q.value(5).toString());
    out.key("status").value(q.value(6).toString());
    out.key("version").value(q.value(7).toLongLong());
    out.key("created_at").value(q.value(8).toString());
    out.key("updated_at").value(q.value(9).toString());
    out.key("status_changed_at").value(q.value(10).toString());
    const QString url = q.value(11).toString();
    out.key("callback");
    if (url.isEmpty())
        out.null();
    else
        out.beginObject().key("url").value(url).key("signing").value(q.value(12).toString()).endObject();
    out.key("awaiting_ack");
    if (q.value(13).isNull())
        out.null();
    else
        out.beginObject()
            .key("reason").value(q.value(13).toString())
            .key("delivery_id").value(q.value(14).toLongLong())
            .key("event_type").value(q.value(16).toString())
            .endObject();
    out.key("destroy_after").nullableValue(q.value(15).toString());
    out.endObject();
}

InstancesApi::InstancesApi(ApiContext context)
    : m_ctx(context)
    , m_schedule(retryScheduleFor(context.options).value_or(RetrySchedule()))
{
}

void InstancesApi::addRoutes(Router &router)
{
    const Actors users = Actors(Actor::Operator) | Actor::Owner;
    const Actors registrars = Actors(Actor::Operator) | Actor::Provider;
    router.add("GET", QStringLiteral("/api/v1/instances"), kUserRoles, false, [this](Request &r) { return list(r); });
    router.add("POST", QStringLiteral("/api/v1/instances"), users, true, [this](Request &r) { return create(r); });
    router.add("GET", QStringLiteral("/api/v1/instances/{id}"), kUserRoles, false, [this](Request &r) { return get(r); });
    router.add("POST", QStringLiteral("/api/v1/instances/{id}/register"), registrars, true,
               [this](Request &r) { return registerInstance(r); });
    router.add("POST", QStringLiteral("/api/v1/instances/{id}/stop"), users, true,
               [this](Request &r) { return runTransition(m_ctx, r, transitions(), QStringLiteral("stop")); });
    router.add("POST", QStringLiteral("/api/v1/instances/{id}/start"), users, true,
               [this](Request &r) {
                   // A deleted organization runs nothing: restore it first. An instance stopped
                   // before its provider registered it has no callback: RUNNING would tell no one.
                   // One whose destruction callback was issued may be gone at its provider already.
                   TransitionSpec start = transitions();
                   start.check = [this](const TransitionStep &step) {
                       if (std::optional<Problem> unregistered = neverRegistered(step.before))
                           return unregistered;
                       if (std::optional<Problem> destroying = destructionIssued(step.before))
                           return destroying;
                       return organizationDeleted(step.before);
                   };
                   return runTransition(m_ctx, r, start, QStringLiteral("start"));
               });
}

Response InstancesApi::list(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, {QStringLiteral("organization"), QStringLiteral("provider"), QStringLiteral("status"),
                                          QStringLiteral("owner"), QStringLiteral("updated_after")}, &problem);
    if (!page)
        return Response::problem(problem);
    const auto org = queryId(req, QStringLiteral("organization"), &problem);
    const auto provider = problem.isNull() ? queryId(req, QStringLiteral("provider"), &problem) : std::nullopt;
    if (!problem.isNull())
        return Response::problem(problem);
    const QString status = req.queryValue(QStringLiteral("status"));
    if (req.hasQuery(QStringLiteral("status")) && !Instance::machine().isState(status))
        return Response::problem(invalid(QStringLiteral("?status"), QStringLiteral("expected one of %1")
                                                                        .arg(Instance::machine().states().join(QStringLiteral(", ")))));
    QString updatedAfter;
    if (req.hasQuery(QStringLiteral("updated_after"))) {
        const auto at = parseTimestampBound(req.queryValue(QStringLiteral("updated_after")));
        if (!at)
            return Response::problem(invalid(QStringLiteral("?updated_after"), QStringLiteral("expected an RFC 3339 timestamp")));
        updatedAfter = timestamp(at->afterIt());
    }
    const QString owner = req.queryValue(QStringLiteral("owner"));
    // An empty owner would read as no filter at all: every instance, where the caller asked for
    // some owner's.
    if (req.hasQuery(QStringLiteral("owner")) && owner.isEmpty())
        return Response::problem(invalid(QStringLiteral("?owner"), QStringLiteral("expected an owner's name")));

    // One statement whatever the filters: unused ones compare against their neutral value.
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + columns() + QStringLiteral(
        " FROM instances WHERE id > ? AND (? = 0 OR organization_id = ?) AND (? = 0 OR provider_id = ?)"
        " AND (? = '' OR status = ?) AND (? = '' OR owner = ?) AND (? = '' OR updated_at > ?) AND ")
                                  + visibility(req.who()) + QStringLiteral(" ORDER BY id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(org.value_or(0));
    q.addBindValue(org.value_or(0));
    q.addBindValue(provider.value_or(0));
    q.addBindValue(provider.value_or(0));
    q.addBindValue(Database::text(status));
    q.addBindValue(Database::text(status));
    q.addBindValue(Database::text(owner));
    q.addBindValue(Database::text(owner));
    q.addBindValue(Database::text(updatedAfter));
    q.addBindValue(Database::text(updatedAfter));
    bindVisibility(q, req.who());
    q.addBindValue(page->limit);
    if (!q.exec()) {
        const Problem p = Database::sqlProblem(q);
        q.finish();
        return Response::problem(p);
    }
    JsonWriter out(qsizetype(page->limit) * 420 + 64);
    out.beginObject().key("items").beginArray();
    qint64 last = 0;
    int count = 0;
    while (q.next()) {
        last = q.value(0).toLongLong();
        writeInstance(out, q);
        ++count;
    }
    q.finish();
    out.endArray().key("next");
    if (count >= page->limit)
        out.value(cursorAfter(last));
    else
        out.null();
    out.endObject();
    return Response::text(200, out.data(), QByteArrayLiteral("application/json"));
}

std::optional<QJsonObject> InstancesApi::loadVisible(const Caller &who, qint64 id, Problem *error)
{
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + columns() + QStringLiteral(" FROM instances WHERE id = ? AND ")
                                  + visibility(who));
    q.addBindValue(id);
    bindVisibility(q, who);
    return loadRow(q, instanceJson, kInstance, id, error);
}

Response InstancesApi::get(Request &req)
{
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + columns() + QStringLiteral(" FROM instances WHERE id = ? AND ")
                                  + visibility(req.who()));
    q.addBindValue(req.id());
    bindVisibility(q, req.who());
    if (!q.exec()) {
        const Problem p = Database::sqlProblem(q);
        q.finish();
        return Response::problem(p);
    }
    if (!q.next()) {
        q.finish();
        return Response::problem(notFound(kInstance, req.id()));
    }
    JsonWriter out(512);
    writeInstance(out, q);
    const qint64 version = q.value(7).toLongLong();
    q.finish();
    return Response::text(200, out.data(), QByteArrayLiteral("application/json")).withETag(version);
}

Response InstancesApi::create(Request &req)
{
    JsonReader r = bodyReader(req);
    const QString name = r.name(QStringLiteral("name"));
    const qint64 orgId = r.integer(QStringLiteral("organization_id"), 1, std::numeric_limits<qint64>::max() / 2);
    const qint64 providerId = r.integer(QStringLiteral("provider_id"), 1, std::numeric_limits<qint64>::max() / 2);
    const QString application = r.string(QStringLiteral("application"), 200);
    const QString owner = r.name(QStringLiteral("owner"));
    const QString reason = readReason(r, req);
    r.rejectUnknown();
    if (!r.ok())
        return Response::problem(r.problem());
    if (req.who().role == Actor::Owner && owner != req.who().subject)
        return Response::problem(Problem::make(403, QStringLiteral("forbidden"), QStringLiteral("Forbidden"),
                                               QStringLiteral("an owner may only create instances it owns")));

    WriteTransaction tx(m_ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    Problem orgProblem;
    const std::optional<QString> orgStatus = organizationStatus(orgId, &orgProblem);
    if (!orgStatus)
        return Response::problem(orgProblem);
    if (orgStatus->isEmpty())
        return Response::problem(invalid(QStringLiteral("/organization_id"), QStringLiteral("no such organization")));
    if (*orgStatus != Organization::Available)
        return Response::problem(Problem::make(409, QStringLiteral("organization-deleted"), QStringLiteral("Organization deleted"),
                                               QStringLiteral("organization %1 is deleted").arg(orgId)));
    QSqlQuery &prov = m_ctx.db.query(QStringLiteral("SELECT applications FROM providers WHERE id = ?"));
    prov.addBindValue(providerId);
    prov.exec();
    const bool providerExists = prov.next();
    const QJsonArray apps = providerExists ? QJsonDocument::fromJson(prov.value(0).toString().toUtf8()).array() : QJsonArray();
    prov.finish();
    if (!providerExists)
        return Response::problem(invalid(QStringLiteral("/provider_id"), QStringLiteral("no such provider")));
    if (!apps.contains(application))
        return Response::problem(invalid(QStringLiteral("/application"), QStringLiteral("the provider offers no application '%1'")
                                                                             .arg(application)));
    const QString now = nowTimestamp();
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at,"
        " updated_at, status_changed_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?) RETURNING id"));
    q.addBindValue(name);
    q.addBindValue(orgId);
    q.addBindValue(providerId);
    q.addBindValue(application);
    q.addBindValue(Database::text(owner));
    q.addBindValue(Instance::Pending);
    q.addBindValue(now);
    q.addBindValue(now);
    q.addBindValue(now);
    Problem problem;
    const auto inserted = insertedId(q, &problem);
    if (!inserted)
        return Response::problem(problem);
    const qint64 id = *inserted;
    const Caller system{Actor::Operator, {}, 0, {}};
    const auto o = loadVisible(system, id, &problem);
    if (!o || !m_ctx.journal.audit(req.who(), {QStringLiteral("create"), kInstance, id, {}, Instance::Pending, reason}, audienceOf(*o), &problem)
        || !m_ctx.journal.event(kInstance, id, 1, QStringLiteral("created"), *o, audienceOf(*o), &problem) || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(201, *o).withETag(1).withHeader(QByteArrayLiteral("Location"),
                                                          "/api/v1/instances/" + QByteArray::number(id));
}

Response InstancesApi::registerInstance(Request &req)
{
    JsonReader r = bodyReader(req);
    QString url = r.string(QStringLiteral("callback_url"), 2048);
    const QString signing = r.optOneOf(QStringLiteral("signing"), {QStringLiteral("standard-webhooks"), QStringLiteral("x-hub-signature")})
                                .value_or(QStringLiteral("standard-webhooks"));
    const QString status = r.optOneOf(QStringLiteral("status"), {Instance::Running, Instance::Stopped}).value_or(Instance::Running);
    const QString reason = readReason(r, req);
    r.rejectUnknown();
    if (r.ok()) {
        const Problem urlError = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
        if (!urlError.isNull()) {
            r.addError(QStringLiteral("callback_url"), urlError.detail);
        } else {
            // The endpoint's key. Checked again: "/" added to an empty path may take a URL at the
            // length limit past it, and what is stored must pass wherever it is checked later.
            url = CallbackUrlGuard::canonical(QUrl(url, QUrl::StrictMode));
            const Problem canonicalError = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
            if (!canonicalError.isNull())
                r.addError(QStringLiteral("callback_url"), canonicalError.detail);
        }
    }
    if (!r.ok())
        return Response::problem(r.problem());
    TransitionSpec spec = transitions();
    // Register may end in RUNNING or STOPPED: the machine is asked for the one the body names.
    spec.target = status;
    spec.write = [this, url, signing](TransitionStep &step, QJsonObject *after, Problem *error) {
        return writeRegistration(step, url, signing, after, error);
    };
    return runTransition(m_ctx, req, spec, QStringLiteral("register"), reason);
}

std::optional<QString> InstancesApi::organizationStatus(qint64 id, Problem *error)
{
    QSqlQuery &org = m_ctx.db.query(QStringLiteral("SELECT status FROM organizations WHERE id = ?"));
    org.addBindValue(id);
    if (!org.exec()) {
        *error = Database::sqlProblem(org);
        org.finish();
        return std::nullopt;
    }
    const QString status = org.next() ? org.value(0).toString() : QString();
    org.finish();
    return status;
}

std::optional<Problem> InstancesApi::organizationDeleted(const QJsonObject &instance)
{
    const qint64 orgId = instance.value(QStringLiteral("organization_id")).toInteger();
    Problem problem;
    const std::optional<QString> status = organizationStatus(orgId, &problem);
    if (!status)
        return problem;
    if (*status == Organization::Available)
        return std::nullopt;
    return Problem::make(409, QStringLiteral("organization-deleted"), QStringLiteral("Organization deleted"),
                         QStringLiteral("organization %1 is deleted: restore it before starting its instances").arg(orgId));
}

std::optional<Problem> InstancesApi::neverRegistered(const QJsonObject &instance)
{
    if (!Instance::stoppedUnregistered(instance))
        return std::nullopt;
    return Problem::make(409, QStringLiteral("instance-not-registered"), QStringLiteral("Instance never registered"),
                         QStringLiteral("instance %1 was stopped before its provider registered it: no callback can tell the"
                                        " provider it runs. Create a new instance instead")
                             .arg(instance.value(QStringLiteral("id")).toInteger()));
}

std::optional<Problem> InstancesApi::destructionIssued(const QJsonObject &instance)
{
    if (!Instance::destructionIssued(instance))
        return std::nullopt;
    const qint64 delivery =
        instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("delivery_id")).toInteger();
    return Problem::make(409, QStringLiteral("instance-being-destroyed"), QStringLiteral("Instance being destroyed"),
                         QStringLiteral("instance %1's retention is over and its destruction callback was issued"
                                        " (delivery %2): its provider may have deleted it already, even if that"
                                        " delivery was cancelled since. It becomes DESTROYED once the provider"
                                        " acknowledges; create a new instance instead")
                             .arg(instance.value(QStringLiteral("id")).toInteger())
                             .arg(delivery));
}

TransitionSpec InstancesApi::transitions()
{
    TransitionSpec spec;
    spec.kind = kInstance;
    spec.machine = &Instance::machine();
    // What the instance holds back is not offered in a refusal's "allowed" (clients enable actions from it).
    spec.refused = [](Refusal *refusal, const QJsonObject &instance) {
        const QStringList held = Instance::heldActions(instance);
        if (held.isEmpty())
            return;
        QStringList allowed = refusal->allowed;
        for (const QString &action : held)
            allowed.removeAll(action);
        refusal->setAllowed(allowed);
    };
    spec.load = [this](const Caller &who, qint64 id, Problem *error) { return loadVisible(who, id, error); };
    spec.write = [this](TransitionStep &step, QJsonObject *after, Problem *error) {
        return writeStatus(step.request, step.before, step.transition.to, step.action, step.reason, after, error);
    };
    return spec;
}

bool InstancesApi::writeRegistration(TransitionStep &step, const QString &url, const QString &signing, QJsonObject *after,
                                     Problem *error)
{
    const QString secret = WebhookSignature::generateSecret();
    const qint64 providerId = step.before.value(QStringLiteral("provider_id")).toInteger();
    const QString now = nowTimestamp();
    const auto existing = endpointId(providerId, url, error);
    if (!existing)
        return false;
    if (*existing == 0) {
        QSqlQuery &ins = m_ctx.db.query(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at,"
                                                       " updated_at) VALUES (?, ?, ?, 1, ?, ?)"));
        ins.addBindValue(providerId);
        ins.addBindValue(url);
        ins.addBindValue(Endpoint::Active);
        ins.addBindValue(now);
        ins.addBindValue(now);
        if (!execute(ins, error))
            return false;
        // A new endpoint is on the feed as every new object is.
        const auto created = endpointId(providerId, url, error);
        if (!created || *created == 0
            || !DeliveryRepository(m_ctx.db, m_ctx.journal, m_schedule).emitEndpoint(*created, QStringLiteral("created"), error))
            return false;
    }
    QSqlQuery &cb = m_ctx.db.query(QStringLiteral("UPDATE instances SET callback_url = ?, callback_signing = ?, secret = ?"
                                                  " WHERE id = ?"));
    cb.addBindValue(url);
    cb.addBindValue(signing);
    cb.addBindValue(secret);
    cb.addBindValue(step.request.id());
    if (!execute(cb, error))
        return false;
    QJsonObject withCallback = step.before;
    withCallback.insert(QStringLiteral("callback"), QJsonObject{{QStringLiteral("url"), url}, {QStringLiteral("signing"), signing}});
    step.answerExtra.insert(QStringLiteral("secret"), secret);
    return writeStatus(step.request, withCallback, step.transition.to, step.action, step.reason, after, error);
}

bool InstancesApi::writeStatus(const Request &req, const QJsonObject &before, const QString &to, const QString &action,
                               const QString &reason, QJsonObject *after, Problem *error)
{
    const qint64 id = before.value(QStringLiteral("id")).toInteger();
    const qint64 version = before.value(QStringLiteral("version")).toInteger();
    const QString from = before.value(QStringLiteral("status")).toString();
    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    const QVariant destroyAfter = to == Instance::Stopped
                                      ? QVariant(timestamp(nowAt.addSecs(m_ctx.options.instanceRetention.count())))
                                      : QVariant(QMetaType::fromType<QString>());
    // What a destruction waited for is over with any change of status: a restarted instance awaits
    // none, and one stopped again awaits its new notification only once its new retention ends.
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("UPDATE instances SET status = ?, version = version + 1, updated_at = ?,"
                                                 " status_changed_at = ?, destroy_after = ?, awaiting_ack_reason = NULL,"
                                                 " awaiting_ack_delivery = NULL, awaiting_ack_event = NULL"
                                                 " WHERE id = ? AND version = ?"));
    q.addBindValue(to);
    q.addBindValue(now);
    q.addBindValue(now);
    q.addBindValue(destroyAfter);
    q.addBindValue(id);
    q.addBindValue(version);
    if (!updateVersioned(q, kInstance, error))
        return false;
    const Caller everyone{Actor::Operator, {}, 0, {}};
    const auto o = loadVisible(everyone, id, error);
    if (!o)
        return false;
    *after = *o;
    return m_ctx.journal.audit(req.who(), {action, kInstance, id, from, to, reason}, audienceOf(*o), error)
           && m_ctx.journal.event(kInstance, id, version + 1, QStringLiteral("updated"), *o, audienceOf(*o), error)
           && (from == to || enqueueCallback(*o, from, error));
}

std::optional<qint64> InstancesApi::endpointId(qint64 providerId, const QString &url, Problem *error)
{
    QSqlQuery &ep = m_ctx.db.query(QStringLiteral("SELECT id FROM endpoints WHERE provider_id = ? AND url = ?"));
    ep.addBindValue(providerId);
    ep.addBindValue(url);
    if (!ep.exec()) {
        *error = Database::sqlProblem(ep);
        ep.finish();
        return std::nullopt;
    }
    const qint64 id = ep.next() ? ep.value(0).toLongLong() : 0;
    ep.finish();
    return id;
}

bool InstancesApi::enqueueCallback(const QJsonObject &instance, const QString &previousStatus, Problem *error)
{
    const QJsonObject callback = instance.value(QStringLiteral("callback")).toObject();
    if (callback.isEmpty())
        return true;
    const qint64 id = instance.value(QStringLiteral("id")).toInteger();
    const qint64 providerId = instance.value(QStringLiteral("provider_id")).toInteger();
    const auto found = endpointId(providerId, callback.value(QStringLiteral("url")).toString(), error);
    if (!found)
        return false;
    const qint64 endpoint = *found;
    if (endpoint == 0) {
        *error = internal(QStringLiteral("the instance's callback endpoint is missing"));
        return false;
    }
    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    Audience audience;
    audience.provider = providerId;
    DeliveryRepository deliveries(m_ctx.db, m_ctx.journal, m_schedule);

    const QJsonObject body{{QStringLiteral("type"), Instance::StatusChangedEvent},
                           {QStringLiteral("instance_id"), id},
                           {QStringLiteral("status"), instance.value(QStringLiteral("status"))},
                           {QStringLiteral("previous_status"), previousStatus},
                           {QStringLiteral("version"), instance.value(QStringLiteral("version"))},
                           {QStringLiteral("changed_at"), instance.value(QStringLiteral("status_changed_at"))},
                           {QStringLiteral("organization_id"), instance.value(QStringLiteral("organization_id"))}};
    const QString webhookId = QStringLiteral("msg_") + QUuid::createUuid().toString(QUuid::Id128);
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, give_up_at, created_at, updated_at, version) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 1)"
        " RETURNING id"));
    q.addBindValue(webhookId);
    q.addBindValue(Instance::StatusChangedEvent);
    q.addBindValue(id);
    q.addBindValue(providerId);
    q.addBindValue(endpoint);
    q.addBindValue(Delivery::Pending);
    q.addBindValue(QString::fromUtf8(QJsonDocument(body).toJson(QJsonDocument::Compact)));
    q.addBindValue(now);
    const QString giveUpAt = deliveries.giveUpAt(nowAt);
    q.addBindValue(giveUpAt);
    q.addBindValue(now);
    q.addBindValue(now);
    if (!q.exec() || !q.next()) {
        *error = Database::sqlProblem(q);
        q.finish();
        return false;
    }
    const qint64 deliveryId = q.value(0).toLongLong();
    q.finish();
    // Older undelivered notifications for this instance say less than the new one. The console's
    // Callbacks view follows the change on the feed.
    if (!deliveries.supersedeOlder(id, Instance::StatusChangedEvent, deliveryId, now, error))
        return false;
    const QJsonObject delivery{{QStringLiteral("id"), deliveryId},
                               {QStringLiteral("webhook_id"), webhookId},
                               {QStringLiteral("event_type"), Instance::StatusChangedEvent},
                               {QStringLiteral("instance_id"), id},
                               {QStringLiteral("provider_id"), providerId},
                               {QStringLiteral("endpoint_id"), endpoint},
                               {QStringLiteral("state"), Delivery::Pending},
                               {QStringLiteral("attempts"), 0},
                               {QStringLiteral("next_attempt_at"), now},
                               {QStringLiteral("give_up_at"), giveUpAt},
                               {QStringLiteral("last_status"), QJsonValue()},
                               {QStringLiteral("last_error"), QJsonValue()},
                               {QStringLiteral("created_at"), now},
                               {QStringLiteral("updated_at"), now},
                               {QStringLiteral("version"), 1},
                               {QStringLiteral("body"), body}};
    return m_ctx.journal.event(QStringLiteral("delivery"), deliveryId, 1, QStringLiteral("created"), delivery, audience, error) != 0;
}

} // namespace OpsDeck
