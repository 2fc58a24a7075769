// /api/v1/organizations and /api/v1/providers: the tenants and the application providers.
#pragma once

#include "apicontext.h"
#include "transitionhandler.h"
#include "server/http/request.h"
#include "server/http/response.h"

#include <QJsonObject>

#include <optional>

class QSqlQuery;

namespace OpsDeck {

class Router;

class OrganizationsApi final
{
public:
    explicit OrganizationsApi(ApiContext context);
    void addRoutes(Router &router);

    static QJsonObject organizationJson(const QSqlQuery &row);
    static QJsonObject providerJson(const QSqlQuery &row);

private:
    Response list(Request &request);
    Response get(Request &request);
    Response create(Request &request);
    Response listProviders(Request &request);
    Response getProvider(Request &request);
    Response createProvider(Request &request);

    std::optional<QJsonObject> load(qint64 id, Problem *error);
    // Delete and restore as runTransition() runs them; the feed event's op is `op`.
    TransitionSpec transitions(const QString &op);
    // Why the organization may not be deleted yet: instances not stopped, or providers it hosts.
    std::optional<Problem> deletionBlocked(qint64 id);
    bool writeStatus(const TransitionStep &step, const QString &op, QJsonObject *after, Problem *error);

    ApiContext m_ctx;
};

} // namespace OpsDeck
