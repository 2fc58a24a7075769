// A scoped write transaction that takes the write lock up front, for the outbox's read-then-write steps.
#pragma once

#include "server/storage/database.h"

#include <functional>

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

// Runs `once`, a whole transaction, again while PostgreSQL rolls it back as a deadlock or
// serialization victim (rolled back whole, so running it from its start is safe), at most
// `attempts` times in all. False with the last problem otherwise.
bool runAgainOnConflict(const std::function<bool(Problem *)> &once, Problem *error, int attempts = 3);

} // namespace OpsDeck
