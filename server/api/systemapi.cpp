// /healthz, /metrics and the OpenAPI document: the routes that need no token.
#include "systemapi.h"

#include "openapidocument.h"
#include "server/feed/changefeed.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/outbox/workerhealth.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QJsonDocument>
#include <QSqlQuery>

namespace OpsDeck {

SystemApi::SystemApi(ApiContext context, Metrics &metrics, const WorkerHealth &workerHealth, const Router &router)
    : m_ctx(context)
    , m_metrics(metrics)
    , m_workerHealth(workerHealth)
    , m_router(router)
{
}

void SystemApi::addRoutes(Router &router)
{
    router.add("GET", QStringLiteral("/healthz"), {}, false, [this](Request &) {
        const bool up = m_ctx.db.exec(QStringLiteral("SELECT 1"));
        // A failing delivery worker is reported, not turned into a 503: the API still serves, and
        // a load balancer taking the replica out would not mend the worker's storage.
        return Response::json(up ? 200 : 503, {{QStringLiteral("status"), up ? QStringLiteral("ok") : QStringLiteral("degraded")},
                                               {QStringLiteral("database"), m_ctx.db.backendName()},
                                               {QStringLiteral("delivery_worker"), m_workerHealth.toJson()}});
    });
    router.add("GET", QStringLiteral("/metrics"), {}, false, [this](Request &) {
        const qint64 last = m_ctx.feed.lastSeq();
        QByteArray gauges;
        gauges += "# HELP opsdeck_feed_last_seq Sequence number of the newest change-feed event.\n"
                  "# TYPE opsdeck_feed_last_seq gauge\nopsdeck_feed_last_seq " + QByteArray::number(last) + '\n';
        gauges += "# HELP opsdeck_feed_retained_events Change-feed events still retained.\n"
                  "# TYPE opsdeck_feed_retained_events gauge\nopsdeck_feed_retained_events "
                  + QByteArray::number(last - m_ctx.feed.purgedThrough()) + '\n';
        // Lag = time() - this: how long ago the newest change was committed.
        QSqlQuery &newest = m_ctx.db.query(QStringLiteral("SELECT at FROM events ORDER BY seq DESC LIMIT 1"));
        const QDateTime at = newest.exec() && newest.next() ? parseTimestamp(newest.value(0).toString()).value_or(QDateTime()) : QDateTime();
        newest.finish();
        gauges += "# HELP opsdeck_feed_last_event_timestamp_seconds Commit time of the newest change-feed event.\n"
                  "# TYPE opsdeck_feed_last_event_timestamp_seconds gauge\nopsdeck_feed_last_event_timestamp_seconds "
                  + QByteArray::number(at.isValid() ? double(at.toMSecsSinceEpoch()) / 1000.0 : 0.0, 'f', 3) + '\n';
        gauges += "# HELP opsdeck_feed_waiting_polls Long-polls parked on the change feed.\n"
                  "# TYPE opsdeck_feed_waiting_polls gauge\nopsdeck_feed_waiting_polls "
                  + QByteArray::number(m_ctx.feed.waiterCount()) + '\n';
        gauges += "# HELP opsdeck_feed_watchers WebSocket watchers of the change feed.\n"
                  "# TYPE opsdeck_feed_watchers gauge\nopsdeck_feed_watchers "
                  + QByteArray::number(m_ctx.feed.watcherCount()) + '\n';
        gauges += m_workerHealth.metrics();
        return Response::text(200, m_metrics.text(gauges), QByteArrayLiteral("text/plain; version=0.0.4"));
    });
    router.add("GET", QStringLiteral("/api/v1/openapi.json"), {}, false, [this](Request &) {
        static const QByteArray doc = QJsonDocument(OpenApiDocument::build()).toJson(QJsonDocument::Compact);
        return Response::text(200, doc, QByteArrayLiteral("application/json"));
    });
}

} // namespace OpsDeck
