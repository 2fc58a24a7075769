// Helpers shared by the API resources: problems, If-Match, reasons, paging and query parsing.
#include "apisupport.h"

#include "server/storage/database.h"

#include <QJsonObject>

#include <cctype>
#include <QSet>
#include <QStringDecoder>
#include <QUrl>

namespace OpsDeck::ApiSupport {

Problem notFound(const QString &kind, qint64 id)
{
    return Problem::make(404, QStringLiteral("not-found"), QStringLiteral("Not found"),
                         QStringLiteral("no %1 with id %2").arg(kind).arg(id));
}

Problem invalid(const QString &path, const QString &message)
{
    Problem p = Problem::make(400, QStringLiteral("invalid-request"), QStringLiteral("Invalid request"),
                              path + QStringLiteral(": ") + message);
    p.with(QStringLiteral("errors"),
           QJsonArray{QJsonObject{{QStringLiteral("path"), path}, {QStringLiteral("message"), message}}});
    return p;
}

Problem internal(const QString &detail)
{
    return Problem::make(500, QStringLiteral("internal"), QStringLiteral("Internal error"), detail);
}

Problem storageFailed(const Problem &problem)
{
    return problem.isNull() ? internal(QStringLiteral("commit failed")) : problem;
}

Problem refusal(const Refusal &r, const QString &kind, const QString &state, const QString &action)
{
    const bool forbidden = r.code == QLatin1String("forbidden-transition");
    Problem p = Problem::make(forbidden ? 403 : 409,
                              forbidden ? QStringLiteral("forbidden") : QStringLiteral("invalid-transition"),
                              forbidden ? QStringLiteral("Forbidden") : QStringLiteral("Invalid transition"),
                              r.message.isEmpty() ? QStringLiteral("cannot %1 a %2 in state %3").arg(action, kind, state)
                                                  : r.message);
    p.with(QStringLiteral("allowed"), QJsonArray::fromStringList(r.allowed));
    p.with(QStringLiteral("state"), state);
    return p;
}

std::optional<Problem> checkIfMatch(const Request &request, qint64 version)
{
    QByteArray value = request.header(QByteArrayLiteral("If-Match")).trimmed();
    // An If-Match with no tag at all matches no version (RFC 9110, 13.1.1): read as absent, it
    // would let a client that lost its ETag overwrite what it never saw.
    if ((value.isEmpty() && !request.hasHeader(QByteArrayLiteral("If-Match"))) || value == "*")
        return std::nullopt;
    for (QByteArray tag : value.split(',')) {
        tag = tag.trimmed();
        if (tag.startsWith("W/"))
            tag = tag.mid(2);
        if (tag.size() >= 2 && tag.startsWith('"') && tag.endsWith('"'))
            tag = tag.mid(1, tag.size() - 2);
        bool ok = false;
        if (tag.toLongLong(&ok) == version && ok)
            return std::nullopt;
    }
    const QString detail = value.isEmpty()
                               ? QStringLiteral("an empty If-Match matches no version; send the ETag (the current "
                                                "version is %1) or leave the header out")
                                     .arg(version)
                               : QStringLiteral("If-Match %1 does not match the current version %2")
                                     .arg(QString::fromUtf8(value))
                                     .arg(version);
    Problem p = Problem::make(412, QStringLiteral("precondition-failed"), QStringLiteral("Precondition failed"), detail);
    p.with(QStringLiteral("current_version"), version);
    return p;
}

JsonReader bodyReader(const Request &request)
{
    if (request.body.trimmed().isEmpty())
        return JsonReader(QJsonObject());
    return JsonReader(request.body);
}

// X-OpsDeck-Reason decoded, or errors at its name in `reader` and an empty text.
static QString readReasonHeader(JsonReader &reader, const QByteArray &header)
{
    // Refused as the body's reason would be, not mended: the audit log keeps what was meant.
    static const QString path = QStringLiteral("X-OpsDeck-Reason");
    for (qsizetype i = header.indexOf('%'); i >= 0; i = header.indexOf('%', i + 1)) {
        if (i + 2 >= header.size() || !isxdigit(static_cast<unsigned char>(header.at(i + 1)))
            || !isxdigit(static_cast<unsigned char>(header.at(i + 2)))) {
            reader.addErrorAt(path, QStringLiteral("a % not followed by two hex digits"));
            return QString();
        }
    }
    QStringDecoder utf8(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString reason = utf8(QByteArray::fromPercentEncoding(header));
    if (utf8.hasError()) {
        reader.addErrorAt(path, QStringLiteral("not UTF-8 once percent-decoded"));
        return QString();
    }
    if (reason.size() > 1000) {
        reader.addErrorAt(path, QStringLiteral("longer than 1000 characters"));
        return QString();
    }
    return reason;
}

QString readReason(JsonReader &reader, const Request &request)
{
    const std::optional<QString> inBody = reader.optString(QStringLiteral("reason"), 1000);
    const QByteArray header = request.header(QByteArrayLiteral("X-OpsDeck-Reason"));
    if (header.isEmpty())
        return inBody.value_or(QString(QLatin1String("")));
    const QString inHeader = readReasonHeader(reader, header);
    // Both, and not the same: the audit log would keep one of two reasons without a word.
    if (inBody && reader.ok() && *inBody != inHeader)
        reader.addErrorAt(QStringLiteral("X-OpsDeck-Reason"), QStringLiteral("differs from the body's reason; give it once"));
    return inBody.value_or(inHeader);
}

std::optional<Problem> readReasonOnly(const Request &request, QString *reason)
{
    JsonReader r = bodyReader(request);
    *reason = readReason(r, request);
    r.rejectUnknown();
    if (!r.ok())
        return r.problem();
    return std::nullopt;
}

Response objectResponse(const std::optional<QJsonObject> &object, const Problem &problem)
{
    if (!object)
        return Response::problem(problem);
    return Response::json(200, *object).withETag(object->value(QStringLiteral("version")).toInteger());
}

std::optional<Problem> checkQuery(const Request &request, const QStringList &allowed)
{
    QSet<QString> seen;
    const auto items = request.query.queryItems(QUrl::FullyDecoded);
    for (const auto &item : items) {
        if (item.first != QLatin1String("limit") && item.first != QLatin1String("cursor") && !allowed.contains(item.first))
            return invalid(QLatin1Char('?') + item.first, QStringLiteral("unknown query parameter"));
        if (seen.contains(item.first))
            return invalid(QLatin1Char('?') + item.first, QStringLiteral("given more than once"));
        seen.insert(item.first);
    }
    return std::nullopt;
}

std::optional<PageRequest> readPage(const Request &request, Problem *error)
{
    PageRequest page;
    if (request.hasQuery(QStringLiteral("limit"))) {
        // Digits alone, as ids are read: toInt() would also take "+2", " 2" or "2" and a NUL.
        const std::optional<qint64> limit = canonicalId(request.queryValue(QStringLiteral("limit")));
        if (!limit || *limit > 1000) {
            *error = invalid(QStringLiteral("?limit"), QStringLiteral("expected an integer from 1 to 1000"));
            return std::nullopt;
        }
        page.limit = int(*limit);
    }
    if (request.hasQuery(QStringLiteral("cursor"))) {
        const QString cursor = request.queryValue(QStringLiteral("cursor"));
        const QByteArray raw = QByteArray::fromBase64(cursor.toLatin1(), QByteArray::Base64UrlEncoding);
        bool ok = raw.startsWith("a:");
        const qint64 after = ok ? raw.mid(2).toLongLong(&ok) : 0;
        // Exactly as this list wrote it: the decoder skips what is not base64 ("YToz!!!").
        if (!ok || after < 0 || cursorAfter(after) != cursor) {
            *error = invalid(QStringLiteral("?cursor"), QStringLiteral("not a cursor returned by this list"));
            return std::nullopt;
        }
        page.afterId = after;
    }
    return page;
}

std::optional<PageRequest> readListQuery(const Request &request, const QStringList &allowed, Problem *error)
{
    if (auto p = checkQuery(request, allowed)) {
        *error = *p;
        return std::nullopt;
    }
    return readPage(request, error);
}

QString cursorAfter(qint64 id)
{
    return QString::fromLatin1(("a:" + QByteArray::number(id))
                                   .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

Response listResponse(const QJsonArray &items, int limit, qint64 lastId)
{
    return Response::json(200, {{QStringLiteral("items"), items},
                                {QStringLiteral("next"), items.size() >= limit ? QJsonValue(cursorAfter(lastId))
                                                                               : QJsonValue()}});
}

Response listQuery(QSqlQuery &query, int limit, const std::function<QJsonObject(const QSqlQuery &)> &row)
{
    if (!query.exec()) {
        const Problem p = Database::sqlProblem(query);
        query.finish();
        return Response::problem(p);
    }
    QJsonArray items;
    qint64 last = 0;
    while (query.next()) {
        last = query.value(0).toLongLong();
        items.append(row(query));
    }
    query.finish();
    return listResponse(items, limit, last);
}

std::optional<QJsonObject> loadRow(QSqlQuery &query, const std::function<QJsonObject(const QSqlQuery &)> &json,
                                   const QString &kind, qint64 id, Problem *error)
{
    std::optional<QJsonObject> o;
    if (!query.exec())
        *error = Database::sqlProblem(query);
    else if (query.next())
        o = json(query);
    else
        *error = notFound(kind, id);
    query.finish();
    return o;
}

bool execute(QSqlQuery &query, Problem *error)
{
    const bool executed = query.exec();
    if (!executed)
        *error = Database::sqlProblem(query);
    query.finish();
    return executed;
}

bool updateVersioned(QSqlQuery &query, const QString &kind, Problem *error)
{
    const bool executed = query.exec();
    const bool updated = executed && query.numRowsAffected() == 1;
    if (!executed)
        *error = Database::sqlProblem(query);
    query.finish();
    if (executed && !updated)
        *error = Problem::make(412, QStringLiteral("precondition-failed"), QStringLiteral("Precondition failed"),
                               QStringLiteral("the %1 changed meanwhile").arg(kind));
    return updated;
}

std::optional<qint64> insertedId(QSqlQuery &query, Problem *error)
{
    std::optional<qint64> id;
    if (query.exec() && query.next())
        id = query.value(0).toLongLong();
    else
        *error = Database::sqlProblem(query);
    query.finish();
    return id;
}

std::optional<qint64> queryId(const Request &request, const QString &key, Problem *error)
{
    if (!request.hasQuery(key))
        return std::nullopt;
    const std::optional<qint64> id = canonicalId(request.queryValue(key));
    if (!id)
        *error = invalid(QLatin1Char('?') + key, QStringLiteral("expected a positive integer id"));
    return id;
}

} // namespace OpsDeck::ApiSupport
