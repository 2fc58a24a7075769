// Group-committed recording of delivery attempts, on a real database: the attempt log, the
// delivery rows, the endpoints' health and the feed events of one batch.
#include "recordingrig.h"

#include "server/storage/migrations.h"
#include "server/storage/timestamps.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QSqlError>
#include <QSqlQuery>
#include <QtTest>

#include <algorithm>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString &kOwner = RecordingOwner;

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
    void busyEndpointsShowTheirHealthOnceAnInterval();
    void lostLeaseKeepsTheState();
    void attemptsAreNumberedAcrossRetriesAndSchedules();
    void upgradeCountsTheLoggedAttempts();
    void cancelledInFlight_data();
    void cancelledInFlight();
    void headersAreLoggedAsJson();
    void requestBodyIsKeptOnce();
    void responseTextIsStoredAsValidUtf8();
    void longResponseIsCutBetweenCharacters_data();
    void longResponseIsCutBetweenCharacters();
    void feedEventsAreTheRecordedRows();
    void journalAppendsEventsInListOrder();

private:
    std::unique_ptr<RecordingRig> m_rig;
    Database *m_db = nullptr;
    Journal *m_journal = nullptr;
    DeliveryRepository *m_repo = nullptr;
};

void tst_DeliveryRecording::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_DeliveryRecording::init()
{
    m_rig = std::make_unique<RecordingRig>();
    const QString opened = m_rig->open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    m_db = &m_rig->db();
    m_journal = &m_rig->journal();
    m_repo = &m_rig->repository();
}

void tst_DeliveryRecording::cleanup()
{
    m_repo = nullptr;
    m_journal = nullptr;
    m_db = nullptr;
    m_rig.reset();
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
    QTest::addColumn<int>("pauseWindowMs");

    const int day = 24 * 3600 * 1000;
    QTest::newRow("all delivered") << "DDD" << 0 << 3 << 0 << false << "ACTIVE" << 1 << day;
    QTest::newRow("delivered, then failing") << "DRR" << 2 << 1 << 2 << true << "ACTIVE" << 1 << day;
    QTest::newRow("failing, then delivered") << "RRD" << 0 << 1 << 2 << false << "ACTIVE" << 1 << day;
    QTest::newRow("gone disables") << "RGR" << 3 << 0 << 3 << true << "DISABLED" << 1 << day;
    // Failing longer than the window (none here): paused at its first failure.
    QTest::newRow("failing past the window pauses") << "DRR" << 2 << 1 << 2 << true << "PAUSED" << 1 << 0;
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
    QFETCH(int, pauseWindowMs);

    m_rig->seed(int(outcomes.size()));
    const QList<DeliveryTarget> targets = m_rig->claimAll(100);
    QCOMPARE(targets.size(), outcomes.size());
    QList<AttemptRecord> records;
    for (qsizetype i = 0; i < targets.size(); ++i)
        records.append(RecordingRig::outcome(targets.at(i), outcomes.at(i)));
    const qint64 versionBefore = scalar(*m_db, QStringLiteral("SELECT version FROM endpoints WHERE id = 1"));

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::milliseconds(pauseWindowMs), &results, &problem),
             qPrintable(problem.detail));
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
    // Its last failure the batch's last failed one; paused (if it was) at the failure that did.
    QString lastFailure = QStringLiteral("none");
    QString pausedAt = QStringLiteral("none");
    for (const AttemptRecord &r : std::as_const(records)) {
        if (r.outcome.verdict == AttemptOutcome::Verdict::Delivered)
            continue;
        lastFailure = timestamp(r.attempt.at);
        if (state == QLatin1String("PAUSED") && pausedAt == QLatin1String("none"))
            pausedAt = lastFailure;
    }
    QCOMPARE(text(*m_db, QStringLiteral("SELECT COALESCE(last_failure_at, 'none') FROM endpoints WHERE id = 1")), lastFailure);
    QCOMPARE(text(*m_db, QStringLiteral("SELECT COALESCE(paused_at, 'none') FROM endpoints WHERE id = 1")), pausedAt);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM audit WHERE action = 'pause'")),
             state == QLatin1String("PAUSED") ? 1 : 0);
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
    m_rig->seed(int(kinds.size()));
    QSqlQuery q(m_db->connection());
    for (int e = 2; e <= endpoints; ++e)
        QVERIFY(q.exec(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                      " VALUES (1, 'http://127.0.0.1:9/cb%1', 'ACTIVE', 1, '%2', '%2')")
                           .arg(e)
                           .arg(nowTimestamp())));
    for (qsizetype i = 0; i < kinds.size(); ++i)
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET endpoint_id = %1 WHERE id = %2").arg(endpointOf.at(i)).arg(i + 1)));
    const QList<DeliveryTarget> targets = m_rig->claimAll(int(kinds.size()));
    QCOMPARE(targets.size(), kinds.size());
    QList<AttemptRecord> records;
    for (const DeliveryTarget &t : targets)
        records.append(RecordingRig::outcome(t, kinds.at(t.id - 1)));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch(records, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));

    const auto health = [&](int endpoint) {
        return text(*m_db, QStringLiteral("SELECT state || ' ' || consecutive_failures || ' ' || success_count || ' '"
                                          " || failure_count || ' ' || version FROM endpoints WHERE id = %1")
                               .arg(endpoint));
    };
    // Each endpoint's first batch shows its health: one version step and one event each.
    QCOMPARE(health(1), QStringLiteral("ACTIVE 0 2 0 2"));
    QCOMPARE(health(2), QStringLiteral("ACTIVE 2 0 2 2"));
    QCOMPARE(health(3), QStringLiteral("DISABLED 1 0 1 2"));
    for (int e = 4; e <= endpoints; ++e)
        QCOMPARE(health(e), QStringLiteral("ACTIVE 0 1 0 2"));
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM outbox_endpoint_streaks")), 2);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'endpoint'")), endpoints);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM audit WHERE action = 'disable' AND object_id = 3")), 1);
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM endpoints WHERE last_success_at IS NOT NULL")),
             endpoints - 2);
}

void tst_DeliveryRecording::busyEndpointsShowTheirHealthOnceAnInterval()
{
    // Batch after batch to one endpoint: its first shows its health (a version step and a feed
    // event); the next ones within the interval only count, and the store's upkeep shows what
    // they changed. A change of failure streak shows at once whatever the interval.
    m_rig->seed(4);
    const QList<DeliveryTarget> targets = m_rig->claimAll(4);
    QCOMPARE(targets.size(), 4);
    const auto record = [this](const DeliveryTarget &target, QChar kind) {
        QList<RecordResult> results;
        Problem problem;
        return m_repo->recordBatch({RecordingRig::outcome(target, kind)}, kOwner, std::chrono::hours(24), &results, &problem)
               && results.size() == 1 && results.first().ok;
    };
    const auto shown = [this] {
        return std::pair(scalar(*m_db, QStringLiteral("SELECT version FROM endpoints WHERE id = 1")),
                         scalar(*m_db, QStringLiteral("SELECT COUNT(*) FROM events WHERE kind = 'endpoint'")));
    };
    // The interval is the server's clock's: a host that stalls for it between two batches
    // shows both, rightly, and says nothing of what this test looks at.
    QElapsedTimer sinceShown;
    const auto withinTheInterval = [&sinceShown] { return sinceShown.elapsed() < DeliveryRepository::HealthEventIntervalMs; };
    const qint64 before = scalar(*m_db, QStringLiteral("SELECT version FROM endpoints WHERE id = 1"));
    sinceShown.start();
    QVERIFY(record(targets.at(0), QLatin1Char('D')));
    QCOMPARE(shown(), std::pair(before + 1, qint64(1)));
    QVERIFY(record(targets.at(1), QLatin1Char('D'))); // within the interval: counted, not shown
    if (!withinTheInterval())
        QSKIP("the host stalled for the whole interval between two batches");
    QCOMPARE(scalar(*m_db, QStringLiteral("SELECT success_count FROM endpoints WHERE id = 1")), 2);
    QCOMPARE(shown(), std::pair(before + 1, qint64(1)));
    Problem problem;
    QCOMPARE(m_repo->showHealth(&problem), 1);
    QCOMPARE(shown(), std::pair(before + 2, qint64(2)));
    QCOMPARE(m_repo->showHealth(&problem), 0); // nothing more to show
    QCOMPARE(shown(), std::pair(before + 2, qint64(2)));
    sinceShown.start();
    QVERIFY(record(targets.at(2), QLatin1Char('R'))); // a failure streak begins: shown at once
    QCOMPARE(shown(), std::pair(before + 3, qint64(3)));
    // A silence shows the endpoint whole: what a batch counted before it has nothing left to show.
    QVERIFY(record(targets.at(3), QLatin1Char('R')));
    if (!withinTheInterval())
        QSKIP("the host stalled for the whole interval between two batches");
    QCOMPARE(shown(), std::pair(before + 3, qint64(3)));
    QVERIFY(m_repo->recordSilence({1}, QDateTime::currentDateTimeUtc(), &problem));
    QCOMPARE(shown(), std::pair(before + 4, qint64(4)));
    QCOMPARE(m_repo->showHealth(&problem), 0);
    // The event carries what GET shows.
    const QJsonObject event = QJsonDocument::fromJson(
        text(*m_db, QStringLiteral("SELECT object FROM events WHERE kind = 'endpoint' ORDER BY seq DESC LIMIT 1")).toUtf8()).object();
    QCOMPARE(event, m_repo->endpoint(1, &problem).value_or(QJsonObject()));
}

void tst_DeliveryRecording::batchLargerThanOneStatement()
{
    const int count = 2 * DeliveryRepository::MaxRowsPerStatement + 5;
    m_rig->seed(count);
    const QList<DeliveryTarget> targets = m_rig->claimAll(count);
    QCOMPARE(targets.size(), count);
    QList<AttemptRecord> records;
    for (const DeliveryTarget &t : targets)
        records.append(RecordingRig::outcome(t, QLatin1Char('D')));
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
    m_rig->seed(2);
    const QList<DeliveryTarget> targets = m_rig->claimAll(2);
    QCOMPARE(targets.size(), 2);
    // Another worker took the first one over after the lease expired.
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-other' WHERE id = %1").arg(targets.at(0).id)));

    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.at(0), QLatin1Char('D')), RecordingRig::outcome(targets.at(1), QLatin1Char('D'))},
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
    m_rig->seed(1);
    QSqlQuery q(m_db->connection());
    const auto recordAs = [&](QChar kind) {
        // Due again, then claimed and recorded.
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z'")));
        const QList<DeliveryTarget> targets = m_rig->claimAll(1);
        QCOMPARE(targets.size(), 1);
        QList<RecordResult> results;
        Problem problem;
        QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.first(), kind)}, kOwner, std::chrono::hours(24), &results, &problem),
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
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET lease_owner = 'w-other'")));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.first(), QLatin1Char('D'))}, kOwner, std::chrono::hours(24), &results,
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
    m_rig->seed(2);
    QSqlQuery q(m_db->connection());
    for (int round = 0; round < 2; ++round) {
        QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET next_attempt_at = '2000-01-01T00:00:00.000Z' WHERE id = 1")));
        const QList<DeliveryTarget> targets = m_rig->claimAll(1);
        QCOMPARE(targets.size(), 1);
        QCOMPARE(targets.first().id, 1);
        QList<RecordResult> results;
        Problem problem;
        QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.first(), QLatin1Char('R'))}, kOwner, std::chrono::hours(24),
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
    m_rig->seed(1);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    // Cancelled through the API while its attempt was in flight (the lease stays the worker's).
    QSqlQuery q(m_db->connection());
    QVERIFY(q.exec(QStringLiteral("UPDATE deliveries SET state = 'CANCELLED', version = version + 1 WHERE id = %1")
                       .arg(targets.at(0).id)));
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({RecordingRig::outcome(targets.at(0), answer)}, kOwner, std::chrono::hours(24), &results, &problem),
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
    m_rig->seed(1);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    AttemptRecord r = RecordingRig::outcome(targets.at(0), QLatin1Char('D'));
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
    m_rig->seed(2);
    const QList<DeliveryTarget> targets = m_rig->claimAll(2);
    QCOMPARE(targets.size(), 2);
    // The body sent is the delivery's: the attempt log points at it instead of holding a copy.
    // One that differs (a sender that rewrote it) is kept as it was sent.
    AttemptRecord same = RecordingRig::outcome(targets.at(0), QLatin1Char('D'));
    AttemptRecord other = RecordingRig::outcome(targets.at(1), QLatin1Char('D'));
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

void tst_DeliveryRecording::responseTextIsStoredAsValidUtf8()
{
    m_rig->seed(1);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    // A provider may answer bytes that are not UTF-8 (Latin-1, a cut sequence): they are stored
    // as text every reader can decode, decoded as Qt decodes them (bad bytes become U+FFFD).
    AttemptRecord r = RecordingRig::outcome(targets.at(0), QLatin1Char('D'));
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
    m_rig->seed(1);
    const QList<DeliveryTarget> targets = m_rig->claimAll(1);
    QCOMPARE(targets.size(), 1);
    AttemptRecord r = RecordingRig::outcome(targets.at(0), QLatin1Char('D'));
    r.attempt.responseBody = body;
    QList<RecordResult> results;
    Problem problem;
    QVERIFY2(m_repo->recordBatch({r}, kOwner, std::chrono::hours(24), &results, &problem), qPrintable(problem.detail));
    const QString logged = text(*m_db, QStringLiteral("SELECT response_body FROM delivery_attempts"));
    QVERIFY(!logged.contains(QChar::ReplacementCharacter));
    QCOMPARE(logged.toUtf8(), stored);
}

void tst_DeliveryRecording::feedEventsAreTheRecordedRows()
{
    m_rig->seed(4);
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

    const QList<DeliveryTarget> targets = m_rig->claimAll(4);
    QCOMPARE(targets.size(), 4);
    QList<AttemptRecord> records{RecordingRig::outcome(targets.at(0), QLatin1Char('D')), RecordingRig::outcome(targets.at(1), QLatin1Char('R')),
                                 RecordingRig::outcome(targets.at(2), QLatin1Char('D')), RecordingRig::outcome(targets.at(3), QLatin1Char('D'))};
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
