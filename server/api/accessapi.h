// /api/v1/tokens, /api/v1/audit and /api/v1/events: who may call, what was done, what changed.
#pragma once

#include "apicontext.h"
#include "server/http/request.h"
#include "server/http/response.h"

namespace OpsDeck {

class Router;

class AccessApi final
{
public:
    explicit AccessApi(ApiContext context);
    void addRoutes(Router &router);

private:
    Response listTokens(Request &request);
    Response getToken(Request &request);
    Response createToken(Request &request);
    Response revokeToken(Request &request);
    Response listAudit(Request &request);
    Response events(Request &request);

    ApiContext m_ctx;
};

} // namespace OpsDeck
