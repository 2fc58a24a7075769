// The change feed: reads events after a cursor, parks long-polls and pushes to WebSocket watchers.
#pragma once

#include "core/problem.h"
#include "server/http/caller.h"
#include "server/http/response.h"

#include <QByteArray>
#include <QDeadlineTimer>
#include <QObject>
#include <QPointer>

#include <functional>
#include <list>
#include <memory>
#include <optional>

class QHttpServerResponder;
class QTcpSocket;
class QWebSocket;

namespace OpsDeck {

class Database;

struct FeedPage
{
    QByteArrayList events; // each one compact JSON {seq, kind, id, version, op, object, at}
    qint64 lastSeq = 0;    // the cursor to continue from
};

class ChangeFeed final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ChangeFeed)

public:
    ChangeFeed(Database &db, int retention, QObject *parent = nullptr);
    ~ChangeFeed() override;

    qint64 lastSeq();
    qint64 purgedThrough();
    // nullopt with a 410 "gone" problem when `after` is older than the retained feed.
    std::optional<FeedPage> read(const Caller &who, qint64 after, int limit, Problem *error);
    static QByteArray pageBody(const FeedPage &page);
    // What runs after every commit that appended events, for the tests that check the plans: the
    // newest sequence number, a page of `who`'s events (binds after, last, who's audience, limit)
    // and the trim (binds the horizon).
    static const QString &lastSeqSql();
    static QString readSql(const Caller &who);
    static const QString &pruneSql();

    // Answers the responder as soon as an event visible to `who` exists, or after waitMs, with
    // `connection` as its Connection header when not empty; "close" ends the connection once that
    // answer is written.
    void wait(const Caller &who, qint64 after, int limit, int waitMs, QHttpServerResponder &&responder,
              const QByteArray &connection);
    // Answers the long poll parked on this connection now (with the events there are, often
    // none), as when its wait ends: another request came after it on the connection.
    void answerNow(QTcpSocket *socket);
    // Sends every event after `after` (nullopt: from now) as one text message each.
    void watch(std::unique_ptr<QWebSocket> socket, const Caller &who, std::optional<qint64> after);

    // Asked before waiters and watchers are served: false ends a caller's watch (close code 4401)
    // or long poll (401), as when its token is revoked after the connection began.
    void setCallerCheck(std::function<bool(const Caller &)> check) { m_callerCheck = std::move(check); }

    // After a commit that appended events: wakes waiters and watchers once per event-loop turn,
    // and trims the feed to its retention.
    void notifyAppended();
    void closeAll();

    int waiterCount() const { return int(m_waiters.size()); }
    int watcherCount() const { return int(m_watchers.size()); }

Q_SIGNALS:
    void appended(qint64 seq);

private:
    struct Waiter;
    struct Watcher;
    void flush();
    void expire();
    void answer(Waiter &waiter, const FeedPage &page);
    void respond(Waiter &waiter, Response response);
    // Trims the feed to its retention, in batches: `last` is the newest sequence number.
    void prune(qint64 last);

    Database &m_db;
    int m_retention;
    // Events past the retention before a trim: the store commits thousands of times a second,
    // and a trim each time would be a write transaction on this (the HTTP) thread each time.
    qint64 m_pruneBatch;
    qint64 m_purgedSeen = -1; // purged_through as last read; -1: not read yet
    bool m_flushQueued = false;
    std::list<std::unique_ptr<Waiter>> m_waiters;
    std::list<std::unique_ptr<Watcher>> m_watchers;
    std::function<bool(const Caller &)> m_callerCheck;
};

} // namespace OpsDeck
