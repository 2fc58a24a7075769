// Keeps the demo alive by stopping and starting random instances through the REST API.
#include "demoactivity.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRandomGenerator>
#include <QTimer>

namespace OpsDeck {

DemoActivity::DemoActivity(const QUrl &baseUrl, const QString &operatorToken, QObject *parent)
    : QObject(parent)
    , m_baseUrl(baseUrl)
    , m_token(operatorToken)
    , m_network(new QNetworkAccessManager(this))
    , m_timer(new QTimer(this))
{
    connect(m_timer, &QTimer::timeout, this, &DemoActivity::tick);
}

void DemoActivity::start(int intervalMs)
{
    m_timer->start(intervalMs);
}

void DemoActivity::tick()
{
    // A random page of instances; the first page alone would always pick the same few.
    const int offsetPick = QRandomGenerator::global()->bounded(5);
    QUrl url = m_baseUrl;
    url.setPath(QStringLiteral("/api/v1/instances"));
    url.setQuery(QStringLiteral("limit=%1").arg(20 * (offsetPick + 1)));
    QNetworkRequest request(url);
    request.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    QNetworkReply *reply = m_network->get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (reply->error() == QNetworkReply::NoError)
            act(reply->readAll());
    });
}

void DemoActivity::act(const QByteArray &listBody)
{
    const QJsonArray items = QJsonDocument::fromJson(listBody).object().value(QStringLiteral("items")).toArray();
    QList<QJsonObject> candidates;
    for (const QJsonValue &v : items) {
        const QString status = v.toObject().value(QStringLiteral("status")).toString();
        if (status == QLatin1String("RUNNING") || status == QLatin1String("STOPPED"))
            candidates.append(v.toObject());
    }
    if (candidates.isEmpty())
        return;
    const QJsonObject pick = candidates.at(QRandomGenerator::global()->bounded(int(candidates.size())));
    const bool running = pick.value(QStringLiteral("status")).toString() == QLatin1String("RUNNING");
    QUrl url = m_baseUrl;
    url.setPath(QStringLiteral("/api/v1/instances/%1/%2")
                    .arg(pick.value(QStringLiteral("id")).toInteger())
                    .arg(running ? QStringLiteral("stop") : QStringLiteral("start")));
    QNetworkRequest request(url);
    request.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    const QJsonObject body{{QStringLiteral("reason"), running ? QStringLiteral("demo: maintenance window")
                                                              : QStringLiteral("demo: maintenance over")}};
    QNetworkReply *reply = m_network->post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
}

} // namespace OpsDeck
