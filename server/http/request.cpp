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

} // namespace OpsDeck
