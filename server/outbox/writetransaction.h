// A scoped write transaction that takes the write lock up front, for the outbox's read-then-write steps.
#pragma once

#include "server/storage/database.h"

namespace OpsDeck {

// The delivery worker writes from its own connection while the HTTP thread writes from another.
// A SQLite transaction that starts as a reader and later writes fails with SQLITE_BUSY_SNAPSHOT
// (no busy wait) when the other connection committed in between, so on SQLite this begins with
// BEGIN IMMEDIATE and waits for the lock instead. PostgreSQL needs no such care.
class WriteTransaction final
{
public:
    explicit WriteTransaction(Database &db);
    ~WriteTransaction();
    WriteTransaction(const WriteTransaction &) = delete;
    WriteTransaction &operator=(const WriteTransaction &) = delete;

    // False when BEGIN failed: nothing may be written then (it would not be one transaction), and
    // problem() says why.
    bool isActive() const { return m_active; }
    const Problem &problem() const { return m_problem; }
    bool commit(Problem *error = nullptr);

private:
    Database &m_db;
    Problem m_problem;
    bool m_active = false;
};

} // namespace OpsDeck
