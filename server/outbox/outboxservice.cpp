// Runs the delivery worker in its own thread and connects it to the control plane's feed.
#include "outboxservice.h"

#include "deliveryworker.h"
#include "workerhealth.h"

#include "server/delivery/epolleventdispatcher.h"
#include "server/feed/changefeed.h"
#include "server/storage/database.h"

#include <QDebug>
#include <QThread>

namespace OpsDeck {

OutboxService::OutboxService(const ServerOptions &options, ChangeFeed &feed, WorkerHealth *health, QObject *parent)
    : QObject(parent)
    , m_options(options)
    , m_feed(feed)
    , m_health(health)
{
    if (m_health)
        m_health->setEnabled(true);
}

bool OutboxService::prepare(Database &db, Problem *error)
{
    // The outbox's tables are schema migration 2 now; a migrated database needs nothing more.
    if (db.schemaVersion() >= 2)
        return true;
    if (error)
        *error = Problem::make(500, QStringLiteral("storage-unavailable"), QStringLiteral("Storage unavailable"),
                               QStringLiteral("the database is not migrated (schema version %1)").arg(db.schemaVersion()));
    return false;
}

OutboxService::~OutboxService()
{
    stop();
}

void OutboxService::start()
{
    if (m_thread)
        return;
    m_thread = new QThread(this);
    m_thread->setObjectName(QStringLiteral("opsdeck-send"));
    if (m_options.epollSending)
        EpollEventDispatcher::install(m_thread); // else, or if refused, Qt's own
    auto *worker = new DeliveryWorker(m_options);
    worker->moveToThread(m_thread);
    m_worker = worker;
    connect(m_thread, &QThread::started, worker, &DeliveryWorker::start);
    connect(m_thread, &QThread::finished, worker, &QObject::deleteLater);
    connect(worker, &DeliveryWorker::committed, &m_feed, &ChangeFeed::notifyAppended, Qt::QueuedConnection);
    connect(worker, &DeliveryWorker::failed, this, &OutboxService::onWorkerFailed, Qt::QueuedConnection);
    connect(worker, &DeliveryWorker::recovered, this, &OutboxService::onWorkerRecovered, Qt::QueuedConnection);
    connect(
        worker, &DeliveryWorker::load, this,
        [this](int inFlight, int inFlightAnswering, int waiting, int waitingAnswering, int endpoints, int endpointsAnswering) {
            if (m_health)
                m_health->recordLoad({inFlight, inFlightAnswering, waiting, waitingAnswering, endpoints, endpointsAnswering});
        },
        Qt::QueuedConnection);
    m_thread->start();
}

void OutboxService::stop()
{
    if (!m_thread)
        return;
    if (m_worker)
        QMetaObject::invokeMethod(m_worker.data(), &DeliveryWorker::shutdown, Qt::BlockingQueuedConnection);
    m_thread->quit();
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
}

void OutboxService::wake()
{
    if (m_worker)
        QMetaObject::invokeMethod(m_worker.data(), &DeliveryWorker::wake, Qt::QueuedConnection);
}

void OutboxService::onWorkerFailed(const QString &detail)
{
    // Storage hiccups are retried by the worker on its next poll; /healthz and /metrics show
    // them until a poll cycle goes through again.
    m_lastError = detail;
    if (m_health)
        m_health->recordFailure(detail, QDateTime::currentDateTimeUtc());
    qWarning().noquote() << "delivery worker:" << detail;
}

void OutboxService::onWorkerRecovered()
{
    if (m_health)
        m_health->recordRecovery();
}

} // namespace OpsDeck
