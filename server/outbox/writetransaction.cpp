// A scoped write transaction that takes the write lock up front, for the outbox's read-then-write steps.
#include "writetransaction.h"

namespace OpsDeck {

WriteTransaction::WriteTransaction(Database &db)
    : m_db(db)
{
    m_active = db.exec(db.backend() == Database::Backend::Sqlite ? QStringLiteral("BEGIN IMMEDIATE") : QStringLiteral("BEGIN"),
                       &m_problem);
    if (m_active && !db.takeWriteTurn(&m_problem)) {
        db.exec(QStringLiteral("ROLLBACK"));
        m_active = false;
    }
}

WriteTransaction::~WriteTransaction()
{
    if (m_active)
        m_db.exec(QStringLiteral("ROLLBACK"));
}

bool WriteTransaction::commit(Problem *error)
{
    if (!m_active)
        return false;
    m_active = false;
    Problem hookProblem;
    if (!m_db.runBeforeCommit(&hookProblem)) {
        if (error)
            *error = hookProblem;
        m_db.exec(QStringLiteral("ROLLBACK"));
        return false;
    }
    if (m_db.exec(QStringLiteral("COMMIT"), error))
        return true;
    // PostgreSQL ends a transaction whose COMMIT failed (a ROLLBACK then only earns a warning);
    // SQLite keeps it open (a busy or deferred-constraint COMMIT), and it must not linger.
    if (m_db.backend() == Database::Backend::Sqlite)
        m_db.exec(QStringLiteral("ROLLBACK"));
    return false;
}

bool runAgainOnConflict(const std::function<bool(Problem *)> &once, Problem *error, int attempts)
{
    for (int attempt = 1;; ++attempt) {
        Problem problem;
        if (once(&problem))
            return true;
        if (attempt >= attempts || !Database::isConflict(problem)) {
            *error = problem;
            return false;
        }
    }
}

} // namespace OpsDeck
