// Copies a SQLite database's write-ahead log back into the database file, on a thread of its own.
#pragma once

#include "core/problem.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <chrono>
#include <memory>

class QThread;

namespace OpsDeck {

class WalCheckpointRunner;

// SQLite checkpoints on the connection whose commit makes the log long (every 1000 pages): that
// commit then also copies the pages into the database file and syncs it, several milliseconds
// the committing thread waits. The server turns that off on its connections (the HTTP thread's
// and the outbox store's) and has this checkpoint beside them instead, passively: that never
// blocks a writer or a reader, and the log starts over from its beginning once everything in it
// has been copied. While nothing is written it looks up to 16 times less often.
//
// A writer that keeps writing never lets a passive checkpoint catch up (new frames land while it
// copies), so the log would only grow: 50,000 deliveries in a row left 277 MB. Once the log holds
// `restartFrames` frames, the checkpointer copies the few frames the passive pass left and holds
// writers off until the readers are done with the log (at most 100 ms; if they are not, it tries
// again on the next tick), so the next commit starts the log over. How long the log gets before
// that depends on the disk (a sync of 200 ms lets the writer add that long's commits); the file
// is cut back when it starts over (Database::SqliteLogSizeLimit).
class WalCheckpointer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(WalCheckpointer)

public:
    // `databaseUrl` must name a SQLite database (sqlite://...).
    static constexpr qint64 DefaultRestartFrames = 4096; // 16 MiB of 4 KiB pages

    WalCheckpointer(QString databaseUrl, std::chrono::milliseconds interval,
                    qint64 restartFrames = DefaultRestartFrames, QObject *parent = nullptr);
    ~WalCheckpointer() override;

    // Opens the checkpointer's connection in its thread and starts checkpointing.
    bool start(Problem *error);
    // One last checkpoint, then the thread ends. Also done by the destructor.
    void stop();

    bool isRunning() const { return m_runner != nullptr; }

    // What the last checkpoint found, from any thread: the frames in the log and how many of them
    // are in the database file now (all of them: the next commit starts the log over), and how
    // often a long log was made to start over.
    struct Progress
    {
        qint64 checkpoints = 0;
        qint64 logFrames = 0;
        qint64 copiedFrames = 0;
        qint64 restarts = 0;
    };
    Progress progress() const;

    struct Counters
    {
        std::atomic<qint64> checkpoints{0};
        std::atomic<qint64> logFrames{0};
        std::atomic<qint64> copiedFrames{0};
        std::atomic<qint64> restarts{0};
    };

private:
    QString m_url;
    std::chrono::milliseconds m_interval;
    qint64 m_restartFrames;
    std::shared_ptr<Counters> m_counters = std::make_shared<Counters>();
    QThread *m_thread = nullptr;
    WalCheckpointRunner *m_runner = nullptr; // lives in m_thread
};

} // namespace OpsDeck
