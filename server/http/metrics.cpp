// Prometheus counters and latency histograms of the HTTP API, by route and status.
#include "metrics.h"

#include <QMap>
#include <QStringList>

namespace OpsDeck {

void Metrics::record(const QString &route, const QByteArray &method, int status, double seconds)
{
    const QString m = QString::fromLatin1(method);
    ++m_requests[route + QLatin1Char('\t') + m + QLatin1Char('\t') + QString::number(status)];
    Series &s = m_latency[route + QLatin1Char('\t') + m];
    ++s.count;
    s.sum += seconds;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
        if (seconds <= kBuckets[i])
            ++s.buckets[i];
    }
}

QByteArray Metrics::text(const QByteArray &gauges) const
{
    QByteArray out;
    out += "# HELP opsdeck_http_requests_total HTTP requests by route, method and status.\n"
           "# TYPE opsdeck_http_requests_total counter\n";
    // QMap: sorted, so that scrapes diff cleanly.
    const auto &requests = m_requests;
    for (auto it = requests.cbegin(); it != requests.cend(); ++it) {
        const QStringList k = it.key().split(QLatin1Char('\t'));
        out += QStringLiteral("opsdeck_http_requests_total{route=\"%1\",method=\"%2\",status=\"%3\"} %4\n")
                   .arg(k.at(0), k.at(1), k.at(2))
                   .arg(it.value())
                   .toUtf8();
    }
    out += "# HELP opsdeck_http_request_duration_seconds HTTP request latency by route and method.\n"
           "# TYPE opsdeck_http_request_duration_seconds histogram\n";
    const auto &latency = m_latency;
    for (auto it = latency.cbegin(); it != latency.cend(); ++it) {
        const QStringList k = it.key().split(QLatin1Char('\t'));
        const QString labels = QStringLiteral("route=\"%1\",method=\"%2\"").arg(k.at(0), k.at(1));
        for (size_t i = 0; i < kBuckets.size(); ++i) {
            out += QStringLiteral("opsdeck_http_request_duration_seconds_bucket{%1,le=\"%2\"} %3\n")
                       .arg(labels)
                       .arg(kBuckets[i])
                       .arg(it.value().buckets[i])
                       .toUtf8();
        }
        out += QStringLiteral("opsdeck_http_request_duration_seconds_bucket{%1,le=\"+Inf\"} %2\n"
                              "opsdeck_http_request_duration_seconds_sum{%1} %3\n"
                              "opsdeck_http_request_duration_seconds_count{%1} %2\n")
                   .arg(labels)
                   .arg(it.value().count)
                   .arg(it.value().sum)
                   .toUtf8();
    }
    out += gauges;
    return out;
}

} // namespace OpsDeck
