// The outcome of one callback attempt, as the attempt log records it.
#include "attemptresult.h"

#include <QJsonArray>

namespace OpsDeck {

namespace {

QJsonArray headersToJson(const AttemptResult::Headers &headers)
{
    // An array of pairs keeps repeated headers and their order, which an object would not.
    QJsonArray array;
    for (const auto &[name, value] : headers)
        array.append(QJsonArray{QString::fromLatin1(name), QString::fromUtf8(value)});
    return array;
}

} // namespace

QJsonObject AttemptResult::toJson() const
{
    QJsonObject json;
    json.insert(QLatin1String("started_at"), startedAt.toUTC().toString(Qt::ISODateWithMs));
    json.insert(QLatin1String("url"), url.toString());
    json.insert(QLatin1String("delivered"), delivered);
    json.insert(QLatin1String("http_status"), httpStatus > 0 ? QJsonValue(httpStatus) : QJsonValue());
    json.insert(QLatin1String("error_class"), errorClass.isEmpty() ? QJsonValue() : QJsonValue(errorClass));
    json.insert(QLatin1String("error_message"), errorMessage.isEmpty() ? QJsonValue() : QJsonValue(errorMessage));
    json.insert(QLatin1String("gone"), gone);
    json.insert(QLatin1String("retry_after"),
                retryAfter ? QJsonValue(retryAfter->toUTC().toString(Qt::ISODate)) : QJsonValue());
    json.insert(QLatin1String("latency_ms"), latencyMs);
    json.insert(QLatin1String("webhook_timestamp"), webhookTimestamp);
    json.insert(QLatin1String("request_headers"), headersToJson(requestHeaders));
    json.insert(QLatin1String("request_body"), QString::fromUtf8(requestBody));
    json.insert(QLatin1String("response_headers"), headersToJson(responseHeaders));
    json.insert(QLatin1String("response_body"), QString::fromUtf8(responseBody));
    json.insert(QLatin1String("response_truncated"), responseTruncated);
    return json;
}

} // namespace OpsDeck
