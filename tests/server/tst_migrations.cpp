// Schema migrations: a fresh database gets every version; one left at version 1 by an older
// server upgrades in place, keeping the outbox rows that server created on the fly.
#include "testdatabase.h"

#include "server/storage/database.h"
#include "server/storage/migrations.h"

#include <QSqlQuery>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

bool tableExists(Database &db, const QString &table)
{
    QSqlQuery q(db.connection());
    return q.exec(QStringLiteral("SELECT COUNT(*) FROM %1").arg(table)) && q.next();
}

const QString kAt = QStringLiteral("2026-01-01T00:00:00.000Z");

// The schema as a server of version `last` left it: every migration up to it, recorded as applied.
bool migrateUpTo(Database &db, int last, Problem *problem)
{
    const QString idType = db.backend() == Database::Backend::Sqlite ? QStringLiteral("INTEGER PRIMARY KEY AUTOINCREMENT")
                                                                     : QStringLiteral("BIGSERIAL PRIMARY KEY");
    if (!db.exec(QStringLiteral("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"),
                 problem))
        return false;
    for (const Migration &m : migrations()) {
        if (m.version > last)
            break;
        for (QString sql : m.statements) {
            sql.replace(QLatin1String("{{id}}"), idType);
            if (!db.exec(sql, problem))
                return false;
        }
        if (!db.exec(QStringLiteral("INSERT INTO schema_migrations (version, applied_at) VALUES (%1, '%2')")
                         .arg(m.version)
                         .arg(kAt),
                     problem))
            return false;
    }
    return true;
}

int count(Database &db, const QString &sql)
{
    QSqlQuery q(db.connection());
    return q.exec(sql) && q.next() ? q.value(0).toInt() : -1;
}

} // namespace

class tst_Migrations : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void freshDatabaseGetsEveryVersion();
    void versionOneUpgrades_data();
    void versionOneUpgrades();
    void versionSixUpgradeCountsLoggedAttempts();
    void versionTenUpgradeTrimsOwners();
    void listingByRareStateUsesItsIndex_data();
    void listingByRareStateUsesItsIndex();
};

void tst_Migrations::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_Migrations::freshDatabaseGetsEveryVersion()
{
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem) && db.migrate(&problem), qPrintable(problem.detail));
    QCOMPARE(db.schemaVersion(), migrations().last().version);
    QVERIFY(db.schemaVersion() >= 2);
    QVERIFY(tableExists(db, QStringLiteral("outbox_secret_grace")));
    QVERIFY(tableExists(db, QStringLiteral("outbox_endpoint_streaks")));
    // Forward-only and idempotent: a second start changes nothing.
    QVERIFY2(db.migrate(&problem), qPrintable(problem.detail));
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM schema_migrations")), int(migrations().size()));
}

void tst_Migrations::versionOneUpgrades_data()
{
    QTest::addColumn<bool>("helperTablesExist");
    QTest::newRow("outbox tables made on the fly") << true;
    QTest::newRow("outbox tables never made") << false;
}

void tst_Migrations::versionOneUpgrades()
{
    QFETCH(bool, helperTablesExist);
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem), qPrintable(problem.detail));

    // What a version 1 server left behind.
    QCOMPARE(migrations().first().version, 1);
    QVERIFY2(migrateUpTo(db, 1, &problem), qPrintable(problem.detail));
    if (helperTablesExist) {
        QVERIFY(db.exec(QStringLiteral("CREATE TABLE outbox_secret_grace (instance_id BIGINT PRIMARY KEY,"
                                       " previous_secret TEXT NOT NULL, valid_until TEXT NOT NULL)"),
                        &problem));
        QVERIFY(db.exec(QStringLiteral("CREATE TABLE outbox_endpoint_streaks (endpoint_id BIGINT PRIMARY KEY,"
                                       " failing_since TEXT NOT NULL)"),
                        &problem));
        QVERIFY(db.exec(QStringLiteral("INSERT INTO outbox_endpoint_streaks (endpoint_id, failing_since)"
                                       " VALUES (7, '2026-01-01T00:00:00.000Z')"),
                        &problem));
    }
    QCOMPARE(db.schemaVersion(), 1);

    QVERIFY2(db.migrate(&problem), qPrintable(problem.detail));
    QCOMPARE(db.schemaVersion(), migrations().last().version);
    QVERIFY(db.schemaVersion() >= 2);
    QVERIFY(tableExists(db, QStringLiteral("outbox_secret_grace")));
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM outbox_endpoint_streaks")), helperTablesExist ? 1 : 0);
}

// A database a version 6 server left, with attempts in the log: version 7 gives each delivery the
// count of its logged attempts, which numbers the next one.
void tst_Migrations::versionSixUpgradeCountsLoggedAttempts()
{
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem), qPrintable(problem.detail));
    QVERIFY2(migrateUpTo(db, 6, &problem), qPrintable(problem.detail));
    QCOMPARE(db.schemaVersion(), 6);
    const QStringList rows = {
        QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                       " VALUES ('o', 'AVAILABLE', 1, '%1', '%1')"),
        QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                       " VALUES ('p', 1, '[\"app\"]', 1, '%1', '%1')"),
        QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                       " VALUES (1, 'http://127.0.0.1:9/cb', 'ACTIVE', 1, '%1', '%1')"),
        QStringLiteral("INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version,"
                       " created_at, updated_at, status_changed_at) VALUES ('i', 1, 1, 'app', 'owner', 'RUNNING', 1,"
                       " '%1', '%1', '%1')"),
    };
    for (const QString &sql : rows)
        QVERIFY2(db.exec(sql.arg(kAt), &problem), qPrintable(problem.detail));
    for (int d = 1; d <= 2; ++d)
        QVERIFY2(db.exec(QStringLiteral("INSERT INTO deliveries (webhook_id, event_type, instance_id, provider_id,"
                                        " endpoint_id, state, body, attempts, created_at, updated_at, version)"
                                        " VALUES ('msg_%1', 'instance.status_changed', 1, 1, 1, 'PENDING', '{}', 0,"
                                        " '%2', '%2', 1)")
                             .arg(d)
                             .arg(kAt),
                         &problem),
                 qPrintable(problem.detail));
    // The first delivery was tried three times (a retry set its `attempts` back to 1 meanwhile).
    for (int attempt = 1; attempt <= 3; ++attempt)
        QVERIFY2(db.exec(QStringLiteral("INSERT INTO delivery_attempts (delivery_id, attempt, at) VALUES (1, %1, '%2')")
                             .arg(attempt)
                             .arg(kAt),
                         &problem),
                 qPrintable(problem.detail));
    QVERIFY(db.exec(QStringLiteral("UPDATE deliveries SET attempts = 1 WHERE id = 1"), &problem));

    QVERIFY2(db.migrate(&problem), qPrintable(problem.detail));
    QCOMPARE(db.schemaVersion(), migrations().last().version);
    QCOMPARE(count(db, QStringLiteral("SELECT logged_attempts FROM deliveries WHERE id = 1")), 3);
    QCOMPARE(count(db, QStringLiteral("SELECT logged_attempts FROM deliveries WHERE id = 2")), 0);
    QCOMPARE(count(db, QStringLiteral("SELECT attempts FROM deliveries WHERE id = 1")), 1);
}

void tst_Migrations::versionTenUpgradeTrimsOwners()
{
    // Owners went in as sent before names were read trimmed: " carol " and its token " carol"
    // become "carol", which is what instances and tokens are given now.
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem), qPrintable(problem.detail));
    QVERIFY2(migrateUpTo(db, 10, &problem), qPrintable(problem.detail));
    const QStringList rows = {
        QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                       " VALUES ('o', 'AVAILABLE', 1, '%1', '%1')"),
        QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at, updated_at)"
                       " VALUES ('p', 1, '[\"app\"]', 1, '%1', '%1')"),
        QStringLiteral("INSERT INTO instances (name, organization_id, provider_id, application, owner, status, version,"
                       " created_at, updated_at, status_changed_at) VALUES ('i', 1, 1, 'app', ' carol ', 'RUNNING', 1,"
                       " '%1', '%1', '%1')"),
        QStringLiteral("INSERT INTO tokens (name, role, subject, token_hash, created_at) VALUES ('t', 'owner', ' carol', 'h1', '%1')"),
        QStringLiteral("INSERT INTO tokens (name, role, subject, token_hash, created_at) VALUES ('t', 'provider', '1', 'h2', '%1')"),
    };
    for (const QString &sql : rows)
        QVERIFY2(db.exec(sql.arg(kAt), &problem), qPrintable(problem.detail));
    QVERIFY2(db.migrate(&problem), qPrintable(problem.detail));
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM instances WHERE owner = 'carol'")), 1);
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM tokens WHERE subject = 'carol' AND role = 'owner'")), 1);
    QCOMPARE(count(db, QStringLiteral("SELECT COUNT(*) FROM tokens WHERE subject = '1'")), 1);
}

void tst_Migrations::listingByRareStateUsesItsIndex_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<bool>("indexed");
    QTest::newRow("FAILED") << QStringLiteral("FAILED") << true;
    QTest::newRow("CANCELLED") << QStringLiteral("CANCELLED") << true;
    QTest::newRow("SUPERSEDED") << QStringLiteral("SUPERSEDED") << true;
    // Most rows: reading the table in id order finds a page of them at once.
    QTest::newRow("DELIVERED") << QStringLiteral("DELIVERED") << false;
    // Claims must keep to their own partial index of due rows.
    QTest::newRow("PENDING") << QStringLiteral("PENDING") << false;
}

// The deliveries listing's shape (a state filter, keyset paging by id) on SQLite: for the rare
// states the plan reads the partial index, not every row of the table.
void tst_Migrations::listingByRareStateUsesItsIndex()
{
    QFETCH(QString, state);
    QFETCH(bool, indexed);
    TestDatabase scratch;
    QVERIFY2(scratch.isValid(), qPrintable(scratch.error()));
    Database db(scratch.url());
    Problem problem;
    QVERIFY2(db.open(&problem) && db.migrate(&problem), qPrintable(problem.detail));
    if (db.backend() != Database::Backend::Sqlite)
        QSKIP("PostgreSQL plans by its statistics; the index is the same");
    QSqlQuery q(db.connection());
    QVERIFY(q.exec(QStringLiteral("EXPLAIN QUERY PLAN SELECT d.id FROM deliveries d WHERE d.id > 0 AND d.state = '%1'"
                                  " ORDER BY d.id LIMIT 50")
                       .arg(state)));
    QStringList plan;
    while (q.next())
        plan.append(q.value(3).toString());
    QCOMPARE(plan.join(QLatin1Char(' ')).contains(QLatin1String("deliveries_unsettled")), indexed);
}

QTEST_GUILESS_MAIN(tst_Migrations)
#include "tst_migrations.moc"
