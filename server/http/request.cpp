// One HTTP request as the routes see it.
#include "request.h"

#include <QHttpServerRequest>

#include <algorithm>

namespace OpsDeck {

QByteArray Request::header(const QByteArray &name) const
{
    // QHttpServerRequest::value() matches names case-insensitively without copying the list.
    if (raw)
        return raw->value(name);
    const auto it = std::find_if(keptHeaders.cbegin(), keptHeaders.cend(),
                                 [&name](const auto &h) { return h.first.compare(name, Qt::CaseInsensitive) == 0; });
    return it == keptHeaders.cend() ? QByteArray() : it->second;
}

bool Request::hasHeader(const QByteArray &name) const
{
    const auto has = [&name](const auto &headers) {
        return std::any_of(headers.cbegin(), headers.cend(),
                           [&name](const auto &h) { return h.first.compare(name, Qt::CaseInsensitive) == 0; });
    };
    return raw ? has(raw->headers()) : has(keptHeaders);
}

void Request::keepHeaders()
{
    if (!raw)
        return;
    keptHeaders.clear();
    for (const auto &h : raw->headers())
        keptHeaders.append({h.first, h.second});
    raw = nullptr;
}

QString Request::queryValue(const QString &key) const
{
    return query.queryItemValue(key, QUrl::FullyDecoded);
}

std::optional<qint64> canonicalNumber(const QString &text)
{
    bool ok = false;
    const qint64 n = text.toLongLong(&ok);
    if (!ok || n < 0 || text != QString::number(n))
        return std::nullopt;
    return n;
}

std::optional<qint64> canonicalId(const QString &text)
{
    const auto id = canonicalNumber(text);
    if (!id || *id == 0)
        return std::nullopt;
    return id;
}

} // namespace OpsDeck
