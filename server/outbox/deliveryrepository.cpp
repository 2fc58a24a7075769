// The callback outbox in storage: construction, the read side (delivery and endpoint JSON) and the feed event of one row.
#include "deliveryrepository.h"

#include "deliverysql.h"

#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonDocument>
#include <QSqlQuery>
#include <QUuid>

namespace OpsDeck {

using namespace DeliverySql;

namespace {

QJsonValue nullable(const QVariant &v)
{
    return v.isNull() || v.toString().isEmpty() ? QJsonValue() : QJsonValue(v.toString());
}

} // namespace

DeliveryRepository::DeliveryRepository(Database &db, Journal &journal, const RetrySchedule &schedule)
    : m_db(db)
    , m_journal(journal)
    , m_schedule(schedule)
{
    m_clock.start();
}

QString DeliveryRepository::giveUpAt(const QDateTime &firstAttemptAt) const
{
    return timestamp(m_schedule.giveUpAt(firstAttemptAt));
}

const QString &DeliveryRepository::deliveryColumns()
{
    static const QString columns = QStringLiteral(
        "d.id, d.webhook_id, d.event_type, d.instance_id, d.provider_id, d.endpoint_id, d.state, d.attempts,"
        " d.next_attempt_at, d.give_up_at, d.last_status, d.last_error, d.created_at, d.updated_at, d.version, d.body");
    return columns;
}

QJsonObject DeliveryRepository::deliveryJson(const QSqlQuery &q, int f)
{
    return {{QStringLiteral("id"), q.value(f).toLongLong()},
            {QStringLiteral("webhook_id"), q.value(f + 1).toString()},
            {QStringLiteral("event_type"), q.value(f + 2).toString()},
            {QStringLiteral("instance_id"), q.value(f + 3).toLongLong()},
            {QStringLiteral("provider_id"), q.value(f + 4).toLongLong()},
            {QStringLiteral("endpoint_id"), q.value(f + 5).toLongLong()},
            {QStringLiteral("state"), q.value(f + 6).toString()},
            {QStringLiteral("attempts"), q.value(f + 7).toInt()},
            {QStringLiteral("next_attempt_at"), nullable(q.value(f + 8))},
            {QStringLiteral("give_up_at"), nullable(q.value(f + 9))},
            {QStringLiteral("last_status"), q.value(f + 10).isNull() ? QJsonValue() : QJsonValue(q.value(f + 10).toInt())},
            {QStringLiteral("last_error"), nullable(q.value(f + 11))},
            {QStringLiteral("created_at"), q.value(f + 12).toString()},
            {QStringLiteral("updated_at"), q.value(f + 13).toString()},
            {QStringLiteral("version"), q.value(f + 14).toLongLong()},
            {QStringLiteral("body"), QJsonDocument::fromJson(q.value(f + 15).toString().toUtf8()).object()}};
}

const QString &DeliveryRepository::endpointColumns()
{
    static const QString columns = QStringLiteral(
        "e.id, e.url, e.provider_id, e.state, e.consecutive_failures, e.last_success_at, e.success_count,"
        " e.failure_count, e.version, e.last_failure_at, e.paused_at, e.created_at, e.updated_at, s.failing_since,"
        " e.silent_count, e.last_silent_at");
    return columns;
}

const QString &DeliveryRepository::endpointFrom()
{
    static const QString from = QStringLiteral(
        "endpoints e LEFT JOIN outbox_endpoint_streaks s ON s.endpoint_id = e.id");
    return from;
}

QJsonObject DeliveryRepository::endpointJson(const QSqlQuery &q, int f)
{
    const qint64 successes = q.value(f + 6).toLongLong();
    const qint64 failures = q.value(f + 7).toLongLong();
    const double rate = successes + failures == 0 ? 0.0 : double(failures) / double(successes + failures);
    return {{QStringLiteral("id"), q.value(f).toLongLong()},
            {QStringLiteral("url"), q.value(f + 1).toString()},
            {QStringLiteral("provider_id"), q.value(f + 2).toLongLong()},
            {QStringLiteral("state"), q.value(f + 3).toString()},
            {QStringLiteral("consecutive_failures"), q.value(f + 4).toInt()},
            {QStringLiteral("last_success_at"), nullable(q.value(f + 5))},
            {QStringLiteral("failure_rate"), rate},
            {QStringLiteral("success_count"), successes},
            {QStringLiteral("failure_count"), failures},
            {QStringLiteral("version"), q.value(f + 8).toLongLong()},
            {QStringLiteral("last_failure_at"), nullable(q.value(f + 9))},
            {QStringLiteral("paused_at"), nullable(q.value(f + 10))},
            {QStringLiteral("created_at"), q.value(f + 11).toString()},
            {QStringLiteral("updated_at"), q.value(f + 12).toString()},
            {QStringLiteral("failing_since"), nullable(q.value(f + 13))},
            {QStringLiteral("silent_count"), q.value(f + 14).toLongLong()},
            {QStringLiteral("last_silent_at"), nullable(q.value(f + 15))}};
}

std::optional<QJsonObject> DeliveryRepository::delivery(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + deliveryColumns() + QStringLiteral(" FROM deliveries d WHERE d.id = ?"));
    q.addBindValue(id);
    std::optional<QJsonObject> o;
    if (!q.exec())
        *error = failed(q);
    else if (q.next())
        o = deliveryJson(q);
    else
        *error = Problem::make(404, QStringLiteral("not-found"), QStringLiteral("Not found"),
                               QStringLiteral("no delivery with id %1").arg(id));
    q.finish();
    return o;
}

std::optional<QJsonObject> DeliveryRepository::endpoint(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + endpointColumns() + QStringLiteral(" FROM ") + endpointFrom()
                              + QStringLiteral(" WHERE e.id = ?"));
    q.addBindValue(id);
    std::optional<QJsonObject> o;
    if (!q.exec())
        *error = failed(q);
    else if (q.next())
        o = endpointJson(q);
    else
        *error = Problem::make(404, QStringLiteral("not-found"), QStringLiteral("Not found"),
                               QStringLiteral("no endpoint with id %1").arg(id));
    q.finish();
    return o;
}

bool DeliveryRepository::emitDelivery(qint64 id, const QString &op, Problem *error)
{
    const auto o = delivery(id, error);
    if (!o)
        return false;
    const qint64 provider = o->value(QStringLiteral("provider_id")).toInteger();
    return m_journal.event(kDelivery, id, o->value(QStringLiteral("version")).toInteger(), op, *o,
                           Audience{provider, {}, false}, error)
        != 0;
}

bool DeliveryRepository::emitEndpoint(qint64 id, const QString &op, Problem *error, qint64 *version)
{
    const auto o = endpoint(id, error);
    if (!o)
        return false;
    const qint64 provider = o->value(QStringLiteral("provider_id")).toInteger();
    const qint64 current = o->value(QStringLiteral("version")).toInteger();
    if (version)
        *version = current;
    return m_journal.event(kEndpoint, id, current, op, *o,
                           Audience{provider, {}, false}, error)
        != 0;
}

Caller DeliveryRepository::workerCaller()
{
    return Caller{Actor::Controller, QStringLiteral("delivery-worker"), 0, {}};
}

QString DeliveryRepository::newWebhookId()
{
    return QStringLiteral("msg_") + QUuid::createUuid().toString(QUuid::Id128);
}

} // namespace OpsDeck
