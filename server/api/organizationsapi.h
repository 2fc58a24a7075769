// /api/v1/organizations and /api/v1/providers: the tenants and the application providers.
#pragma once

#include "apicontext.h"
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
    Response remove(Request &request);
    Response restore(Request &request);
    Response listProviders(Request &request);
    Response getProvider(Request &request);
    Response createProvider(Request &request);

    std::optional<QJsonObject> load(qint64 id, Problem *error);
    Response transition(Request &request, const QString &action);

    ApiContext m_ctx;
};

} // namespace OpsDeck
