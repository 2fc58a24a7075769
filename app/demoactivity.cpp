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

QNetworkRequest DemoActivity::request(const QString &path) const
{
    QUrl url = m_baseUrl;
    const qsizetype query = path.indexOf(QLatin1Char('?'));
    url.setPath(path.left(query));
    if (query >= 0)
        url.setQuery(path.mid(query + 1));
    QNetworkRequest request(url);
    request.setRawHeader("Authorization", "Bearer " + m_token.toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    return request;
}

void DemoActivity::registerCallbacks(const QUrl &goodUrl, const QUrl &flakyUrl, const QUrl &deadUrl)
{
    QNetworkReply *reply = m_network->get(request(QStringLiteral("/api/v1/instances?status=PENDING&limit=1000")));
    connect(reply, &QNetworkReply::finished, this, [this, reply, goodUrl, flakyUrl, deadUrl] {
        reply->deleteLater();
        const QJsonArray items
            = QJsonDocument::fromJson(reply->readAll()).object().value(QStringLiteral("items")).toArray();
        // Leave a few pending so that state stays visible too.
        for (int i = 0; i < items.size(); ++i) {
            if (i % 5 == 4)
                continue;
            const qint64 id = items.at(i).toObject().value(QStringLiteral("id")).toInteger();
            const QUrl url = (i % 7 == 3) ? deadUrl : (i % 3 == 1) ? flakyUrl : goodUrl;
            const QJsonObject body{{QStringLiteral("callback_url"), url.toString()},
                                   {QStringLiteral("status"), QStringLiteral("RUNNING")},
                                   {QStringLiteral("reason"), QStringLiteral("demo: provider registered")}};
            QNetworkReply *r = m_network->post(request(QStringLiteral("/api/v1/instances/%1/register").arg(id)),
                                               QJsonDocument(body).toJson(QJsonDocument::Compact));
            connect(r, &QNetworkReply::finished, r, &QObject::deleteLater);
        }
    });
}

void DemoActivity::start(int intervalMs)
{
    m_timer->start(intervalMs);
}

void DemoActivity::tick()
{
    // A random page of instances; the first page alone would always pick the same few.
    const int offsetPick = QRandomGenerator::global()->bounded(5);
    QNetworkReply *reply
        = m_network->get(request(QStringLiteral("/api/v1/instances?limit=%1").arg(20 * (offsetPick + 1))));
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
    const QString path = QStringLiteral("/api/v1/instances/%1/%2")
                             .arg(pick.value(QStringLiteral("id")).toInteger())
                             .arg(running ? QStringLiteral("stop") : QStringLiteral("start"));
    const QJsonObject body{{QStringLiteral("reason"), running ? QStringLiteral("demo: maintenance window")
                                                              : QStringLiteral("demo: maintenance over")}};
    QNetworkReply *reply = m_network->post(request(path), QJsonDocument(body).toJson(QJsonDocument::Compact));
    connect(reply, &QNetworkReply::finished, reply, &QObject::deleteLater);
}

} // namespace OpsDeck
