// A cached prepared statement for the outbox's hot writes, bound and read without QVariant on SQLite.
#pragma once

#include "core/problem.h"

#include <QByteArray>
#include <QString>

struct sqlite3_stmt;
class QSqlQuery;

namespace OpsDeck {

class Database;

// Every attempt a worker records goes through a handful of statements, each run thousands of
// times a second. Through QSqlQuery each value becomes a QVariant, and QSQLITE passes text to and
// from SQLite as UTF-16, which SQLite converts to and from the UTF-8 it stores: a quarter of the
// outbox store's time. On SQLite this binds and reads UTF-8 bytes straight through SQLite's C
// API, on the same connection (and so in the same transaction); on PostgreSQL it is the cached
// QSqlQuery of the same text. Callers write one piece of code for both.
//
// Like Database::query(): one use of a text at a time, on the connection's thread. Bind values
// in placeholder order, exec(), then next() and the column readers; the destructor resets the
// statement for its next use.
class Statement final
{
public:
    Statement(Database &db, const QString &sql);
    ~Statement();
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    Statement &bind(qint64 value);
    Statement &bind(int value) { return bind(qint64(value)); }
    // UTF-8 text; a null QByteArray (or QString) binds SQL NULL.
    Statement &bindText(const QByteArray &utf8);
    Statement &bindText(const QString &text);
    Statement &bindNull();

    // Runs the statement: for one that returns rows, up to its first row (read it with next()).
    bool exec(Problem *error);
    // The next row; false at the end, or on an error (failed() tells which).
    bool next();
    bool failed() const;
    Problem problem() const;

    bool isNull(int column) const;
    qint64 integer(int column) const;
    // The column's UTF-8 bytes, copied.
    QByteArray text(int column) const;
    // The column as a QString (null for SQL NULL).
    QString string(int column) const;

private:
    bool step();

    sqlite3_stmt *m_stmt = nullptr; // SQLite
    QSqlQuery *m_query = nullptr;   // PostgreSQL
    int m_bound = 0;
    int m_status = 0;         // of the last step (SQLite)
    bool m_pendingRow = false; // exec() stepped onto a row next() has not handed out yet
    QString m_error;
};

} // namespace OpsDeck
