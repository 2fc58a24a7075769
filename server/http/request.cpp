// One HTTP request as the routes see it.
#include "request.h"

#include <QHttpServerRequest>

namespace OpsDeck {

QByteArray Request::header(const QByteArray &name) const
{
    // QHttpServerRequest::value() matches names case-insensitively without copying the list.
    return raw ? raw->value(name) : QByteArray();
}

QString Request::queryValue(const QString &key) const
{
    return query.queryItemValue(key, QUrl::FullyDecoded);
}

std::optional<qint64> canonicalId(const QString &text)
{
    bool ok = false;
    const qint64 id = text.toLongLong(&ok);
    if (!ok || id <= 0 || text != QString::number(id))
        return std::nullopt;
    return id;
}

} // namespace OpsDeck
