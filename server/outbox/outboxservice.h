// Runs the delivery worker in its own thread and connects it to the control plane's feed.
#pragma once

#include "core/problem.h"
#include "server/serveroptions.h"

#include <QObject>
#include <QPointer>

class QThread;

namespace OpsDeck {

class ChangeFeed;
class Database;
class DeliveryWorker;
class WorkerHealth;

class OutboxService final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(OutboxService)

public:
    // feed and health are not owned; they must outlive stop(). health may be null.
    OutboxService(const ServerOptions &options, ChangeFeed &feed, WorkerHealth *health = nullptr,
                  QObject *parent = nullptr);

    // Checks that the outbox's tables are there (schema migration 2); Database::migrate() creates
    // them, so this is only a guard for callers that open a database themselves.
    static bool prepare(Database &db, Problem *error);
    ~OutboxService() override;

    void start();
    // Stops the worker and joins its thread; idempotent.
    void stop();
    // A new outbox row was committed (any feed event may be one): wake the worker.
    void wake();

    QString lastError() const { return m_lastError; }

private:
    void onWorkerFailed(const QString &detail);
    void onWorkerRecovered();

    ServerOptions m_options;
    ChangeFeed &m_feed;
    QThread *m_thread = nullptr;          // child
    QPointer<DeliveryWorker> m_worker;    // lives in m_thread, deleted when it finishes
    WorkerHealth *m_health = nullptr;     // not owned
    QString m_lastError;
};

} // namespace OpsDeck
