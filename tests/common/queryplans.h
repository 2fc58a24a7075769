// Query-plan readers for the tests that hold hot statements to their indexes, on SQLite and PostgreSQL.
#pragma once

#include "testdatabase.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <utility>

namespace OpsDeck {
class Database;
}

namespace OpsDeck::Test {

class TestDatabase;

// A fresh scratch database, migrated and empty, for initTestCase(): the readers price whole-table
// reads out instead of leaning on row counts, so the plans need no rows. *scratch must outlive *db
// (declare it first); false with *error saying why.
bool openPlanDatabase(std::unique_ptr<TestDatabase> *scratch, std::unique_ptr<Database> *db, QString *error);

// The one timestamp the fixtures' rows are written with, so every statement reads them alike.
inline const QString kAt = QStringLiteral("2026-01-01T00:00:00.000Z");

// The steps of the plan of `sql` (every parameter NULL) that read one of the tables that only grow
// (deliveries, delivery_attempts, events, audit, instances) whole: a bare scan, or a walk of an
// index without a condition, unless that index is partial (its rows are the few still in play, not
// the history). Empty with *failure set when the plan could not be read.
QStringList fullScans(Database &db, const QString &sql, QString *failure);

// The steps of the plan of `sql` that read the table named `alias` other than through a partial
// index. *failure is also set when no step reads `alias`, so a renamed alias cannot pass unread.
QStringList readsBesidePartial(Database &db, const QString &sql, const QString &alias, QString *failure);

// The first column of what `sql` selects with `now` for every parameter, to compare what an old
// statement found with what its replacement finds.
QList<qint64> ids(Database &db, const QString &sql, const QString &now);

// Every spelling of the claim's lease statement for the backend (no endpoint list, busy ones
// left out, only named ones; with and without a cursor), each with a row name that starts with
// `prefix`.
QList<std::pair<QByteArray, QString>> leaseStatements(bool postgres, const char *prefix);

// Milliseconds `run` took, the median of `runs`: printed beside the plans, never asserted on.
double medianMs(int runs, const std::function<void()> &run);

} // namespace OpsDeck::Test
