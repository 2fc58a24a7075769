// /api/v1/tokens, /api/v1/audit and /api/v1/events: who may call, what was done, what changed.
#include "accessapi.h"

#include "server/auth/tokenactions.h"

#include "apisupport.h"
#include "core/resourcekind.h"
#include "server/auth/tokenstore.h"
#include "server/feed/changefeed.h"
#include "server/http/router.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"

#include <QJsonArray>
#include <QSqlQuery>

namespace OpsDeck {

using namespace ApiSupport;

namespace {

const QString kToken = QStringLiteral("token");

} // namespace

AccessApi::AccessApi(ApiContext context)
    : m_ctx(context)
{
}

void AccessApi::addRoutes(Router &router)
{
    const Actors operators(Actor::Operator);
    router.add("GET", QStringLiteral("/api/v1/tokens"), operators, false, [this](Request &r) { return listTokens(r); });
    router.add("POST", QStringLiteral("/api/v1/tokens"), operators, true, [this](Request &r) { return createToken(r); });
    router.add("GET", QStringLiteral("/api/v1/tokens/{id}"), operators, false, [this](Request &r) { return getToken(r); });
    router.add("DELETE", QStringLiteral("/api/v1/tokens/{id}"), operators, true, [this](Request &r) { return revokeToken(r); });
    // The console asks who its token speaks for, so it enables what the server will allow.
    router.add("GET", QStringLiteral("/api/v1/whoami"), kUserRoles, false, [](Request &r) {
        return Response::json(200, QJsonObject{{QStringLiteral("role"), actorName(r.who().role)},
                                               {QStringLiteral("subject"), r.who().subject}});
    });
    router.add("GET", QStringLiteral("/api/v1/audit"), kUserRoles, false, [this](Request &r) { return listAudit(r); });
    router.add("GET", QStringLiteral("/api/v1/events"), kUserRoles, false, [this](Request &r) { return events(r); });
}

Response AccessApi::listTokens(Request &req)
{
    Problem problem;
    if (auto p = checkQuery(req, {}))
        return Response::problem(*p);
    const auto page = readPage(req, &problem);
    if (!page)
        return Response::problem(problem);
    const auto tokens = m_ctx.tokens.list(page->afterId, page->limit, &problem);
    if (!problem.isNull())
        return Response::problem(problem);
    QJsonArray items;
    for (const TokenRecord &t : tokens)
        items.append(t.toJson());
    return listResponse(items, page->limit, tokens.isEmpty() ? 0 : tokens.last().id);
}

Response AccessApi::getToken(Request &req)
{
    Problem problem;
    const auto t = m_ctx.tokens.find(req.id(), &problem);
    if (!t)
        return Response::problem(problem.isNull() ? notFound(kToken, req.id()) : problem);
    return Response::json(200, t->toJson()).withETag(t->version());
}

Response AccessApi::createToken(Request &req)
{
    JsonReader r = bodyReader(req);
    const QString role = r.oneOf(QStringLiteral("role"), {QStringLiteral("operator"), QStringLiteral("provider"), QStringLiteral("owner")});
    const QString subject = r.optString(QStringLiteral("subject"), 200).value_or(QString());
    const QString name = r.optName(QStringLiteral("name")).value_or(role);
    const QString reason = readReason(r, req);
    r.rejectUnknown();
    TokenActions actions(m_ctx.db, m_ctx.journal, m_ctx.tokens);
    if (r.ok()) {
        if (const QString why = actions.subjectProblem(*roleFromName(role), subject); !why.isEmpty())
            r.addError(QStringLiteral("subject"), why);
    }
    if (!r.ok())
        return Response::problem(r.problem());
    Problem problem;
    QString bearer;
    const auto t = actions.create(req.who(), *roleFromName(role), subject, name, reason, &bearer, &problem);
    if (!t)
        return Response::problem(storageFailed(problem));
    m_ctx.feed.notifyAppended();
    QJsonObject body = t->toJson();
    body.insert(QStringLiteral("token"), bearer);
    // Where it is kept, as for every created object: a retry under the same Idempotency-Key, which
    // never gets the bearer again, still learns which token its lost answer created.
    return Response::json(201, body).withETag(t->version()).withHeader(QByteArrayLiteral("Location"),
                                                                       "/api/v1/tokens/" + QByteArray::number(t->id));
}

Response AccessApi::revokeToken(Request &req)
{
    QString reason;
    if (auto p = readReasonOnly(req, &reason))
        return Response::problem(*p);
    Problem problem;
    bool already = false;
    // If-Match as for every other object: revoking a token someone revoked meanwhile (version 2)
    // under "1" is stale.
    const auto t = TokenActions(m_ctx.db, m_ctx.journal, m_ctx.tokens)
                       .revoke(req.who(), req.id(), reason, &already, &problem,
                               [&req](const TokenRecord &token) { return checkIfMatch(req, token.version()); });
    if (!t)
        return Response::problem(problem.isNull() ? notFound(kToken, req.id()) : storageFailed(problem));
    if (!already)
        m_ctx.feed.notifyAppended();
    return Response::json(200, t->toJson()).withETag(t->version());
}

Response AccessApi::listAudit(Request &req)
{
    Problem problem;
    const auto page = readListQuery(req, {QStringLiteral("kind"), QStringLiteral("object_id")}, &problem);
    if (!page)
        return Response::problem(problem);
    const auto objectId = queryId(req, QStringLiteral("object_id"), &problem);
    if (!problem.isNull())
        return Response::problem(problem);
    const QString kind = req.queryValue(QStringLiteral("kind"));
    // A kind no entry can have would answer an empty list that reads as "nothing happened".
    // The kinds with a change feed (their descriptions in core/), and tokens.
    static const QStringList kinds = [] {
        QStringList names{QStringLiteral("token")};
        for (const ResourceKind &k : resourceKinds())
            if (!k.feedKind.isEmpty())
                names.append(k.feedKind);
        return names;
    }();
    if (req.hasQuery(QStringLiteral("kind")) && !kinds.contains(kind))
        return Response::problem(invalid(QStringLiteral("?kind"), QStringLiteral("expected one of %1").arg(kinds.join(QStringLiteral(", ")))));
    QString visible = QStringLiteral("(1 = 1 OR ? = '')");
    if (req.who().role == Actor::Provider)
        visible = QStringLiteral("provider_id = ?");
    else if (req.who().role == Actor::Owner)
        visible = QStringLiteral("owner = ?");
    QSqlQuery &q = m_ctx.db.query(QStringLiteral(
        "SELECT id, at, actor_role, actor_subject, action, kind, object_id, from_state, to_state, reason FROM audit"
        " WHERE id > ? AND (? = '' OR kind = ?) AND (? = 0 OR object_id = ?) AND ") + visible + QStringLiteral(" ORDER BY id LIMIT ?"));
    q.addBindValue(page->afterId);
    q.addBindValue(Database::text(kind));
    q.addBindValue(Database::text(kind));
    q.addBindValue(objectId.value_or(0));
    q.addBindValue(objectId.value_or(0));
    if (req.who().role == Actor::Provider)
        q.addBindValue(req.who().subject.toLongLong());
    else
        q.addBindValue(Database::text(req.who().subject));
    q.addBindValue(page->limit);
    return listQuery(q, page->limit, [](const QSqlQuery &row) {
        return QJsonObject{
            {QStringLiteral("id"), row.value(0).toLongLong()},
            {QStringLiteral("at"), row.value(1).toString()},
            {QStringLiteral("actor"), QJsonObject{{QStringLiteral("role"), row.value(2).toString()},
                                                  {QStringLiteral("subject"), row.value(3).toString()}}},
            {QStringLiteral("action"), row.value(4).toString()},
            {QStringLiteral("kind"), row.value(5).toString()},
            {QStringLiteral("object_id"), row.value(6).toLongLong()},
            {QStringLiteral("from"), row.value(7).isNull() ? QJsonValue() : QJsonValue(row.value(7).toString())},
            {QStringLiteral("to"), row.value(8).isNull() ? QJsonValue() : QJsonValue(row.value(8).toString())},
            {QStringLiteral("reason"), row.value(9).toString()}};
    });
}

Response AccessApi::events(Request &req)
{
    if (auto p = checkQuery(req, {QStringLiteral("after"), QStringLiteral("wait")}))
        return Response::problem(*p);
    Problem problem;
    const auto page = readPage(req, &problem);
    if (!page)
        return Response::problem(problem);
    if (req.hasQuery(QStringLiteral("cursor")))
        return Response::problem(invalid(QStringLiteral("?cursor"), QStringLiteral("the feed is paged with ?after=SEQ")));
    qint64 after = 0;
    if (req.hasQuery(QStringLiteral("after"))) {
        const auto seq = canonicalNumber(req.queryValue(QStringLiteral("after")));
        if (!seq)
            return Response::problem(invalid(QStringLiteral("?after"), QStringLiteral("expected a sequence number >= 0")));
        after = *seq;
    } else {
        after = m_ctx.feed.lastSeq();
    }
    int wait = 0;
    if (req.hasQuery(QStringLiteral("wait"))) {
        const auto seconds = canonicalNumber(req.queryValue(QStringLiteral("wait")));
        if (!seconds || *seconds > m_ctx.options.maxWaitSeconds)
            return Response::problem(invalid(QStringLiteral("?wait"), QStringLiteral("expected seconds from 0 to %1")
                                                                         .arg(m_ctx.options.maxWaitSeconds)));
        wait = int(*seconds);
    }
    const auto feedPage = m_ctx.feed.read(req.who(), after, page->limit, &problem);
    if (!feedPage)
        return Response::problem(problem);
    // HEAD answers at once, as the GET would have once the wait ended: the same status and headers.
    if (!feedPage->events.isEmpty() || wait == 0 || !req.responder || req.head)
        return Response::text(200, ChangeFeed::pageBody(*feedPage), QByteArrayLiteral("application/json"));
    m_ctx.feed.wait(req.who(), feedPage->lastSeq, page->limit, wait * 1000, std::move(*req.responder), req.connection);
    return Response::later();
}

} // namespace OpsDeck
