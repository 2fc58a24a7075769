// What the DeliveryApi's source files share: the filter's keys and answers to storage failures.
#pragma once

#include "core/problem.h"
#include "server/http/caller.h"
#include "server/http/response.h"

#include <QString>
#include <QStringList>

class QSqlQuery;

namespace OpsDeck::DeliveryApiSupport {

inline const QString kDelivery = QStringLiteral("delivery");
inline const QString kEndpoint = QStringLiteral("endpoint");
inline const QString kInstance = QStringLiteral("instance");
// The most deliveries one bulk retry touches.
constexpr int kMaxBulk = 10000;

// The delivery filter's keys, in the query string and in a bulk retry's body.
const QStringList &filterKeys();
// A provider caller's provider id; -1 for anyone else.
qint64 providerOf(const Caller &who);
// The failed statement's problem as the answer (the statement finished).
Response failedQuery(QSqlQuery &q);
// 409 endpoint-not-active: nothing is sent to a paused or disabled endpoint until it is resumed,
// so an action that would send now is refused; `then` says what to do once it is resumed.
Problem endpointNotActive(qint64 endpointId, const QString &state, const QString &then);

} // namespace OpsDeck::DeliveryApiSupport
