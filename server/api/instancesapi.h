// /api/v1/instances: app instances, their registration by the provider, stop and start.
#pragma once

#include "apicontext.h"
#include "transitionhandler.h"

#include "core/retryschedule.h"
#include "server/http/request.h"
#include "server/http/response.h"

#include <QJsonObject>

#include <optional>

class QSqlQuery;

namespace OpsDeck {

class JsonWriter;
class Router;

class InstancesApi final
{
public:
    explicit InstancesApi(ApiContext context);
    void addRoutes(Router &router);

    static QJsonObject instanceJson(const QSqlQuery &row);
    // The same object written straight to JSON text (the list and GET fast path).
    static void writeInstance(JsonWriter &out, const QSqlQuery &row);
    static const QString &columns();

private:
    Response list(Request &request);
    Response get(Request &request);
    Response create(Request &request);
    Response registerInstance(Request &request);

    // The instance if `who` may see it; 404 otherwise (another provider's instance is not found).
    std::optional<QJsonObject> loadVisible(const Caller &who, qint64 id, Problem *error);
    // Stop and start as runTransition() runs them; register names its target and replaces the write.
    TransitionSpec transitions();
    // An organization's status, empty when there is none; nullopt (and *error) when the read failed.
    std::optional<QString> organizationStatus(qint64 id, Problem *error);
    // 409 organization-deleted when the instance's organization is not AVAILABLE.
    std::optional<Problem> organizationDeleted(const QJsonObject &instance);
    // 409 instance-not-registered for an instance its provider never registered (no callback).
    static std::optional<Problem> neverRegistered(const QJsonObject &instance);
    static std::optional<Problem> destructionIssued(const QJsonObject &instance);
    // Register's write: the endpoint, the callback and its new secret, then writeStatus() to the
    // transition's target.
    bool writeRegistration(TransitionStep &step, const QString &url, const QString &signing, QJsonObject *after,
                           Problem *error);
    // Status change, audit, feed event and outbox delivery; inside the caller's transaction.
    bool writeStatus(const Request &request, const QJsonObject &before, const QString &to, const QString &action,
                     const QString &reason, QJsonObject *after, Problem *error);
    // The provider's endpoint at `url`, 0 when it has none; nullopt (with *error) when the lookup failed.
    std::optional<qint64> endpointId(qint64 providerId, const QString &url, Problem *error);
    bool enqueueCallback(const QJsonObject &instance, const QString &previousStatus, Problem *error);

    ApiContext m_ctx;
    RetrySchedule m_schedule; // a new notification's give_up_at
};

} // namespace OpsDeck
