// Helpers shared by the API resources: problems, If-Match, reasons, paging and query parsing.
#pragma once

#include "core/jsonreader.h"
#include "core/problem.h"
#include "core/statemachine.h"
#include "server/http/request.h"
#include "server/http/response.h"

#include <QJsonArray>
#include <QStringList>

#include <functional>
#include <optional>

class QSqlQuery;

namespace OpsDeck::ApiSupport {

Problem notFound(const QString &kind, qint64 id);
Problem invalid(const QString &path, const QString &message);
Problem internal(const QString &detail);
// What a failed write answers: its storage problem as it is (a conflict the router runs again), or
// a 500 when it failed without one.
Problem storageFailed(const Problem &problem);
Problem refusal(const Refusal &refusal, const QString &kind, const QString &state, const QString &action);

// 412 when If-Match is present and names another version ("*" matches anything).
std::optional<Problem> checkIfMatch(const Request &request, qint64 version);

// The request body as an object; an empty body reads as {} so body-less mutations work.
JsonReader bodyReader(const Request &request);
// "reason" from the body (≤ 1000 characters) or the X-OpsDeck-Reason header (percent-encoded).
QString readReason(JsonReader &reader, const Request &request);
// The body of an action that takes nothing but a reason ({} or {"reason": …}); the problem
// when the body has anything else.
std::optional<Problem> readReasonOnly(const Request &request, QString *reason);

struct PageRequest
{
    qint64 afterId = 0;
    int limit = 100;
};

// 200 with the object and its ETag, or `problem` when there is no object.
Response objectResponse(const std::optional<QJsonObject> &object, const Problem &problem);

// Validates the query: only `allowed` (plus limit and cursor) may appear, each at most once.
std::optional<Problem> checkQuery(const Request &request, const QStringList &allowed);
std::optional<PageRequest> readPage(const Request &request, Problem *error);
// What a list route reads first: checkQuery() with `allowed`, then readPage().
std::optional<PageRequest> readListQuery(const Request &request, const QStringList &allowed, Problem *error);
QString cursorAfter(qint64 id);
// {"items": [...], "next": cursor|null}; next is set when the page is full.
Response listResponse(const QJsonArray &items, int limit, qint64 lastId);
// Runs a prepared page query whose first column is the id and answers with its rows as `row`
// turns them into JSON (or the storage problem).
Response listQuery(QSqlQuery &query, int limit, const std::function<QJsonObject(const QSqlQuery &)> &row);

// Runs a prepared query for one row: the row as `json` reads it, or in *error the storage problem
// or a 404 naming `kind` and `id`. The statement is finished either way.
std::optional<QJsonObject> loadRow(QSqlQuery &query, const std::function<QJsonObject(const QSqlQuery &)> &json,
                                   const QString &kind, qint64 id, Problem *error);
// Runs a prepared statement whose rows nobody reads: false with the storage problem in *error.
// The statement is finished either way.
bool execute(QSqlQuery &query, Problem *error);
// Runs a prepared UPDATE … WHERE id = ? AND version = ?: false with the storage problem, or with
// a 412 when no row matched (another writer changed the `kind` first). The statement is finished.
bool updateVersioned(QSqlQuery &query, const QString &kind, Problem *error);
// Runs a prepared INSERT … RETURNING id: the new row's id, or nullopt with the storage problem
// in *error. The statement is finished either way.
std::optional<qint64> insertedId(QSqlQuery &query, Problem *error);

std::optional<qint64> queryId(const Request &request, const QString &key, Problem *error);

} // namespace OpsDeck::ApiSupport
