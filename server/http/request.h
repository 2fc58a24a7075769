// One HTTP request as the routes see it: method, matched path ids, query, body and caller.
#pragma once

#include "caller.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QString>
#include <QUrlQuery>

#include <optional>
#include <utility>

class QHttpServerRequest;
class QHttpServerResponder;

namespace OpsDeck {

struct Request
{
    QByteArray method;
    QString path;
    QUrlQuery query;
    QByteArray body;
    QList<qint64> ids;            // the {id} segments of the matched route, in order
    std::optional<Caller> caller; // set on every route that requires a token
    const QHttpServerRequest *raw = nullptr;     // not owned; null once keepHeaders() copied them
    QList<std::pair<QByteArray, QByteArray>> keptHeaders;
    QHttpServerResponder *responder = nullptr;   // not owned; a deferring route moves from it
    // What the answer's Connection header says: "close" when the client asked for the connection
    // to end with this answer (a route that defers its answer says so when it writes it, and
    // ends the connection then), "keep-alive" to an HTTP/1.0 client that asked to keep the
    // connection, else nothing.
    QByteArray connection;
    // Asked as HEAD: answered as the GET, without the body, and never later (a long poll does
    // not wait for it).
    bool head = false;
    bool closeAfter() const { return connection == "close"; }
    // Set aside to run later (HttpServer): QHttpServer reuses its request for the connection's
    // next one, so the headers are copied and the raw request let go.
    void keepHeaders();
    // An Idempotency-Key this very request took and still holds: it was set aside after taking
    // it, and letting go of it needs the write lock too. Running it again goes on under the key
    // rather than finding it in use; ending without running lets go of it (HttpServer).
    struct HeldKey
    {
        QString caller;
        QString key;
        QElapsedTimer takenAt;
    };
    std::optional<HeldKey> heldKey;

    QByteArray header(const QByteArray &name) const;
    // Whether the request carries the header at all, even with an empty value.
    bool hasHeader(const QByteArray &name) const;
    QString queryValue(const QString &key) const;
    bool hasQuery(const QString &key) const { return query.hasQueryItem(key); }
    const Caller &who() const { return *caller; }
    qint64 id(int index = 0) const { return ids.value(index); }
};

// An id written the one way the server writes it: positive decimal, no sign, no leading zero, no
// spaces ("007", "+7" and " 7" are not the resource 7). Path segments and id filters alike.
std::optional<qint64> canonicalId(const QString &text);
// A count or a position written the same one way, zero included ("0", not "00", "+0" or " 0"):
// a sequence number, seconds to wait.
std::optional<qint64> canonicalNumber(const QString &text);

} // namespace OpsDeck
