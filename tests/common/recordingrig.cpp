// A scratch outbox for the recording and claim tests.
#include "recordingrig.h"

#include "server/storage/timestamps.h"

#include <QSqlQuery>
#include <QtTest>

namespace OpsDeck::Test {

qint64 scalar(Database &db, const QString &sql)
{
    QSqlQuery q(db.connection());
    return q.exec(sql) && q.next() ? q.value(0).toLongLong() : -1;
}

QString text(Database &db, const QString &sql)
{
    QSqlQuery q(db.connection());
    return q.exec(sql) && q.next() ? q.value(0).toString() : QStringLiteral("<none>");
}

QString RecordingRig::open()
{
    m_tdb = std::make_unique<TestDatabase>();
    if (!m_tdb->isValid())
        return m_tdb->error();
    m_db = std::make_unique<Database>(m_tdb->url());
    Problem problem;
    if (!m_db->open(&problem) || !m_db->migrate(&problem))
        return problem.detail;
    m_journal = std::make_unique<Journal>(*m_db);
    m_repo = std::make_unique<DeliveryRepository>(*m_db, *m_journal);
    return QString();
}

RecordingRig::~RecordingRig()
{
    m_repo.reset();
    m_journal.reset();
    if (m_db)
        m_db->close();
    m_db.reset();
    m_tdb.reset();
}

void RecordingRig::seed(int count, int from, const QString &at)
{
    const QString now = at.isEmpty() ? nowTimestamp() : at;
    QVERIFY(m_db->begin());
    QSqlQuery q(m_db->connection());
    if (from == 0) {
        QVERIFY(q.exec(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                      " VALUES ('o', 'AVAILABLE', 1, '%1', '%1')").arg(now)));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at,"
                                      " updated_at) VALUES ('p', 1, '[\"app\"]', 1, '%1', '%1')").arg(now)));
        QVERIFY(q.exec(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                      " VALUES (1, 'http://127.0.0.1:9/cb', 'ACTIVE', 1, '%1', '%1')").arg(now)));
    }
    for (int i = from; i < from + count; ++i) {
        QVERIFY(execWith(q, QStringLiteral(
            "INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at,"
            " updated_at, status_changed_at, callback_url, callback_signing, secret) VALUES (?, 1, 1, 'app', 'owner',"
            " 'RUNNING', 1, ?, ?, ?, 'http://127.0.0.1:9/cb', 'standard-webhooks', 'whsec_dGVzdA==') RETURNING id"),
                         {QStringLiteral("i%1").arg(i), now, now, now})
                && q.next());
        const qint64 id = q.value(0).toLongLong();
        q.finish();
        QVERIFY(execWith(q, QStringLiteral(
            "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
            " next_attempt_at, created_at, updated_at, version) VALUES (?, 'instance.status_changed', ?, 1, 1, 'PENDING',"
            " '{}', 0, ?, ?, ?, 1)"),
                         {QStringLiteral("msg_%1").arg(i), id, now, now, now}));
    }
    QVERIFY(m_db->commit());
}

QList<DeliveryTarget> RecordingRig::claimAll(int limit)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    const QList<DeliveryTarget> targets = m_repo->claim(RecordingOwner, now, now.addSecs(60), limit, {}, &problem);
    if (!problem.isNull())
        qWarning("claim failed: %s", qPrintable(problem.detail));
    return targets;
}

AttemptRecord RecordingRig::outcome(const DeliveryTarget &target, QChar kind)
{
    AttemptRecord r;
    r.target = target;
    r.attempt.at = QDateTime::currentDateTimeUtc();
    r.attempt.requestHeaders = {{"webhook-id", target.webhookId.toUtf8()}};
    r.attempt.requestBody = target.body;
    r.attempt.latencyMs = 3;
    if (kind == QLatin1Char('D')) {
        r.attempt.status = 200;
        r.outcome.verdict = AttemptOutcome::Verdict::Delivered;
    } else {
        r.attempt.status = kind == QLatin1Char('G') ? 410 : 500;
        r.attempt.errorClass = QStringLiteral("http");
        r.attempt.error = QStringLiteral("HTTP %1").arg(r.attempt.status);
        r.outcome.verdict = AttemptOutcome::Verdict::Retry;
        r.outcome.nextAttemptAt = r.attempt.at.addSecs(5);
        r.outcome.giveUpAt = r.attempt.at.addDays(3);
        r.outcome.disableEndpoint = kind == QLatin1Char('G');
    }
    return r;
}

} // namespace OpsDeck::Test
