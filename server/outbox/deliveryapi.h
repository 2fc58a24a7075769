// /api/v1/deliveries and /api/v1/endpoints: the failing-callback inspector's data and actions.
#pragma once

#include "server/api/apicontext.h"
#include "server/api/transitionhandler.h"
#include "server/http/request.h"
#include "server/http/response.h"

#include <QJsonObject>
#include <QStringList>
#include <QVariantList>

#include <optional>

namespace OpsDeck {

class DeliveryRepository;
class Router;

class DeliveryApi final
{
public:
    explicit DeliveryApi(ApiContext context);
    ~DeliveryApi();
    DeliveryApi(const DeliveryApi &) = delete;
    DeliveryApi &operator=(const DeliveryApi &) = delete;

    void addRoutes(Router &router);

private:
    // A delivery filter as SQL: a WHERE clause (alias d) and its values in order.
    struct Filter
    {
        QString where;
        QVariantList values;
    };

    Response list(Request &request);
    Response get(Request &request);
    Response retry(Request &request);
    Response cancel(Request &request);
    Response bulkRetry(Request &request);
    Response listEndpoints(Request &request);
    Response getEndpoint(Request &request);
    Response pause(Request &request);
    Response resume(Request &request);
    Response test(Request &request);
    Response rotateSecret(Request &request);

    // Reads state/provider/instance/endpoint/status/created_after/created_before through `value`
    // and `has` and restricts a provider to its own deliveries. `pathPrefix` names a bad value in
    // the problem: "?" for query parameters, "/" for body fields.
    std::optional<Filter> readFilter(const Caller &who, const std::function<QString(const QString &)> &value,
                                     const std::function<bool(const QString &)> &has, QChar pathPrefix, Problem *error);
    // The newest notification of the same instance and kind when there is one newer than
    // `delivery` (0 when there is none, -1 on failure): it carries the full current status, so
    // sending the older one again would tell the provider something no longer true.
    qint64 newerNotification(const QJsonObject &delivery, Problem *error);
    // PostgreSQL: the row's lock, or the problem (a deadlock victim gets "storage-conflict").
    std::optional<Problem> lockRow(const QString &table, qint64 id);
    // PostgreSQL: the lock of the delivery's instance row, taken before the delivery's own. A
    // status change holds its instance's row from its UPDATE until it commits the newer
    // notification, so a retry that waits here sees that notification when it checks for one.
    // The instance before its deliveries, as the status change takes them: the reverse order
    // would deadlock with it.
    std::optional<Problem> lockInstanceOf(qint64 deliveryId);
    // PostgreSQL: the locks of `instances` in id order, none when empty.
    std::optional<Problem> lockInstances(const QList<qint64> &instances);
    std::optional<QJsonObject> visibleDelivery(const Caller &who, qint64 id, Problem *error);
    std::optional<QJsonObject> visibleEndpoint(const Caller &who, qint64 id, Problem *error);
    // One delivery transition inside the caller's transaction: state, audit and feed event.
    bool applyDelivery(const Caller &who, const QJsonObject &before, const QString &action, const QString &reason,
                       QJsonObject *after, Problem *error);
    using VisibleRow = std::optional<QJsonObject> (DeliveryApi::*)(const Caller &who, qint64 id, Problem *error);
    // What an outbox row's transitions share: its "state" field, the row locked before `load` reads
    // it. The description's write is the caller's to add.
    TransitionSpec outboxTransitions(const QString &kind, const StateMachine &machine, const QString &table, VisibleRow load);
    // Retry and cancel of one delivery as runTransition() runs them, applyDelivery() to write.
    TransitionSpec deliveryTransitions();
    // A retry's refusal (409 delivery-superseded) when newerNotification() finds one; the storage problem when it fails.
    std::optional<Problem> retrySuperseded(const QJsonObject &delivery);
    // A retry's refusal (409 endpoint-not-active) while the delivery's endpoint is paused or
    // disabled; the storage problem when the read fails.
    std::optional<Problem> retryHeldByEndpoint(const QJsonObject &delivery);
    // Pause and resume of an endpoint as runTransition() runs them: refusals naming routes,
    // applyEndpoint() to write.
    TransitionSpec endpointTransitions();
    // The endpoint's new state inside the runner's transaction; activating it also restarts its
    // failure streak and makes its waiting deliveries due now. Audit row and feed event.
    bool applyEndpoint(const TransitionStep &step, QJsonObject *after, Problem *error);
    // What a secret rotation reads of the instance (its provider, callback, secret, version, owner
    // and signing), if `who` may see it; 404 otherwise.
    std::optional<QJsonObject> instanceSecret(const Caller &who, qint64 id, Problem *error);
    // The new secret, the previous one's grace, the version bump, audit row and feed event inside
    // the runner's transaction; the new secret and its predecessor's end in the answer.
    bool applyRotation(TransitionStep &step, QJsonObject *after, Problem *error);

    ApiContext m_ctx;
    std::unique_ptr<DeliveryRepository> m_repository;
};

} // namespace OpsDeck
