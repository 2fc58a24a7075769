// A scoped transaction: rolled back unless committed.
#include "transaction.h"

namespace OpsDeck {

Transaction::Transaction(Database &db)
    : m_db(db)
    , m_active(db.begin())
{
}

Transaction::~Transaction()
{
    if (m_active)
        m_db.rollback();
}

bool Transaction::commit()
{
    if (!m_active)
        return false;
    m_active = false;
    if (m_db.commit())
        return true;
    m_db.rollback();
    return false;
}

} // namespace OpsDeck
