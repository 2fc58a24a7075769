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
    const QString idType = db.backend() == Database::Backend::Sqlite ? QStringLiteral("INTEGER PRIMARY KEY AUTOINCREMENT")
                                                                     : QStringLiteral("BIGSERIAL PRIMARY KEY");
    QVERIFY(db.exec(QStringLiteral("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"),
                    &problem));
    QCOMPARE(migrations().first().version, 1);
    for (QString sql : migrations().first().statements) {
        sql.replace(QLatin1String("{{id}}"), idType);
        QVERIFY2(db.exec(sql, &problem), qPrintable(problem.detail));
    }
    QVERIFY(db.exec(QStringLiteral("INSERT INTO schema_migrations (version, applied_at) VALUES (1, '2026-01-01T00:00:00.000Z')"),
                    &problem));
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
