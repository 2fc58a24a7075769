// The audit trail and the change feed, written inside the caller's transaction.
#pragma once

#include "database.h"
#include "server/http/caller.h"

#include <QJsonObject>

#include <optional>

namespace OpsDeck {

// Who may see an event or an audit entry: an instance's provider and owner, everyone (both
// unset), or operators only.
struct Audience
{
    std::optional<qint64> provider;
    QString owner;
    bool operatorOnly = false;
};

struct AuditEntry
{
    QString action;
    QString kind;
    qint64 objectId = 0;
    QString from;
    QString to;
    QString reason;
};

// One change-feed event whose object is already encoded as compact JSON.
struct FeedEvent
{
    QString kind;
    qint64 objectId = 0;
    qint64 version = 0;
    QString op;
    QByteArray object;
    Audience audience;
};

class Journal final
{
public:
    explicit Journal(Database &db);

    bool audit(const Caller &who, const AuditEntry &entry, const Audience &audience, Problem *error);
    // Appends {kind, id, version, op, object}; the new seq, or 0 on failure.
    qint64 event(const QString &kind, qint64 objectId, qint64 version, const QString &op,
                 const QJsonObject &object, const Audience &audience, Problem *error);
    // Appends the events in their list order, several rows per INSERT: their seqs rise in that
    // order, as if each had been appended by event(). False on failure.
    bool events(const QList<FeedEvent> &events, Problem *error);
    static constexpr int MaxEventsPerStatement = 64;

    // The SQL condition (with one optional placeholder) restricting events or audit rows to what
    // `who` may see; bindSubject() binds its value.
    static QString audienceFilter(const Caller &who);
    static void bindAudience(QSqlQuery &query, const Caller &who);

private:
    Database &m_db;
};

} // namespace OpsDeck
