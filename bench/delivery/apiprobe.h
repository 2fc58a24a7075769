// Writes through the REST API at a steady pace while deliveries run: how long each one takes.
#pragma once

#include <QElapsedTimer>
#include <QList>
#include <QNetworkAccessManager>
#include <QObject>
#include <QTimer>
#include <QUrl>

namespace OpsDeck::Bench {

class ApiProbe final : public QObject
{
public:
    // One POST /api/v1/organizations every `intervalMs`, as `token`, on the caller's thread.
    ApiProbe(const QUrl &baseUrl, const QString &token, int intervalMs);

    void start();
    void stop();

    struct Result
    {
        int samples = 0;
        int failed = 0; // answers other than 201
        double p50 = 0; // ms
        double p99 = 0;
        double max = 0;
    };
    Result result() const;

private:
    void post();

    QUrl m_base;
    QByteArray m_authorization;
    QNetworkAccessManager m_network;
    QTimer m_timer;
    QList<double> m_ms;
    int m_failed = 0;
    int m_sent = 0;
};

} // namespace OpsDeck::Bench
