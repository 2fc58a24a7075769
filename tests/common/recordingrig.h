// A scratch outbox for the recording and claim tests: a migrated database with one endpoint's
// instances and their due deliveries, claims, and outcomes as a worker would record them.
#pragma once

#include "testdatabase.h"

#include "server/outbox/deliveryrepository.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QChar>
#include <QList>
#include <QString>

#include <memory>

namespace OpsDeck::Test {

// The worker the rig claims and records as.
inline const QString RecordingOwner = QStringLiteral("w-test");

// The first column of the first row of `sql`: -1 (scalar) or "<none>" (text) when there is none.
qint64 scalar(Database &db, const QString &sql);
QString text(Database &db, const QString &sql);

class RecordingRig final
{
public:
    // The schema on a scratch database; empty or why not.
    QString open();

    Database &db() { return *m_db; }
    Journal &journal() { return *m_journal; }
    DeliveryRepository &repository() { return *m_repo; }

    // One endpoint, `count` instances with one due PENDING delivery each (due at `at`, or now).
    // With `from` > 0, more of them on the endpoint already there, named on from `from`.
    // The caller checks QTest::currentTestFailed().
    void seed(int count, int from = 0, const QString &at = QString());
    QList<DeliveryTarget> claimAll(int limit);
    // 'D' delivered, 'R' failed and retried later, 'G' answered 410 Gone (retried, endpoint disabled).
    static AttemptRecord outcome(const DeliveryTarget &target, QChar kind);

    ~RecordingRig();

private:
    std::unique_ptr<TestDatabase> m_tdb;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<Journal> m_journal;
    std::unique_ptr<DeliveryRepository> m_repo;
};

} // namespace OpsDeck::Test
