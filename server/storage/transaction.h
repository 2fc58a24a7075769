// A scoped transaction: rolled back unless committed, so every early return is safe.
#pragma once

#include "database.h"

namespace OpsDeck {

class Transaction final
{
public:
    explicit Transaction(Database &db);
    ~Transaction();
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;

    bool isActive() const { return m_active; }
    bool commit();

private:
    Database &m_db;
    bool m_active = false;
};

} // namespace OpsDeck
