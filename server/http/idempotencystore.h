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
    QByteArray fingerprint; // SHA-256 of method, path and body
    bool running = false;
    QString createdAt;
    int status = 0;
    QByteArray contentType;
    QByteArray etag;
    QByteArray body;
};

class IdempotencyStore final
{
public:
    explicit IdempotencyStore(Database &db);

    static QByteArray fingerprint(const QByteArray &method, const QString &path, const QByteArray &body);
    std::optional<IdempotencyRecord> find(const QString &caller, const QString &key);
    // True when the key is now this request's. False when it is already taken (a concurrent first
    // use), or, with *error set, when the storage failed (busy, unavailable): that is no answer
    // about the key.
    bool begin(const QString &caller, const QString &key, const QByteArray &fingerprint, Problem *error);
    void finish(const QString &caller, const QString &key, const IdempotencyRecord &answer);
    void abandon(const QString &caller, const QString &key);

private:
    void expireOld();

    Database &m_db;
    int m_sinceExpiry = 0;
};

} // namespace OpsDeck
