// Idempotency-Key records: the first answer to a key, replayed to retries of the same request.
#include "idempotencystore.h"

#include "server/storage/timestamps.h"

#include <QCryptographicHash>
#include <QDebug>
#include <QSqlError>
#include <QSqlQuery>

namespace OpsDeck {

IdempotencyStore::IdempotencyStore(Database &db)
    : m_db(db)
{
}

QByteArray IdempotencyStore::fingerprint(const QByteArray &method, const QString &path, const QString &query,
                                         const QByteArray &body, const QByteArrayList &conditions)
{
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(method);
    h.addData(QByteArrayView(" "));
    h.addData(path.toUtf8());
    if (!query.isEmpty()) {
        h.addData(QByteArrayView("?"));
        h.addData(query.toUtf8());
    }
    for (const QByteArray &field : conditions) {
        h.addData(QByteArrayView("\n"));
        h.addData(field);
    }
    h.addData(QByteArrayView("\n"));
    h.addData(body);
    return h.result().toHex();
}

std::optional<IdempotencyRecord> IdempotencyStore::find(const QString &caller, const QString &key)
{
    QSqlQuery &q = m_db.query(QStringLiteral("SELECT fingerprint, state, status, headers, body, created_at FROM idempotency_keys"
                                             " WHERE caller = ? AND key = ? AND created_at > ?"));
    q.addBindValue(caller);
    q.addBindValue(key);
    q.addBindValue(timestamp(QDateTime::currentDateTimeUtc().addSecs(-24 * 3600)));
    std::optional<IdempotencyRecord> r;
    if (q.exec() && q.next()) {
        IdempotencyRecord rec;
        rec.fingerprint = q.value(0).toString().toLatin1();
        rec.running = q.value(1).toString() == QLatin1String("running");
        rec.committed = q.value(1).toString() == QLatin1String("committed");
        rec.status = q.value(2).toInt();
        // Content type, ETag, Location, the member withheld: a line each (older rows: the first two).
        const QList<QByteArray> headers = q.value(3).toString().toUtf8().split('\n');
        rec.contentType = headers.value(0);
        rec.etag = headers.value(1);
        rec.location = headers.value(2);
        rec.withheld = headers.value(3);
        rec.body = q.value(4).toString().toUtf8();
        rec.createdAt = q.value(5).toString();
        r = rec;
    }
    q.finish();
    return r;
}

bool IdempotencyStore::begin(const QString &caller, const QString &key, const QByteArray &fingerprint, Problem *error)
{
    if (++m_sinceExpiry >= 500) {
        m_sinceExpiry = 0;
        expireOld();
    }
    // An expired record under the same key is replaced.
    QSqlQuery &del = m_db.query(QStringLiteral("DELETE FROM idempotency_keys WHERE caller = ? AND key = ?"
                                               " AND created_at <= ?"));
    del.addBindValue(caller);
    del.addBindValue(key);
    del.addBindValue(timestamp(QDateTime::currentDateTimeUtc().addSecs(-24 * 3600)));
    if (!del.exec()) {
        *error = Database::sqlProblem(del);
        del.finish();
        return false;
    }
    del.finish();
    QSqlQuery &q = m_db.query(QStringLiteral("INSERT INTO idempotency_keys (caller, key, fingerprint, state,"
                                             " created_at) VALUES (?, ?, ?, 'running', ?)"));
    q.addBindValue(caller);
    q.addBindValue(key);
    q.addBindValue(QString::fromLatin1(fingerprint));
    q.addBindValue(nowTimestamp());
    const bool ok = q.exec();
    // Only a key already there (the primary key refused the row) says the key is taken.
    if (!ok && !Database::isUniqueViolation(q.lastError()))
        *error = Database::sqlProblem(q);
    q.finish();
    return ok;
}

bool IdempotencyStore::markCommitted(const QString &caller, const QString &key, Problem *error, bool *lost)
{
    QSqlQuery &q = m_db.query(QStringLiteral("UPDATE idempotency_keys SET state = 'committed'"
                                             " WHERE caller = ? AND key = ? AND state = 'running'"));
    q.addBindValue(caller);
    q.addBindValue(key);
    const bool ok = q.exec();
    const bool ours = ok && q.numRowsAffected() == 1;
    if (!ok)
        *error = Database::sqlProblem(q);
    else if (!ours)
        *error = Problem::make(409, QStringLiteral("idempotency-key-in-use"), QStringLiteral("Idempotency key in use"),
                               QStringLiteral("this request waited so long that its Idempotency-Key was let go, and"
                                              " may have been taken by a retry; it was not carried out"));
    if (lost)
        *lost = ok && !ours;
    q.finish();
    return ours;
}

void IdempotencyStore::finish(const QString &caller, const QString &key, const IdempotencyRecord &answer)
{
    QSqlQuery &q = m_db.query(QStringLiteral("UPDATE idempotency_keys SET state = 'done', status = ?, headers = ?,"
                                             " body = ? WHERE caller = ? AND key = ?"));
    q.addBindValue(answer.status);
    q.addBindValue(QString::fromUtf8(answer.contentType + '\n' + answer.etag + '\n' + answer.location + '\n'
                                     + answer.withheld));
    q.addBindValue(QString::fromUtf8(answer.body));
    q.addBindValue(caller);
    q.addBindValue(key);
    q.exec();
    q.finish();
}

bool IdempotencyStore::abandon(const QString &caller, const QString &key)
{
    QSqlQuery &q = m_db.query(QStringLiteral("DELETE FROM idempotency_keys WHERE caller = ? AND key = ?"
                                             " AND state = 'running'"));
    q.addBindValue(caller);
    q.addBindValue(key);
    const bool ok = q.exec();
    q.finish();
    return ok;
}

void IdempotencyStore::abandonRunningAtStart()
{
    if (m_db.backend() != Database::Backend::Sqlite)
        return;
    QSqlQuery q(m_db.connection());
    if (!q.exec(QStringLiteral("DELETE FROM idempotency_keys WHERE state = 'running'")))
        qWarning().noquote() << "idempotency keys of unfinished requests kept:" << q.lastError().text();
}

void IdempotencyStore::expireOld()
{
    QSqlQuery &q = m_db.query(QStringLiteral("DELETE FROM idempotency_keys WHERE created_at <= ?"));
    q.addBindValue(timestamp(QDateTime::currentDateTimeUtc().addSecs(-24 * 3600)));
    q.exec();
    q.finish();
}

} // namespace OpsDeck
