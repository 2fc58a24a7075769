// The route table: method + path pattern -> handler, with 404 vs 405 decided here.
#include "router.h"

namespace OpsDeck {

void Router::add(const QByteArray &method, const QString &pattern, Actors roles, bool mutation, Handler handler)
{
    Route r;
    r.method = method;
    r.pattern = pattern;
    r.roles = roles;
    r.mutation = mutation;
    r.handler = std::move(handler);
    r.segments = pattern.split(QLatin1Char('/'));
    m_routes.append(std::move(r));
}

RouteMatch Router::match(const QByteArray &method, const QString &path) const
{
    RouteMatch result;
    QString trimmed = path;
    if (trimmed.size() > 1 && trimmed.endsWith(QLatin1Char('/')))
        trimmed.chop(1);
    const QList<QStringView> parts = QStringView(trimmed).split(QLatin1Char('/'));
    for (const Route &r : m_routes) {
        if (r.segments.size() != parts.size())
            continue;
        QList<qint64> ids;
        bool ok = true;
        for (int i = 0; i < parts.size() && ok; ++i) {
            const QString &seg = r.segments.at(i);
            if (seg.startsWith(QLatin1Char('{'))) {
                const std::optional<qint64> id = canonicalId(parts.at(i).toString());
                ok = id.has_value();
                ids.append(id.value_or(0));
            } else {
                ok = parts.at(i) == seg;
            }
        }
        if (!ok)
            continue;
        if (r.method == method) {
            result.route = &r;
            result.ids = ids;
            result.allowed.clear();
            return result;
        }
        if (!result.allowed.contains(r.method))
            result.allowed.append(r.method);
        // The server answers HEAD wherever it answers GET (HttpServer::handleRequest).
        if (r.method == "GET" && !result.allowed.contains("HEAD"))
            result.allowed.append(QByteArrayLiteral("HEAD"));
    }
    // And OPTIONS on every path it has (HttpServer::dispatch).
    if (!result.allowed.isEmpty())
        result.allowed.append(QByteArrayLiteral("OPTIONS"));
    return result;
}

} // namespace OpsDeck
