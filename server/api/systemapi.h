// /healthz, /metrics and the OpenAPI document: the routes that need no token.
#pragma once

#include "apicontext.h"

namespace OpsDeck {

class Metrics;
class Router;
class WorkerHealth;

class SystemApi final
{
public:
    // metrics, workerHealth and router are not owned.
    SystemApi(ApiContext context, Metrics &metrics, const WorkerHealth &workerHealth, const Router &router);
    void addRoutes(Router &router);

private:
    ApiContext m_ctx;
    Metrics &m_metrics;
    const WorkerHealth &m_workerHealth;
    const Router &m_router;
};

} // namespace OpsDeck
