// Prometheus counters and latency histograms of the HTTP API, by route and status.
#pragma once

#include <QByteArray>
#include <QMap>
#include <QString>

#include <array>

namespace OpsDeck {

class Metrics final
{
public:
    void record(const QString &route, const QByteArray &method, int status, double seconds);
    // The exposition text; `gauges` are appended as-is ("name value" lines with HELP/TYPE).
    QByteArray text(const QByteArray &gauges) const;

private:
    static constexpr std::array<double, 11> kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                     0.05, 0.1, 0.25, 1.0, 5.0};
    struct Series
    {
        quint64 count = 0;
        double sum = 0;
        std::array<quint64, kBuckets.size()> buckets{};
    };
    QMap<QString, quint64> m_requests;  // key: route \t method \t status
    QMap<QString, Series> m_latency;    // key: route \t method
};

} // namespace OpsDeck
