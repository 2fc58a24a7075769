// Writes through the REST API at a steady pace while deliveries run: how long each one takes.
#include "apiprobe.h"

#include <QNetworkReply>
#include <QNetworkRequest>

#include <algorithm>
#include <memory>

namespace OpsDeck::Bench {

ApiProbe::ApiProbe(const QUrl &baseUrl, const QString &token, int intervalMs)
    : m_base(baseUrl)
    , m_authorization("Bearer " + token.toUtf8())
{
    m_timer.setInterval(intervalMs);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &ApiProbe::post);
}

void ApiProbe::start()
{
    m_timer.start();
}

void ApiProbe::stop()
{
    m_timer.stop();
}

void ApiProbe::post()
{
    QNetworkRequest request(QUrl(m_base.toString() + QStringLiteral("/api/v1/organizations")));
    request.setRawHeader("Authorization", m_authorization);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    auto clock = std::make_shared<QElapsedTimer>();
    clock->start();
    QNetworkReply *reply = m_network.post(request, QStringLiteral(R"({"name": "probe %1"})").arg(++m_sent).toUtf8());
    connect(reply, &QNetworkReply::finished, this, [this, reply, clock] {
        reply->deleteLater();
        if (reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 201)
            m_ms.append(double(clock->nsecsElapsed()) / 1e6);
        else
            ++m_failed;
    });
}

ApiProbe::Result ApiProbe::result() const
{
    Result r;
    QList<double> ms = m_ms;
    std::sort(ms.begin(), ms.end());
    r.samples = int(ms.size());
    r.failed = m_failed;
    if (!ms.isEmpty()) {
        r.p50 = ms.at(ms.size() / 2);
        r.p99 = ms.at(std::min<qsizetype>(ms.size() - 1, ms.size() * 99 / 100));
        r.max = ms.last();
    }
    return r;
}

} // namespace OpsDeck::Bench
