// One HTTP/1.1 request as the demo provider's connections parse it.
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

namespace OpsDeck::DemoProvider {

struct HttpRequest
{
    QByteArray method;
    QByteArray target; // as sent, with the query
    QByteArray path;   // target without the query
    QByteArray version;
    QList<QPair<QByteArray, QByteArray>> headers; // names lower-cased
    QByteArray body;
    bool keepAlive = true;

    // The first value of a header (name in lower case), or empty.
    QByteArray header(const QByteArray &name) const;
};

} // namespace OpsDeck::DemoProvider
