// The sync engine's kinds without feed events (the audit): read on from their last list page's
// cursor after each burst of events, and at a start that resumes the feed from the cache.
#include "syncengine.h"

#include "apiclient.h"
#include "cache.h"

#include <QJsonArray>

#include <utility>

namespace OpsDeck {

void SyncEngine::onCacheTailCursors(const QHash<QString, QString> &cursors)
{
    // Where the last run left off reading them; a listing (a cache without a feed cursor)
    // replaces them with its own.
    for (auto it = cursors.cbegin(); it != cursors.cend(); ++it) {
        const ResourceKind *kind = resourceKindByName(it.key());
        if (m_running && kind && kind->feedKind.isEmpty())
            m_tailCursor.insert(it.key(), it.value());
    }
}

void SyncEngine::readTails()
{
    if (!m_running)
        return;
    if (m_tailRequest || !m_tailQueue.isEmpty()) {
        m_tailAgain = true; // the read in flight may have started before these events
        return;
    }
    for (const QString &kind : std::as_const(m_kinds)) {
        if (m_tailCursor.contains(kind))
            m_tailQueue << kind;
    }
    if (!m_tailQueue.isEmpty())
        fetchTail(m_tailQueue.takeFirst());
}

void SyncEngine::setTailCursor(const QString &kind, const QString &cursor)
{
    m_tailCursor.insert(kind, cursor);
    if (m_cache)
        m_cache->saveTailCursor(kind, cursor);
}

void SyncEngine::scheduleTails()
{
    if (!m_tailCursor.isEmpty() && !m_tailTimer.isActive())
        m_tailTimer.start();
}

void SyncEngine::fetchTail(const QString &kind)
{
    const QString cursor = m_tailCursor.value(kind);
    RequestOptions options;
    options.maxRetries = 0;
    m_tailRequest = m_client->get(PageReader::listPath(kind, m_pageSize, cursor), options);
    connect(m_tailRequest, &ApiReply::finished, this, [this, kind, cursor](const ApiResult &result) {
        if (!m_running)
            return;
        if (result.ok()) {
            const QJsonObject page = result.object();
            QList<QJsonObject> objects;
            for (const QJsonValue &item : page.value(QLatin1String("items")).toArray())
                objects << item.toObject();
            if (ResourceModel *model = m_models.value(kind))
                model->upsert(objects);
            if (m_cache)
                m_cache->store(kind, objects);
            const QString next = page.value(QLatin1String("next")).toString();
            if (!next.isEmpty()) {
                setTailCursor(kind, next);
                m_tailQueue.prepend(kind); // a full page: read on
            }
        }
        // A failed read is retried with the next burst of events; the feed itself reports outages.
        if (!m_tailQueue.isEmpty()) {
            fetchTail(m_tailQueue.takeFirst());
            return;
        }
        if (std::exchange(m_tailAgain, false))
            m_tailTimer.start();
    });
}

} // namespace OpsDeck
