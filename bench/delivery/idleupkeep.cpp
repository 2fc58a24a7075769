// The delivery benchmark's idle part: what an outbox holding a backlog costs while nothing is due.
#include "idleupkeep.h"

#include "cpuclocks.h"

#include "server/controlplane.h"
#include "server/outbox/outboxservice.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"

#include <QDateTime>
#include <QEventLoop>
#include <QSqlQuery>
#include <QTimer>

#include <algorithm>

namespace OpsDeck::Bench {

namespace {

void seedBacklog(const QString &url, int count)
{
    Database db(url);
    Problem problem;
    if (!db.open(&problem) || !db.migrate(&problem) || !OutboxService::prepare(db, &problem))
        qFatal("%s", qPrintable(problem.detail));
    const QString now = nowTimestamp();
    const QString later = timestamp(QDateTime::currentDateTimeUtc().addDays(30));
    const QStringList statements = {
        QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at) VALUES ('idle', 'AVAILABLE', 1, '%1', '%1')")
            .arg(now),
        QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                       " VALUES ('gone', 1, '[\"app\"]', 1, '%1', '%1')")
            .arg(now),
        QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                       " VALUES (1, 'http://127.0.0.1:9/gone', 'ACTIVE', 1, '%1', '%1')")
            .arg(now),
        QStringLiteral("WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < %2)"
                       " INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at,"
                       " updated_at, status_changed_at, callback_url, callback_signing, secret) SELECT 'i' || k, 1, 1, 'app', 'owner',"
                       " 'RUNNING', 1, '%1', '%1', '%1', 'http://127.0.0.1:9/gone', 'standard-webhooks', 'whsec_dGVzdA==' FROM n")
            .arg(now)
            .arg(count),
        // Each failed three times and waits for its next attempt.
        QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
                       " logged_attempts, next_attempt_at, created_at, updated_at, version) SELECT 'msg_' || id,"
                       " 'instance.status_changed', id, 1, 1, 'PENDING', '{}', 3, 3, '%2', '%1', '%1', 4 FROM instances")
            .arg(now, later),
    };
    db.begin();
    for (const QString &sql : statements) {
        if (!db.exec(sql, &problem))
            qFatal("%s", qPrintable(problem.detail));
    }
    db.commit();
    if (db.backend() == Database::Backend::Postgres && !db.exec(QStringLiteral("ANALYZE"), &problem))
        qFatal("%s", qPrintable(problem.detail));
}

void waitSeconds(int seconds)
{
    QEventLoop loop;
    QTimer::singleShot(seconds * 1000, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

IdleUpkeep idleUpkeep(const QString &url, int count, int settleSeconds, int seconds)
{
    seedBacklog(url, count);
    ServerOptions options;
    options.databaseUrl = url;
    ControlPlane server(options);
    Database probe(url);
    probe.open();
    const bool postgres = probe.backend() == Database::Backend::Postgres;
    // The server's backends are there only once it started: its CPU before is taken as none.
    const qint64 atStart = processCpuMicros();
    Problem problem;
    if (!server.start(&problem))
        qFatal("%s", qPrintable(problem.detail));
    waitSeconds(settleSeconds);
    const qint64 settled = processCpuMicros();
    const qint64 backendSettled = postgres ? backendCpuMicros(probe) : 0;
    waitSeconds(seconds);
    IdleUpkeep u;
    u.startMs = double(settled - atStart) / 1000.0;
    u.perSecondMs = double(processCpuMicros() - settled) / 1000.0 / std::max(1, seconds);
    if (postgres) {
        u.backendStartMs = double(backendSettled) / 1000.0;
        u.backendPerSecondMs = double(backendCpuMicros(probe) - backendSettled) / 1000.0 / std::max(1, seconds);
    }
    server.stop();
    return u;
}

} // namespace OpsDeck::Bench
