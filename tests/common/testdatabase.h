// A fresh, empty database for one test: a SQLite file in a temp dir or a PostgreSQL database.
#pragma once

#include <QSqlQuery>
#include <QString>
#include <QTemporaryDir>
#include <QVariantList>

namespace OpsDeck::Test {

// OPSDECK_TEST_BACKEND=postgresql selects PostgreSQL on the cluster named by
// OPSDECK_TEST_POSTGRES_URL (CREATE DATABASE opsdeck_t_<random>, dropped in the destructor);
// anything else selects SQLite.
class TestDatabase final
{
public:
    TestDatabase();
    ~TestDatabase();
    TestDatabase(const TestDatabase &) = delete;
    TestDatabase &operator=(const TestDatabase &) = delete;

    static bool wantsPostgres();
    // Empty when the backend is usable; otherwise why not (tests QSKIP with it).
    static QString unavailableReason();

    bool isValid() const { return !m_url.isEmpty(); }
    QString url() const { return m_url; }   // sqlite:///... or postgresql://...
    QString error() const { return m_error; }
    bool isPostgres() const { return m_postgres; }
    QString dir() const { return m_dir.path(); } // scratch space for this test

private:
    QTemporaryDir m_dir;
    QString m_url;
    QString m_error;
    QString m_pgName;
    bool m_postgres = false;
};

// Prepares `sql` on `q`, binds `values` in order and runs it; false when either step failed
// (q.lastError() says why).
bool execWith(QSqlQuery &q, const QString &sql, const QVariantList &values = {});

} // namespace OpsDeck::Test

// In a test function or initTestCase(): skip when the selected backend cannot be reached.
#define OPSDECK_REQUIRE_BACKEND()                                                                  \
    do {                                                                                          \
        const QString reason_ = ::OpsDeck::Test::TestDatabase::unavailableReason();               \
        if (!reason_.isEmpty())                                                                   \
            QSKIP(qPrintable(reason_));                                                           \
    } while (false)
