// One HTTP answer as the routes produce it, before it is written to the socket.
#pragma once

#include "core/problem.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QPair>

namespace OpsDeck {

struct Response
{
    int status = 200;
    QByteArray body;
    QByteArray contentType = QByteArrayLiteral("application/json");
    QList<QPair<QByteArray, QByteArray>> headers;
    bool deferred = false; // the route kept the responder and answers later (long-poll)

    static Response json(int status, const QJsonObject &object);
    static Response problem(const Problem &problem);
    static Response text(int status, const QByteArray &body, const QByteArray &contentType);
    static Response later();
    // For one object: ETag "<version>".
    Response &withETag(qint64 version);
    Response &withHeader(const QByteArray &name, const QByteArray &value);
};

} // namespace OpsDeck
