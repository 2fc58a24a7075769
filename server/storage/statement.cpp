// A cached prepared statement for the outbox's hot writes, bound and read without QVariant on SQLite.
#include "statement.h"

#include "database.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <sqlite3.h>

namespace OpsDeck {

Statement::Statement(Database &db, const QString &sql)
{
    if (db.backend() == Database::Backend::Sqlite) {
        m_stmt = db.sqliteStatement(sql, &m_error);
        return;
    }
    m_query = &db.query(sql);
    // A statement that did not prepare fails every run with an error about the EXECUTE QPSQL
    // writes for it: keep the preparation's own error instead.
    if (m_query->lastError().isValid()) {
        m_error = m_query->lastError().text();
        m_query = nullptr;
    }
}

Statement::~Statement()
{
    if (m_stmt) {
        sqlite3_reset(m_stmt);
        sqlite3_clear_bindings(m_stmt);
    } else if (m_query) {
        m_query->finish();
    }
}

Statement &Statement::bind(qint64 value)
{
    ++m_bound;
    if (m_stmt)
        sqlite3_bind_int64(m_stmt, m_bound, value);
    else if (m_query)
        m_query->addBindValue(value);
    return *this;
}

Statement &Statement::bindText(const QByteArray &utf8)
{
    if (utf8.isNull())
        return bindNull();
    ++m_bound;
    if (m_stmt)
        sqlite3_bind_text(m_stmt, m_bound, utf8.constData(), int(utf8.size()), SQLITE_TRANSIENT);
    else if (m_query)
        m_query->addBindValue(QString::fromUtf8(utf8));
    return *this;
}

Statement &Statement::bindText(const QString &text)
{
    if (text.isNull())
        return bindNull();
    if (m_stmt)
        return bindText(text.toUtf8());
    ++m_bound;
    if (m_query)
        m_query->addBindValue(text);
    return *this;
}

Statement &Statement::bindNull()
{
    ++m_bound;
    if (m_stmt)
        sqlite3_bind_null(m_stmt, m_bound);
    else if (m_query)
        m_query->addBindValue(QVariant(QMetaType::fromType<QString>()));
    return *this;
}

bool Statement::step()
{
    m_status = sqlite3_step(m_stmt);
    if (m_status == SQLITE_ROW || m_status == SQLITE_DONE)
        return true;
    m_error = QString::fromUtf8(sqlite3_errmsg(sqlite3_db_handle(m_stmt)));
    return false;
}

bool Statement::exec(Problem *error)
{
    bool ok = false;
    if (m_stmt) {
        ok = step();
        m_pendingRow = ok && m_status == SQLITE_ROW;
    } else if (m_query) {
        ok = m_query->exec();
    }
    if (!ok && error)
        *error = problem();
    return ok;
}

bool Statement::next()
{
    if (m_query)
        return m_query->next();
    if (std::exchange(m_pendingRow, false))
        return true;
    return m_stmt && m_status == SQLITE_ROW && step() && m_status == SQLITE_ROW;
}

bool Statement::failed() const
{
    if (m_query)
        return m_query->lastError().isValid();
    return !m_stmt || (m_status != SQLITE_ROW && m_status != SQLITE_DONE);
}

Problem Statement::problem() const
{
    if (m_query)
        return Database::sqlProblem(*m_query);
    return Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
                         QStringLiteral("storage: %1").arg(m_error));
}

bool Statement::isNull(int column) const
{
    if (m_stmt)
        return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
    return !m_query || m_query->value(column).isNull();
}

qint64 Statement::integer(int column) const
{
    if (m_stmt)
        return sqlite3_column_int64(m_stmt, column);
    return m_query ? m_query->value(column).toLongLong() : 0;
}

QByteArray Statement::text(int column) const
{
    if (m_stmt) {
        // Text first, then its length: the order SQLite documents for a column it may convert.
        const auto *data = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
        return data ? QByteArray(data, sqlite3_column_bytes(m_stmt, column)) : QByteArray();
    }
    return m_query ? m_query->value(column).toString().toUtf8() : QByteArray();
}

QString Statement::string(int column) const
{
    if (m_stmt) {
        const auto *data = reinterpret_cast<const char *>(sqlite3_column_text(m_stmt, column));
        return data ? QString::fromUtf8(data, sqlite3_column_bytes(m_stmt, column)) : QString();
    }
    return m_query ? m_query->value(column).toString() : QString();
}

} // namespace OpsDeck
