// One HTTP request as the routes see it.
#include "request.h"

#include <QHttpServerRequest>

namespace OpsDeck {

QByteArray Request::header(const QByteArray &name) const
{
    if (!raw)
        return {};
    const auto headers = raw->headers();
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

QString Request::queryValue(const QString &key) const
{
    return query.queryItemValue(key, QUrl::FullyDecoded);
}

} // namespace OpsDeck
