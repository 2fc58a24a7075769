// One HTTP request as the routes see it.
#include "request.h"

#include <QHttpServerRequest>

#include <algorithm>

namespace OpsDeck {

QByteArray Request::header(const QByteArray &name) const
{
    // QHttpServerRequest::value() matches names case-insensitively without copying the list.
    return raw ? raw->value(name) : QByteArray();
}

bool Request::hasHeader(const QByteArray &name) const
{
    if (!raw)
        return false;
    const auto headers = raw->headers();
    return std::any_of(headers.cbegin(), headers.cend(),
                       [&name](const auto &h) { return h.first.compare(name, Qt::CaseInsensitive) == 0; });
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
