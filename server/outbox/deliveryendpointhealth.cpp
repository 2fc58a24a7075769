// The callback outbox in storage: a recorded batch's outcomes applied to its endpoints' health.
#include "deliveryrepository.h"

#include "deliverysql.h"

#include "core/endpoint.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QSqlQuery>

namespace OpsDeck {

using namespace DeliverySql;

bool DeliveryRepository::updateEndpoint(const QList<AttemptRecord> &records, qsizetype first, qsizetype end,
                                        std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results,
                                        Problem *error)
{
    const DeliveryTarget &target = records.at(first).target;
    QSqlQuery &cur = m_db.query(
        QStringLiteral("SELECT e.state, e.consecutive_failures, s.failing_since FROM endpoints e"
                       " LEFT JOIN outbox_endpoint_streaks s ON s.endpoint_id = e.id WHERE e.id = ?")
        + (m_db.backend() == Database::Backend::Postgres ? QStringLiteral(" FOR UPDATE OF e") : QString()));
    cur.addBindValue(target.endpointId);
    if (!cur.exec() || !cur.next()) {
        *error = failed(cur);
        cur.finish();
        return false;
    }
    const QString initialState = cur.value(0).toString();
    int failures = cur.value(1).toInt();
    const QString initialFailingSince = cur.value(2).toString();
    cur.finish();

    // The attempts are applied in order in memory, as if recorded one by one; the endpoint is
    // written once with the outcome, and shows on the feed once if anything visible changed.
    struct Action
    {
        QString action;
        QString from;
        QString to;
        QString failingSince;
    };
    QString state = initialState;
    QString failingSince = initialFailingSince;
    int successes = 0;
    int failuresSeen = 0;
    QVariant lastSuccessAt = nullText();
    QVariant lastFailureAt = nullText();
    QVariant pausedAt = nullText();
    const AttemptRecord *lastSuccess = nullptr; // not owned; formatted once after the loop
    bool changed = false;
    QList<Action> actions;
    for (qsizetype i = first; i < end; ++i) {
        const AttemptRecord &r = records.at(i);
        bool stepChanged = false;
        if (r.outcome.verdict == AttemptOutcome::Verdict::Delivered) {
            stepChanged = failures > 0;
            failures = 0;
            failingSince.clear();
            ++successes;
            lastSuccess = &r;
        } else {
            const QString at = timestamp(r.attempt.at);
            if (failingSince.isEmpty()) {
                failingSince = at;
                stepChanged = true;
            }
            ++failures;
            ++failuresSeen;
            lastFailureAt = at;
            QString to;
            if (state == Endpoint::Active && r.outcome.disableEndpoint)
                to = Endpoint::Disabled;
            else if (state == Endpoint::Active
                     && failingSince <= timestamp(r.attempt.at.addMSecs(-qint64(autoPauseWindow.count()))))
                to = Endpoint::Paused;
            if (!to.isEmpty()) {
                actions.append({to == Endpoint::Disabled ? QStringLiteral("disable") : QStringLiteral("pause"), state, to,
                                failingSince});
                if (to == Endpoint::Paused)
                    pausedAt = at;
                state = to;
                stepChanged = true;
            }
        }
        (*results)[i].endpointChanged = stepChanged;
        changed = changed || stepChanged;
    }
    if (lastSuccess)
        lastSuccessAt = timestamp(lastSuccess->attempt.at);

    if (failingSince != initialFailingSince) {
        if (!initialFailingSince.isEmpty()) {
            QSqlQuery &del = m_db.query(QStringLiteral("DELETE FROM outbox_endpoint_streaks WHERE endpoint_id = ?"));
            del.addBindValue(target.endpointId);
            const bool ok = del.exec();
            if (!ok)
                *error = failed(del);
            del.finish();
            if (!ok)
                return false;
        }
        if (!failingSince.isEmpty()) {
            QSqlQuery &ins = m_db.query(QStringLiteral(
                "INSERT INTO outbox_endpoint_streaks (endpoint_id, failing_since) VALUES (?, ?)"));
            ins.addBindValue(target.endpointId);
            ins.addBindValue(failingSince);
            const bool ok = ins.exec();
            if (!ok)
                *error = failed(ins);
            ins.finish();
            if (!ok)
                return false;
        }
    }

    QSqlQuery &upd = m_db.query(QStringLiteral(
        "UPDATE endpoints SET consecutive_failures = ?, success_count = success_count + ?, failure_count = failure_count + ?,"
        " last_success_at = COALESCE(?, last_success_at), last_failure_at = COALESCE(?, last_failure_at),"
        " state = ?, paused_at = COALESCE(?, paused_at), version = version + ?, updated_at = ? WHERE id = ?"));
    upd.addBindValue(failures);
    upd.addBindValue(successes);
    upd.addBindValue(failuresSeen);
    upd.addBindValue(lastSuccessAt);
    upd.addBindValue(lastFailureAt);
    upd.addBindValue(state);
    upd.addBindValue(pausedAt);
    upd.addBindValue(changed ? 1 : 0);
    upd.addBindValue(nowTimestamp());
    upd.addBindValue(target.endpointId);
    if (!upd.exec()) {
        *error = failed(upd);
        upd.finish();
        return false;
    }
    upd.finish();
    if (!changed)
        return true;
    if (!emitEndpoint(target.endpointId, QStringLiteral("updated"), error))
        return false;
    for (const Action &a : std::as_const(actions)) {
        const bool disable = a.action == QLatin1String("disable");
        const QString why = disable ? QStringLiteral("the endpoint answered 410 Gone")
                                    : QStringLiteral("the endpoint has been failing since %1").arg(a.failingSince);
        if (!m_journal.audit(workerCaller(), {a.action, kEndpoint, target.endpointId, a.from, a.to, why},
                             Audience{target.providerId, {}, false}, error)
            || !alert(disable ? QStringLiteral("endpoint-disabled") : QStringLiteral("endpoint-paused"), target.endpointId,
                      0, target.providerId,
                      {{QStringLiteral("endpoint_id"), target.endpointId},
                       {QStringLiteral("url"), target.url},
                       {QStringLiteral("message"),
                        QStringLiteral("endpoint %1 (%2) %3: %4")
                            .arg(target.endpointId)
                            .arg(target.url, disable ? QStringLiteral("disabled") : QStringLiteral("paused"), why)}},
                      error))
            return false;
    }
    return true;
}

} // namespace OpsDeck
