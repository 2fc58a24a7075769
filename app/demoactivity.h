// Keeps the demo alive: now and then stops or starts a random instance through the REST API,
// so the console's live feed has something to show.
#pragma once

#include <QObject>
#include <QUrl>

class QNetworkAccessManager;
class QNetworkRequest;
class QTimer;

namespace OpsDeck {

class DemoActivity final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DemoActivity)

public:
    DemoActivity(const QUrl &baseUrl, const QString &operatorToken, QObject *parent = nullptr);

    // Registers callbacks for pending instances: most at `goodUrl`, some at `flakyUrl`, a few at
    // `deadUrl` (nothing listens), so deliveries succeed, retry and fail.
    void registerCallbacks(const QUrl &goodUrl, const QUrl &flakyUrl, const QUrl &deadUrl);
    void start(int intervalMs = 4000);

private:
    void tick();
    void act(const QByteArray &listBody);
    QNetworkRequest request(const QString &path) const;

    QUrl m_baseUrl;
    QString m_token;
    QNetworkAccessManager *m_network = nullptr; // child
    QTimer *m_timer = nullptr;                  // child
};

} // namespace OpsDeck
