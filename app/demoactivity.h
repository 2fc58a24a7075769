// Keeps the demo alive: now and then stops or starts a random instance through the REST API,
// so the console's live feed has something to show.
#pragma once

#include <QObject>
#include <QUrl>

class QNetworkAccessManager;
class QTimer;

namespace OpsDeck {

class DemoActivity final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DemoActivity)

public:
    DemoActivity(const QUrl &baseUrl, const QString &operatorToken, QObject *parent = nullptr);

    void start(int intervalMs = 4000);

private:
    void tick();
    void act(const QByteArray &listBody);

    QUrl m_baseUrl;
    QString m_token;
    QNetworkAccessManager *m_network = nullptr; // child
    QTimer *m_timer = nullptr;                  // child
};

} // namespace OpsDeck
