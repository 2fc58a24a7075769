// /api/v1/endpoints and their actions (pause, resume, a test event), and an instance's secret rotation.
#include "deliveryapi.h"

#include "deliveryapisupport.h"
#include "deliveryrepository.h"
#include "writetransaction.h"

#include "core/endpoint.h"
#include "core/instance.h"
#include "core/webhooksignature.h"
#include "server/api/apisupport.h"
#include "server/api/instancesapi.h"
#include "server/delivery/urlguard.h"
#include "server/feed/changefeed.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QSqlQuery>

namespace OpsDeck {

using namespace ApiSupport;
using namespace DeliveryApiSupport;

Response DeliveryApi::listEndpoints(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, {QStringLiteral("state"), QStringLiteral("provider")}, &problem);
    if (!page)
        return Response::problem(problem);
    const auto provider = queryId(req, QStringLiteral("provider"), &problem);
    if (!problem.isNull())
        return Response::problem(problem);
    // Never a null QString: that would bind as SQL NULL and match nothing.
    const QString state = req.hasQuery(QStringLiteral("state")) ? req.queryValue(QStringLiteral("state")).toUpper()
                                                                 : QString(QLatin1String(""));
    if (req.hasQuery(QStringLiteral("state")) && !Endpoint::machine().isState(state))
        return Response::problem(invalid(QStringLiteral("?state"), QStringLiteral("expected one of %1")
                                                                       .arg(Endpoint::machine().states().join(QStringLiteral(", ")))));
    const qint64 own = req.who().role == Actor::Provider ? providerOf(req.who()) : 0;
    QSqlQuery &q = m_ctx.db.query(QStringLiteral("SELECT ") + DeliveryRepository::endpointColumns() + QStringLiteral(" FROM ")
                                  + DeliveryRepository::endpointFrom()
                                  + QStringLiteral(" WHERE e.id > ? AND (? = 0 OR e.provider_id = ?) AND (? = 0 OR e.provider_id = ?)"
                                                   " AND (? = '' OR e.state = ?) ORDER BY e.id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(own);
    q.addBindValue(own);
    q.addBindValue(provider.value_or(0));
    q.addBindValue(provider.value_or(0));
    q.addBindValue(state);
    q.addBindValue(state);
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, [](const QSqlQuery &row) { return DeliveryRepository::endpointJson(row); });
}

Response DeliveryApi::getEndpoint(Request &req)
{
    Problem problem;
    const auto e = visibleEndpoint(req.who(), req.id(), &problem);
    if (!e)
        return Response::problem(problem);
    return Response::json(200, *e).withETag(e->value(QStringLiteral("version")).toInteger());
}

Response DeliveryApi::pause(Request &req)
{
    return runTransition(m_ctx, req, endpointTransitions(), QStringLiteral("pause"));
}

Response DeliveryApi::resume(Request &req)
{
    TransitionSpec resume = endpointTransitions();
    // A disabled (410) endpoint is resumed the same way once its URL works again.
    resume.alternatives = {QStringLiteral("enable")};
    return runTransition(m_ctx, req, resume, QStringLiteral("resume"));
}

TransitionSpec DeliveryApi::endpointTransitions()
{
    TransitionSpec spec = outboxTransitions(kEndpoint, Endpoint::machine(), QStringLiteral("endpoints"), &DeliveryApi::visibleEndpoint);
    spec.refused = [](Refusal *refusal, const QJsonObject &) {
        // The API has no route for "enable": POST /resume enables a disabled endpoint.
        if (!refusal->allowed.contains(QLatin1String("enable")))
            return;
        QStringList allowed = refusal->allowed;
        allowed.replaceInStrings(QRegularExpression(QStringLiteral("^enable$")), QStringLiteral("resume"));
        allowed.removeDuplicates();
        refusal->setAllowed(allowed);
    };
    spec.write = [this](TransitionStep &step, QJsonObject *after, Problem *error) { return applyEndpoint(step, after, error); };
    return spec;
}

bool DeliveryApi::applyEndpoint(const TransitionStep &step, QJsonObject *after, Problem *error)
{
    const qint64 id = step.request.id();
    const qint64 version = step.before.value(QStringLiteral("version")).toInteger();
    const Transition &t = step.transition;
    const QString now = nowTimestamp();
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "UPDATE endpoints SET state = ?, paused_at = CASE WHEN ? THEN ? ELSE NULL END, version = version + 1, updated_at = ?"
        " WHERE id = ? AND version = ?"));
    q.addBindValue(t.to);
    q.addBindValue(t.to == Endpoint::Paused);
    q.addBindValue(now);
    q.addBindValue(now);
    q.addBindValue(id);
    q.addBindValue(version);
    if (!updateVersioned(q, kEndpoint, error))
        return false;
    if (t.to == Endpoint::Active) {
        // A fresh start: the failure count and the auto-pause window start over from the next
        // failure, and what waited goes now.
        QSqlQuery &streak = m_ctx.db.query(QStringLiteral("DELETE FROM outbox_endpoint_streaks WHERE endpoint_id = ?"));
        streak.addBindValue(id);
        if (!execute(streak, error))
            return false;
        QSqlQuery &count = m_ctx.db.query(QStringLiteral("UPDATE endpoints SET consecutive_failures = 0 WHERE id = ?"));
        count.addBindValue(id);
        if (!execute(count, error))
            return false;
        // Every writer locks an endpoint before its deliveries and deliveries in id order (the
        // worker's group commit too), so this cannot deadlock with a batch being recorded.
        if (m_ctx.db.backend() == Database::Backend::Postgres) {
            QSqlQuery &lock = m_ctx.db.query(QStringLiteral(
                "SELECT id FROM deliveries WHERE endpoint_id = ? AND state = 'PENDING' AND next_attempt_at > ?"
                " ORDER BY id FOR UPDATE"));
            lock.addBindValue(id);
            lock.addBindValue(now);
            if (!execute(lock, error))
                return false;
        }
        QSqlQuery &due = m_ctx.db.query(QStringLiteral(
            "UPDATE deliveries SET next_attempt_at = ? WHERE endpoint_id = ? AND state = 'PENDING' AND next_attempt_at > ?"));
        due.addBindValue(now);
        due.addBindValue(id);
        due.addBindValue(now);
        if (!execute(due, error))
            return false;
    }
    const qint64 provider = step.before.value(QStringLiteral("provider_id")).toInteger();
    if (!m_ctx.journal.audit(step.request.who(), {step.action, kEndpoint, id, t.from, t.to, step.reason},
                             Audience{provider, {}, false}, error)
        || !m_repository->emitEndpoint(id, QStringLiteral("updated"), error))
        return false;
    const auto o = m_repository->endpoint(id, error);
    if (!o)
        return false;
    *after = *o;
    return true;
}

Response DeliveryApi::test(Request &req)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    WriteTransaction tx(m_ctx.db);
    if (!tx.isActive())
        return Response::problem(tx.problem());
    Problem problem;
    const auto endpoint = visibleEndpoint(req.who(), req.id(), &problem);
    if (!endpoint)
        return Response::problem(problem);
    // Like every other action on an endpoint: the test is sent to the endpoint the caller saw.
    if (auto p = ApiSupport::checkIfMatch(req, endpoint->value(QStringLiteral("version")).toInteger()))
        return Response::problem(*p);
    // Nothing goes to a paused or disabled endpoint: a 202 would promise a test that waits unsent.
    const QString state = endpoint->value(QStringLiteral("state")).toString();
    if (state != Endpoint::Active)
        return Response::problem(endpointNotActive(req.id(), state, QStringLiteral("send the test event")));
    const QString url = endpoint->value(QStringLiteral("url")).toString();
    const Problem refused = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
    if (!refused.isNull())
        return Response::problem(refused);
    // Signed with the secret of the newest instance registered on this URL: the provider checks
    // it exactly as it checks real notifications. Not a destroyed one's: nothing is signed for it
    // any more (its secret cannot be rotated either), and its provider has forgotten it.
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "SELECT id FROM instances WHERE provider_id = ? AND callback_url = ? AND secret IS NOT NULL"
        " AND status <> 'DESTROYED' ORDER BY id DESC LIMIT 1"));
    const qint64 provider = endpoint->value(QStringLiteral("provider_id")).toInteger();
    q.addBindValue(provider);
    q.addBindValue(url);
    if (!q.exec())
        return failedQuery(q);
    const qint64 instance = q.next() ? q.value(0).toLongLong() : 0;
    q.finish();
    if (instance == 0)
        return Response::problem(Problem::make(409, QStringLiteral("no-registered-instance"), QStringLiteral("No registered instance"),
                                               QStringLiteral("no instance that is not destroyed is registered with %1, so there is no secret to sign with")
                                                   .arg(url)));
    const QJsonObject body{{QStringLiteral("type"), DeliveryRepository::TestEvent},
                           {QStringLiteral("endpoint_id"), req.id()},
                           {QStringLiteral("instance_id"), instance},
                           {QStringLiteral("sent_at"), nowTimestamp()}};
    const auto d = m_repository->enqueue(instance, DeliveryRepository::TestEvent, body, &problem);
    if (!d)
        return Response::problem(storageFailed(problem));
    const qint64 id = d->value(QStringLiteral("id")).toInteger();
    if (!m_ctx.journal.audit(req.who(), {QStringLiteral("test"), kEndpoint, req.id(), {}, {}, reason}, Audience{provider, {}, false},
                             &problem)
        || !tx.commit(&problem))
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    return Response::json(202, *d).withETag(1).withHeader(QByteArrayLiteral("Location"), "/api/v1/deliveries/" + QByteArray::number(id));
}

Response DeliveryApi::rotateSecret(Request &req)
{
    TransitionSpec rotate;
    rotate.kind = kInstance;
    // The version read must still hold when the new secret is written (another replica stopping
    // the instance meanwhile made this a 500).
    rotate.lock = [this](qint64 id) { return lockRow(QStringLiteral("instances"), id); };
    rotate.load = [this](const Caller &who, qint64 id, Problem *error) { return instanceSecret(who, id, error); };
    rotate.check = [this](const TransitionStep &step) -> std::optional<Problem> {
        const QString url = step.before.value(QStringLiteral("callback_url")).toString();
        if (step.before.value(QStringLiteral("status")).toString() == Instance::Destroyed)
            return Problem::make(409, QStringLiteral("instance-destroyed"), QStringLiteral("Instance destroyed"),
                                 QStringLiteral("instance %1 is DESTROYED: nothing is signed for it any more")
                                     .arg(step.request.id()));
        if (url.isEmpty() || step.before.value(QStringLiteral("secret")).toString().isEmpty())
            return Problem::make(409, QStringLiteral("no-callback"), QStringLiteral("No callback"),
                                 QStringLiteral("instance %1 has not registered a callback").arg(step.request.id()));
        const Problem refused = CallbackUrlGuard(m_ctx.options.allowPrivateCallbacks).validate(url);
        if (!refused.isNull())
            return refused;
        return std::nullopt;
    };
    rotate.write = [this](TransitionStep &step, QJsonObject *after, Problem *error) { return applyRotation(step, after, error); };
    return runTransition(m_ctx, req, rotate, QStringLiteral("rotate-secret"));
}

std::optional<QJsonObject> DeliveryApi::instanceSecret(const Caller &who, qint64 id, Problem *error)
{
    QSqlQuery &q = m_ctx.db.query(
        QStringLiteral("SELECT provider_id, callback_url, secret, version, owner, callback_signing, status FROM instances"
                       " WHERE id = ?"));
    q.addBindValue(id);
    auto o = loadRow(q, [](const QSqlQuery &row) {
        return QJsonObject{{QStringLiteral("provider_id"), row.value(0).toLongLong()},
                           {QStringLiteral("callback_url"), row.value(1).toString()},
                           {QStringLiteral("secret"), row.value(2).toString()},
                           {QStringLiteral("version"), row.value(3).toLongLong()},
                           {QStringLiteral("owner"), row.value(4).toString()},
                           {QStringLiteral("callback_signing"), row.value(5).toString()},
                           {QStringLiteral("status"), row.value(6).toString()}};
    }, kInstance, id, error);
    if (o && who.role == Actor::Provider && o->value(QStringLiteral("provider_id")).toInteger() != providerOf(who)) {
        *error = notFound(kInstance, id);
        return std::nullopt;
    }
    return o;
}

bool DeliveryApi::applyRotation(TransitionStep &step, QJsonObject *after, Problem *error)
{
    const qint64 id = step.request.id();
    const qint64 version = step.before.value(QStringLiteral("version")).toInteger();
    // X-Hub-Signature carries one signature, made with the current secret: no grace to promise.
    const bool grace = step.before.value(QStringLiteral("callback_signing")).toString() != QLatin1String("x-hub-signature");
    const QDateTime nowAt = QDateTime::currentDateTimeUtc();
    const QString now = timestamp(nowAt);
    const QString validUntil = grace ? timestamp(nowAt.addMSecs(qint64(m_ctx.options.secretGracePeriod.count()))) : QString();
    const QString secret = WebhookSignature::generateSecret();
    QSqlQuery &del = m_ctx.db.query(QStringLiteral("DELETE FROM outbox_secret_grace WHERE instance_id = ?"));
    del.addBindValue(id);
    if (!execute(del, error))
        return false;
    if (grace) {
        QSqlQuery &ins = m_ctx.db.query(QStringLiteral(
            "INSERT INTO outbox_secret_grace (instance_id, previous_secret, valid_until) VALUES (?, ?, ?)"));
        ins.addBindValue(id);
        ins.addBindValue(step.before.value(QStringLiteral("secret")).toString());
        ins.addBindValue(validUntil);
        if (!execute(ins, error))
            return false;
    }
    QSqlQuery &upd = m_ctx.db.query(QStringLiteral(
        "UPDATE instances SET secret = ?, version = version + 1, updated_at = ? WHERE id = ? AND version = ?"));
    upd.addBindValue(secret);
    upd.addBindValue(now);
    upd.addBindValue(id);
    upd.addBindValue(version);
    if (!updateVersioned(upd, kInstance, error))
        return false;
    QSqlQuery &load = m_ctx.db.query(QStringLiteral("SELECT ") + InstancesApi::columns() + QStringLiteral(" FROM instances WHERE id = ?"));
    load.addBindValue(id);
    const auto instance = loadRow(load, InstancesApi::instanceJson, kInstance, id, error);
    if (!instance)
        return false;
    const Audience audience{step.before.value(QStringLiteral("provider_id")).toInteger(),
                            step.before.value(QStringLiteral("owner")).toString(), false};
    const QString why = !step.reason.isEmpty() ? step.reason
                        : grace                ? QStringLiteral("previous secret valid until %1").arg(validUntil)
                                               : QStringLiteral("previous secret no longer valid (X-Hub-Signature)");
    if (!m_ctx.journal.audit(step.request.who(), {step.action, kInstance, id, {}, {}, why}, audience, error)
        || !m_ctx.journal.event(kInstance, id, version + 1, QStringLiteral("updated"), *instance, audience, error))
        return false;
    *after = *instance;
    step.answerExtra.insert(QStringLiteral("secret"), secret);
    step.answerExtra.insert(QStringLiteral("previous_secret_valid_until"), grace ? QJsonValue(validUntil) : QJsonValue());
    return true;
}

} // namespace OpsDeck
