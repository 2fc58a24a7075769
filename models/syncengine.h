// Keeps one ResourceModel per kind in step with the server: cache, paged list, then the change feed.
#pragma once

#include "connectionstatus.h"
#include "core/problem.h"
#include "pagereader.h"
#include "resourcemodel.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QThread>
#include <QTimer>

#include <vector>

class QWebSocket;

namespace OpsDeck {

class ApiClient;
class ApiReply;
class Cache;
struct ApiResult;

// start(): rows from the cache first (if any), then either resume the change feed from the
// cursor stored in the cache, or list every kind page by page and watch from the sequence taken
// just before listing. The feed comes over a WebSocket (GET /api/v1/watch), or by long-polling
// GET /api/v1/events when WebSockets do not get through. 410 Gone (a cursor older than the
// retained feed, or a server that lost its feed) lists everything again. A lost connection is
// retried with capped, jittered exponential backoff; the status says live / reconnecting /
// offline as of the last contact.
class SyncEngine final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(SyncEngine)

public:
    // client is required; cache may be null (no offline rows, always a full list). Neither is owned.
    SyncEngine(ApiClient *client, Cache *cache, QObject *parent = nullptr);
    ~SyncEngine() override;

    // One model per resource kind, owned by the engine, alive as long as it is.
    ResourceModel *model(const QString &kindName) const;
    QList<ResourceModel *> models() const;
    ConnectionStatus *status() const { return m_status; }
    qint64 cursor() const { return m_cursor; }

    // Kinds to list and watch (default: every kind of resourceKinds()). Before start().
    void setKinds(const QStringList &kindNames);
    void setPageSize(int items) { m_pageSize = items; }
    void setWebSocketEnabled(bool enabled) { m_webSocketEnabled = enabled; }
    void setLongPollWait(int seconds) { m_longPollWait = seconds; }
    // A WebSocket whose ping goes unanswered for this long is taken for dead (half-open TCP).
    void setPingInterval(int ms) { m_pingTimer.setInterval(ms); }
    // Reconnect delays: base * 2^n, capped, each drawn in [50%, 100%] of that.
    void setBackoff(int baseMs, int maxMs);
    // A server that restarts is back within seconds: the console should be live again about as soon,
    // while the jitter still spreads a thousand consoles' attempts over half the cap.
    static constexpr int kDefaultBackoffBaseMs = 500;
    static constexpr int kDefaultBackoffMaxMs = 4000;
    // The kind on screen: its cached rows are loaded and its pages listed before the others'.
    // Default "instances", the view the console opens on. Takes effect at the next start/relist.
    void setPriorityKind(const QString &kindName) { m_priorityKind = kindName; }
    QString priorityKind() const { return m_priorityKind; }

    void start();
    void stop();
    // Lists every kind again now (also what 410 does).
    void relist(const QString &reason = {});
    // A mutation's answer carries the new object: show it now instead of when its event arrives
    // (the event then changes nothing: same version).
    void apply(const QString &kindName, const QJsonObject &object);

signals:
    // Rows of a kind received so far while listing it (after each page).
    void listProgress(const QString &kindName, int rows);
    // A kind was listed in full (first sync or relist).
    void listed(const QString &kindName, int rows);
    // Every kind was listed; the feed is watched from seq.
    void synced(qint64 seq);
    void relisting(const QString &reason);
    // Change-feed events applied to the models in one batch.
    void eventsApplied(int count, qint64 seq);
    // Something the user should see (401, a server error while listing, ...).
    void problem(const OpsDeck::Problem &problem);

private:
    void onCacheRows(const QString &kind, const QList<QJsonObject> &rows, bool last);
    void onCacheCursor(qint64 seq);
    // The kinds without feed events (syncenginetails.cpp): where the cache says the last run
    // left off, and a read of each from there.
    void onCacheTailCursors(const QHash<QString, QString> &cursors);
    void readTails();
    void onCacheRebuilt(const QString &reason);
    void useCacheCursor(qint64 seq);
    void feedCacheBacklog();
    QStringList kindsInOrder() const;
    void beginListing(const QString &reason);
    void listKinds();
    void onPageRead(quint64 generation, const OpsDeck::ListPage &page);
    void onPageFailed(quint64 generation, const QString &kind, const OpsDeck::ApiResult &result);
    void finishKind(const QString &kind);
    void finishListing();
    void cancelReading();
    void watch();
    void openWebSocket();
    void onWebSocketMessage(const QString &message);
    void onWebSocketClosed();
    void longPoll();
    void onLongPoll(const ApiResult &result);
    void queueEvent(const QJsonObject &event);
    void flushEvents();
    void failed(const QString &error);
    void setCursor(qint64 seq);
    // Keeps where reading `kind` (one without feed events) goes on, here and in the cache.
    void setTailCursor(const QString &kind, const QString &cursor);
    void scheduleTails();
    void fetchTail(const QString &kind);

    ApiClient *m_client; // not owned
    QPointer<Cache> m_cache; // not owned
    ConnectionStatus *m_status; // child
    QHash<QString, ResourceModel *> m_models; // children, by kind name
    QStringList m_kinds;
    QString m_priorityKind = QStringLiteral("instances");

    int m_pageSize = 1000;
    bool m_webSocketEnabled = true;
    bool m_webSocketWorks = true;   // false once it failed where long-polling then worked
    bool m_webSocketConnected = false;
    int m_longPollWait = 25;
    int m_backoffBaseMs = kDefaultBackoffBaseMs;
    int m_backoffMaxMs = kDefaultBackoffMaxMs;
    int m_failures = 0;

    bool m_running = false;
    quint64 m_generation = 0;       // bumps on start/stop/relist: answers to older requests are dropped
    qint64 m_cursor = -1;
    int m_cacheKindsPending = 0;
    bool m_cacheCursorRead = false; // the cache's rows and cursor were taken for this start
    // Cached rows after the first chunk go to the models one chunk per event-loop turn, so the
    // first screenful is laid out and painted before the rest is encoded; the cursor waits for them.
    bool m_firstCacheChunkShown = false;
    QList<QPair<QString, QList<QJsonObject>>> m_cacheBacklog;
    qint64 m_backlogCursor = -2;    // the cursor that arrived while rows were still waiting; -2 none
    QTimer m_cacheFeedTimer;

    // Listing state
    QStringList m_listQueue;
    qint64 m_listSeq = -1;
    std::vector<qint64> m_seen;     // ids of the kind being listed, to drop vanished rows afterwards
    bool m_firstPage = true;
    // Reads the list pages on m_readerThread (the requests' chain never waits for this thread).
    PageReader *m_reader;           // lives on m_readerThread; deleted there when it finishes
    QThread m_readerThread;

    // Kinds without feed events (audit) are followed by re-reading from the cursor of their last
    // page whenever other events arrive, and at a start that resumes the feed (the cache keeps the
    // cursors): the server's list cursor is reused, never made up.
    QHash<QString, QString> m_tailCursor;
    QStringList m_tailQueue;
    QPointer<ApiReply> m_tailRequest;
    QTimer m_tailTimer;
    bool m_tailAgain = false;       // events arrived while a tail read was in flight

    QPointer<ApiReply> m_request;   // the list page or long-poll in flight
    QWebSocket *m_socket = nullptr; // child while watching over a WebSocket
    QTimer m_reconnectTimer;
    QTimer m_pingTimer;
    bool m_awaitingPong = false;    // a ping went out and no pong came back yet

    QList<QJsonObject> m_pendingEvents;
    bool m_flushQueued = false;
};

} // namespace OpsDeck
