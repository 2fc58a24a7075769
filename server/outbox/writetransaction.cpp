// A scoped write transaction that takes the write lock up front, for the outbox's read-then-write steps.
#include "writetransaction.h"

namespace OpsDeck {

WriteTransaction::WriteTransaction(Database &db)
    : m_db(db)
{
    m_active = db.backend() == Database::Backend::Sqlite ? db.exec(QStringLiteral("BEGIN IMMEDIATE"))
                                                         : db.exec(QStringLiteral("BEGIN"));
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
    if (m_db.exec(QStringLiteral("COMMIT"), error))
        return true;
    m_db.exec(QStringLiteral("ROLLBACK"));
    return false;
}

} // namespace OpsDeck
