// /api/v1/organizations and /api/v1/providers: the tenants and the application providers.
#include "organizationsapi.h"

#include "apisupport.h"
#include "core/organization.h"
#include "server/feed/changefeed.h"
#include "server/http/router.h"
#include "server/outbox/writetransaction.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlQuery>

namespace OpsDeck {

using namespace ApiSupport;

namespace {

const QString kOrgColumns = QStringLiteral("id, name, status, version, created_at, updated_at, deleted_at");
const QString kProviderColumns = QStringLiteral("id, name, organization_id, applications, version, created_at, updated_at");
const QString kOrganization = QStringLiteral("organization");
const QString kProvider = QStringLiteral("provider");

QJsonValue nullable(const QVariant &v)
{
    return v.isNull() || v.toString().isEmpty() ? QJsonValue() : QJsonValue(v.toString());
}

} // namespace

OrganizationsApi::OrganizationsApi(ApiContext context)
    : m_ctx(context)
{
}

QJsonObject OrganizationsApi::organizationJson(const QSqlQuery &q)
{
    return {{QStringLiteral("id"), q.value(0).toLongLong()},
            {QStringLiteral("name"), q.value(1).toString()},
            {QStringLiteral("status"), q.value(2).toString()},
            {QStringLiteral("version"), q.value(3).toLongLong()},
            {QStringLiteral("created_at"), q.value(4).toString()},
            {QStringLiteral("updated_at"), q.value(5).toString()},
            {QStringLiteral("deleted_at"), nullable(q.value(6))}};
}

QJsonObject OrganizationsApi::providerJson(const QSqlQuery &q)
{
    return {{QStringLiteral("id"), q.value(0).toLongLong()},
            {QStringLiteral("name"), q.value(1).toString()},
            {QStringLiteral("organization_id"), q.value(2).toLongLong()},
            {QStringLiteral("applications"), QJsonDocument::fromJson(q.value(3).toString().toUtf8()).array()},
            {QStringLiteral("version"), q.value(4).toLongLong()},
            {QStringLiteral("created_at"), q.value(5).toString()},
            {QStringLiteral("updated_at"), q.value(6).toString()}};
}

void OrganizationsApi::addRoutes(Router &router)
{
    const Actors operators(Actor::Operator);
    router.add("GET", QStringLiteral("/api/v1/organizations"), kUserRoles, false, [this](Request &r) { return list(r); });
    router.add("POST", QStringLiteral("/api/v1/organizations"), operators, true, [this](Request &r) { return create(r); });
    router.add("GET", QStringLiteral("/api/v1/organizations/{id}"), kUserRoles, false, [this](Request &r) { return get(r); });
    router.add("DELETE", QStringLiteral("/api/v1/organizations/{id}"), operators, true, [this](Request &r) {
        // A soft delete: the organization stays listed (status DELETED) and can be restored, so
        // its feed event updates it; "deleted" would tell clients to drop it.
        TransitionSpec remove = transitions(QStringLiteral("updated"));
        remove.check = [this](const TransitionStep &step) { return deletionBlocked(step.request.id()); };
        return runTransition(m_ctx, r, remove, QStringLiteral("delete"));
    });
    router.add("POST", QStringLiteral("/api/v1/organizations/{id}/restore"), operators, true, [this](Request &r) {
        return runTransition(m_ctx, r, transitions(QStringLiteral("updated")), QStringLiteral("restore"));
    });
    router.add("GET", QStringLiteral("/api/v1/providers"), kUserRoles, false, [this](Request &r) { return listProviders(r); });
    router.add("POST", QStringLiteral("/api/v1/providers"), operators, true, [this](Request &r) { return createProvider(r); });
    router.add("GET", QStringLiteral("/api/v1/providers/{id}"), kUserRoles, false, [this](Request &r) { return getProvider(r); });
}

Response OrganizationsApi::list(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, {QStringLiteral("status")}, &problem);
    if (!page)
        return Response::problem(problem);
    const QString status = req.queryValue(QStringLiteral("status"));
    if (req.hasQuery(QStringLiteral("status")) && !Organization::machine().isState(status))
        return Response::problem(invalid(QStringLiteral("?status"), QStringLiteral("expected one of %1")
                                                                        .arg(Organization::machine().states().join(QStringLiteral(", ")))));
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + kOrgColumns
                                  + QStringLiteral(" FROM organizations WHERE id > ? AND (? = '' OR status = ?)"
                                                   " ORDER BY id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(Database::text(status));
    q.addBindValue(Database::text(status));
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, organizationJson);
}

std::optional<QJsonObject> OrganizationsApi::load(qint64 id, Problem *error)
{
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + kOrgColumns + QStringLiteral(" FROM organizations WHERE id = ?"));
    q.addBindValue(id);
    return loadRow(q, organizationJson, kOrganization, id, error);
}

Response OrganizationsApi::get(Request &req)
{
    Problem problem;
    const auto o = load(req.id(), &problem);
    return objectResponse(o, problem);
}

Response OrganizationsApi::create(Request &req)
{
    JsonReader r = bodyReader(req);
    const QString name = r.name(QStringLiteral("name"));
    const QString reason = readReason(r, req);
    r.rejectUnknown();
    if (!r.ok())
        return Response::problem(r.problem());

    WriteTransaction tx(m_ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    const QString now = nowTimestamp();
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                                 " VALUES (?, ?, 1, ?, ?) RETURNING id"));
    q.addBindValue(name);
    q.addBindValue(Organization::Available);
    q.addBindValue(now);
    q.addBindValue(now);
    Problem problem;
    const auto id = insertedId(q, &problem);
    if (!id)
        return Response::problem(problem);
    const auto o = load(*id, &problem);
    if (!o || !m_ctx.journal.audit(*req.caller, {QStringLiteral("create"), kOrganization, *id, {}, Organization::Available, reason}, {}, &problem)
        || !m_ctx.journal.event(kOrganization, *id, 1, QStringLiteral("created"), *o, {}, &problem) || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(201, *o).withETag(1).withHeader(QByteArrayLiteral("Location"),
                                                          "/api/v1/organizations/" + QByteArray::number(*id));
}

TransitionSpec OrganizationsApi::transitions(const QString &op)
{
    TransitionSpec spec;
    spec.kind = kOrganization;
    spec.machine = &Organization::machine();
    // Operators only (the routes say so), and they see every organization.
    spec.load = [this](const Caller &, qint64 id, Problem *error) { return load(id, error); };
    spec.write = [this, op](TransitionStep &step, QJsonObject *after, Problem *error) {
        return writeStatus(step, op, after, error);
    };
    return spec;
}

std::optional<Problem> OrganizationsApi::deletionBlocked(qint64 id)
{
    QSqlQuery &blocking = m_ctx.db.query(QStringLiteral(
        "SELECT id, name, status FROM instances WHERE organization_id = ? AND status NOT IN ('STOPPED', 'DESTROYED')"
        " ORDER BY id LIMIT 1000"));
    blocking.addBindValue(id);
    // A failed read is no "nothing blocks": it answers, and nothing is deleted.
    if (!blocking.exec()) {
        const Problem p = Database::sqlProblem(blocking);
        blocking.finish();
        return p;
    }
    QJsonArray instances;
    while (blocking.next())
        instances.append(QJsonObject{{QStringLiteral("id"), blocking.value(0).toLongLong()},
                                     {QStringLiteral("name"), blocking.value(1).toString()},
                                     {QStringLiteral("status"), blocking.value(2).toString()}});
    blocking.finish();
    if (!instances.isEmpty())
        return Problem::make(409, Organization::HasInstancesCode, QStringLiteral("Organization has instances"),
                             QStringLiteral("%1 instance(s) of this organization are not stopped; stop them first")
                                 .arg(instances.size()))
            .with(QStringLiteral("blocking_instances"), instances);
    QSqlQuery &providers = m_ctx.db.query(QStringLiteral("SELECT id, name FROM providers WHERE organization_id = ? ORDER BY id"));
    providers.addBindValue(id);
    if (!providers.exec()) {
        const Problem p = Database::sqlProblem(providers);
        providers.finish();
        return p;
    }
    QJsonArray list;
    while (providers.next())
        list.append(QJsonObject{{QStringLiteral("id"), providers.value(0).toLongLong()},
                                {QStringLiteral("name"), providers.value(1).toString()}});
    providers.finish();
    if (!list.isEmpty())
        return Problem::make(409, Organization::ProvidesApplicationsCode, QStringLiteral("Organization provides applications"),
                             QStringLiteral("this organization still provides applications"))
            .with(QStringLiteral("providers"), list);
    return std::nullopt;
}

bool OrganizationsApi::writeStatus(const TransitionStep &step, const QString &op, QJsonObject *after, Problem *error)
{
    const qint64 id = step.request.id();
    const qint64 version = step.before.value(QStringLiteral("version")).toInteger();
    const Transition &t = step.transition;
    const QString now = nowTimestamp();
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("UPDATE organizations SET status = ?, version = version + 1, updated_at = ?,"
                                                 " deleted_at = ? WHERE id = ? AND version = ?"));
    q.addBindValue(t.to);
    q.addBindValue(now);
    q.addBindValue(t.to == Organization::Deleted ? QVariant(now) : QVariant(QMetaType::fromType<QString>()));
    q.addBindValue(id);
    q.addBindValue(version);
    if (!updateVersioned(q, kOrganization, error))
        return false;
    const auto o = load(id, error);
    if (!o)
        return false;
    *after = *o;
    return m_ctx.journal.audit(step.request.who(), {step.action, kOrganization, id, t.from, t.to, step.reason}, {}, error)
           && m_ctx.journal.event(kOrganization, id, version + 1, op, *o, {}, error);
}

Response OrganizationsApi::listProviders(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, {QStringLiteral("organization")}, &problem);
    if (!page)
        return Response::problem(problem);
    const auto org = queryId(req, QStringLiteral("organization"), &problem);
    if (!problem.isNull())
        return Response::problem(problem);
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + kProviderColumns
                                  + QStringLiteral(" FROM providers WHERE id > ? AND (? = 0 OR organization_id = ?)"
                                                   " ORDER BY id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(org.value_or(0));
    q.addBindValue(org.value_or(0));
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, providerJson);
}

Response OrganizationsApi::getProvider(Request &req)
{
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + kProviderColumns + QStringLiteral(" FROM providers WHERE id = ?"));
    q.addBindValue(req.id());
    Problem problem;
    const auto o = loadRow(q, providerJson, kProvider, req.id(), &problem);
    return objectResponse(o, problem);
}

Response OrganizationsApi::createProvider(Request &req)
{
    JsonReader r = bodyReader(req);
    const QString name = r.name(QStringLiteral("name"));
    const qint64 orgId = r.integer(QStringLiteral("organization_id"), 1, std::numeric_limits<qint64>::max() / 2);
    const auto apps = r.optStringList(QStringLiteral("applications"), 100, 200);
    const QString reason = readReason(r, req);
    r.rejectUnknown();
    // Instances name their application exactly: a blank one could never be chosen well, a
    // padded one would look like another, and a second copy says nothing new.
    const QStringList listed = apps.value_or(QStringList());
    const QString listPath = r.pathOf(QStringLiteral("applications"));
    for (qsizetype i = 0; i < listed.size(); ++i) {
        const QString &app = listed.at(i);
        const QString path = listPath + QLatin1Char('/') + QString::number(i);
        const qsizetype first = listed.indexOf(app);
        if (app.trimmed().isEmpty())
            r.addErrorAt(path, QStringLiteral("must not be empty"));
        else if (const QString unreadable = JsonReader::exactNameError(app); !unreadable.isEmpty())
            r.addErrorAt(path, unreadable);
        else if (first < i)
            r.addErrorAt(path, QStringLiteral("repeats %1/%2").arg(listPath).arg(first));
    }
    if (!r.ok())
        return Response::problem(r.problem());

    WriteTransaction tx(m_ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    Problem problem;
    const auto org = load(orgId, &problem);
    if (!org)
        return Response::problem(invalid(QStringLiteral("/organization_id"), QStringLiteral("no such organization")));
    if (org->value(QStringLiteral("status")).toString() != Organization::Available)
        return Response::problem(Problem::make(409, QStringLiteral("organization-deleted"), QStringLiteral("Organization deleted"),
                                               QStringLiteral("organization %1 is deleted").arg(orgId)));
    const QString now = nowTimestamp();
    const QStringList applications = apps.value_or(QStringList());
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version,"
                                                 " created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?) RETURNING id"));
    q.addBindValue(name);
    q.addBindValue(orgId);
    q.addBindValue(QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(applications)).toJson(QJsonDocument::Compact)));
    q.addBindValue(now);
    q.addBindValue(now);
    const auto inserted = insertedId(q, &problem);
    if (!inserted)
        return Response::problem(problem);
    const qint64 id = *inserted;
    const QJsonObject o{{QStringLiteral("id"), id},
                        {QStringLiteral("name"), name},
                        {QStringLiteral("organization_id"), orgId},
                        {QStringLiteral("applications"), QJsonArray::fromStringList(applications)},
                        {QStringLiteral("version"), 1},
                        {QStringLiteral("created_at"), now},
                        {QStringLiteral("updated_at"), now}};
    if (!m_ctx.journal.audit(*req.caller, {QStringLiteral("create"), kProvider, id, {}, {}, reason}, {}, &problem)
        || !m_ctx.journal.event(kProvider, id, 1, QStringLiteral("created"), o, {}, &problem) || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(201, o).withETag(1).withHeader(QByteArrayLiteral("Location"),
                                                         "/api/v1/providers/" + QByteArray::number(id));
}

} // namespace OpsDeck
