// Group-committed recording of delivery attempts and the resumable claim, on a real database.
#include "testdatabase.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"
#include "server/storage/migrations.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <sqlite3.h>

#include <algorithm>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString kOwner = QStringLiteral("w-test");

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

} // namespace

class tst_DeliveryRecording : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void endpointHealthFollowsTheBatchInOrder_data();
    void endpointHealthFollowsTheBatchInOrder();
    void batchLargerThanOneStatement();
    void endpointsOfOneBatchEachKeepTheirOwnHealth();
    void lostLeaseKeepsTheState();
    void attemptsAreNumberedAcrossRetriesAndSchedules();
    void upgradeCountsTheLoggedAttempts();
    void cancelledInFlight_data();
    void cancelledInFlight();
    void headersAreLoggedAsJson();
    void requestBodyIsKeptOnce();
    void testEventDoesNotWaitForTheInstancesBacklog();
    void settledInFlightHoldsTheNextBackUntilRecorded_data();
    void settledInFlightHoldsTheNextBackUntilRecorded();
    void responseTextIsStoredAsValidUtf8();
    void longResponseIsCutBetweenCharacters_data();
    void longResponseIsCutBetweenCharacters();
    void claimGoesOnAfterTheCursor();
    void claimAfterTheCursorSeeksPastWhatItPassed();
    void busyEndpointsAreSkipped();
    void leaseSharesTheBatchTransaction();
    void failedLeaseRollsTheBatchBack();
    void feedEventsAreTheRecordedRows();
    void journalAppendsEventsInListOrder();

private:
    // One endpoint, `count` instances with one due PENDING delivery each (due at `at`, or now).
    // With `from` > 0, more of them on the endpoint already there, named on from `from`.
    void seed(int count, int from = 0, const QString &at = QString());
    QList<DeliveryTarget> claimAll(int limit);
    static AttemptRecord outcome(const DeliveryTarget &target, QChar kind);

    std::unique_ptr<TestDatabase> m_tdb;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<Journal> m_journal;
    std::unique_ptr<DeliveryRepository> m_repo;
};

void tst_DeliveryRecording::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_DeliveryRecording::init()
{
    m_tdb = std::make_unique<TestDatabase>();
    QVERIFY2(m_tdb->isValid(), qPrintable(m_tdb->error()));
    m_db = std::make_unique<Database>(m_tdb->url());
    Problem problem;
    QVERIFY2(m_db->open(&problem) && m_db->migrate(&problem), qPrintable(problem.detail));
    m_journal = std::make_unique<Journal>(*m_db);
    m_repo = std::make_unique<DeliveryRepository>(*m_db, *m_journal);
}

void tst_DeliveryRecording::cleanup()
{
    m_repo.reset();
    m_journal.reset();
    if (m_db)
        m_db->close();
    m_db.reset();
    m_tdb.reset();
}

void tst_DeliveryRecording::seed(int count, int from, const QString &at)
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
        QSqlQuery inst(m_db->connection());
        inst.prepare(QStringLiteral(
            "INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version, created_at,"
            " updated_at, status_changed_at, callback_url, callback_signing, secret) VALUES (?, 1, 1, 'app', 'owner',"
            " 'RUNNING', 1, ?, ?, ?, 'http://127.0.0.1:9/cb', 'standard-webhooks', 'whsec_dGVzdA==') RETURNING id"));
        inst.addBindValue(QStringLiteral("i%1").arg(i));
        inst.addBindValue(now);
        inst.addBindValue(now);
        inst.addBindValue(now);
        QVERIFY(inst.exec() && inst.next());
        const qint64 id = inst.value(0).toLongLong();
        inst.finish();
        QSqlQuery del(m_db->connection());
        del.prepare(QStringLiteral(
            "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
            " next_attempt_at, created_at, updated_at, version) VALUES (?, 'instance.status_changed', ?, 1, 1, 'PENDING',"
            " '{}', 0, ?, ?, ?, 1)"));
        del.addBindValue(QStringLiteral("msg_%1").arg(i));
        del.addBindValue(id);
        del.addBindValue(now);
        del.addBindValue(now);
        del.addBindValue(now);
        QVERIFY(del.exec());
    }
    QVERIFY(m_db->commit());
}

QList<DeliveryTarget> tst_DeliveryRecording::claimAll(int limit)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    const QList<DeliveryTarget> targets = m_repo->claim(kOwner, now, now.addSecs(60), limit, {}, &problem);
    if (!problem.isNull())
        qWarning("claim failed: %s", qPrintable(problem.detail));
    return targets;
}

// 'D' delivered, 'R' failed and retried later, 'G' answered 410 Gone (retried, endpoint disabled).
AttemptRecord tst_DeliveryRecording::outcome(const DeliveryTarget &target, QChar kind)
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

void tst_DeliveryRecording::endpointHealthFollowsTheBatchInOrder_data()
{
    QTest::addColumn<QString>("outcomes"); // in delivery id order, all in one batch
    QTest::addColumn<int>("consecutiveFailures");
    QTest::addColumn<int>("successes");
    QTest::addColumn<int>("failures");
    QTest::addColumn<bool>("failingStreak");
    QTest::addColumn<QString>("state");
    QTest::addColumn<int>("endpointEvents");

    QTest::newRow("all delivered") << "DDD" << 0 << 3 << 0 << false << "ACTIVE" << 0;
    QTest::newRow("delivered, then failing") << "DRR" << 2 << 1 << 2 << true << "ACTIVE" << 1;
    QTest::newRow("failing, then delivered") << "RRD" << 0 << 1 << 2 << false << "ACTIVE" << 1;
    QTest::newRow("gone disables") << "RGR" << 3 << 0 << 3 << true << "DISABLED" << 1;
}

void tst_DeliveryRecording::endpointHealthFollowsTheBatchInOrder()
{
    QFETCH(QString, outcomes);
    QFETCH(int, consecutiveFailures);
    QFETCH(int, successes);
    QFETCH(int, failures);
    QFETCH(bool, failingStreak);
    QFETCH(QString, state);
    QFETCH(int, endpointEvents);

    seed(int(outcomes.size()));
    const QList<DeliveryTarget> targets = claimAll(100);
    QCOMPARE(targets.size(), outcomes.size());
    QList<AttemptRecord> records;
    for (qsizetype i = 0; i < targets.size(); ++i)
        records.append(outcome(targets.at(i), outcomes.at(i)));
    const qint64 versionBefore = scalar(*m_db, QStringLiteral("SELECT version FROM endpoints WHERE id = 1"));

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    QCOMPARE(results.size(), records.size());
    for (const RecordResult &r : std::as_const(results)) {
        QVERIFY(r.ok);
        QVERIFY(!r.leaseLost);
    }

    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT consecutive_failures FROM endpoints WHERE id = 1")), consecutiveFailures);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT success_count FROM endpoints WHERE id = 1")), successes);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT failure_count FROM endpoints WHERE id = 1")), failures);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM outbox_endpoint_streaks WHERE endpoint_id = 1")),
             failingStreak ? 1 : 0);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state FROM endpoints WHERE id = 1")), state);
    // Changes within one batch show on the feed once, with one version step.
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'endpoint'")), endpointEvents);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT version FROM endpoints WHERE id = 1")), versionBefore + endpointEvents);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED'")),
             qint64(outcomes.count(QLatin1Char('D'))));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'PENDING' AND lease_owner IS NULL"
                                          " AND next_attempt_at > created_at AND attempts = 1")),
             qint64(outcomes.size() - outcomes.count(QLatin1Char('D'))));
    const bool disabled = state == QLatin1String("DISABLED");
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM audit WHERE action = 'disable'")), disabled ? 1 : 0);
    // The endpoint's last success is the batch's last delivered attempt.
    QString lastSuccess = QStringLiteral("none");
    for (const AttemptRecord &r : std::as_const(records)) {
        if (r.outcome.verdict == AttemptOutcome::Verdict::Delivered)
            lastSuccess = timestamp(r.attempt.at);
    }
    QCOMPARE(text(*m_db, QStringLiteral("SELECT COALESCE(last_success_at, 'none') FROM endpoints WHERE id = 1")), lastSuccess);
}

// One batch over more endpoints than one statement writes: each endpoint gets its own outcome.
// Endpoint 1 answers twice, 2 fails twice, 3 answers 410, and 4.. (over two statements' worth)
// answer once each.
void tst_DeliveryRecording::endpointsOfOneBatchEachKeepTheirOwnHealth()
{
    const int endpoints = 2 * DeliveryRepository::MaxRowsPerStatement + 3;
    const QString kinds = QStringLiteral("DDRRG") + QString(endpoints - 3, QLatin1Char('D'));
    const QList<int> endpointOf = [&] {
        QList<int> e{1, 1, 2, 2, 3};
        for (int i = 4; i <= endpoints; ++i)
            e.append(i);
        return e;
    }();
    seed(int(kinds.size()));
    QSqlQuery q(m_db->connection());
    for (int e = 2; e <= endpoints; ++e)
        QVERIFY(q.exec(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                      " VALUES (1, 'http://127.0.0.1:9/cb%1', 'ACTIVE', 1, '%2', '%2')")
                           .arg(e)
                           .arg(nowTimestamp())));
    for (qsizetype i = 0; i < kinds.size(); ++i)
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET endpoint_id = %1 WHERE id = %2").arg(endpointOf.at(i)).arg(i + 1)));
    const QList<DeliveryTarget> targets = claimAll(int(kinds.size()));
    QCOMPARE(targets.size(), kinds.size());
    QList<AttemptRecord> records;
    for (const DeliveryTarget &t : targets)
        records.append(outcome(t, kinds.at(t.id - 1)));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));

    const auto health = [&](int endpoint) {
        return text(*m_db, QStringLiteral("SELECT state || ' ' || consecutive_failures || ' ' || success_count || ' '"
                                          " || failure_count || ' ' || version FROM endpoints WHERE id = %1")
                               .arg(endpoint));
    };
    QCOMPARE(health(1), QStringLiteral("ACTIVE 0 2 0 1"));
    QCOMPARE(health(2), QStringLiteral("ACTIVE 2 0 2 2"));
    QCOMPARE(health(3), QStringLiteral("DISABLED 1 0 1 2"));
    for (int e = 4; e <= endpoints; ++e)
        QCOMPARE(health(e), QStringLiteral("ACTIVE 0 1 0 1"));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM outbox_endpoint_streaks")), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'endpoint'")), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM audit WHERE action = 'disable' AND object_id = 3")), 1);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM endpoints WHERE last_success_at IS NOT NULL")),
             endpoints - 2);
}

void tst_DeliveryRecording::batchLargerThanOneStatement()
{
    const int count = 2 * DeliveryRepository::MaxRowsPerStatement + 5;
    seed(count);
    const QList<DeliveryTarget> targets = claimAll(count);
    QCOMPARE(targets.size(), count);
    QList<AttemptRecord> records;
    for (const DeliveryTarget &t : targets)
        records.append(outcome(t, QLatin1Char('D')));
    // A second answer code makes a second group of the settling UPDATE.
    records.last().attempt.status = 204;

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state = 'DELIVERED' AND attempts = 1"
                                          " AND lease_owner IS NULL AND next_attempt_at IS NULL")),
             count);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts WHERE attempt = 1 AND response_status IN (200, 204)")),
             count);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(DISTINCT delivery_id) FROM delivery_attempts")), count);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT last_status FROM deliveries WHERE id = %1").arg(records.last().target.id)), 204);
    // Each delivery once on the feed, with its new state and version.
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'delivery' AND op = 'updated' AND version = 2")),
             count);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT success_count FROM endpoints WHERE id = 1")), count);
}

void tst_DeliveryRecording::lostLeaseKeepsTheState()
{
    seed(2);
    const QList<DeliveryTarget> targets = claimAll(2);
    QCOMPARE(targets.size(), 2);
    // Another worker took the first one over after the lease expired.
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-other' WHERE id = %1").arg(targets.at(0).id)));

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({outcome(targets.at(0), QLatin1Char('D')), outcome(targets.at(1), QLatin1Char('D'))},
                                 kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QCOMPARE(results.size(), 2);
    QVERIFY(results.at(0).ok && results.at(0).leaseLost);
    QVERIFY(results.at(1).ok && !results.at(1).leaseLost);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state || ' ' || lease_owner || ' ' || attempts FROM deliveries WHERE id = %1")
                             .arg(targets.at(0).id)),
             QStringLiteral("PENDING w-other 1"));
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state FROM deliveries WHERE id = %1").arg(targets.at(1).id)),
             QStringLiteral("DELIVERED"));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM delivery_attempts")), 2);
}

void tst_DeliveryRecording::attemptsAreNumberedAcrossRetriesAndSchedules()
{
    seed(1);
    QSqlQuery q(m_db->connection());
    const auto recordAs = [&](QChar kind) {
        // Due again, then claimed and recorded.
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z'")));
        const QList<DeliveryTarget> targets = claimAll(1);
        QCOMPARE(targets.size(), 1);
        QList<RecordResult> results;
        Problem problem;
        QVERIFY2(m_repo->recordBatch({outcome(targets.first(), kind)}, kOwner, std::chrono::hours(24), &results, &problem),
                 qPrintable(problem.detail));
        QVERIFY(results.first().ok);
    };
    recordAs(QLatin1Char('R'));
    recordAs(QLatin1Char('R'));
    // A retry through the API starts a fresh schedule: `attempts` starts over, the log goes on.
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET attempts = 0")));
    recordAs(QLatin1Char('R'));
    // Recorded by a worker whose lease another took over: logged and numbered all the same.
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z'")));
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-other'")));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({outcome(targets.first(), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
                                 &problem),
             qPrintable(problem.detail));
    QVERIFY(results.first().ok && results.first().leaseLost);
    QCOMPARE(results.first().attempt, 4);
    QList<int> logged;
    QVERIFY(q.exec(QStringLiteral("SELECT attempt FROM delivery_attempts ORDER BY id")));
    while (q.next())
        logged.append(q.value(0).toInt());
    QCOMPARE(logged, QList<int>({1, 2, 3, 4}));
    QCOMPARE(text(*m_db, QStringLiteral("SELECT attempts || ' ' || logged_attempts FROM deliveries")), QStringLiteral("2 4"));
}

void tst_DeliveryRecording::upgradeCountsTheLoggedAttempts()
{
    seed(2);
    QSqlQuery q(m_db->connection());
    for (int round = 0; round < 2; ++round) {
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = 1")));
        const QList<DeliveryTarget> targets = claimAll(1);
        QCOMPARE(targets.size(), 1);
        QCOMPARE(targets.first().id, 1);
        QList<RecordResult> results;
        Problem problem;
        QVERIFY2(m_repo->recordBatch({outcome(targets.first(), QLatin1Char('R'))}, kOwner, std::chrono::hours(24),
                                     &results, &problem),
                 qPrintable(problem.detail));
    }
    // As a server before version 7 left them: attempts in the log, no count on the rows.
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET logged_attempts = 0")));
    const auto v7 = std::find_if(migrations().cbegin(), migrations().cend(), [](const Migration &m) { return m.version == 7; });
    QVERIFY(v7 != migrations().cend());
    for (const QString &sql : v7->statements) {
        if (sql.startsWith(QLatin1String("UPDATE")))
            QVERIFY2(q.exec(sql), qPrintable(q.lastError().text()));
    }
    QCOMPARE(text(*m_db, QStringLiteral("SELECT logged_attempts FROM deliveries WHERE id = 1")), QStringLiteral("2"));
    QCOMPARE(text(*m_db, QStringLiteral("SELECT logged_attempts FROM deliveries WHERE id = 2")), QStringLiteral("0"));
}

void tst_DeliveryRecording::cancelledInFlight_data()
{
    QTest::addColumn<QChar>("answer");
    QTest::addColumn<QString>("state");
    QTest::addColumn<int>("audits");
    // The provider acknowledged: it has the notification, the delivery is DELIVERED (and says why).
    QTest::newRow("acknowledged") << QChar(QLatin1Char('D')) << QStringLiteral("DELIVERED") << 1;
    // It failed: the cancel stands, no retry is scheduled.
    QTest::newRow("failed") << QChar(QLatin1Char('R')) << QStringLiteral("CANCELLED") << 0;
}

void tst_DeliveryRecording::cancelledInFlight()
{
    QFETCH(QChar, answer);
    QFETCH(QString, state);
    QFETCH(int, audits);
    seed(1);
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    // Cancelled through the API while its attempt was in flight (the lease stays the worker's).
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET state = 'CANCELLED', version = version + 1 WHERE id = %1")
                       .arg(targets.at(0).id)));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({outcome(targets.at(0), answer)}, kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QCOMPARE(results.size(), 1);
    QVERIFY(results.at(0).ok && !results.at(0).leaseLost);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT state || ' ' || attempts || ' ' || COALESCE(lease_owner, '-')"
                                        " FROM deliveries WHERE id = %1").arg(targets.at(0).id)),
             state + QStringLiteral(" 1 -"));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM audit WHERE kind = 'delivery' AND action = 'deliver'"
                                          " AND from_state = 'CANCELLED' AND to_state = 'DELIVERED'")),
             audits);
}

void tst_DeliveryRecording::headersAreLoggedAsJson()
{
    seed(1);
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    AttemptRecord r = outcome(targets.at(0), QLatin1Char('D'));
    const QByteArray odd = QStringLiteral("q\"b\\n\nt\tc\x01 \u00e9\u2713").toUtf8();
    r.attempt.requestHeaders = {{"webhook-id", "msg_1"}, {"x-odd", odd}};
    r.attempt.responseHeaders = {{"content-type", "text/plain"}};
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({r}, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    QJsonParseError error;
    const QJsonDocument request = QJsonDocument::fromJson(
        text(*m_db, QStringLiteral("SELECT request_headers FROM delivery_attempts")).toUtf8(), &error);
    QCOMPARE(error.error, QJsonParseError::NoError);
    QCOMPARE(request.array(), (QJsonArray{QJsonArray{QStringLiteral("webhook-id"), QStringLiteral("msg_1")},
                                          QJsonArray{QStringLiteral("x-odd"), QString::fromUtf8(odd)}}));
    QCOMPARE(text(*m_db, QStringLiteral("SELECT response_headers FROM delivery_attempts")),
             QStringLiteral("[[\"content-type\",\"text/plain\"]]"));
}

void tst_DeliveryRecording::requestBodyIsKeptOnce()
{
    seed(2);
    const QList<DeliveryTarget> targets = claimAll(2);
    QCOMPARE(targets.size(), 2);
    // The body sent is the delivery's: the attempt log points at it instead of holding a copy.
    // One that differs (a sender that rewrote it) is kept as it was sent.
    AttemptRecord same = outcome(targets.at(0), QLatin1Char('D'));
    AttemptRecord other = outcome(targets.at(1), QLatin1Char('D'));
    other.attempt.requestBody = "{\"rewritten\":true}";
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({same, other}, kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("SELECT delivery_id, request_body FROM delivery_attempts ORDER BY delivery_id")));
    QMap<qint64, QVariant> stored;
    while (q.next())
        stored.insert(q.value(0).toLongLong(), q.value(1));
    QCOMPARE(stored.size(), 2);
    QVERIFY2(stored.value(same.target.id).isNull(), qPrintable(stored.value(same.target.id).toString()));
    QCOMPARE(stored.value(other.target.id).toString(), QStringLiteral("{\"rewritten\":true}"));
}

void tst_DeliveryRecording::testEventDoesNotWaitForTheInstancesBacklog()
{
    seed(1);
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
    const QList<DeliveryTarget> targets = claimAll(10);
    QCOMPARE(targets.size(), 1);
    QCOMPARE(targets.at(0).eventType, QStringLiteral("opsdeck.test"));
    QCOMPARE(targets.at(0).webhookId, QStringLiteral("msg_test"));
}

void tst_DeliveryRecording::settledInFlightHoldsTheNextBackUntilRecorded_data()
{
    QTest::addColumn<QString>("settledAs");
    QTest::addColumn<QChar>("answer");
    QTest::newRow("cancelled, acknowledged") << QStringLiteral("CANCELLED") << QChar(QLatin1Char('D'));
    QTest::newRow("cancelled, failed") << QStringLiteral("CANCELLED") << QChar(QLatin1Char('R'));
    QTest::newRow("superseded, acknowledged") << QStringLiteral("SUPERSEDED") << QChar(QLatin1Char('D'));
    QTest::newRow("superseded, failed") << QStringLiteral("SUPERSEDED") << QChar(QLatin1Char('R'));
}

void tst_DeliveryRecording::settledInFlightHoldsTheNextBackUntilRecorded()
{
    // A notification settled through the API while its attempt is in flight may still reach the
    // provider: the instance's next one waits until that attempt is recorded, which clears the
    // lease and so takes the row out of the claim's index of in-flight rows.
    QFETCH(QString, settledAs);
    QFETCH(QChar, answer);
    seed(1);
    const QList<DeliveryTarget> first = claimAll(10);
    QCOMPARE(first.size(), 1);
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET state = '%1', next_attempt_at = NULL, version = version + 1"
                                  " WHERE id = %2").arg(settledAs).arg(first.at(0).id)));
    const QString now = nowTimestamp();
    QVERIFY(q.exec(QStringLiteral(
        "INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id, state, body, attempts,"
        " next_attempt_at, created_at, updated_at, version) VALUES ('msg_next', 'instance.status_changed', %1, 1, 1,"
        " 'PENDING', '{}', 0, '%2', '%2', '%2', 1)").arg(first.at(0).instanceId).arg(now)));
    QVERIFY(claimAll(10).isEmpty());

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({outcome(first.at(0), answer)}, kOwner, std::chrono::hours(24), &results, &problem),
             qPrintable(problem.detail));
    QCOMPARE(results.size(), 1);
    QVERIFY(results.at(0).ok && !results.at(0).leaseLost);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM deliveries WHERE state <> 'PENDING' AND lease_until IS NOT NULL")),
             0);
    const QList<DeliveryTarget> next = claimAll(10);
    QCOMPARE(next.size(), 1);
    QCOMPARE(next.at(0).webhookId, QStringLiteral("msg_next"));
}

void tst_DeliveryRecording::responseTextIsStoredAsValidUtf8()
{
    seed(1);
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    // A provider may answer bytes that are not UTF-8 (Latin-1, a cut sequence): they are stored
    // as text every reader can decode, decoded as Qt decodes them (bad bytes become U+FFFD).
    AttemptRecord r = outcome(targets.at(0), QLatin1Char('D'));
    r.attempt.responseHeaders = {{"x-latin1", "caf\xe9"}};
    r.attempt.responseBody = "ok \xe2\x9c";
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({r}, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("SELECT response_headers, response_body FROM delivery_attempts")) && q.next());
    const QString replacement(QChar::ReplacementCharacter);
    QCOMPARE(q.value(0).toString(), QStringLiteral("[[\"x-latin1\",\"caf%1\"]]").arg(replacement));
    QCOMPARE(q.value(1).toString(), QString::fromUtf8("ok \xe2\x9c"));
    QVERIFY(q.value(1).toString().startsWith(QStringLiteral("ok ") + replacement));
}

void tst_DeliveryRecording::longResponseIsCutBetweenCharacters_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("stored");
    const QByteArray a4094(4094, 'a');
    const QByteArray a4095(4095, 'a');
    // é is 2 bytes, ✓ 3, 🚀 4: a character the 4096-byte limit splits is left out whole.
    QTest::newRow("2-byte split") << a4095 + "\xc3\xa9 tail" << a4095;
    QTest::newRow("3-byte split after 1") << a4095 + "\xe2\x9c\x93" << a4095;
    QTest::newRow("3-byte split after 2") << a4094 + "\xe2\x9c\x93" << a4094;
    QTest::newRow("4-byte split") << a4094 + "\xf0\x9f\x9a\x80" << a4094;
    QTest::newRow("ends on a whole character") << a4094 + "\xc3\xa9" << a4094 + "\xc3\xa9";
    QTest::newRow("cut between ASCII") << QByteArray(5000, 'b') << QByteArray(4096, 'b');
    QTest::newRow("short") << QByteArray("caf\xc3\xa9") << QByteArray("caf\xc3\xa9");
    QTest::newRow("exactly the limit, split by the sender") << a4095 + "\xc3" << a4095;
}

void tst_DeliveryRecording::longResponseIsCutBetweenCharacters()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, stored);
    seed(1);
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    AttemptRecord r = outcome(targets.at(0), QLatin1Char('D'));
    r.attempt.responseBody = body;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({r}, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    const QString logged = text(*m_db, QStringLiteral("SELECT response_body FROM delivery_attempts"));
    QVERIFY(!logged.contains(QChar::ReplacementCharacter));
    QCOMPARE(logged.toUtf8(), stored);
}

void tst_DeliveryRecording::claimGoesOnAfterTheCursor()
{
    seed(5);
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
void tst_DeliveryRecording::claimAfterTheCursorSeeksPastWhatItPassed()
{
    if (m_db->backend() != Database::Backend::Sqlite)
        QSKIP("PostgreSQL seeks the cursor's row comparison in the index; tst_queryplans checks the plan");
    const QString due = QStringLiteral("2026-01-01T00:00:00.000Z");
    const QString sql = DeliveryRepository::leaseSql(false, true, true);
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
    seed(200, 0, due);
    const qint64 few = stepsPastTheEnd();
    QVERIFY(few > 0);
    seed(1800, 200, due);
    const qint64 many = stepsPastTheEnd();
    QVERIFY(many > 0);
    // Reading the rows again costs steps for each (here ~10 times as many); a seek costs the same.
    QVERIFY2(many < 2 * few, qPrintable(QStringLiteral("%1 steps past 200 rows, %2 past 2000").arg(few).arg(many)));
}

void tst_DeliveryRecording::busyEndpointsAreSkipped()
{
    seed(3);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    Problem problem;
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, {1}, &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QVERIFY(m_repo->claim(kOwner, now, now.addSecs(60), 10, {7, 1, 9}, &problem).isEmpty());
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
    QCOMPARE(m_repo->claim(kOwner, now, now.addSecs(60), 10, {7, 9}, &problem).size(), 3);
    QVERIFY2(problem.isNull(), qPrintable(problem.detail));
}

void tst_DeliveryRecording::leaseSharesTheBatchTransaction()
{
    seed(2);
    const QList<DeliveryTarget> targets = claimAll(1);
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
    QVERIFY2(m_repo->recordBatch({outcome(targets.at(0), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
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

void tst_DeliveryRecording::failedLeaseRollsTheBatchBack()
{
    seed(2);
    const QList<DeliveryTarget> targets = claimAll(1);
    QCOMPARE(targets.size(), 1);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QList<qint64> leased;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY(!m_repo->recordBatch({outcome(targets.at(0), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
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

void tst_DeliveryRecording::feedEventsAreTheRecordedRows()
{
    seed(4);
    // Bodies as the server stores them: compact JSON written by QJsonDocument.
    const QJsonObject body{{QStringLiteral("instance"), QJsonObject{{QStringLiteral("id"), 7},
                                                                    {QStringLiteral("name"), QStringLiteral("q\"\u00e9")}}},
                           {QStringLiteral("status"), QStringLiteral("STOPPED")},
                           {QStringLiteral("tags"), QJsonArray{1, QStringLiteral("x"), QJsonValue()}}};
    QSqlQuery q(m_db->connection());
    q.prepare(QStringLiteral("UPDATE deliveries SET body = ?"));
    q.addBindValue(QString::fromUtf8(QJsonDocument(body).toJson(QJsonDocument::Compact)));
    QVERIFY(q.exec());
    const qint64 seqBefore = scalar(*m_db, QStringLiteral("SELECT COALESCE(MAX(seq), 0) FROM events"));

    const QList<DeliveryTarget> targets = claimAll(4);
    QCOMPARE(targets.size(), 4);
    QList<AttemptRecord> records{outcome(targets.at(0), QLatin1Char('D')), outcome(targets.at(1), QLatin1Char('R')),
                                 outcome(targets.at(2), QLatin1Char('D')), outcome(targets.at(3), QLatin1Char('D'))};
    records[2].attempt.status = 204;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));

    // Each delivery once, its object byte for byte what deliveryJson() of the row encodes to,
    // with the row's version and its provider's audience.
    QSqlQuery events(m_db->connection());
    QVERIFY(events.exec(QStringLiteral("SELECT seq, object_id, version, op, object, audience_provider FROM events"
                                       " WHERE kind = 'delivery' AND seq > %1 ORDER BY seq").arg(seqBefore)));
    QSet<qint64> seen;
    while (events.next()) {
        const qint64 id = events.value(1).toLongLong();
        QVERIFY(!seen.contains(id));
        seen.insert(id);
        const auto row = m_repo->delivery(id, &problem);
        QVERIFY2(row, qPrintable(problem.detail));
        QCOMPARE(events.value(2).toLongLong(), row->value(QStringLiteral("version")).toInteger());
        QCOMPARE(events.value(3).toString(), QStringLiteral("updated"));
        QCOMPARE(events.value(4).toString().toUtf8(), QJsonDocument(*row).toJson(QJsonDocument::Compact));
        QCOMPARE(row->value(QStringLiteral("body")).toObject(), body);
        QCOMPARE(events.value(5).toLongLong(), 1);
    }
    QCOMPARE(seen.size(), 4);
}

void tst_DeliveryRecording::journalAppendsEventsInListOrder()
{
    const int count = 2 * Journal::MaxEventsPerStatement + 3;
    const qint64 seqBefore = scalar(*m_db, QStringLiteral("SELECT COALESCE(MAX(seq), 0) FROM events"));
    QList<FeedEvent> list;
    for (int i = 0; i < count; ++i) {
        Audience audience;
        if (i % 3 == 1)
            audience.provider = 40 + i;
        else if (i % 3 == 2)
            audience = Audience{std::nullopt, QStringLiteral("owner-%1").arg(i), true};
        list.append(FeedEvent{QStringLiteral("delivery"), 1000 - i, i, QStringLiteral("updated"),
                              QStringLiteral("{\"n\":%1,\"t\":\"\u00e9\"}").arg(i).toUtf8(), audience});
    }
    Problem problem;
    QVERIFY(m_db->begin());
    QVERIFY2(m_journal->events(list, &problem), qPrintable(problem.detail));
    QVERIFY(m_db->commit());

    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("SELECT seq, object_id, version, object, audience_provider, audience_owner,"
                                  " audience_private FROM events WHERE seq > %1 ORDER BY seq").arg(seqBefore)));
    int i = 0;
    qint64 previous = seqBefore;
    for (; q.next(); ++i) {
        QVERIFY(q.value(0).toLongLong() > previous);
        previous = q.value(0).toLongLong();
        QCOMPARE(q.value(1).toLongLong(), 1000 - i);
        QCOMPARE(q.value(2).toLongLong(), i);
        QCOMPARE(q.value(3).toString(), QString::fromUtf8(list.at(i).object));
        QCOMPARE(q.value(4).isNull(), i % 3 != 1);
        if (i % 3 == 1)
            QCOMPARE(q.value(4).toLongLong(), 40 + i);
        QCOMPARE(q.value(5).toString(), i % 3 == 2 ? QStringLiteral("owner-%1").arg(i) : QString());
        QCOMPARE(q.value(6).toInt(), i % 3 == 2 ? 1 : 0);
    }
    QCOMPARE(i, count);
}

QTEST_MAIN(tst_DeliveryRecording)
#include "tst_deliveryrecording.moc"
