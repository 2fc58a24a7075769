// Claims on a real database: the resumable cursor, busy endpoints, the per-instance order and the
// lease taken in the same transaction as a recorded batch.
#include "lockwait.h"
#include "recordingrig.h"

#include "server/outbox/outboxstore.h"
#include "server/storage/timestamps.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <sqlite3.h>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString &kOwner = RecordingOwner;

} // namespace

class tst_DeliveryClaims : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void testEventDoesNotWaitForTheInstancesBacklog();
    void settledInFlightHoldsTheNextBackUntilRecorded_data();
    void settledInFlightHoldsTheNextBackUntilRecorded();
    void claimGoesOnAfterTheCursor();
    void claimAfterTheCursorSeeksPastWhatItPassed();
    void busyEndpointsAreSkipped();
    void onlyNamedEndpointsAreClaimed();
    void oneRowEachUnlessExempt_data();
    void oneRowEachUnlessExempt();
    void secondClaimLeavesOutWhatHasItsRow();
    void scanReachesPastWhatOneEachLeftOut();
    void leaseSharesTheBatchTransaction();
    void failedLeaseRollsTheBatchBack();
    void expiredLeaseLogsAnInterruptedAttempt();
    void unrecordedAttemptsAreLoggedAsTheyGoBack();
    void enqueueSupersedesTheOlderInFlight_data();
    void enqueueSupersedesTheOlderInFlight();
    void supersedeLeavesWhatSettledMeanwhile_data();
    void supersedeLeavesWhatSettledMeanwhile();

private:
    std::unique_ptr<RecordingRig> m_rig;
    Database *m_db = nullptr;
    DeliveryRepository *m_repo = nullptr;
};

void tst_DeliveryClaims::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_DeliveryClaims::init()
{
    m_rig = std::make_unique<RecordingRig>();
    const QString opened = m_rig->open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    m_db = &m_rig->db();
    m_repo = &m_rig->repository();
}

void tst_DeliveryClaims::cleanup()
{
    m_repo = nullptr;
    m_db = nullptr;
    m_rig.reset();
}

void tst_DeliveryClaims::testEventDoesNotWaitForTheInstancesBacklog()
{
    m_rig->seed(1);
    // The instance's notification failed and waits an hour for its retry; a test event sent to
    // the endpoint meanwhile goes now, and the notification still waits.
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET attempts = 1, next_attempt_at = '%1'")
                       .arg(timestamp(QDateTime::currentDateTimeUtc().addSecs(3600)))));
    const QString now = nowTimestamp();
    QVERIFY(q.exec(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version) VALUES ('msg_test', 'opsdeck.test', 1, 1, 1, 'PENDING', '{}',"
        " 0, '%1', '%1', '%1', 1)").arg(now)));
    const QList<DeliveryTarget> targets = m_rig->claimAll(10);
    QCOMPARE(targets.size(), 1);
    QCOMPARE(targets.at(0).eventType, QStringLiteral("opsdeck.test"));
    QCOMPARE(targets.at(0).webhookId, QStringLiteral("msg_test"));
}

void tst_DeliveryClaims::settledInFlightHoldsTheNextBackUntilRecorded_data()
{
    QTest::addColumn<QString>("settledAs");
    QTest::addColumn<QChar>("answer");
    QTest::newRow("cancelled, acknowledged") << QStringLiteral("CANCELLED") << QChar(QLatin1Char('D'));
    QTest::newRow("cancelled, failed") << QStringLiteral("CANCELLED") << QChar(QLatin1Char('R'));
    QTest::newRow("superseded, acknowledged") << QStringLiteral("SUPERSEDED") << QChar(QLatin1Char('D'));
    QTest::newRow("superseded, failed") << QStringLiteral("SUPERSEDED") << QChar(QLatin1Char('R'));
}

void tst_DeliveryClaims::settledInFlightHoldsTheNextBackUntilRecorded()
{
    // A notification settled through the API while its attempt is in flight may still reach the
    // provider: the instance's next one waits until that attempt is recorded, which clears the
    // lease and so takes the row out of the claim's index of in-flight rows.
    QFETCH(QString, settledAs);
    QFETCH(QChar, answer);
    m_rig->seed(1);
    const QList<DeliveryTarget> first = m_rig->claimAll(10);
    QCOMPARE(first.size(), 1);
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET state = '%1', next_attempt_at = NULL, version = version + 1"
                                  " WHERE id = %2").arg(settledAs).arg(first.at(0).id)));
    const QString now = nowTimestamp();
    QVERIFY(q.exec(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version) VALUES ('msg_next', 'instance.status_changed', %1, 1, 1,"
        " 'PENDING', '{}', 0, '%2', '%2', '%2', 1)").arg(first.at(0).instanceId).arg(now)));
    QVERIFY(m_rig->claimAll(10).isEmpty());

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(first.at(0), answer)}, kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QCOMPARE(results.size(), 1);
    QVERIFY(results.at(0).ok && !results.at(0).leaseLost);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state <> 'PENDING' AND lease_until IS NOT NULL")),
             0);
    const QList<DeliveryTarget> next = m_rig->claimAll(10);
    QCOMPARE(next.size(), 1);
    QCOMPARE(next.at(0).webhookId, QStringLiteral("msg_next"));
}

void tst_DeliveryClaims::claimGoesOnAfterTheCursor()
{
    m_rig->seed(5);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    ClaimCursor last;
    const QList<DeliveryTarget> first = m_repo->claim(kOwner, now, now.addSecs(60), 2, {}, &problem, std::nullopt, &last);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(first.size(), 2);
    QCOMPARE(last.id, first.last().id);

    // Released rows before the cursor are not seen again until a claim starts over.
    m_repo->release(first.at(0).id, kOwner);
    ClaimCursor next;
    const QList<DeliveryTarget> rest = m_repo->claim(kOwner, now, now.addSecs(60), 10, {}, &problem, last, &next);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(rest.size(), 3);
    QVERIFY(rest.first().id > last.id);
    QCOMPARE(next.id, rest.last().id);

    const QList<DeliveryTarget> none = m_repo->claim(kOwner, now, now.addSecs(60), 10, {}, &problem, next);
    QVERIFY(none.isEmpty());
    const QList<DeliveryTarget> again = m_repo->claim(kOwner, now, now.addSecs(60), 10, {}, &problem);
    QCOMPARE(again.size(), 1);
    QCOMPARE(again.first().id, first.at(0).id);
}

// A backlog due at one instant (a bulk change, a long outage's retries) whose rows the claims pass
// over (their endpoint is busy: hanging, say): a claim after the cursor must not read them again,
// or each claim costs the whole backlog. Counted in SQLite's virtual machine steps for the claim's
// statement, once with 200 rows behind the cursor and once with 2000.
void tst_DeliveryClaims::claimAfterTheCursorSeeksPastWhatItPassed()
{
    if (m_db->backend() != Database::Backend::Sqlite)
        QSKIP("PostgreSQL seeks the cursor's row comparison in the index; tst_queryplans checks the plan");
    const QString due = QStringLiteral("2026-01-01T00:00:00.000Z");
    const QString sql = DeliveryRepository::leaseSql(false, DeliveryRepository::EndpointClause::Except, true);
    const auto stepsPastTheEnd = [&]() -> qint64 {
        QSqlQuery q(m_db->connection());
        if (!q.exec(QStringLiteral("SELECT MAX(id) FROM deliveries")) || !q.next())
            return -1;
        const ClaimCursor cursor{due, q.value(0).toLongLong()};
        q.finish();
        QString error;
        sqlite3_stmt *statement = m_db->sqliteStatement(sql, &error);
        if (!statement)
            return -1;
        sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 1);
        const QDateTime now = QDateTime::currentDateTimeUtc();
        Problem problem;
        const QList<DeliveryTarget> claimed = m_repo->claim(kOwner, now, now.addSecs(60), 10, {1}, &problem, cursor);
        if (!problem.isNull() || !claimed.isEmpty())
            return -1;
        return sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0);
    };
    m_rig->seed(200, 0, due);
    const qint64 few = stepsPastTheEnd();
    QVERIFY(few > 0);
    m_rig->seed(1800, 200, due);
    const qint64 many = stepsPastTheEnd();
    QVERIFY(many > 0);
    // Reading the rows again costs steps for each (here ~10 times as many); a seek costs the same.
    QVERIFY2(many < 2 * few, qPrintable(QStringLiteral("%1 steps past 200 rows, %2 past 2000").arg(few).arg(many)));
}

void tst_DeliveryClaims::busyEndpointsAreSkipped()
{
    m_rig->seed(3);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, {1}, &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, {7, 1, 9}, &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(m_repo->claim(kOwner, now, now.addSecs(60), 10, {7, 9}, &problem).size(), 3);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
}

void tst_DeliveryClaims::onlyNamedEndpointsAreClaimed()
{
    // The worker names the endpoints it has room for when the rest must wait: the rig's rows are
    // all endpoint 1's.
    m_rig->seed(3);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, EndpointFilter::only({}), &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, EndpointFilter::only({7, 9}), &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(m_repo->claim(kOwner, now, now.addSecs(60), 2, EndpointFilter::only({7, 1}), &problem).size(), 2);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(m_repo->claim(kOwner, now, now.addSecs(60), 10, EndpointFilter::only({1}), &problem).size(), 1);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
}

void tst_DeliveryClaims::oneRowEachUnlessExempt_data()
{
    QTest::addColumn<bool>("afterCursor");
    QTest::newRow("from the oldest") << false;
    QTest::newRow("after a cursor") << true;
}

void tst_DeliveryClaims::oneRowEachUnlessExempt()
{
    // Six due rows, the first three endpoint 1's and the others a second endpoint's. Endpoints
    // that get one attempt at a time get one row each; the exempt ones what the limit allows.
    QFETCH(bool, afterCursor);
    const QString due = QStringLiteral("2026-01-01T00:00:00.000Z");
    m_rig->seed(6, 0, due);
    QSqlQuery q(m_db->connection());
    QVERIFY2(q.exec(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                   " VALUES (1, 'http://127.0.0.1:9/other', 'ACTIVE', 1, '%1', '%1') RETURNING id").arg(due))
                 && q.next(),
             qPrintable(q.lastError().text()));
    const qint64 second = q.value(0).toLongLong();
    q.finish();
    QList<qint64> rows;
    QVERIFY(q.exec(QStringLiteral("SELECT id FROM deliveries ORDER BY id")));
    while (q.next())
        rows.append(q.value(0).toLongLong());
    QCOMPARE(rows.size(), 6);
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET endpoint_id = %1 WHERE id IN (%2, %3, %4)")
                       .arg(second).arg(rows.at(3)).arg(rows.at(4)).arg(rows.at(5))));
    const std::optional<ClaimCursor> cursor = afterCursor ? std::optional(ClaimCursor{due, 0}) : std::nullopt;
    const auto claimed = [&](const QList<qint64> &exempt) {
        EndpointFilter endpoints;
        endpoints.oneEachExcept = exempt;
        const QDateTime now = QDateTime::currentDateTimeUtc();
        Problem problem;
        QList<qint64> ids;
        for (const DeliveryTarget &t : m_repo->claim(kOwner, now, now.addSecs(60), 10, endpoints, &problem, cursor))
            ids.append(t.id);
        if (!problem.isNull())
            qWarning("claim failed: %s", qPrintable(problem.detail));
        std::sort(ids.begin(), ids.end());
        return ids;
    };
    QCOMPARE(claimed({}), (QList<qint64>{rows.at(0), rows.at(3)}));
    QCOMPARE(claimed({second}), (QList<qint64>{rows.at(1), rows.at(4), rows.at(5)}));
    QCOMPARE(claimed({}), (QList<qint64>{rows.at(2)}));
    QCOMPARE(claimed({}), QList<qint64>());
}

void tst_DeliveryClaims::secondClaimLeavesOutWhatHasItsRow()
{
    // When a claim after the cursor comes short, the store claims again from the oldest row in
    // the same round: an endpoint limited to one row that got it is left out of that one.
    const auto taken = [](std::initializer_list<qint64> endpoints) {
        QList<DeliveryTarget> targets;
        for (const qint64 endpoint : endpoints) {
            DeliveryTarget t;
            t.endpointId = endpoint;
            targets.append(t);
        }
        return targets;
    };
    EndpointFilter except({5});
    QCOMPARE(OutboxStore::endpointsBesides(except, taken({1, 2})).ids, (QList<qint64>{5}));
    except.oneEachExcept = QList<qint64>{2};
    const EndpointFilter rest = OutboxStore::endpointsBesides(except, taken({1, 2, 3, 1}));
    QCOMPARE(rest.mode, EndpointFilter::Mode::Except);
    QCOMPARE(rest.ids, (QList<qint64>{5, 1, 3}));
    QCOMPARE(rest.oneEachExcept, except.oneEachExcept);
    EndpointFilter only = EndpointFilter::only({1, 2, 3});
    only.oneEachExcept = QList<qint64>{2};
    QCOMPARE(OutboxStore::endpointsBesides(only, taken({1, 2})).ids, (QList<qint64>{2, 3}));
}

void tst_DeliveryClaims::scanReachesPastWhatOneEachLeftOut()
{
    // Six due rows of an endpoint limited to one row each, claimed four at a time: the claim
    // leases one and says it read four, the last of them where the next claim goes on. Without
    // that the store took the claim for one that ran out of rows and started over from the
    // oldest, past the endpoint's whole backlog, at every attempt.
    const QString due = QStringLiteral("2026-01-01T00:00:00.000Z");
    m_rig->seed(6, 0, due);
    QList<qint64> rows;
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("SELECT id FROM deliveries ORDER BY id")));
    while (q.next())
        rows.append(q.value(0).toLongLong());
    QCOMPARE(rows.size(), 6);
    EndpointFilter limited;
    limited.oneEachExcept.emplace();
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    ClaimCursor last;
    ClaimScan scan;
    const QList<DeliveryTarget> first = m_repo->claim(kOwner, now, now.addSecs(60), 4, limited, &problem, std::nullopt, &last, &scan);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(first.size(), 1);
    QCOMPARE(first.first().id, rows.at(0));
    QCOMPARE(scan.candidates, 4);
    QCOMPARE(scan.last.id, rows.at(3));
    QCOMPARE(scan.last.at, due);
    // After the cursor, the endpoint still limited: its next row past the four read.
    const QList<DeliveryTarget> next = m_repo->claim(kOwner, now, now.addSecs(60), 4, limited, &problem, scan.last, &last, &scan);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(next.size(), 1);
    QCOMPARE(next.first().id, rows.at(4));
    QCOMPARE(scan.candidates, 2);
    QCOMPARE(scan.last.id, rows.at(5));
}

void tst_DeliveryClaims::leaseSharesTheBatchTransaction()
{
    m_rig->seed(2);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    // The instance's next notification waits behind the one in flight.
    QSqlQuery next(m_db->connection());
    next.prepare(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version) VALUES ('msg_next', 'instance.status_changed', ?, 1, 1,"
        " 'PENDING', '{\"n\":1}', 0, ?, ?, ?, 1) RETURNING id"));
    const QString at = nowTimestamp();
    next.addBindValue(targets.at(0).instanceId);
    next.addBindValue(at);
    next.addBindValue(at);
    next.addBindValue(at);
    QVERIFY(next.exec() && next.next());
    const qint64 nextId = next.value(0).toLongLong();
    next.finish();

    const QDateTime now = QDateTime::currentDateTimeUtc();
    QList<qint64> leased;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.at(0), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
                                 &problem,
                                 [&](Problem *error) {
                                     return m_repo->leaseDue(kOwner, now, now.addSecs(60), 10, {}, &leased, error);
                                 }),
             qPrintable(problem.detail));
    // The lease sees the batch settled: the instance's next notification is free already.
    std::sort(leased.begin(), leased.end());
    QCOMPARE(leased.size(), 2);
    QCOMPARE(leased.last(), nextId);
    ClaimCursor last;
    const QList<DeliveryTarget> claimed = m_repo->leasedTargets(leased, kOwner, now, &problem, &last);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(claimed.size(), 2);
    QCOMPARE(claimed.last().id, nextId);
    QCOMPARE(claimed.last().body, QByteArray("{\"n\":1}"));
    QCOMPARE(claimed.last().secrets, QStringList{QStringLiteral("whsec_dGVzdA==")});
    QCOMPARE(last.id, nextId);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state FROM deliveries WHERE id = %1").arg(targets.at(0).id)),
             QStringLiteral("DELIVERED"));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE lease_owner = '%1'").arg(kOwner)), 2);
}

void tst_DeliveryClaims::failedLeaseRollsTheBatchBack()
{
    m_rig->seed(2);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QList<qint64> leased;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY(!m_repo->recordBatch({RecordingRig::outcome(targets.at(0), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
                                 &problem, [&](Problem *error) {
                                     if (!m_repo->leaseDue(kOwner, now, now.addSecs(60), 10, {}, &leased, error))
                                         return false;
                                     *error = Problem::make(500, QStringLiteral("test"), QStringLiteral("Test"),
                                                            QStringLiteral("refused after the lease"));
                                     return false;
                                 }));
    QCOMPARE(problem.detail, QStringLiteral("refused after the lease"));
    QCOMPARE(leased.size(), 1);
    // All or none: neither the attempt nor the lease.
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts")), 0);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING'")), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE lease_owner = '%1'").arg(kOwner)), 1);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'delivery'")), 0);
}

void tst_DeliveryClaims::expiredLeaseLogsAnInterruptedAttempt()
{
    // A worker claims two notifications and stops: it releases one (a worker shutting down gives
    // back what it has not sent) and leaves the other's lease to expire, as a killed server does.
    m_rig->seed(2);
    const QString dead = QStringLiteral("w-stopped");
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    const QList<DeliveryTarget> held = m_repo->claim(dead, now, now.addSecs(60), 10, {}, &problem);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(held.size(), 2);
    const qint64 released = held.at(0).id;
    const qint64 interrupted = held.at(1).id;
    m_repo->release(released, dead);
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_until = '%1' WHERE id = %2")
                       .arg(timestamp(now.addSecs(-1)))
                       .arg(interrupted)));
    const qint64 versionBefore = scalar(*m_db, QStringLiteral("SELECT version FROM deliveries WHERE id = %1").arg(interrupted));

    // The next claim takes both; the expired lease's attempt is logged, of unknown outcome.
    const QList<DeliveryTarget> again = m_rig->claimAll(10);
    QCOMPARE(again.size(), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE delivery_id = %1").arg(released)), 0);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts")), 1);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT error_class FROM delivery_attempts WHERE delivery_id = %1 AND attempt = 1")
                             .arg(interrupted)),
             QStringLiteral("interrupted"));
    QVERIFY(text(*m_db, QStringLiteral("SELECT error FROM delivery_attempts WHERE delivery_id = %1").arg(interrupted))
                .contains(dead));
    QVERIFY(text(*m_db, QStringLiteral("SELECT last_error FROM deliveries WHERE id = %1").arg(interrupted))
                .startsWith(QLatin1String("interrupted: ")));
    // Counted in the log, not against the retry schedule; a new version on the feed.
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT logged_attempts FROM deliveries WHERE id = %1").arg(interrupted)), 1);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT attempts FROM deliveries WHERE id = %1").arg(interrupted)), 0);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT version FROM deliveries WHERE id = %1").arg(interrupted)), versionBefore + 1);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'delivery' AND object_id = %1 AND version = %2")
                               .arg(interrupted)
                               .arg(versionBefore + 1)),
             1);

    // The new holder's own attempt is the next one; a later claim finds no lease to take over.
    const auto target = std::find_if(again.cbegin(), again.cend(), [&](const DeliveryTarget &t) { return t.id == interrupted; });
    QVERIFY(target != again.cend());
    QList<RecordResult> results;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(*target, QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
                                 &problem),
             qPrintable(problem.detail));
    QCOMPARE(results.size(), 1);
    QCOMPARE(results.at(0).attempt, 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT response_status FROM delivery_attempts WHERE delivery_id = %1 AND attempt = 2")
                               .arg(interrupted)),
             200);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state FROM deliveries WHERE id = %1").arg(interrupted)), QStringLiteral("DELIVERED"));
}

void tst_DeliveryClaims::unrecordedAttemptsAreLoggedAsTheyGoBack()
{
    // A batch the store could not record goes back to be sent again; each of its attempts is
    // logged as interrupted, with why. One another worker holds meanwhile is not this one's.
    m_rig->seed(3);
    const QList<DeliveryTarget> held = m_rig->claimAll(10);
    QCOMPARE(held.size(), 3);
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-other' WHERE id = %1").arg(held.at(2).id)));
    Problem problem;
    QCOMPARE(m_repo->releaseUnrecorded({held.at(1).id, held.at(0).id, held.at(2).id}, kOwner, QStringLiteral("disk full"), &problem),
             2);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE lease_owner IS NULL AND state = 'PENDING'")), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE error_class = 'interrupted'"
                                          " AND error LIKE '%disk full%' AND delivery_id IN (%1, %2)")
                               .arg(held.at(0).id)
                               .arg(held.at(1).id)),
             2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE delivery_id = %1").arg(held.at(2).id)), 0);
    // Due again at once: the next claim takes them.
    QCOMPARE(m_rig->claimAll(10).size(), 2);
}

void tst_DeliveryClaims::enqueueSupersedesTheOlderInFlight_data()
{
    QTest::addColumn<QString>("eventType");
    QTest::addColumn<QChar>("answer");
    QTest::newRow("acknowledged") << QStringLiteral("instance.status_changed") << QChar(QLatin1Char('D'));
    QTest::newRow("failed") << QStringLiteral("instance.status_changed") << QChar(QLatin1Char('R'));
    QTest::newRow("test event") << DeliveryRepository::TestEvent << QChar(QLatin1Char('R'));
}

void tst_DeliveryClaims::enqueueSupersedesTheOlderInFlight()
{
    // A notification queued while an older one of its instance is on the wire (a destruction
    // callback) supersedes it at once, lease kept: the newer one waits for that attempt. Recording
    // it leaves nothing stale for the poll's pass: acknowledged, the older one was delivered (the
    // provider has it); otherwise it stays superseded.
    QFETCH(QString, eventType);
    QFETCH(QChar, answer);
    const bool replaces = eventType != DeliveryRepository::TestEvent;
    m_rig->seed(1);
    const QList<DeliveryTarget> first = m_rig->claimAll(10);
    QCOMPARE(first.size(), 1);
    const QString state = QStringLiteral("SELECT state FROM deliveries WHERE id = %1").arg(first.at(0).id);
    const QString lease = QStringLiteral("SELECT lease_owner FROM deliveries WHERE id = %1").arg(first.at(0).id);
    Problem problem;
    QVERIFY2(m_db->begin(), "begin");
    const auto queued = m_repo->enqueue(first.at(0).instanceId, eventType, QJsonObject{{QStringLiteral("n"), 2}}, &problem);
    QVERIFY2(queued.has_value(), qPrintable(problem.detail));
    QVERIFY(m_db->commit());
    QCOMPARE(text(*m_db, state), replaces ? QStringLiteral("SUPERSEDED") : QStringLiteral("PENDING"));
    QCOMPARE(text(*m_db, lease), kOwner);
    if (replaces) {
        QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'delivery' AND object_id = %1 AND op = 'updated'")
                                   .arg(first.at(0).id)),
                 1);
        // Held back while the older attempt is in flight.
        QVERIFY(m_rig->claimAll(10).isEmpty());
    }

    QList<RecordResult> results;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(first.at(0), answer)}, kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QCOMPARE(text(*m_db, state), answer == QLatin1Char('D') ? QStringLiteral("DELIVERED")
                                 : replaces                 ? QStringLiteral("SUPERSEDED")
                                                            : QStringLiteral("PENDING"));
    if (replaces && answer == QLatin1Char('D'))
        QCOMPARE(text(*m_db, QStringLiteral("SELECT from_state FROM audit WHERE action = 'deliver' AND object_id = %1")
                                  .arg(first.at(0).id)),
                 QStringLiteral("SUPERSEDED"));
    QCOMPARE(m_repo->supersedeStale(&problem), 0);
    const QList<DeliveryTarget> next = m_rig->claimAll(10);
    QCOMPARE(next.size(), 1);
    QCOMPARE(next.at(0).id, queued->value(QStringLiteral("id")).toInteger());
}

void tst_DeliveryClaims::supersedeLeavesWhatSettledMeanwhile_data()
{
    QTest::addColumn<QString>("settledAs");
    QTest::newRow("delivered by its worker") << QStringLiteral("DELIVERED");
    QTest::newRow("cancelled on another replica") << QStringLiteral("CANCELLED");
}

void tst_DeliveryClaims::supersedeLeavesWhatSettledMeanwhile()
{
    // The older notification is on the wire when a newer one is queued. Its worker records the
    // acknowledgement (or another replica cancels it) in a transaction that commits after the
    // newer one's read the older as PENDING: the supersede must not turn a settled row into
    // SUPERSEDED (the state machine supersedes only PENDING and FAILED).
    if (m_db->backend() != Database::Backend::Postgres)
        QSKIP("row locks are PostgreSQL's; SQLite has one writer at a time");
    QFETCH(QString, settledAs);
    m_rig->seed(1);
    const QList<DeliveryTarget> first = m_rig->claimAll(10);
    QCOMPARE(first.size(), 1);
    const qint64 older = first.at(0).id;

    LockHolder other(m_db->url(), [&](QSqlQuery &q) {
        return q.exec(QStringLiteral("UPDATE deliveries SET state = '%1', next_attempt_at = NULL, lease_owner = NULL,"
                                     " lease_until = NULL, version = version + 1 WHERE id = %2")
                          .arg(settledAs)
                          .arg(older));
    });
    QVERIFY(other.start());

    Problem problem;
    QVERIFY2(m_db->begin(), "begin");
    const auto queued = m_repo->enqueue(first.at(0).instanceId, QStringLiteral("instance.status_changed"),
                                        QJsonObject{{QStringLiteral("n"), 2}}, &problem);
    QVERIFY2(queued.has_value(), qPrintable(problem.detail));
    QVERIFY(m_db->commit());
    // The supersede reached the row while the other transaction held it.
    QVERIFY(other.finish());

    QCOMPARE(text(*m_db, QStringLiteral("SELECT state FROM deliveries WHERE id = %1").arg(older)), settledAs);
    // No feed event says it was superseded.
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'delivery' AND object_id = %1").arg(older)), 0);
}

QTEST_MAIN(tst_DeliveryClaims)
#include "tst_deliveryclaims.moc"
