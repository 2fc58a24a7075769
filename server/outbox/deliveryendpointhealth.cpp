// The callback outbox in storage: a recorded batch's outcomes applied to its endpoints' health.
#include "deliveryrepository.h"

#include "deliverysql.h"
#include "writetransaction.h"

#include "core/endpoint.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/statement.h"
#include "server/storage/timestamps.h"

#include <QHash>
#include <QSqlQuery>

#include <algorithm>

namespace OpsDeck {

using namespace DeliverySql;

namespace {

// An endpoint as the batch found it.
struct Health
{
    QString state;
    int failures = 0;
    QString failingSince;
};

// A pause or a disable the batch's attempts brought about.
struct Action
{
    QString action;
    QString from;
    QString to;
    QString failingSince;
};

// What one endpoint's attempts in the batch make of its health, applied in order in memory as if
// recorded one by one: the endpoint is then written once, and shows on the feed once if anything
// visible changed.
struct Outcome
{
    qint64 endpointId = 0;
    qint64 providerId = 0;
    QString url;
    Health before;
    Health after;
    int successes = 0;
    int failuresSeen = 0;
    QVariant lastSuccessAt = nullText();
    QVariant lastFailureAt = nullText();
    QVariant pausedAt = nullText();
    bool changed = false; // in state or failure streak
    bool shown = false;   // gets a new version and a feed event now
    QList<Action> actions;
};

Outcome apply(const QList<AttemptRecord> &records, qsizetype first, qsizetype end, const Health &before,
              std::chrono::milliseconds autoPauseWindow, QList<RecordResult> *results)
{
    Outcome o;
    const DeliveryTarget &target = records.at(first).target;
    o.endpointId = target.endpointId;
    o.providerId = target.providerId;
    o.url = target.url;
    o.before = before;
    Health &h = o.after;
    h = before;
    const AttemptRecord *lastSuccess = nullptr; // not owned; formatted once after the loop
    for (qsizetype i = first; i < end; ++i) {
        const AttemptRecord &r = records.at(i);
        bool stepChanged = false;
        if (r.outcome.verdict == AttemptOutcome::Verdict::Delivered) {
            stepChanged = h.failures > 0;
            h.failures = 0;
            h.failingSince.clear();
            ++o.successes;
            lastSuccess = &r;
        } else {
            const QString at = timestamp(r.attempt.at);
            if (h.failingSince.isEmpty()) {
                h.failingSince = at;
                stepChanged = true;
            }
            ++h.failures;
            ++o.failuresSeen;
            o.lastFailureAt = at;
            QString to;
            if (h.state == Endpoint::Active && r.outcome.disableEndpoint)
                to = Endpoint::Disabled;
            else if (h.state == Endpoint::Active
                     && h.failingSince <= timestamp(r.attempt.at.addMSecs(-qint64(autoPauseWindow.count()))))
                to = Endpoint::Paused;
            if (!to.isEmpty()) {
                o.actions.append({to == Endpoint::Disabled ? QStringLiteral("disable") : QStringLiteral("pause"), h.state,
                                  to, h.failingSince});
                if (to == Endpoint::Paused)
                    o.pausedAt = at;
                h.state = to;
                stepChanged = true;
            }
        }
        (*results)[i].endpointChanged = stepChanged;
        o.changed = o.changed || stepChanged;
    }
    if (lastSuccess)
        o.lastSuccessAt = timestamp(lastSuccess->attempt.at);
    return o;
}

} // namespace

bool DeliveryRepository::updateEndpoints(const QList<AttemptRecord> &records, std::chrono::milliseconds autoPauseWindow,
                                         QList<RecordResult> *results, Problem *error)
{
    // Records come sorted by endpoint: each endpoint's run of them is one group.
    QList<std::pair<qsizetype, qsizetype>> groups;
    for (qsizetype first = 0; first < records.size();) {
        qsizetype end = first + 1;
        while (end < records.size() && records.at(end).target.endpointId == records.at(first).target.endpointId)
            ++end;
        groups.append({first, end});
        first = end;
    }
    for (qsizetype chunk = 0; chunk < groups.size(); chunk += MaxRowsPerStatement) {
        const qsizetype n = std::min<qsizetype>(MaxRowsPerStatement, groups.size() - chunk);
        // Every endpoint of the chunk read at once (on PostgreSQL already locked, in id order, by
        // lockForRecording) ...
        QString ids;
        for (qsizetype g = 0; g < n; ++g)
            ids += g == 0 ? QStringLiteral("?") : QStringLiteral(", ?");
        QSqlQuery &cur = m_db.query(
            QStringLiteral("SELECT e.id, e.state, e.consecutive_failures, s.failing_since FROM endpoints e"
                           " LEFT JOIN outbox_endpoint_streaks s ON s.endpoint_id = e.id WHERE e.id IN (")
            + ids + QStringLiteral(")"));
        for (qsizetype g = chunk; g < chunk + n; ++g)
            cur.addBindValue(records.at(groups.at(g).first).target.endpointId);
        if (!cur.exec()) {
            *error = failed(cur);
            cur.finish();
            return false;
        }
        QHash<qint64, Health> found;
        while (cur.next())
            found.insert(cur.value(0).toLongLong(), Health{cur.value(1).toString(), cur.value(2).toInt(), cur.value(3).toString()});
        cur.finish();
        QList<Outcome> outcomes;
        outcomes.reserve(n);
        for (qsizetype g = chunk; g < chunk + n; ++g) {
            const auto [first, end] = groups.at(g);
            const auto it = found.constFind(records.at(first).target.endpointId);
            if (it == found.cend()) {
                *error = Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
                                       QStringLiteral("endpoint %1 of a recorded attempt is gone")
                                           .arg(records.at(first).target.endpointId));
                return false;
            }
            outcomes.append(apply(records, first, end, it.value(), autoPauseWindow, results));
        }
        // Every attempt changes its endpoint's counters. A change of state or failure streak
        // shows on the feed at once; the counters alone at most once an interval per endpoint
        // (showHealth() shows the rest at the next poll), so a busy endpoint adds an event a
        // second, not one per batch.
        // What is decided here is kept once the batch commits (healthCommitted()).
        const qint64 now = m_clock.elapsed();
        for (Outcome &o : outcomes) {
            const auto shownAt = m_healthShownAt.constFind(o.endpointId);
            o.shown = o.changed || shownAt == m_healthShownAt.cend() || now - *shownAt >= HealthEventIntervalMs;
            m_healthDecided.append({o.endpointId, o.shown});
        }

        // ... a failure streak begun or ended where one did ...
        for (const Outcome &o : std::as_const(outcomes)) {
            if (o.after.failingSince == o.before.failingSince)
                continue;
            if (!o.before.failingSince.isEmpty()) {
                QSqlQuery &del = m_db.query(QStringLiteral("DELETE FROM outbox_endpoint_streaks WHERE endpoint_id = ?"));
                del.addBindValue(o.endpointId);
                const bool ok = del.exec();
                if (!ok)
                    *error = failed(del);
                del.finish();
                if (!ok)
                    return false;
            }
            if (!o.after.failingSince.isEmpty()) {
                QSqlQuery &ins = m_db.query(QStringLiteral(
                    "INSERT INTO outbox_endpoint_streaks (endpoint_id, failing_since) VALUES (?, ?)"));
                ins.addBindValue(o.endpointId);
                ins.addBindValue(o.after.failingSince);
                const bool ok = ins.exec();
                if (!ok)
                    *error = failed(ins);
                ins.finish();
                if (!ok)
                    return false;
            }
        }

        // ... and every endpoint written by one statement. The values are cast: PostgreSQL
        // cannot tell a bare parameter's type in a VALUES list.
        static const QString row = QStringLiteral(
            "(CAST(? AS BIGINT), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS INTEGER), CAST(? AS TEXT),"
            " CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS INTEGER))");
        QString rows;
        for (qsizetype g = 0; g < n; ++g)
            rows += (g == 0 ? QString() : QStringLiteral(", ")) + row;
        QSqlQuery &upd = m_db.query(
            QStringLiteral("UPDATE endpoints SET consecutive_failures = v.column2, success_count = success_count + v.column3,"
                           " failure_count = failure_count + v.column4,"
                           " last_success_at = COALESCE(v.column5, last_success_at),"
                           " last_failure_at = COALESCE(v.column6, last_failure_at), state = v.column7,"
                           " paused_at = COALESCE(v.column8, paused_at), version = version + v.column9, updated_at = ?"
                           " FROM (VALUES ")
            + rows + QStringLiteral(") AS v WHERE endpoints.id = v.column1"));
        upd.addBindValue(nowTimestamp()); // updated_at, before the VALUES in the statement's text
        for (const Outcome &o : std::as_const(outcomes)) {
            upd.addBindValue(o.endpointId);
            upd.addBindValue(o.after.failures);
            upd.addBindValue(o.successes);
            upd.addBindValue(o.failuresSeen);
            upd.addBindValue(o.lastSuccessAt);
            upd.addBindValue(o.lastFailureAt);
            upd.addBindValue(o.after.state);
            upd.addBindValue(o.pausedAt);
            upd.addBindValue(o.shown ? 1 : 0);
        }
        if (!upd.exec()) {
            *error = failed(upd);
            upd.finish();
            return false;
        }
        upd.finish();

        for (const Outcome &o : std::as_const(outcomes)) {
            if (!o.shown)
                continue;
            qint64 version = 0;
            if (!emitEndpoint(o.endpointId, QStringLiteral("updated"), error, &version))
                return false;
            for (const Action &a : o.actions) {
                const bool disable = a.action == QLatin1String("disable");
                const QString why = disable ? QStringLiteral("the endpoint answered 410 Gone")
                                            : QStringLiteral("the endpoint has been failing since %1").arg(a.failingSince);
                if (!m_journal.audit(workerCaller(), {a.action, kEndpoint, o.endpointId, a.from, a.to, why},
                                     Audience{o.providerId, {}, false}, error)
                    || !alert(disable ? QStringLiteral("endpoint-disabled") : QStringLiteral("endpoint-paused"),
                              o.endpointId, version, o.providerId,
                              {{QStringLiteral("endpoint_id"), o.endpointId},
                               {QStringLiteral("url"), o.url},
                               {QStringLiteral("message"),
                                QStringLiteral("endpoint %1 (%2) %3: %4")
                                    .arg(o.endpointId)
                                    .arg(o.url, disable ? QStringLiteral("disabled") : QStringLiteral("paused"), why)}},
                              error))
                    return false;
            }
        }
    }
    return true;
}

bool DeliveryRepository::touchEndpoints(QList<qint64> ids, const QString &set, const QStringList &values, Problem *error)
{
    std::sort(ids.begin(), ids.end()); // the writers' lock order on PostgreSQL: endpoints by id
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (ids.isEmpty())
        return true;
    const bool done = runAgainOnConflict(
        [&](Problem *problem) {
            WriteTransaction tx(m_db);
            if (!tx.isActive()) {
                *problem = tx.problem();
                return false;
            }
            // One at a time: rare, and the statement's text stays the same.
            for (const qint64 id : std::as_const(ids)) {
                bool found = false;
                {
                    Statement upd(m_db, QStringLiteral("UPDATE endpoints SET ") + set
                                            + QStringLiteral("version = version + 1 WHERE id = ? RETURNING id"));
                    for (const QString &value : values)
                        upd.bindText(value);
                    upd.bind(id);
                    if (!upd.exec(problem))
                        return false;
                    found = upd.next();
                    if (upd.failed()) {
                        *problem = upd.problem();
                        return false;
                    }
                }
                // An endpoint deleted meanwhile has nothing to show.
                if (found && !emitEndpoint(id, QStringLiteral("updated"), problem))
                    return false;
            }
            return tx.commit(problem);
        },
        error);
    if (!done)
        return false;
    // Shown now, with all it counted: nothing of it waits for showHealth().
    const qint64 now = m_clock.elapsed();
    for (const qint64 id : std::as_const(ids)) {
        m_healthUnshown.remove(id);
        m_healthShownAt.insert(id, now);
    }
    return true;
}

void DeliveryRepository::healthCommitted(bool committed)
{
    // Rolled back, nothing of the batch was written: what it decided goes with it.
    const QList<std::pair<qint64, bool>> decided = std::exchange(m_healthDecided, {});
    if (!committed)
        return;
    const qint64 now = m_clock.elapsed();
    for (const auto &[endpointId, shown] : decided) {
        if (shown) {
            m_healthShownAt.insert(endpointId, now);
            m_healthUnshown.remove(endpointId);
        } else {
            m_healthUnshown.insert(endpointId);
        }
    }
}

bool DeliveryRepository::recordSilence(const QList<qint64> &endpointIds, const QDateTime &at, Problem *error)
{
    return touchEndpoints(endpointIds, QStringLiteral("silent_count = silent_count + 1, last_silent_at = ?, updated_at = ?, "),
                          {timestamp(at), nowTimestamp()}, error);
}

int DeliveryRepository::showHealth(Problem *error)
{
    const qint64 now = m_clock.elapsed();
    // Shown more than an interval ago: the next batch shows it at once anyway.
    for (auto it = m_healthShownAt.begin(); it != m_healthShownAt.end();)
        it = now - it.value() >= HealthEventIntervalMs ? m_healthShownAt.erase(it) : std::next(it);
    if (m_healthUnshown.isEmpty())
        return 0;
    const QList<qint64> ids(m_healthUnshown.cbegin(), m_healthUnshown.cend());
    return touchEndpoints(ids, QString(), {}, error) ? int(ids.size()) : -1;
}

} // namespace OpsDeck
