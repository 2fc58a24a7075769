// Keep-alive connections to one callback target, with a cap and a queue of waiting requests.
#pragma once

#include "callbackconnection.h"

#include <QObject>

#include <deque>
#include <vector>

namespace OpsDeck {

// The sender keeps one pool per (scheme, vetted address, port, Host, isolation key). A request
// takes an idle connection, else opens one while fewer than maxConnections are open, else waits
// in order. Pools share nothing, so requests hanging in one never hold up another.
//
// A request that fails on a reused connection before any byte of a response is sent again once,
// on a new connection: that is how a keep-alive connection the server closed while we wrote
// fails, and the server did not process it. (It cannot be told apart from a server that read the
// request and then died without answering: such a rare duplicate is what the at-least-once
// delivery contract tolerates.) A fresh connection is never retried.
class CallbackConnectionPool final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CallbackConnectionPool)

public:
    CallbackConnectionPool(const CallbackConnection::Target &target, int maxConnections, qsizetype keepBodyBytes,
                           QObject *parent = nullptr);

    // Exactly one of responded() or failed() follows for `ticket`, unless cancelled first; never
    // from inside submit().
    void submit(quint64 ticket, const QByteArray &request);
    // Forgets a waiting request, or hangs up the connection carrying it. No signal follows.
    void cancel(quint64 ticket);
    // Some bytes of `ticket`'s request may have reached the target: it is on a connection that
    // wrote it, or is being sent again after a kept-alive connection failed under it. False while
    // it waits for a connection or its connection is still being opened.
    bool mayHaveReached(quint64 ticket) const;
    // CallbackConnection::responseSoFar() of the connection carrying `ticket`; null when none does.
    const HttpResponse *responseSoFar(quint64 ticket) const;
    void setMaxConnections(int maxConnections);
    // Closes connections idle for at least `idleMs`.
    void closeIdle(qint64 idleMs);
    // Hangs up every connection and forgets every waiting request; no signal follows.
    void closeAll();

    int connections() const { return int(m_slots.size()); }
    int waiting() const { return int(m_queue.size()); }
    bool isUnused() const { return m_slots.empty() && m_queue.empty(); }

signals:
    void responded(quint64 ticket, const OpsDeck::HttpResponse &response);
    void failed(quint64 ticket, const QString &errorClass, const QString &message);

private:
    struct Request
    {
        quint64 ticket = 0;
        QByteArray bytes;
        bool retried = false;
    };
    struct Slot
    {
        CallbackConnection *connection = nullptr; // child
        Request request;                          // ticket 0: idle
    };

    void pump();
    CallbackConnection *open();
    std::vector<Slot>::iterator find(const CallbackConnection *connection);
    std::vector<Slot>::iterator remove(std::vector<Slot>::iterator slot);
    void onResponded(CallbackConnection *connection, const HttpResponse &response, bool reusable);
    void onFailed(CallbackConnection *connection, const QString &errorClass, const QString &message, bool retryable);
    void onClosedWhileIdle(CallbackConnection *connection);

    CallbackConnection::Target m_target;
    int m_maxConnections;
    qsizetype m_keepBodyBytes;
    std::vector<Slot> m_slots;
    std::deque<Request> m_queue;
};

} // namespace OpsDeck
