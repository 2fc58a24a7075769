// For tests that race a transaction on another connection against the code under test (PostgreSQL).
#pragma once

#include <atomic>

class QSqlQuery;

namespace OpsDeck::Test {

// Polls on the holding transaction's connection until another backend waits for one of the locks
// it holds: the code under test has reached a row the holder wrote or locked, and the holder may
// commit. False after 20 s, or as soon as `abandon` (when given) is set: the code under test
// finished without waiting.
bool untilAnotherWaitsForMyLock(QSqlQuery &q, const std::atomic<bool> *abandon = nullptr);

} // namespace OpsDeck::Test
