// The destruction sweep alone on a database of its own, one pass at a time: instances stuck
// waiting for their provider never keep it from the others, a bulk stop costs a page per pass, and
// two replicas sweeping one instance queue one destruction callback.
#include "lockwait.h"
#include "testdatabase.h"
#include "testsupport.h"

#include "core/delivery.h"
#include "core/instance.h"
#include "server/api/instancesapi.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/destructionsweep.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/timestamps.h"

#include <QSqlQuery>
#include <QSqlResult>
#include <QtTest>

#include <sqlite3.h>

#include <atomic>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

// The sweep alone on a database of its own, one pass at a time, with a page of a few instances so
// that a few more than a page of them stand for the hundreds a provider can leave unacknowledged.
class SweepRig final
{
public:
    static constexpr int PageSize = 3;
    static inline const QString CallbackUrl = QStringLiteral("https://provider.example/hook");

    SweepRig()
        : m_db(m_scratch.url())
        , m_journal(m_db)
        , m_repository(m_db, m_journal)
        , m_sweep(m_db, m_journal, m_repository, m_options, PageSize)
    {
    }

    // The schema, an organization, a provider and its endpoint; empty or why not.
    QString open()
    {
        if (!m_scratch.isValid())
            return m_scratch.error();
        Problem problem;
        if (!m_db.open(&problem) || !m_db.migrate(&problem))
            return problem.detail;
        const QString now = nowTimestamp();
        m_organization = insert(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                               " VALUES ('acme', 'ACTIVE', 1, ?, ?) RETURNING id"),
                                {now, now});
        m_provider = insert(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at,"
                                           " updated_at) VALUES ('crm', ?, '[\"crm\"]', 1, ?, ?) RETURNING id"),
                            {m_organization, now, now});
        m_endpoint = insert(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                           " VALUES (?, ?, 'ACTIVE', 1, ?, ?) RETURNING id"),
                            {m_provider, CallbackUrl, now, now});
        return m_endpoint > 0 ? QString() : m_error;
    }

    // A STOPPED instance whose retention ends at destroyAfter; 0 on failure (see error()).
    qint64 stoppedInstance(const QString &destroyAfter, bool withCallback)
    {
        const QString now = nowTimestamp();
        return insert(QStringLiteral("INSERT INTO instances (name, organization_id, provider_id, application, owner, status,"
                                     " version, created_at, updated_at, status_changed_at, callback_url, destroy_after)"
                                     " VALUES (?, ?, ?, 'crm', 'alice', 'STOPPED', 1, ?, ?, ?, ?, ?) RETURNING id"),
                      {QStringLiteral("i%1").arg(++m_serial), m_organization, m_provider, now, now, now,
                       withCallback ? QVariant(CallbackUrl) : QVariant(), destroyAfter});
    }

    // A notification of the instance in that state, as the outbox left it; 0 on failure.
    qint64 notification(qint64 instance, const QString &eventType, const QString &state)
    {
        const QString now = nowTimestamp();
        return insert(QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                     " state, body, attempts, created_at, updated_at, version)"
                                     " VALUES (?, ?, ?, ?, ?, ?, '{}', 1, ?, ?, 1) RETURNING id"),
                      {QStringLiteral("msg_rig%1").arg(++m_serial), eventType, instance, m_provider, m_endpoint, state, now,
                       now});
    }

    // The provider answered (or gave up on) a delivery.
    bool settle(qint64 delivery, const QString &state)
    {
        return insert(QStringLiteral("UPDATE deliveries SET state = ? WHERE id = ? RETURNING id"), {state, delivery})
               == delivery;
    }

    // The instance's notifications of that kind, oldest first.
    QList<qint64> notifications(qint64 instance, const QString &eventType)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT id FROM deliveries WHERE instance_id = ? AND event_type = ? ORDER BY id"));
        q.addBindValue(instance);
        q.addBindValue(eventType);
        QList<qint64> ids;
        if (q.exec())
            while (q.next())
                ids.append(q.value(0).toLongLong());
        return ids;
    }

    QString eventType(qint64 delivery)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT event_type FROM deliveries WHERE id = ?"));
        q.addBindValue(delivery);
        return q.exec() && q.next() ? q.value(0).toString() : QString();
    }

    // The instance as the API shows it.
    QJsonObject instance(qint64 id)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("SELECT ") + InstancesApi::columns() + QStringLiteral(" FROM instances WHERE id = ?"));
        q.addBindValue(id);
        return q.exec() && q.next() ? InstancesApi::instanceJson(q) : QJsonObject();
    }

    // One pass: how many instances changed, or -1 (see error()).
    int pass()
    {
        Problem problem;
        const int changed = m_sweep.run(&problem);
        if (changed < 0)
            m_error = problem.detail;
        return changed;
    }

    QString error() const { return m_error; }
    QString url() const { return m_scratch.url(); }

    // SQLite's virtual machine steps spent reading the page of due instances in one pass; -1 when
    // the pass failed or the statement is not at hand.
    qint64 pageReadSteps()
    {
        QSqlQuery &q = m_db.query(DestructionSweep::dueSql(false));
        const QVariant handle = q.result()->handle();
        if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3_stmt*") != 0)
            return -1;
        sqlite3_stmt *statement = *static_cast<sqlite3_stmt *const *>(handle.constData());
        if (!statement)
            return -1;
        sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 1);
        if (pass() < 0)
            return -1;
        return sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0);
    }

private:
    qint64 insert(const QString &sql, const QVariantList &values)
    {
        QSqlQuery q(m_db.connection());
        q.prepare(sql);
        for (const QVariant &v : values)
            q.addBindValue(v);
        if (q.exec() && q.next())
            return q.value(0).toLongLong();
        m_error = q.lastError().text();
        return 0;
    }

    TestDatabase m_scratch;
    Database m_db;
    Journal m_journal;
    DeliveryRepository m_repository;
    ServerOptions m_options;
    DestructionSweep m_sweep;
    qint64 m_organization = 0;
    qint64 m_provider = 0;
    qint64 m_endpoint = 0;
    int m_serial = 0;
    QString m_error;
};

// Passes that visit every one of `due` instances once, wherever the previous pass stopped: the
// pages up to the newest, then from the oldest again.
int round(int due)
{
    return (due + SweepRig::PageSize - 1) / SweepRig::PageSize + 1;
}

QString awaitingReason(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("reason")).toString();
}

qint64 awaitingDelivery(const QJsonObject &instance)
{
    return instance.value(QStringLiteral("awaiting_ack")).toObject().value(QStringLiteral("delivery_id")).toInteger();
}

} // namespace

class tst_DestructionSweep : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void sweepReachesPastStuckPages_data();
    void sweepReachesPastStuckPages();
    void sweepStartsOverFromTheOldest_data();
    void sweepStartsOverFromTheOldest();
    void pageAfterTheCursorSeeksPastWhatWasRead();
    void concurrentSweepsQueueOneCallback();
};

void tst_DestructionSweep::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}


void tst_DestructionSweep::sweepReachesPastStuckPages_data()
{
    QTest::addColumn<int>("stuck");
    QTest::addColumn<bool>("sameDeadline");
    QTest::addColumn<bool>("readyHasCallback");
    QTest::newRow("no callback, after 7 stuck") << 7 << false << false;
    QTest::newRow("no callback, same deadline as 7 stuck") << 7 << true << false;
    QTest::newRow("STOPPED acknowledged, after 7 stuck") << 7 << false << true;
    QTest::newRow("STOPPED acknowledged, same deadline, whole pages") << 5 << true << true;
}

// Instances whose STOPPED notification waits for the provider stay due; however many fill the
// oldest pages, one that can be destroyed is reached within a round of passes.
void tst_DestructionSweep::sweepReachesPastStuckPages()
{
    QFETCH(int, stuck);
    QFETCH(bool, sameDeadline);
    QFETCH(bool, readyHasCallback);
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString oldest = timestamp(now.addSecs(-7200));
    QList<qint64> stuckIds;
    QList<qint64> blocking;
    for (int i = 0; i < stuck; ++i) {
        stuckIds.append(rig.stoppedInstance(oldest, true));
        blocking.append(rig.notification(stuckIds.last(), Instance::StatusChangedEvent, i % 2 ? Delivery::Failed : Delivery::Pending));
        QVERIFY2(blocking.last() > 0, qPrintable(rig.error()));
    }
    const qint64 ready = rig.stoppedInstance(sameDeadline ? oldest : timestamp(now.addSecs(-3600)), readyHasCallback);
    QVERIFY2(ready > 0, qPrintable(rig.error()));
    const int passes = round(stuck + 1);
    if (readyHasCallback) {
        QVERIFY2(rig.notification(ready, Instance::StatusChangedEvent, Delivery::Delivered) > 0, qPrintable(rig.error()));
        for (int pass = 0; pass < passes && awaitingDelivery(rig.instance(ready)) == 0; ++pass)
            QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
        const QJsonObject waiting = rig.instance(ready);
        QVERIFY2(awaitingReason(waiting).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(waiting)));
        QCOMPARE(rig.eventType(awaitingDelivery(waiting)), Instance::DestroyedEvent);
        QVERIFY(rig.settle(awaitingDelivery(waiting), Delivery::Delivered));
    }
    for (int pass = 0; pass < passes && rig.instance(ready).value(QStringLiteral("status")) != Instance::Destroyed; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    QCOMPARE(rig.instance(ready).value(QStringLiteral("status")).toString(), Instance::Destroyed);

    // Every stuck instance was visited on the way and shows what blocks it; further rounds change
    // none of them again (no new version, no feed event).
    QList<qint64> versions;
    for (int i = 0; i < stuck; ++i) {
        const QJsonObject o = rig.instance(stuckIds.at(i));
        QCOMPARE(o.value(QStringLiteral("status")).toString(), Instance::Stopped);
        QVERIFY2(awaitingReason(o).contains(QLatin1String("STOPPED")), qPrintable(awaitingReason(o)));
        QCOMPARE(awaitingDelivery(o), blocking.at(i));
        versions.append(o.value(QStringLiteral("version")).toInteger());
    }
    for (int pass = 0; pass < 2 * passes; ++pass)
        QCOMPARE(rig.pass(), 0);
    for (int i = 0; i < stuck; ++i) {
        const QJsonObject o = rig.instance(stuckIds.at(i));
        QCOMPARE(awaitingDelivery(o), blocking.at(i));
        QCOMPARE(o.value(QStringLiteral("version")).toInteger(), versions.at(i));
    }
}

// Many instances whose retention ends at one instant (a bulk stop), all stuck: a pass reads its
// page of them, not every one before the cursor again, or a round costs the square of them.
void tst_DestructionSweep::pageAfterTheCursorSeeksPastWhatWasRead()
{
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    if (TestDatabase::wantsPostgres())
        QSKIP("PostgreSQL seeks the cursor's row comparison in the index; tst_queryplans checks the plan");
    const QString deadline = timestamp(QDateTime::currentDateTimeUtc().addSecs(-3600));
    const int stuck = 150;
    for (int i = 0; i < stuck; ++i) {
        const qint64 instance = rig.stoppedInstance(deadline, true);
        QVERIFY2(instance > 0 && rig.notification(instance, Instance::StatusChangedEvent, Delivery::Pending) > 0,
                 qPrintable(rig.error()));
    }
    QVERIFY2(rig.pass() >= 0, qPrintable(rig.error())); // the statement prepared, the cursor a page in
    const qint64 early = rig.pageReadSteps();
    QVERIFY2(early > 0, qPrintable(rig.error()));
    for (int pass = 0; pass < 40; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    const qint64 late = rig.pageReadSteps(); // the cursor ~130 instances in
    QVERIFY2(late > 0, qPrintable(rig.error()));
    QVERIFY2(late < 2 * early, qPrintable(QStringLiteral("%1 steps a page in, %2 steps 40 pages in").arg(early).arg(late)));
}

void tst_DestructionSweep::sweepStartsOverFromTheOldest_data()
{
    QTest::addColumn<int>("acknowledged");
    QTest::newRow("the oldest") << 0;
    QTest::newRow("one in the middle page") << 4;
    QTest::newRow("the newest") << 7;
}

// A stuck instance whose STOPPED notification the provider acknowledges later, wherever the last
// pass stopped, gets its destruction callback within a round.
void tst_DestructionSweep::sweepStartsOverFromTheOldest()
{
    QFETCH(int, acknowledged);
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const int stuck = 8;
    QList<qint64> stuckIds;
    QList<qint64> blocking;
    for (int i = 0; i < stuck; ++i) {
        stuckIds.append(rig.stoppedInstance(timestamp(now.addSecs(-7200 + i)), true));
        blocking.append(rig.notification(stuckIds.last(), Instance::StatusChangedEvent, Delivery::Pending));
        QVERIFY2(blocking.last() > 0, qPrintable(rig.error()));
    }
    // A round and then some, so the next pass starts in the middle.
    for (int pass = 0; pass < round(stuck) + 1; ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    for (int i = 0; i < stuck; ++i)
        QCOMPARE(awaitingDelivery(rig.instance(stuckIds.at(i))), blocking.at(i));

    QVERIFY(rig.settle(blocking.at(acknowledged), Delivery::Delivered));
    const qint64 id = stuckIds.at(acknowledged);
    for (int pass = 0; pass < round(stuck) && awaitingDelivery(rig.instance(id)) == blocking.at(acknowledged); ++pass)
        QVERIFY2(rig.pass() >= 0, qPrintable(rig.error()));
    const QJsonObject o = rig.instance(id);
    QVERIFY2(awaitingReason(o).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(o)));
    QCOMPARE(rig.eventType(awaitingDelivery(o)), Instance::DestroyedEvent);
}

// Two replicas sweep one instance at the same moment (PostgreSQL): the other replica's sweep has
// queued the destruction callback and not committed yet. This sweep must wait for it and then
// await that callback; otherwise neither sees the other's and the provider is told twice.
void tst_DestructionSweep::concurrentSweepsQueueOneCallback()
{
    if (!TestDatabase::wantsPostgres())
        QSKIP("replicas race on PostgreSQL only; SQLite's write transaction (BEGIN IMMEDIATE) lets one writer in at a time");
    SweepRig rig;
    const QString opened = rig.open();
    QVERIFY2(opened.isEmpty(), qPrintable(opened));
    const qint64 id = rig.stoppedInstance(timestamp(QDateTime::currentDateTimeUtc().addSecs(-3600)), true);
    QVERIFY2(id > 0, qPrintable(rig.error()));
    const qint64 stopped = rig.notification(id, Instance::StatusChangedEvent, Delivery::Delivered);
    QVERIFY2(stopped > 0, qPrintable(rig.error()));

    std::atomic<qint64> theirs{0};
    LockHolder replica(rig.url(), [&](QSqlQuery &q) {
        // What the other sweep's enqueue writes; its foreign key share-locks the instance row, the
        // one lock the holder has that the sweep could want.
        if (!execWith(q,
                      QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id, endpoint_id,"
                                     " state, body, attempts, next_attempt_at, created_at, updated_at, version)"
                                     " SELECT 'msg_other_replica', ?, instance_id, provider_id, endpoint_id, 'PENDING', '{}', 0,"
                                     " updated_at, updated_at, updated_at, 1 FROM deliveries WHERE id = ? RETURNING id"),
                      {Instance::DestroyedEvent, stopped})
            || !q.next())
            return false;
        theirs = q.value(0).toLongLong();
        return true;
    });
    QVERIFY(replica.start());

    const int changed = rig.pass(); // waits on this thread until the other replica commits
    const bool sweepWaited = replica.finish();
    QVERIFY2(changed >= 0, qPrintable(rig.error()));

    // The other replica's callback is the only one, and the instance awaits it.
    QCOMPARE(rig.notifications(id, Instance::DestroyedEvent), QList<qint64>{theirs.load()});
    const QJsonObject o = rig.instance(id);
    QCOMPARE(o.value(QStringLiteral("status")).toString(), Instance::Stopped);
    QCOMPARE(awaitingDelivery(o), theirs.load());
    QVERIFY2(awaitingReason(o).contains(QLatin1String("destruction callback")), qPrintable(awaitingReason(o)));
    // The sweep reached the instance's lock while the other replica held it (not after its commit).
    QVERIFY(sweepWaited);
}

QTEST_GUILESS_MAIN(tst_DestructionSweep)
#include "tst_destructionsweep.moc"
