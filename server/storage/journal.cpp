// The audit trail and the change feed, written inside the caller's transaction.
#include "journal.h"

#include "statement.h"
#include "timestamps.h"

#include <QJsonDocument>
#include <QSqlQuery>

#include <algorithm>

namespace OpsDeck {

Journal::Journal(Database &db)
    : m_db(db)
{
}

bool Journal::audit(const Caller &who, const AuditEntry &e, const Audience &audience, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "INSERT INTO audit (at, actor_role, actor_subject, action, kind, object_id, from_state, to_state,"
        " reason, provider_id, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    q.addBindValue(nowTimestamp());
    q.addBindValue(actorName(who.role));
    q.addBindValue(Database::text(who.auditSubject()));
    q.addBindValue(e.action);
    q.addBindValue(e.kind);
    q.addBindValue(e.objectId);
    q.addBindValue(e.from.isNull() ? QVariant(QMetaType::fromType<QString>()) : QVariant(e.from));
    q.addBindValue(e.to.isNull() ? QVariant(QMetaType::fromType<QString>()) : QVariant(e.to));
    q.addBindValue(e.reason.isNull() ? QString(QLatin1String("")) : e.reason);
    q.addBindValue(audience.provider ? QVariant(*audience.provider) : QVariant(QMetaType::fromType<qlonglong>()));
    q.addBindValue(audience.owner.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(audience.owner));
    const bool ok = q.exec();
    if (!ok && error)
        *error = Database::sqlProblem(q);
    q.finish();
    return ok;
}

qint64 Journal::event(const QString &kind, qint64 objectId, qint64 version, const QString &op,
                      const QJsonObject &object, const Audience &audience, Problem *error)
{
    QSqlQuery &q = m_db.query(QStringLiteral(
        "INSERT INTO events (kind, object_id, version, op, object, at, audience_provider, audience_owner,"
        " audience_private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq"));
    q.addBindValue(kind);
    q.addBindValue(objectId);
    q.addBindValue(version);
    q.addBindValue(op);
    q.addBindValue(QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Compact)));
    q.addBindValue(nowTimestamp());
    q.addBindValue(audience.provider ? QVariant(*audience.provider) : QVariant(QMetaType::fromType<qlonglong>()));
    q.addBindValue(audience.owner.isEmpty() ? QVariant(QMetaType::fromType<QString>()) : QVariant(audience.owner));
    q.addBindValue(audience.operatorOnly ? 1 : 0);
    qint64 seq = 0;
    if (q.exec() && q.next())
        seq = q.value(0).toLongLong();
    else if (error)
        *error = Database::sqlProblem(q);
    q.finish();
    return seq;
}

bool Journal::events(const QList<FeedEvent> &events, Problem *error)
{
    static const QString head = QStringLiteral(
        "INSERT INTO events (kind, object_id, version, op, object, at, audience_provider, audience_owner,"
        " audience_private) VALUES ");
    static const QString row = QStringLiteral("(?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const QString now = nowTimestamp();
    for (qsizetype first = 0; first < events.size(); first += MaxEventsPerStatement) {
        const qsizetype n = std::min<qsizetype>(MaxEventsPerStatement, events.size() - first);
        QString sql = head;
        sql.reserve(head.size() + n * (row.size() + 2));
        for (qsizetype i = 0; i < n; ++i) {
            if (i > 0)
                sql += QLatin1String(", ");
            sql += row;
        }
        Statement q(m_db, sql);
        for (qsizetype i = first; i < first + n; ++i) {
            const FeedEvent &e = events.at(i);
            q.bindText(e.kind).bind(e.objectId).bind(e.version).bindText(e.op).bindText(e.object).bindText(now);
            if (e.audience.provider)
                q.bind(*e.audience.provider);
            else
                q.bindNull();
            q.bindText(e.audience.owner.isEmpty() ? QString() : e.audience.owner).bind(e.audience.operatorOnly ? 1 : 0);
        }
        if (!q.exec(error))
            return false;
    }
    return true;
}

QString Journal::audienceFilter(const Caller &who)
{
    switch (who.role) {
    case Actor::Provider:
        return QStringLiteral("(audience_provider = ? OR (audience_provider IS NULL AND audience_owner IS NULL"
                              " AND audience_private = 0))");
    case Actor::Owner:
        return QStringLiteral("(audience_owner = ? OR (audience_provider IS NULL AND audience_owner IS NULL"
                              " AND audience_private = 0))");
    default:
        return QStringLiteral("1 = 1");
    }
}

void Journal::bindAudience(QSqlQuery &query, const Caller &who)
{
    if (who.role == Actor::Provider) {
        bool ok = false;
        const qint64 id = who.subject.toLongLong(&ok);
        query.addBindValue(ok ? id : qint64(-1));
    } else if (who.role == Actor::Owner) {
        query.addBindValue(who.subject);
    }
}

} // namespace OpsDeck
