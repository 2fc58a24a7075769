// One HTTP answer as the routes produce it, before it is written to the socket.
#include "response.h"

#include <QJsonDocument>

namespace OpsDeck {

Response Response::json(int status, const QJsonObject &object)
{
    Response r;
    r.status = status;
    r.body = QJsonDocument(object).toJson(QJsonDocument::Compact);
    return r;
}

Response Response::problem(const Problem &problem)
{
    Response r;
    r.status = problem.status;
    r.body = problem.toBytes();
    r.contentType = QByteArrayLiteral("application/problem+json");
    return r;
}

Response Response::text(int status, const QByteArray &body, const QByteArray &contentType)
{
    Response r;
    r.status = status;
    r.body = body;
    r.contentType = contentType;
    return r;
}

Response Response::later()
{
    Response r;
    r.deferred = true;
    return r;
}

Response &Response::withETag(qint64 version)
{
    headers.append({QByteArrayLiteral("ETag"), '"' + QByteArray::number(version) + '"'});
    return *this;
}

Response &Response::withHeader(const QByteArray &name, const QByteArray &value)
{
    headers.append({name, value});
    return *this;
}

} // namespace OpsDeck
