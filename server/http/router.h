// The route table: method + path pattern -> handler, with 404 vs 405 decided here.
#pragma once

#include "core/actor.h"
#include "request.h"
#include "response.h"

#include <QByteArrayList>
#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

namespace OpsDeck {

using Handler = std::function<Response(Request &)>;

struct Route
{
    QByteArray method;     // GET, POST, DELETE
    QString pattern;       // "/api/v1/instances/{id}/stop"; {id} matches a positive integer
    Actors roles;          // empty: no token needed
    bool mutation = false; // takes Idempotency-Key, If-Match and a reason
    Handler handler;
    QStringList segments;  // pattern split on '/'
};

struct RouteMatch
{
    const Route *route = nullptr;
    QList<qint64> ids;
    QByteArrayList allowed; // methods of the matching path when the method did not match
};

class Router final
{
public:
    void add(const QByteArray &method, const QString &pattern, Actors roles, bool mutation, Handler handler);
    RouteMatch match(const QByteArray &method, const QString &path) const;
    const QList<Route> &routes() const { return m_routes; }

private:
    QList<Route> m_routes;
};

} // namespace OpsDeck
