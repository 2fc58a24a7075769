// Bearer tokens: created and revoked by operators and the CLI, stored only as SHA-256 digests.
#pragma once

#include "server/http/caller.h"
#include "server/storage/database.h"

#include <QDeadlineTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>

#include <optional>

namespace OpsDeck {

struct TokenRecord
{
    qint64 id = 0;
    QString name;
    QString role;
    QString subject;
    QString createdAt;
    QString revokedAt;

    // A token changes once: 1 as created, 2 once revoked (its ETag, its feed events' version).
    qint64 version() const { return revokedAt.isEmpty() ? 1 : 2; }
    QJsonObject toJson() const;
};

class TokenStore final
{
public:
    explicit TokenStore(Database &db);

    // Inside the caller's transaction when there is one. The bearer text is returned once and
    // never stored.
    std::optional<TokenRecord> create(Actor role, const QString &subject, const QString &name,
                                      QString *bearer, Problem *error);
    std::optional<TokenRecord> find(qint64 id, Problem *error);
    QList<TokenRecord> list(qint64 afterId, int limit, Problem *error);
    // The revoked record, or nullopt when there is no such token.
    std::optional<TokenRecord> revoke(qint64 id, Problem *error);
    // Answers from a short-lived cache: a revocation through this store takes effect at once,
    // one by another process (the CLI, another replica) within kCacheTtlMs.
    // storageDown (optional) tells a database failure apart from an unknown token.
    std::optional<Caller> authenticate(const QByteArray &bearer, bool *storageDown = nullptr);
    static constexpr int kCacheTtlMs = 2000;
    // Whether token `id` is still unrevoked, for connections that outlive their first request
    // (a WebSocket watch, a long poll): from the same kind of cache. A database that does not
    // answer says true: a hiccup must not end every watch.
    bool isLive(qint64 id);

    static QByteArray digest(const QByteArray &bearer);
    // The token of an Authorization header's Bearer credentials (the scheme in any case, RFC
    // 9110 11.1), or empty.
    static QByteArray bearerOf(const QByteArray &authorization);

private:
    // False when the database did not answer.
    bool lookup(const QByteArray &hash, std::optional<Caller> *caller);

    struct Cached
    {
        std::optional<Caller> caller;
        QDeadlineTimer expiry;
    };

    Database &m_db;
    QHash<QByteArray, Cached> m_cache; // by digest
    struct Liveness
    {
        bool live = true;
        QDeadlineTimer expiry;
    };
    QHash<qint64, Liveness> m_live; // by token id
};

} // namespace OpsDeck
