// Copies a SQLite database's write-ahead log back into the database file, on a thread of its own.
#include "walcheckpointer.h"

#include "database.h"

#include <QSqlQuery>
#include <QThread>
#include <QTimer>

#include <memory>
#include <optional>

namespace OpsDeck {

// The part that lives in the checkpointer's thread, with the connection it opened there.
class WalCheckpointRunner final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(WalCheckpointRunner)

public:
    WalCheckpointRunner(QString url, std::chrono::milliseconds interval, qint64 restartFrames,
                        std::shared_ptr<WalCheckpointer::Counters> counters)
        : m_db(std::move(url))
        , m_counters(std::move(counters))
        , m_restartFrames(restartFrames)
    {
        m_timer.setParent(this);
        m_baseMs = int(std::max<qint64>(1, interval.count()));
        m_timer.setInterval(m_baseMs);
        connect(&m_timer, &QTimer::timeout, this, &WalCheckpointRunner::checkpoint);
    }

    bool open(Problem *error)
    {
        if (!m_db.open(error))
            return false;
        if (m_db.backend() != Database::Backend::Sqlite) {
            *error = Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"),
                                   QStringLiteral("only a SQLite database has a write-ahead log to checkpoint"));
            m_db.close();
            return false;
        }
        // How long a restart may hold writers off while it waits for readers to leave the log.
        if (!m_db.exec(QStringLiteral("PRAGMA busy_timeout=%1").arg(kRestartWaitMs), error)) {
            m_db.close();
            return false;
        }
        m_timer.start();
        return true;
    }

    void close()
    {
        m_timer.stop();
        if (m_db.isOpen())
            checkpoint();
        m_db.close();
    }

private:
    struct Result
    {
        bool busy = true; // kept from finishing: a writer or a reader was in the way
        qint64 log = 0;
        qint64 copied = 0;
    };

    // One checkpoint in `mode`; nullopt when the statement itself failed.
    std::optional<Result> run(const char *mode)
    {
        QSqlQuery q(m_db.connection());
        if (!q.exec(QStringLiteral("PRAGMA wal_checkpoint(%1)").arg(QLatin1String(mode))) || !q.next())
            return std::nullopt;
        return Result{q.value(0).toInt() != 0, q.value(1).toLongLong(), q.value(2).toLongLong()};
    }

    void checkpoint()
    {
        // PASSIVE copies what no reader still needs and waits for nobody. A failure (the file is
        // busy being restored, say) is tried again on the next tick: the log only grows meanwhile.
        std::optional<Result> done = run("PASSIVE");
        if (done) {
            // A log this long means the writer never paused long enough for a passive pass to
            // catch up: copy the rest with writers held off, so the next commit starts it over.
            if (done->log >= m_restartFrames) {
                if (const std::optional<Result> restart = run("RESTART")) {
                    done = restart;
                    if (!restart->busy)
                        ++m_counters->restarts;
                }
            }
            const qint64 log = done->log;
            const qint64 copied = done->copied;
            // Nothing written since the last look: look less often (an idle server need not wake
            // ten times a second), and at the base rate again as soon as there is.
            const bool idle = log == copied && log == m_counters->logFrames.load();
            m_timer.setInterval(idle ? std::min(2 * m_timer.interval(), kIdleFactor * m_baseMs) : m_baseMs);
            m_counters->logFrames = log;
            m_counters->copiedFrames = copied;
            ++m_counters->checkpoints;
        }
    }

    static constexpr int kIdleFactor = 16;
    static constexpr int kRestartWaitMs = 100;

    Database m_db;
    std::shared_ptr<WalCheckpointer::Counters> m_counters;
    qint64 m_restartFrames;
    int m_baseMs = 100;
    QTimer m_timer;
};

WalCheckpointer::WalCheckpointer(QString databaseUrl, std::chrono::milliseconds interval, qint64 restartFrames,
                                 QObject *parent)
    : QObject(parent)
    , m_url(std::move(databaseUrl))
    , m_interval(interval)
    , m_restartFrames(restartFrames)
{
}

WalCheckpointer::~WalCheckpointer()
{
    stop();
}

bool WalCheckpointer::start(Problem *error)
{
    if (m_runner)
        return true;
    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("opsdeck-wal"));
    m_runner = new WalCheckpointRunner(m_url, m_interval, m_restartFrames, m_counters);
    m_runner->moveToThread(m_thread);
    m_thread->start();
    bool opened = false;
    QMetaObject::invokeMethod(
        m_runner, [this, &opened, error] { opened = m_runner->open(error); }, Qt::BlockingQueuedConnection);
    if (!opened)
        stop();
    return opened;
}

WalCheckpointer::Progress WalCheckpointer::progress() const
{
    return Progress{m_counters->checkpoints.load(), m_counters->logFrames.load(), m_counters->copiedFrames.load(),
                    m_counters->restarts.load()};
}

void WalCheckpointer::stop()
{
    if (!m_thread)
        return;
    QMetaObject::invokeMethod(m_runner, &WalCheckpointRunner::close, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
    delete m_runner;
    m_runner = nullptr;
    delete m_thread;
    m_thread = nullptr;
}

} // namespace OpsDeck

#include "walcheckpointer.moc"
