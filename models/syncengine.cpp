// The sync engine: cache first, then list or resume, then the change feed, with reconnects.
#include "syncengine.h"

#include "apiclient.h"
#include "cache.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaObject>
#include <QRandomGenerator>
#include <QUrl>
#include <QWebSocket>

#include <algorithm>

namespace OpsDeck {

namespace {

constexpr int kCloseGone = 4410;
constexpr int kCloseUnauthenticated = 4401;
constexpr int kFailuresBeforeOffline = 3;
constexpr int kPingIntervalMs = 30000;
constexpr int kFeedPageLimit = 1000;
// Audit entries trail the events that caused them; one read per burst is enough.
constexpr int kTailDelayMs = 300;

} // namespace

SyncEngine::SyncEngine(ApiClient *client, Cache *cache, QObject *parent)
    : QObject(parent)
    , m_client(client)
    , m_cache(cache)
    , m_status(new ConnectionStatus(this))
    , m_reader(new PageReader)
{
    Q_ASSERT(client);
    m_readerThread.setObjectName(QStringLiteral("opsdeck-pages"));
    m_reader->moveToThread(&m_readerThread);
    connect(&m_readerThread, &QThread::finished, m_reader, &QObject::deleteLater);
    connect(m_reader, &PageReader::pageRead, this, &SyncEngine::onPageRead);
    connect(m_reader, &PageReader::pageFailed, this, &SyncEngine::onPageFailed);
    // The user hears about the reader's certificate and token troubles as about any request's.
    connect(m_reader->client(), &ApiClient::sslErrors, m_client, &ApiClient::sslErrors);
    connect(m_reader->client(), &ApiClient::unauthenticated, m_client, &ApiClient::unauthenticated);
    m_readerThread.start();
    for (const ResourceKind &kind : resourceKinds()) {
        auto *model = new ResourceModel(kind, this);
        model->setObjectName(kind.name);
        // Models are children of the engine: the lookup never outlives what it reads.
        model->setReferenceLookup([this](const QString &kindName, qint64 id) {
            const ResourceModel *m = m_models.value(kindName);
            return m ? m->nameOfId(id) : QString();
        });
        m_models.insert(kind.name, model);
        m_kinds << kind.name;
    }
    if (m_cache) {
        connect(m_cache, &Cache::rowsLoaded, this, &SyncEngine::onCacheRows);
        connect(m_cache, &Cache::tailCursorsLoaded, this, &SyncEngine::onCacheTailCursors);
        connect(m_cache, &Cache::cursorLoaded, this, &SyncEngine::onCacheCursor);
        connect(m_cache, &Cache::cacheRebuilt, this, &SyncEngine::onCacheRebuilt);
    }
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, [this] {
        if (!m_running)
            return;
        if (m_cursor >= 0)
            watch();
        else
            beginListing({});
    });
    m_cacheFeedTimer.setSingleShot(true);
    m_cacheFeedTimer.setInterval(0);
    connect(&m_cacheFeedTimer, &QTimer::timeout, this, &SyncEngine::feedCacheBacklog);
    m_tailTimer.setSingleShot(true);
    m_tailTimer.setInterval(kTailDelayMs);
    connect(&m_tailTimer, &QTimer::timeout, this, &SyncEngine::readTails);
    m_pingTimer.setInterval(kPingIntervalMs);
    connect(&m_pingTimer, &QTimer::timeout, this, [this] {
        if (!m_socket)
            return;
        if (m_awaitingPong) {
            // Nothing came back for a whole interval: the peer is gone without closing.
            m_socket->abort();
            return;
        }
        m_awaitingPong = true;
        m_socket->ping();
    });
}

SyncEngine::~SyncEngine()
{
    stop();
    m_readerThread.quit();
    m_readerThread.wait();
}

ResourceModel *SyncEngine::model(const QString &kindName) const
{
    return m_models.value(kindName);
}

QList<ResourceModel *> SyncEngine::models() const
{
    QList<ResourceModel *> out;
    for (const ResourceKind &kind : resourceKinds())
        out << m_models.value(kind.name);
    return out;
}

void SyncEngine::setKinds(const QStringList &kindNames)
{
    m_kinds.clear();
    for (const QString &name : kindNames) {
        if (m_models.contains(name))
            m_kinds << name;
    }
}

void SyncEngine::setBackoff(int baseMs, int maxMs)
{
    m_backoffBaseMs = std::max(1, baseMs);
    m_backoffMaxMs = std::max(m_backoffBaseMs, maxMs);
}

QStringList SyncEngine::kindsInOrder() const
{
    QStringList kinds = m_kinds;
    const qsizetype at = kinds.indexOf(m_priorityKind);
    if (at > 0)
        kinds.move(at, 0);
    return kinds;
}

void SyncEngine::start()
{
    if (m_running)
        return;
    m_running = true;
    ++m_generation;
    m_failures = 0;
    m_cacheCursorRead = false;
    m_firstCacheChunkShown = false;
    m_status->setState(ConnectionStatus::State::Connecting);
    if (!m_cache) {
        beginListing({});
        return;
    }
    // The worker answers in order: every kind's rows (the one on screen first), then the cursor,
    // which starts the network part; the file's full check runs after that.
    m_cache->open();
    for (const QString &kind : kindsInOrder())
        m_cache->load(kind);
    m_cache->loadCursor();
}

void SyncEngine::stop()
{
    if (!m_running)
        return;
    m_running = false;
    ++m_generation;
    m_reconnectTimer.stop();
    m_pingTimer.stop();
    m_tailTimer.stop();
    m_cacheFeedTimer.stop();
    m_cacheBacklog.clear();
    m_backlogCursor = -2;
    m_tailQueue.clear();
    m_tailAgain = false;
    if (m_tailRequest)
        m_tailRequest->abort();
    if (m_request)
        m_request->abort();
    cancelReading();
    if (m_socket) {
        QWebSocket *socket = m_socket;
        m_socket = nullptr;
        socket->disconnect(this);
        socket->abort();
        socket->deleteLater();
    }
    flushEvents();
    m_status->setState(ConnectionStatus::State::Offline);
}

void SyncEngine::relist(const QString &reason)
{
    if (m_running)
        beginListing(reason);
}

void SyncEngine::apply(const QString &kindName, const QJsonObject &object)
{
    ResourceModel *model = m_models.value(kindName);
    if (!model || !object.value(QLatin1String("id")).isDouble())
        return;
    model->upsert({object});
    if (m_cache)
        m_cache->store(kindName, {object});
}

void SyncEngine::onCacheRows(const QString &kind, const QList<QJsonObject> &rows, bool last)
{
    Q_UNUSED(last)
    if (!m_running || rows.isEmpty() || !m_models.contains(kind))
        return;
    if (!m_firstCacheChunkShown) {
        m_firstCacheChunkShown = true;
        ResourceModel *model = m_models.value(kind);
        model->upsert(rows);
        model->flush();
        return;
    }
    m_cacheBacklog.append({kind, rows});
    if (!m_cacheFeedTimer.isActive())
        m_cacheFeedTimer.start();
}

void SyncEngine::feedCacheBacklog()
{
    if (!m_running || m_cacheBacklog.isEmpty())
        return;
    const auto [kind, rows] = m_cacheBacklog.takeFirst();
    m_models.value(kind)->upsert(rows);
    if (!m_cacheBacklog.isEmpty()) {
        m_cacheFeedTimer.start();
        return;
    }
    if (m_backlogCursor != -2)
        useCacheCursor(std::exchange(m_backlogCursor, -2));
}

void SyncEngine::onCacheCursor(qint64 seq)
{
    if (!m_running)
        return;
    m_cacheCursorRead = true;
    if (!m_cacheBacklog.isEmpty()) {
        m_backlogCursor = seq; // the feed's events must not land before older cached rows
        return;
    }
    useCacheCursor(seq);
}

void SyncEngine::useCacheCursor(qint64 seq)
{
    if (seq >= 0) {
        m_cursor = seq;
        watch();
        // What the kinds without feed events gained while the console was closed.
        scheduleTails();
    } else {
        beginListing({});
    }
}

void SyncEngine::onCacheRebuilt(const QString &reason)
{
    // Damage found by the check after the rows were shown: they and the cursor came from that
    // file, so everything is listed again (rows the server does not list are dropped then).
    // Damage found at open never got that far: the cursor will read as none and list anyway.
    if (m_running && m_cacheCursorRead)
        beginListing(reason);
}

void SyncEngine::beginListing(const QString &reason)
{
    if (!m_running)
        return;
    const quint64 generation = ++m_generation;
    m_reconnectTimer.stop();
    if (m_request)
        m_request->abort();
    cancelReading();
    // The listing brings every row and replaces what the cursor would have resumed.
    m_cacheFeedTimer.stop();
    m_cacheBacklog.clear();
    m_backlogCursor = -2;
    if (m_socket) {
        QWebSocket *socket = m_socket;
        m_socket = nullptr;
        socket->disconnect(this);
        socket->abort();
        socket->deleteLater();
        m_pingTimer.stop();
    }
    if (!reason.isEmpty())
        emit relisting(reason);
    if (m_cache)
        m_cache->saveCursor(-1); // until every kind is listed, the stored rows are not a snapshot
    // The sequence before listing: events after it are replayed by the feed, and replays of
    // what the list already showed are dropped by version.
    RequestOptions options;
    options.maxRetries = 0;
    m_request = m_client->get(QStringLiteral("/events?limit=1"), options);
    connect(m_request, &ApiReply::finished, this, [this, generation](const ApiResult &result) {
        if (generation != m_generation)
            return;
        if (!result.ok()) {
            if (result.status == 401)
                emit problem(*result.problem);
            failed(result.problem ? result.problem->detail : tr("no answer"));
            return;
        }
        m_status->touch();
        m_listSeq = result.object().value(QLatin1String("last_seq")).toInteger(0);
        listKinds();
    });
}

void SyncEngine::listKinds()
{
    m_listQueue = kindsInOrder();
    m_seen.clear();
    m_firstPage = true;
    if (m_listQueue.isEmpty()) {
        finishListing();
        return;
    }
    PageReader *reader = m_reader;
    const quint64 generation = m_generation;
    const ApiClient::Settings settings = m_client->settings();
    const QStringList kinds = m_listQueue;
    const int pageSize = m_pageSize;
    const bool keepTexts = !m_cache.isNull(); // the cache stores the server's text of each row as it is
    QMetaObject::invokeMethod(
        reader,
        [reader, generation, settings, kinds, pageSize, keepTexts] {
            reader->read(generation, settings, kinds, pageSize, keepTexts);
        },
        Qt::QueuedConnection);
}

void SyncEngine::cancelReading()
{
    // Pages of the read being cancelled may still be on their way: their generation is past.
    PageReader *reader = m_reader;
    QMetaObject::invokeMethod(reader, [reader] { reader->cancel(); }, Qt::QueuedConnection);
}

void SyncEngine::onPageRead(quint64 generation, const ListPage &page)
{
    if (generation != m_generation || m_listQueue.isEmpty() || m_listQueue.first() != page.kind)
        return;
    const QString kind = page.kind;
    ResourceModel *model = m_models.value(kind);
    if (resourceKindByName(kind)->feedKind.isEmpty())
        setTailCursor(kind, page.cursor);
    m_status->touch();
    m_seen.insert(m_seen.end(), page.ids.cbegin(), page.ids.cend());
    model->upsert(page.rows);
    if (m_cache) {
        if (m_firstPage)
            m_cache->replaceKind(kind, page.rows, page.texts);
        else
            m_cache->store(kind, page.rows, page.texts);
    }
    m_firstPage = false;
    PageReader *reader = m_reader;
    QMetaObject::invokeMethod(reader, [reader, generation] { reader->pageApplied(generation); }, Qt::QueuedConnection);
    emit listProgress(kind, int(m_seen.size()));
    if (page.next.isEmpty() && generation == m_generation)
        finishKind(kind);
}

void SyncEngine::onPageFailed(quint64 generation, const QString &kind, const ApiResult &result)
{
    if (generation != m_generation)
        return;
    // A kind this server or this role does not offer is simply not synced; the reader goes on.
    if (result.status == 403 || result.status == 404 || result.status == 405) {
        if (!m_listQueue.isEmpty() && m_listQueue.first() == kind) {
            m_listQueue.removeFirst();
            m_seen.clear();
            m_firstPage = true;
        }
        if (m_listQueue.isEmpty())
            finishListing();
        return;
    }
    if (result.status == 401 && result.problem)
        emit problem(*result.problem);
    failed(result.problem ? result.problem->detail : tr("no answer"));
}

void SyncEngine::finishKind(const QString &kind)
{
    // Rows the server no longer lists are gone (deleted while we were away). Pages come in id
    // order, so the ids are sorted already unless a server says otherwise.
    ResourceModel *model = m_models.value(kind);
    model->flush();
    if (!std::is_sorted(m_seen.cbegin(), m_seen.cend()))
        std::sort(m_seen.begin(), m_seen.end());
    m_seen.erase(std::unique(m_seen.begin(), m_seen.end()), m_seen.end());
    QList<qint64> vanished;
    for (qint64 id : model->ids()) {
        if (!std::binary_search(m_seen.cbegin(), m_seen.cend(), id))
            vanished.append(id);
    }
    if (!vanished.isEmpty()) {
        model->remove(vanished);
        if (m_cache)
            m_cache->remove(kind, vanished);
    }
    const int rows = int(m_seen.size());
    m_seen.clear();
    m_firstPage = true;
    m_listQueue.removeFirst();
    emit listed(kind, rows);
    if (m_listQueue.isEmpty() && m_running)
        finishListing();
}

void SyncEngine::finishListing()
{
    setCursor(m_listSeq);
    if (m_cache)
        m_cache->saveCursor(m_listSeq);
    emit synced(m_listSeq);
    watch();
}

void SyncEngine::watch()
{
    if (!m_running)
        return;
    ++m_generation;
    if (m_webSocketEnabled && m_webSocketWorks)
        openWebSocket();
    else
        longPoll();
}

void SyncEngine::openWebSocket()
{
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    m_socket = socket;
    m_webSocketConnected = false;
    connect(socket, &QWebSocket::connected, this, [this] {
        m_webSocketConnected = true;
        m_awaitingPong = false;
        m_failures = 0;
        m_status->setState(ConnectionStatus::State::Live, ConnectionStatus::Transport::WebSocket);
        m_pingTimer.start();
    });
    connect(socket, &QWebSocket::textMessageReceived, this, &SyncEngine::onWebSocketMessage);
    connect(socket, &QWebSocket::pong, this, [this] {
        m_awaitingPong = false;
        m_status->touch();
    });
    connect(socket, &QWebSocket::disconnected, this, &SyncEngine::onWebSocketClosed);
    connect(socket, &QWebSocket::sslErrors, this, [this, socket](const QList<QSslError> &errors) {
        // The same rule as every request: only errors the user accepted for this server pass.
        if (m_client->acceptsSslErrors(errors))
            socket->ignoreSslErrors(errors);
    });
    const QUrl url = m_client->webSocketUrlFor(QStringLiteral("/watch?after=%1").arg(m_cursor));
    socket->open(m_client->authorizedRequest(url));
}

void SyncEngine::onWebSocketMessage(const QString &message)
{
    m_awaitingPong = false; // anything from the server shows it is there
    const QJsonDocument doc = QJsonDocument::fromJson(message.toUtf8());
    if (!doc.isObject())
        return; // not an event; the feed only sends events
    m_status->touch();
    queueEvent(doc.object());
}

void SyncEngine::onWebSocketClosed()
{
    QWebSocket *socket = m_socket;
    if (!socket)
        return;
    m_socket = nullptr;
    m_pingTimer.stop();
    const int code = int(socket->closeCode());
    const bool wasConnected = m_webSocketConnected;
    const QString reason = socket->closeReason().isEmpty() ? socket->errorString() : socket->closeReason();
    m_webSocketConnected = false;
    socket->disconnect(this);
    socket->deleteLater();
    if (!m_running)
        return;
    flushEvents(); // what arrived before the close moves the cursor first
    if (code == kCloseGone) {
        beginListing(tr("the server no longer holds the changes since our last visit"));
        return;
    }
    if (code == kCloseUnauthenticated) {
        emit problem(Problem::make(401, QStringLiteral("unauthenticated"), tr("Not signed in"),
                                   tr("the server refused the token for the change feed")));
        failed(reason);
        return;
    }
    if (!wasConnected) {
        // The upgrade did not get through: see whether plain HTTP does (proxies, old servers).
        ++m_generation;
        longPoll();
        return;
    }
    failed(reason);
}

void SyncEngine::longPoll()
{
    const quint64 generation = m_generation;
    const bool probing = m_webSocketEnabled && m_webSocketWorks;
    RequestOptions options;
    options.maxRetries = 0;
    // The first poll after (re)connecting answers at once, so "live" means the feed answered,
    // not that we are still waiting to find out.
    const int wait = m_status->isLive() ? m_longPollWait : 0;
    options.timeoutMs = (wait + 15) * 1000;
    m_request = m_client->get(
        QStringLiteral("/events?after=%1&wait=%2&limit=%3").arg(m_cursor).arg(wait).arg(kFeedPageLimit), options);
    connect(m_request, &ApiReply::finished, this, [this, generation, probing](const ApiResult &result) {
        if (generation != m_generation)
            return;
        if (result.ok() && probing)
            m_webSocketWorks = false; // HTTP works where the WebSocket did not: stay on HTTP
        onLongPoll(result);
    });
}

void SyncEngine::onLongPoll(const ApiResult &result)
{
    if (!result.ok()) {
        if (result.status == 410) {
            beginListing(tr("the server no longer holds the changes since our last visit"));
            return;
        }
        if (result.status == 401)
            emit problem(*result.problem);
        failed(result.problem ? result.problem->detail : tr("no answer"));
        return;
    }
    m_failures = 0;
    m_status->setState(ConnectionStatus::State::Live, ConnectionStatus::Transport::LongPoll);
    const QJsonObject page = result.object();
    for (const QJsonValue &event : page.value(QLatin1String("events")).toArray())
        queueEvent(event.toObject());
    flushEvents();
    const qint64 last = page.value(QLatin1String("last_seq")).toInteger(m_cursor);
    if (last > m_cursor) {
        setCursor(last);
        if (m_cache)
            m_cache->saveCursor(last);
    }
    longPoll();
}

void SyncEngine::queueEvent(const QJsonObject &event)
{
    m_pendingEvents.append(event);
    if (m_flushQueued)
        return;
    m_flushQueued = true;
    QMetaObject::invokeMethod(this, &SyncEngine::flushEvents, Qt::QueuedConnection);
}

void SyncEngine::flushEvents()
{
    m_flushQueued = false;
    if (m_pendingEvents.isEmpty())
        return;
    const QList<QJsonObject> events = std::exchange(m_pendingEvents, {});
    qint64 seq = m_cursor;
    // Runs of the same kind and operation go to the cache as one call, in feed order.
    QString runKind;
    bool runDelete = false;
    QList<QJsonObject> runRows;
    QList<qint64> runIds;
    auto flushRun = [&] {
        if (m_cache && !runKind.isEmpty()) {
            if (runDelete)
                m_cache->remove(runKind, runIds);
            else
                m_cache->store(runKind, runRows);
        }
        runRows.clear();
        runIds.clear();
    };
    for (const QJsonObject &event : events) {
        seq = std::max(seq, event.value(QLatin1String("seq")).toInteger(seq));
        const ResourceKind *kind = resourceKindByFeedKind(event.value(QLatin1String("kind")).toString());
        if (!kind || !m_kinds.contains(kind->name))
            continue;
        ResourceModel *model = m_models.value(kind->name);
        const bool deleted = event.value(QLatin1String("op")).toString() == QLatin1String("deleted");
        const qint64 id = event.value(QLatin1String("id")).toInteger();
        if (kind->name != runKind || deleted != runDelete) {
            flushRun();
            runKind = kind->name;
            runDelete = deleted;
        }
        if (deleted) {
            model->remove({id});
            runIds.append(id);
        } else {
            const QJsonObject object = event.value(QLatin1String("object")).toObject();
            if (object.isEmpty())
                continue;
            model->upsert({object});
            runRows.append(object);
        }
    }
    flushRun();
    scheduleTails();
    if (seq > m_cursor) {
        setCursor(seq);
        if (m_cache)
            m_cache->saveCursor(seq);
    }
    m_status->touch();
    emit eventsApplied(int(events.size()), seq);
}

void SyncEngine::failed(const QString &error)
{
    if (!m_running)
        return;
    ++m_generation;
    cancelReading();
    ++m_failures;
    const qint64 exponential = qint64(m_backoffBaseMs) << std::min(m_failures - 1, 20);
    const qint64 capped = std::min<qint64>(exponential, m_backoffMaxMs);
    const int delay = std::max(1, int(capped * (0.5 + 0.5 * QRandomGenerator::global()->generateDouble())));
    const auto state = m_failures >= kFailuresBeforeOffline ? ConnectionStatus::State::Offline
                                                            : ConnectionStatus::State::Reconnecting;
    m_status->setFailure(state, error, delay);
    m_reconnectTimer.start(delay);
}

void SyncEngine::setCursor(qint64 seq)
{
    m_cursor = seq;
}

} // namespace OpsDeck
