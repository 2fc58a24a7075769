// Idempotency-Key records: the first answer to a key, replayed to retries of the same request.
#pragma once

#include "core/problem.h"

#include "server/storage/database.h"

#include <QByteArray>
#include <QString>

#include <optional>

namespace OpsDeck {

struct IdempotencyRecord
{
    QByteArray fingerprint; // SHA-256 of method, path, query, body and the fields that change it
    bool running = false;   // taken, and nothing of the request committed yet
    bool committed = false; // the request's transaction committed; its answer was never stored
    QString createdAt;
    int status = 0;
    QByteArray contentType;
    QByteArray etag;
    QByteArray location;
    // The member of the answer that is shown once ("token", "secret"): the answer is not kept.
    QByteArray withheld;
    QByteArray body;
};

class IdempotencyStore final
{
public:
    explicit IdempotencyStore(Database &db);

    // The request's method, path, query and body, and the header fields that change what it does
    // ("If-Match: \"2\"", "X-OpsDeck-Reason: ..."; none for most requests, whose fingerprint is
    // then what it always was).
    static QByteArray fingerprint(const QByteArray &method, const QString &path, const QString &query,
                                  const QByteArray &body, const QByteArrayList &conditions = {});
    std::optional<IdempotencyRecord> find(const QString &caller, const QString &key);
    // True when the key is now this request's. False when it is already taken (a concurrent first
    // use), or, with *error set, when the storage failed (busy, unavailable): that is no answer
    // about the key.
    bool begin(const QString &caller, const QString &key, const QByteArray &fingerprint, Problem *error);
    // In the request's own transaction, just before it commits: from then on a retry never runs
    // the request again, even if the server stops before finish().
    // False (and *lost) when the key is no longer this request's "running" one: it was let go as
    // a dead request's (the minute's takeover, or a start on SQLite) and perhaps taken by a
    // retry. The request's transaction must not commit then: the retry may have run it already.
    bool markCommitted(const QString &caller, const QString &key, Problem *error, bool *lost = nullptr);
    void finish(const QString &caller, const QString &key, const IdempotencyRecord &answer);
    // Gives the key up unless the request committed.
    // False when the key could not be let go (the database's write lock was held elsewhere, say).
    bool abandon(const QString &caller, const QString &key);
    // At start on SQLite, whose database has one server: a key still running was taken by a
    // request of an earlier run that never committed (stopped or killed with the write lock held
    // elsewhere), and is let go, so the client's retry runs instead of hearing "in use". Should
    // another server use the same file after all, markCommitted() keeps its request from being
    // carried out twice. On PostgreSQL another replica's request may hold it: left to the
    // minute's takeover.
    void abandonRunningAtStart();

private:
    void expireOld();

    Database &m_db;
    int m_sinceExpiry = 0;
};

} // namespace OpsDeck
