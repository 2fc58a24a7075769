// The hot-path statement: UTF-8 text, integers and NULLs in and out the same on both backends,
// rows returned by a write, clear errors, and a reused statement that keeps nothing of its last use.
#include "testdatabase.h"

#include "server/storage/database.h"
#include "server/storage/statement.h"

#include <QFileInfo>
#include <QSqlQuery>
#include <QUrl>
#include <QtTest>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_Statement : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void textIntegersAndNullsRoundTrip_data();
    void textIntegersAndNullsRoundTrip();
    void writeReturnsEveryRow();
    void reuseStartsFromNothing();
    void badStatementIsAProblem();
    void failedStepIsAProblem();
    void closesWithStatementsCached();

private:
    std::unique_ptr<TestDatabase> m_test;
    std::unique_ptr<Database> m_db;
};

void tst_Statement::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_Statement::init()
{
    m_test = std::make_unique<TestDatabase>();
    QVERIFY2(m_test->isValid(), qPrintable(m_test->error()));
    m_db = std::make_unique<Database>(m_test->url());
    Problem problem;
    QVERIFY2(m_db->open(&problem), qPrintable(problem.detail));
    QVERIFY2(m_db->exec(QStringLiteral("CREATE TABLE notes (id BIGINT PRIMARY KEY, body TEXT, n BIGINT)"), &problem),
             qPrintable(problem.detail));
}

void tst_Statement::cleanup()
{
    m_db.reset();
    m_test.reset();
}

void tst_Statement::textIntegersAndNullsRoundTrip_data()
{
    QTest::addColumn<QString>("body");
    QTest::addColumn<qint64>("n");
    QTest::newRow("ascii") << QStringLiteral("{\"status\":\"RUNNING\"}") << qint64(42);
    QTest::newRow("accents and emoji") << QStringLiteral("Zoë’s café ✓ 🚀") << qint64(-7);
    QTest::newRow("quotes and newline") << QStringLiteral("a \"b\"\n'c'") << qint64(0);
    QTest::newRow("64-bit") << QStringLiteral("big") << qint64(9007199254740993LL);
    QTest::newRow("empty text") << QString(QLatin1String("")) << qint64(1);
    QTest::newRow("null text") << QString() << qint64(2);
}

void tst_Statement::textIntegersAndNullsRoundTrip()
{
    QFETCH(QString, body);
    QFETCH(qint64, n);
    Problem problem;
    {
        Statement insert(*m_db, QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?)"));
        QVERIFY2(insert.bind(1).bindText(body).bind(n).exec(&problem), qPrintable(problem.detail));
    }
    // What Qt SQL reads back is what was bound: the bytes went in as UTF-8, not re-encoded.
    QSqlQuery check(m_db->connection());
    QVERIFY(check.exec(QStringLiteral("SELECT body, n FROM notes WHERE id = 1")) && check.next());
    QCOMPARE(check.value(0).isNull(), body.isNull());
    QCOMPARE(check.value(0).toString(), body);
    QCOMPARE(check.value(1).toLongLong(), n);

    Statement select(*m_db, QStringLiteral("SELECT body, n, NULL FROM notes WHERE id = ?"));
    QVERIFY2(select.bind(1).exec(&problem), qPrintable(problem.detail));
    QVERIFY(select.next());
    QCOMPARE(select.isNull(0), body.isNull());
    QCOMPARE(select.text(0), body.toUtf8());
    QCOMPARE(select.string(0), body);
    QCOMPARE(select.integer(1), n);
    QVERIFY(select.isNull(2));
    QVERIFY(!select.next());
    QVERIFY(!select.failed());
}

void tst_Statement::writeReturnsEveryRow()
{
    Problem problem;
    for (qint64 id = 1; id <= 5; ++id) {
        Statement insert(*m_db, QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?)"));
        QVERIFY2(insert.bind(id).bindText(QStringLiteral("row %1").arg(id)).bind(id * 10).exec(&problem),
                 qPrintable(problem.detail));
    }
    Statement update(*m_db, QStringLiteral("UPDATE notes SET n = n + 1 WHERE id IN (?, ?, ?) RETURNING id, n, body"));
    QVERIFY2(update.bind(2).bind(4).bind(5).exec(&problem), qPrintable(problem.detail));
    QMap<qint64, qint64> returned;
    while (update.next()) {
        QCOMPARE(update.string(2), QStringLiteral("row %1").arg(update.integer(0)));
        returned.insert(update.integer(0), update.integer(1));
    }
    QVERIFY(!update.failed());
    QCOMPARE(returned, (QMap<qint64, qint64>{{2, 21}, {4, 41}, {5, 51}}));
    // The write happened whether or not the rows were read.
    QSqlQuery check(m_db->connection());
    QVERIFY(check.exec(QStringLiteral("SELECT SUM(n) FROM notes")) && check.next());
    QCOMPARE(check.value(0).toLongLong(), 10 + 21 + 30 + 41 + 51);
}

void tst_Statement::reuseStartsFromNothing()
{
    const QString sql = QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?) RETURNING id, body");
    Problem problem;
    {
        Statement first(*m_db, sql);
        QVERIFY2(first.bind(1).bindText(QStringLiteral("first")).bind(1).exec(&problem), qPrintable(problem.detail));
        // Left with its row unread: the next use must not see it, nor the old values.
    }
    Statement second(*m_db, sql);
    QVERIFY2(second.bind(2).bindNull().bind(2).exec(&problem), qPrintable(problem.detail));
    QVERIFY(second.next());
    QCOMPARE(second.integer(0), 2);
    QVERIFY(second.isNull(1));
    QVERIFY(!second.next());
}

void tst_Statement::badStatementIsAProblem()
{
    Statement bad(*m_db, QStringLiteral("SELECT missing FROM no_such_table WHERE id = ?"));
    bad.bind(1);
    Problem problem;
    QVERIFY(!bad.exec(&problem));
    QCOMPARE(problem.status, 500);
    QVERIFY2(problem.detail.contains(QLatin1String("no_such_table")), qPrintable(problem.detail));
    QVERIFY(!bad.next());
    QVERIFY(bad.failed());
}

void tst_Statement::failedStepIsAProblem()
{
    Problem problem;
    {
        Statement insert(*m_db, QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?)"));
        QVERIFY2(insert.bind(1).bindText(QStringLiteral("once")).bind(1).exec(&problem), qPrintable(problem.detail));
    }
    Statement again(*m_db, QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?)"));
    QVERIFY(!again.bind(1).bindText(QStringLiteral("twice")).bind(2).exec(&problem));
    QCOMPARE(problem.status, 500);
    QVERIFY2(!problem.detail.isEmpty(), "the constraint failure says what failed");
    QSqlQuery check(m_db->connection());
    QVERIFY(check.exec(QStringLiteral("SELECT COUNT(*), MIN(body) FROM notes")) && check.next());
    QCOMPARE(check.value(0).toInt(), 1);
    QCOMPARE(check.value(1).toString(), QStringLiteral("once"));
}

void tst_Statement::closesWithStatementsCached()
{
    Problem problem;
    {
        Statement insert(*m_db, QStringLiteral("INSERT INTO notes (id, body, n) VALUES (?, ?, ?)"));
        QVERIFY2(insert.bind(7).bindText(QStringLiteral("kept")).bind(7).exec(&problem), qPrintable(problem.detail));
    }
    // SQLite will not close a connection with a statement still prepared: it would stay open,
    // unseen, past close(). The last connection to close removes the write-ahead log file.
    m_db->close();
    QVERIFY(!m_db->isOpen());
    if (!m_test->isPostgres()) {
        const QString log = QUrl(m_test->url()).path() + QStringLiteral("-wal");
        QVERIFY2(!QFileInfo::exists(log), qPrintable(log + QStringLiteral(" is still there")));
    }
    QVERIFY2(m_db->open(&problem), qPrintable(problem.detail));
    Statement select(*m_db, QStringLiteral("SELECT body FROM notes WHERE id = ?"));
    QVERIFY2(select.bind(7).exec(&problem), qPrintable(problem.detail));
    QVERIFY(select.next());
    QCOMPARE(select.string(0), QStringLiteral("kept"));
}

QTEST_GUILESS_MAIN(tst_Statement)
#include "tst_statement.moc"
