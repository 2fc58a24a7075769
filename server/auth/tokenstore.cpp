// Bearer tokens, stored only as SHA-256 digests.
#include "tokenstore.h"

#include "server/storage/timestamps.h"

#include <QCryptographicHash>
#include <QRandomGenerator>
#include <QSqlQuery>

namespace OpsDeck {

namespace {

const QString kColumns = QStringLiteral("id, name, role, subject, created_at, revoked_at");

TokenRecord fromRow(const QSqlQuery &q)
{
    TokenRecord t;
    t.id = q.value(0).toLongLong();
    t.name = q.value(1).toString();
    t.role = q.value(2).toString();
    t.subject = q.value(3).toString();
    t.createdAt = q.value(4).toString();
    t.revokedAt = q.value(5).toString();
    return t;
}

} // namespace

QJsonObject TokenRecord::toJson() const
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("name"), name},
            {QStringLiteral("role"), role},
            {QStringLiteral("subject"), subject},
            {QStringLiteral("created_at"), createdAt},
            {QStringLiteral("version"), version()},
            {QStringLiteral("revoked_at"), revokedAt.isEmpty() ? QJsonValue() : QJsonValue(revokedAt)}};
}

TokenStore::TokenStore(Database &db)
    : m_db(db)
{
}

QByteArray TokenStore::digest(const QByteArray &bearer)
{
    return QCryptographicHash::hash(bearer, QCryptographicHash::Sha256).toHex();
}

std::optional<TokenRecord> TokenStore::create(Actor role, const QString &subject, const QString &name,
                                              QString *bearer, Problem *error)
{
    quint32 words[8];
    QRandomGenerator::system()->fillRange(words);
    const QByteArray random(reinterpret_cast<const char *>(words), sizeof(words));
    const QByteArray token = "odk_" + random.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals);
    QSqlQuery &q = m_db.query(QStringLiteral(
        "INSERT INTO tokens (name, role, subject, token_hash, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id"));
    TokenRecord t;
    t.name = name;
    t.role = actorName(role);
    t.subject = subject;
    t.createdAt = nowTimestamp();
    q.addBindValue(Database::text(t.name));
    q.addBindValue(t.role);
    q.addBindValue(Database::text(t.subject));
    q.addBindValue(QString::fromLatin1(digest(token)));
    q.addBindValue(t.createdAt);
    if (!q.exec() || !q.next()) {
        if (error)
            *error = Database::sqlProblem(q);
        q.finish();
        return std::nullopt;
    }
    t.id = q.value(0).toLongLong();
    q.finish();
    if (bearer)
        *bearer = QString::fromLatin1(token);
    return t;
}

std::optional<TokenRecord> TokenStore::find(qint64 id, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + kColumns + QStringLiteral(" FROM tokens WHERE id = ?"));
    q.addBindValue(id);
    std::optional<TokenRecord> result;
    if (!q.exec()) {
        if (error)
            *error = Database::sqlProblem(q);
    } else if (q.next()) {
        result = fromRow(q);
    }
    q.finish();
    return result;
}

QList<TokenRecord> TokenStore::list(qint64 afterId, int limit, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT ") + kColumns
                              + QStringLiteral(" FROM tokens WHERE id > ? ORDER BY id LIMIT ?"));
    q.addBindValue(afterId);
    q.addBindValue(limit);
    QList<TokenRecord> out;
    if (!q.exec()) {
        if (error)
            *error = Database::sqlProblem(q);
    }
    while (q.next())
        out.append(fromRow(q));
    q.finish();
    return out;
}

std::optional<TokenRecord> TokenStore::revoke(qint64 id, Problem *error)
{
    m_cache.clear();
    m_live.clear();
    QSqlQuery &q = m_db.query(
        QStringLiteral("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"));
    q.addBindValue(nowTimestamp());
    q.addBindValue(id);
    if (!q.exec()) {
        if (error)
            *error = Database::sqlProblem(q);
        q.finish();
        return std::nullopt;
    }
    q.finish();
    return find(id, error);
}

std::optional<Caller> TokenStore::authenticate(const QByteArray &bearer, bool *storageDown)
{
    if (storageDown)
        *storageDown = false;
    if (bearer.isEmpty() || bearer.size() > 256)
        return std::nullopt;
    const QByteArray hash = digest(bearer);
    const auto hit = m_cache.constFind(hash);
    if (hit != m_cache.constEnd() && !hit->expiry.hasExpired())
        return hit->caller;
    std::optional<Caller> caller;
    // Authentication is every request's first query: a lost connection is noticed and mended here.
    const bool answered = lookup(hash, &caller) || (m_db.recover() && lookup(hash, &caller));
    if (!answered && storageDown)
        *storageDown = true;
    if (answered) {
        // Bounded: guessing tokens must not grow memory without limit.
        if (m_cache.size() >= 10000)
            m_cache.clear();
        m_cache.insert(hash, Cached{caller, QDeadlineTimer(kCacheTtlMs)});
    }
    return caller;
}

QByteArray TokenStore::bearerOf(const QByteArray &authorization)
{
    constexpr QByteArrayView scheme("bearer ");
    if (authorization.size() <= scheme.size() || !authorization.first(scheme.size()).toLower().startsWith(scheme))
        return {};
    return authorization.mid(scheme.size()).trimmed();
}

bool TokenStore::isLive(qint64 id)
{
    const auto hit = m_live.constFind(id);
    if (hit != m_live.constEnd() && !hit->expiry.hasExpired())
        return hit->live;
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT revoked_at FROM tokens WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec()) {
        q.finish();
        return true;
    }
    const bool live = q.next() && q.value(0).isNull();
    q.finish();
    if (m_live.size() >= 10000)
        m_live.clear();
    m_live.insert(id, Liveness{live, QDeadlineTimer(kCacheTtlMs)});
    return live;
}

bool TokenStore::lookup(const QByteArray &hash, std::optional<Caller> *caller)
{
    QSqlQuery &q = m_db.query(
        QStringLiteral("SELECT id, role, subject, name FROM tokens WHERE token_hash = ? AND revoked_at IS NULL"));
    q.addBindValue(QString::fromLatin1(hash));
    const bool answered = q.exec();
    if (answered && q.next()) {
        const auto role = roleFromName(q.value(1).toString());
        if (role)
            *caller = Caller{*role, q.value(2).toString(), q.value(0).toLongLong(), q.value(3).toString()};
    }
    q.finish();
    return answered;
}

} // namespace OpsDeck
