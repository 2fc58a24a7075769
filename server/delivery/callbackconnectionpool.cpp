// Keep-alive connections to one callback target, with a cap and a queue of waiting requests.
#include "callbackconnectionpool.h"

#include <QPointer>

#include <algorithm>

namespace OpsDeck {

CallbackConnectionPool::CallbackConnectionPool(const CallbackConnection::Target &target, int maxConnections,
                                               qsizetype keepBodyBytes, QObject *parent)
    : QObject(parent)
    , m_target(target)
    , m_maxConnections(qMax(1, maxConnections))
    , m_keepBodyBytes(keepBodyBytes)
{
}

void CallbackConnectionPool::submit(quint64 ticket, const QByteArray &request)
{
    Q_ASSERT(ticket != 0);
    m_queue.push_back({ticket, request, false});
    pump();
}

void CallbackConnectionPool::cancel(quint64 ticket)
{
    const auto waiting = std::find_if(m_queue.begin(), m_queue.end(),
                                      [ticket](const Request &request) { return request.ticket == ticket; });
    if (waiting != m_queue.end()) {
        m_queue.erase(waiting);
        return;
    }
    const auto slot = std::find_if(m_slots.begin(), m_slots.end(),
                                   [ticket](const Slot &candidate) { return candidate.request.ticket == ticket; });
    if (slot == m_slots.end())
        return;
    remove(slot);
    pump();
}

bool CallbackConnectionPool::mayHaveReached(quint64 ticket) const
{
    const auto slot = std::find_if(m_slots.begin(), m_slots.end(),
                                   [ticket](const Slot &candidate) { return candidate.request.ticket == ticket; });
    if (slot != m_slots.end())
        return slot->request.retried || slot->connection->hasWritten();
    const auto waiting = std::find_if(m_queue.begin(), m_queue.end(),
                                      [ticket](const Request &request) { return request.ticket == ticket; });
    return waiting != m_queue.end() && waiting->retried;
}

const HttpResponse *CallbackConnectionPool::responseSoFar(quint64 ticket) const
{
    const auto slot = std::find_if(m_slots.begin(), m_slots.end(),
                                   [ticket](const Slot &candidate) { return candidate.request.ticket == ticket; });
    return slot == m_slots.end() ? nullptr : slot->connection->responseSoFar();
}

void CallbackConnectionPool::setMaxConnections(int maxConnections)
{
    // Lowering the cap closes nothing: busy connections finish, and only opening new ones waits.
    m_maxConnections = qMax(1, maxConnections);
    pump();
}

void CallbackConnectionPool::closeIdle(qint64 idleMs)
{
    for (auto it = m_slots.begin(); it != m_slots.end();) {
        if (it->request.ticket == 0 && it->connection->idleMs() >= idleMs)
            it = remove(it);
        else
            ++it;
    }
}

void CallbackConnectionPool::closeAll()
{
    m_queue.clear();
    while (!m_slots.empty())
        remove(std::prev(m_slots.end()));
}

void CallbackConnectionPool::pump()
{
    while (!m_queue.empty()) {
        Request &next = m_queue.front();
        // The most recently used idle connection: the others age out and get closed.
        auto slot = m_slots.end();
        for (auto it = m_slots.rbegin(); it != m_slots.rend(); ++it) {
            if (it->request.ticket == 0) {
                slot = std::prev(it.base());
                break;
            }
        }
        // A retry goes out on a new connection, making room by closing an idle one if need be.
        if (slot != m_slots.end() && next.retried) {
            remove(slot);
            slot = m_slots.end();
        }
        if (slot == m_slots.end()) {
            if (int(m_slots.size()) >= m_maxConnections)
                return;
            m_slots.push_back({open(), {}});
            slot = std::prev(m_slots.end());
        }
        slot->request = std::move(next);
        m_queue.pop_front();
        // Only a reused connection's request may be sent again; a fresh one's bytes are not kept.
        const QByteArray bytes = slot->connection->isReused() ? slot->request.bytes : std::exchange(slot->request.bytes, {});
        slot->connection->send(bytes);
    }
}

CallbackConnection *CallbackConnectionPool::open()
{
    auto *connection = new CallbackConnection(m_target, m_keepBodyBytes, this);
    connect(connection, &CallbackConnection::responded, this,
            [this, connection](const HttpResponse &response, bool reusable) { onResponded(connection, response, reusable); });
    connect(connection, &CallbackConnection::failed, this,
            [this, connection](const QString &errorClass, const QString &message, bool retryable) {
                onFailed(connection, errorClass, message, retryable);
            });
    connect(connection, &CallbackConnection::closedWhileIdle, this, [this, connection] { onClosedWhileIdle(connection); });
    return connection;
}

std::vector<CallbackConnectionPool::Slot>::iterator CallbackConnectionPool::find(const CallbackConnection *connection)
{
    return std::find_if(m_slots.begin(), m_slots.end(),
                        [connection](const Slot &slot) { return slot.connection == connection; });
}

std::vector<CallbackConnectionPool::Slot>::iterator CallbackConnectionPool::remove(std::vector<Slot>::iterator slot)
{
    // deleteLater: the connection may be the one whose signal brought us here.
    slot->connection->disconnect(this);
    slot->connection->close();
    slot->connection->deleteLater();
    return m_slots.erase(slot);
}

void CallbackConnectionPool::onResponded(CallbackConnection *connection, const HttpResponse &response, bool reusable)
{
    const auto slot = find(connection);
    if (slot == m_slots.end())
        return;
    const quint64 ticket = slot->request.ticket;
    if (reusable)
        slot->request = {};
    else
        remove(slot);
    // The receiver may delete us; only then is `self` null.
    const QPointer<CallbackConnectionPool> self(this);
    emit responded(ticket, response);
    if (self)
        pump();
}

void CallbackConnectionPool::onFailed(CallbackConnection *connection, const QString &errorClass, const QString &message,
                                      bool retryable)
{
    const auto slot = find(connection);
    if (slot == m_slots.end())
        return;
    Request request = std::move(slot->request);
    remove(slot);
    if (retryable && !request.retried && !request.bytes.isEmpty()) {
        request.retried = true;
        m_queue.push_front(std::move(request));
        pump();
        return;
    }
    const QPointer<CallbackConnectionPool> self(this);
    emit failed(request.ticket, errorClass, message);
    if (self)
        pump();
}

void CallbackConnectionPool::onClosedWhileIdle(CallbackConnection *connection)
{
    const auto slot = find(connection);
    if (slot != m_slots.end())
        remove(slot);
    pump();
}

} // namespace OpsDeck
