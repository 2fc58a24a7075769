// The change feed: reads events after a cursor, parks long-polls and pushes to WebSocket watchers.
#include "changefeed.h"

#include "server/http/httpserver.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QHttpServerResponder>
#include <QSqlQuery>
#include <QTcpSocket>
#include <QTimer>
#include <QWebSocket>

namespace OpsDeck {

struct ChangeFeed::Waiter
{
    Caller caller;
    qint64 after = 0;
    int limit = 100;
    QDeadlineTimer deadline;
    std::unique_ptr<QHttpServerResponder> responder;
    QPointer<QTcpSocket> socket;
    QByteArray connection; // the answer's Connection header: "close" ends the connection with it
};

struct ChangeFeed::Watcher
{
    Caller caller;
    qint64 after = 0;
    std::unique_ptr<QWebSocket> socket;
};

ChangeFeed::ChangeFeed(Database &db, int retention, QObject *parent)
    : QObject(parent)
    , m_db(db)
    , m_retention(qMax(1, retention))
    , m_pruneBatch(qMax(1, m_retention / 100))
{
    // One timer for every parked long-poll: deadlines are checked a few times a second.
    auto *timer = new QTimer(this);
    timer->setInterval(100);
    connect(timer, &QTimer::timeout, this, &ChangeFeed::expire);
    timer->start();
}

ChangeFeed::~ChangeFeed()
{
    closeAll();
}

const QString &ChangeFeed::lastSeqSql()
{
    // One statement: this runs after every commit that appended events.
    static const QString sql = QStringLiteral(
        "SELECT COALESCE((SELECT MAX(seq) FROM events), 0), COALESCE((SELECT purged_through FROM feed_state WHERE id = 1), 0)");
    return sql;
}

QString ChangeFeed::readSql(const Caller &who)
{
    return QStringLiteral("SELECT seq, kind, object_id, version, op, object, at FROM events WHERE seq > ? AND seq <= ? AND ")
           + Journal::audienceFilter(who) + QStringLiteral(" ORDER BY seq LIMIT ?");
}

const QString &ChangeFeed::pruneSql()
{
    static const QString sql = QStringLiteral("DELETE FROM events WHERE seq <= ?");
    return sql;
}

qint64 ChangeFeed::lastSeq()
{
    QSqlQuery &q = m_db.query(lastSeqSql());
    qint64 seq = 0;
    if (q.exec() && q.next())
        seq = qMax(q.value(0).toLongLong(), q.value(1).toLongLong());
    q.finish();
    return seq;
}

qint64 ChangeFeed::purgedThrough()
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT purged_through FROM feed_state WHERE id = 1"));
    qint64 seq = 0;
    if (q.exec() && q.next())
        seq = q.value(0).toLongLong();
    q.finish();
    return seq;
}

std::optional<FeedPage> ChangeFeed::read(const Caller &who, qint64 after, int limit, Problem *error)
{
    const qint64 horizon = purgedThrough();
    // Taken before reading so that the cursor never skips an event committed meanwhile.
    const qint64 last = lastSeq();
    if (after < horizon || after > last) {
        if (error)
            *error = Problem::make(410, QStringLiteral("gone"), QStringLiteral("Cursor no longer valid"),
                                   QStringLiteral("events after %1 are not retained (retained: %2..%3); list again")
                                       .arg(after).arg(horizon + 1).arg(last));
        return std::nullopt;
    }
    FeedPage page;
    page.lastSeq = after;
    QSqlQuery &q = m_db.query(readSql(who));
    q.addBindValue(after);
    q.addBindValue(last);
    Journal::bindAudience(q, who);
    q.addBindValue(limit);
    if (!q.exec()) {
        if (error)
            *error = Database::sqlProblem(q);
        q.finish();
        return std::nullopt;
    }
    while (q.next()) {
        QByteArray e;
        e.reserve(256);
        e += "{\"seq\":" + QByteArray::number(q.value(0).toLongLong());
        e += ",\"kind\":\"" + q.value(1).toString().toUtf8();
        e += "\",\"id\":" + QByteArray::number(q.value(2).toLongLong());
        e += ",\"version\":" + QByteArray::number(q.value(3).toLongLong());
        e += ",\"op\":\"" + q.value(4).toString().toUtf8();
        e += "\",\"object\":" + q.value(5).toString().toUtf8();
        e += ",\"at\":\"" + q.value(6).toString().toUtf8() + "\"}";
        page.lastSeq = q.value(0).toLongLong();
        page.events.append(e);
    }
    q.finish();
    // Fewer than asked: nothing visible remains up to `last`, so the caller may continue from it.
    if (page.events.size() < limit)
        page.lastSeq = last;
    return page;
}

QByteArray ChangeFeed::pageBody(const FeedPage &page)
{
    QByteArray body = "{\"events\":[";
    body += page.events.join(',');
    body += "],\"last_seq\":" + QByteArray::number(page.lastSeq) + "}";
    return body;
}

void ChangeFeed::wait(const Caller &who, qint64 after, int limit, int waitMs, QHttpServerResponder &&responder,
                      const QByteArray &connection)
{
    auto w = std::make_unique<Waiter>();
    w->caller = who;
    w->after = after;
    w->limit = limit;
    w->deadline = QDeadlineTimer(waitMs);
    w->responder = std::make_unique<QHttpServerResponder>(std::move(responder));
    w->socket = w->responder->socket();
    w->connection = connection;
    m_waiters.push_back(std::move(w));
}

void ChangeFeed::answerNow(QTcpSocket *socket)
{
    for (auto it = m_waiters.begin(); it != m_waiters.end(); ++it) {
        Waiter &w = **it;
        if (w.socket != socket)
            continue;
        Problem problem;
        const auto page = read(w.caller, w.after, w.limit, &problem);
        if (page)
            answer(w, *page);
        else
            respond(w, Response::problem(problem));
        m_waiters.erase(it);
        return;
    }
}

void ChangeFeed::watch(std::unique_ptr<QWebSocket> socket, const Caller &who, std::optional<qint64> after)
{
    auto w = std::make_unique<Watcher>();
    w->caller = who;
    w->after = after ? *after : lastSeq();
    QWebSocket *raw = socket.get();
    w->socket = std::move(socket);
    connect(raw, &QWebSocket::disconnected, this, [this, raw] {
        for (auto it = m_watchers.begin(); it != m_watchers.end(); ++it) {
            if ((*it)->socket.get() == raw) {
                // Deleted later: we are inside one of its signals.
                (*it)->socket.release()->deleteLater();
                m_watchers.erase(it);
                return;
            }
        }
    });
    m_watchers.push_back(std::move(w));
    if (after)
        notifyAppended();
}

void ChangeFeed::notifyAppended()
{
    if (m_flushQueued)
        return;
    m_flushQueued = true;
    QTimer::singleShot(0, this, &ChangeFeed::flush);
}

void ChangeFeed::answer(Waiter &w, const FeedPage &page)
{
    respond(w, Response::text(200, pageBody(page), QByteArrayLiteral("application/json")));
}

void ChangeFeed::respond(Waiter &w, Response response)
{
    if (!w.socket || w.socket->state() != QAbstractSocket::ConnectedState)
        return;
    if (!w.connection.isEmpty())
        response.withHeader(QByteArrayLiteral("Connection"), w.connection);
    HttpServer::write(*w.responder, response);
    if (w.connection == "close")
        w.socket->disconnectFromHost();
}

void ChangeFeed::flush()
{
    m_flushQueued = false;
    for (auto it = m_waiters.begin(); it != m_waiters.end();) {
        Waiter &w = **it;
        if (!w.socket) {
            it = m_waiters.erase(it);
            continue;
        }
        if (m_callerCheck && !m_callerCheck(w.caller)) {
            respond(w, Response::problem(Problem::make(401, QStringLiteral("unauthenticated"), QStringLiteral("Unauthenticated"),
                                                       QStringLiteral("the token was revoked"))));
            it = m_waiters.erase(it);
            continue;
        }
        Problem problem;
        const auto page = read(w.caller, w.after, w.limit, &problem);
        if (!page) {
            respond(w, Response::problem(problem));
            it = m_waiters.erase(it);
        } else if (!page->events.isEmpty()) {
            answer(w, *page);
            it = m_waiters.erase(it);
        } else {
            w.after = page->lastSeq;
            ++it;
        }
    }
    for (auto it = m_watchers.begin(); it != m_watchers.end();) {
        // Past it first: closing a socket may end its watch (and erase it) at once.
        Watcher &w = **it++;
        if (!w.socket || w.socket->state() != QAbstractSocket::ConnectedState)
            continue;
        if (m_callerCheck && !m_callerCheck(w.caller)) {
            w.socket->close(QWebSocketProtocol::CloseCode(4401), QStringLiteral("token revoked"));
            continue;
        }
        for (;;) {
            Problem problem;
            const auto page = read(w.caller, w.after, 1000, &problem);
            if (!page) {
                w.socket->close(QWebSocketProtocol::CloseCode(4410), QStringLiteral("gone"));
                break;
            }
            for (const QByteArray &e : page->events)
                w.socket->sendTextMessage(QString::fromUtf8(e));
            w.after = page->lastSeq;
            if (page->events.size() < 1000)
                break;
        }
    }
    const qint64 last = lastSeq();
    prune(last);
    emit appended(last);
}

void ChangeFeed::expire()
{
    for (auto it = m_waiters.begin(); it != m_waiters.end();) {
        Waiter &w = **it;
        if (!w.socket) {
            it = m_waiters.erase(it);
        } else if (w.deadline.hasExpired()) {
            FeedPage empty;
            empty.lastSeq = w.after;
            answer(w, empty);
            it = m_waiters.erase(it);
        } else {
            ++it;
        }
    }
}

void ChangeFeed::prune(qint64 last)
{
    const qint64 horizon = last - m_retention;
    if (m_purgedSeen >= 0 && horizon - m_purgedSeen < m_pruneBatch)
        return;
    // Another replica may have trimmed further meanwhile: never move purged_through back.
    m_purgedSeen = purgedThrough();
    if (horizon <= m_purgedSeen)
        return;
    // On the HTTP thread: a write lock (or PostgreSQL write turn) held elsewhere is not waited
    // for; the next flush tries again.
    bool begun = false;
    {
        const ScopedLockWait noWait(m_db, std::chrono::milliseconds(0));
        begun = m_db.begin();
    }
    if (!begun)
        return;
    QSqlQuery &del = m_db.query(pruneSql());
    del.addBindValue(horizon);
    const bool ok = del.exec();
    del.finish();
    QSqlQuery &upd = m_db.query(QStringLiteral("UPDATE feed_state SET purged_through = ? WHERE id = 1"));
    upd.addBindValue(horizon);
    if (ok && upd.exec() && m_db.commit())
        m_purgedSeen = horizon;
    else
        m_db.rollback();
    upd.finish();
}

void ChangeFeed::closeAll()
{
    for (auto &w : m_waiters) {
        FeedPage empty;
        empty.lastSeq = w->after;
        answer(*w, empty);
    }
    m_waiters.clear();
    for (auto &w : m_watchers) {
        if (w->socket) {
            w->socket->disconnect(this);
            w->socket->close(QWebSocketProtocol::CloseCodeGoingAway);
        }
    }
    m_watchers.clear();
}

} // namespace OpsDeck
