// A retry through the API racing a status change of the same instance on another replica
// (PostgreSQL): the retry waits for the replica's write turn or the instance's lock, then sees the
// newer notification.
#include "lockwait.h"
#include "testdatabase.h"
#include "testserver.h"

#include "server/controlplane.h"
#include "server/storage/database.h"

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSqlQuery>
#include <QtTest>

#include <atomic>
#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// Nobody listens there; with the worker off nothing is sent anyway.
const QString Nowhere = QStringLiteral("http://127.0.0.1:9/hook");

// What another replica's start of the instance writes: the instance's row, and a newer
// notification beside `older` (its id in *newer).
bool startsTheInstance(QSqlQuery &q, qint64 instance, qint64 older, const QString &webhookId, std::atomic<qint64> *newer)
{
    if (!execWith(q, QStringLiteral("UPDATE instances SET version = version + 1 WHERE id = ?"), {instance})
        || !execWith(q,
                     QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                    " state, body, attempts, next_attempt_at, created_at, updated_at, version)"
                                    " SELECT ?, event_type, instance_id, provider_id, endpoint_id, 'PENDING', body, 0,"
                                    " updated_at, updated_at, updated_at, 1 FROM deliveries WHERE id = ? RETURNING id"),
                     {webhookId, older})
        || !q.next())
        return false;
    *newer = q.value(0).toLongLong();
    return true;
}

} // namespace

class tst_RetryRace : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void retryWaitsForAStatusChange_data();
    void retryWaitsForAStatusChange();
    void retryWaitsForAReplicasWriteTurn();

private:
    // A registered instance, stopped, its STOPPED notification cancelled: that notification's id
    // (the instance's newest) in *newest. Returns the instance id, 0 on failure.
    qint64 stoppedWithItsNotificationCancelled(qint64 *newest);
    QJsonObject delivery(qint64 id);
    Reply post(const QString &path, const QByteArray &body);

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

void tst_RetryRace::initTestCase()
{
    if (!TestDatabase::wantsPostgres())
        QSKIP("row locks between replicas are PostgreSQL's; SQLite has one writer at a time (BEGIN IMMEDIATE)");
    OPSDECK_REQUIRE_BACKEND();
    m_server = TestServer::withoutDeliveryWorker(); // the states are the test's to arrange
    QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
    QVERIFY(m_server->createAcmeAndCrm(&m_org, &m_provider));
}

qint64 tst_RetryRace::stoppedWithItsNotificationCancelled(qint64 *newest)
{
    const qint64 instance = m_server->createInstance(QStringLiteral("i%1").arg(++m_counter), m_org, m_provider,
                                                     QStringLiteral("crm"), QStringLiteral("alice"));
    if (instance <= 0
        || m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance), {{QStringLiteral("callback_url"), Nowhere}},
                          m_server->operatorToken())
                   .status
               != 200
        || post(QStringLiteral("/api/v1/instances/%1/stop").arg(instance), "{}").status != 200)
        return 0;
    const QJsonArray all =
        m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken()).items();
    if (all.isEmpty())
        return 0;
    *newest = all.last().toObject().value(QStringLiteral("id")).toInteger();
    if (post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(*newest), "{}").status != 200)
        return 0;
    return instance;
}

QJsonObject tst_RetryRace::delivery(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken()).json();
}

Reply tst_RetryRace::post(const QString &path, const QByteArray &body)
{
    return m_server->request("POST", path, body, m_server->operatorToken());
}

void tst_RetryRace::retryWaitsForAStatusChange_data()
{
    QTest::addColumn<bool>("bulk");
    QTest::newRow("retry of the one") << false;
    QTest::newRow("bulk retry of the cancelled") << true;
}

void tst_RetryRace::retryWaitsForAStatusChange()
{
    // Another replica starts the instance: it updates the instance row (its lock), queues the
    // newer notification and has not committed yet when the retry of the older one arrives. The
    // retry must wait for that transaction and then refuse (a newer one exists); otherwise it
    // makes the older one PENDING beside the newer, and if the newer is sent first the provider
    // is left with the older status.
    QFETCH(bool, bulk);
    qint64 older = 0;
    const qint64 instance = stoppedWithItsNotificationCancelled(&older);
    QVERIFY(instance > 0);
    const QJsonObject before = delivery(older);
    QCOMPARE(before.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));

    std::atomic<qint64> newer{0};
    const QString webhookId = QStringLiteral("msg_race_%1").arg(m_counter);
    LockHolder replica(m_server->databaseUrl(),
                       [&](QSqlQuery &q) { return startsTheInstance(q, instance, older, webhookId, &newer); });
    QVERIFY(replica.start());

    // Runs the in-process server on this thread; the replica commits once the retry waits.
    const Reply r = bulk ? post(QStringLiteral("/api/v1/deliveries/retry"),
                                QStringLiteral(R"({"instance": %1, "state": "CANCELLED", "reason": "resend"})").arg(instance).toUtf8())
                         : post(QStringLiteral("/api/v1/deliveries/%1/retry").arg(older), R"({"reason": "resend"})");
    const bool retryWaited = replica.finish();

    if (bulk) {
        QVERIFY2(r.status == 200, r.body.constData());
        QCOMPARE(r.json().value(QStringLiteral("count")).toInt(), 0);
        QCOMPARE(r.json().value(QStringLiteral("retried")).toInt(), 0);
    } else {
        QVERIFY2(r.status == 409, r.body.constData());
        QCOMPARE(r.code(), QStringLiteral("delivery-superseded"));
        QCOMPARE(r.json().value(QStringLiteral("newer_delivery_id")).toInteger(), newer.load());
    }
    const QJsonObject after = delivery(older);
    QCOMPARE(after.value(QStringLiteral("state")).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(after.value(QStringLiteral("version")), before.value(QStringLiteral("version")));
    QCOMPARE(delivery(newer.load()).value(QStringLiteral("state")).toString(), QStringLiteral("PENDING"));
    // The retry reached the instance's lock while the replica held it (not after its commit).
    QVERIFY(retryWaited);
}

void tst_RetryRace::retryWaitsForAReplicasWriteTurn()
{
    // As a replica really writes: its transaction holds the write turn as well as the rows. The
    // retry misses the turn and is set aside (the server answers others meanwhile), runs once the
    // replica committed, and then sees the newer notification.
    qint64 older = 0;
    const qint64 instance = stoppedWithItsNotificationCancelled(&older);
    QVERIFY(instance > 0);
    const QJsonObject before = delivery(older);
    std::atomic<qint64> newer{0};
    const QString webhookId = QStringLiteral("msg_turn_%1").arg(m_counter);
    WriteLockHolder replica(
        m_server->databaseUrl(),
        [&](Database &db) {
            QSqlQuery q(db.connection());
            return startsTheInstance(q, instance, older, webhookId, &newer);
        },
        true);
    QVERIFY(replica.take());

    QNetworkAccessManager nam;
    std::unique_ptr<QNetworkReply> retry(TestServer::start(nam, m_server->baseUrl(), "POST",
                                                           QStringLiteral("/api/v1/deliveries/%1/retry").arg(older),
                                                           R"({"reason": "resend"})", m_server->operatorToken()));
    QTRY_COMPARE_WITH_TIMEOUT(m_server->controlPlane().requestsWaitingForTheLock(), 1, 5000);
    QVERIFY(!retry->isFinished());
    replica.release();
    QVERIFY(replica.committed());
    QTRY_VERIFY_WITH_TIMEOUT(retry->isFinished(), 5000);
    const QByteArray body = retry->readAll();
    QVERIFY2(retry->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 409, body.constData());
    const QJsonObject problem = QJsonDocument::fromJson(body).object();
    QCOMPARE(problem.value(QStringLiteral("code")).toString(), QStringLiteral("delivery-superseded"));
    QCOMPARE(problem.value(QStringLiteral("newer_delivery_id")).toInteger(), newer.load());
    QCOMPARE(delivery(older).value(QStringLiteral("version")), before.value(QStringLiteral("version")));
}

QTEST_GUILESS_MAIN(tst_RetryRace)
#include "tst_retryrace.moc"
