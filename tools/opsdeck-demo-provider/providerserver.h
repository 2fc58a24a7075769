// The demo provider's receiver: verifies signatures, records requests and answers per fault mode.
#pragma once

#include "httprequest.h"
#include "requestlog.h"

#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QSet>
#include <QTcpServer>

#include <optional>

namespace OpsDeck::DemoProvider {

class HttpConnection;

// Every path except GET /stats is a webhook endpoint. Its first segment picks the fault mode
// (/ok/…, /fail/…, /gone/…, /throttle[/<s>]/…, /unavailable[/<s>]/…, /hang/…, /slow[/<ms>]/…,
// /redirect/…, /flaky[/<percent>]/…, /hang-after[/<n>[/<ms>]]/…); any other path uses the default mode, so one process
// serves many endpoints with different behaviour.
class ProviderServer final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ProviderServer)

public:
    enum class Mode { Ok, Fail, Gone, Throttle, Unavailable, Hang, Slow, Redirect, Flaky, HangAfter };

    struct Options
    {
        QList<QByteArray> secrets; // as given on the command line ("whsec_…")
        QString logPath;
        int flushIntervalMs = 200;
        Mode defaultMode = Mode::Ok;
        int failPercent = 0;     // default-mode paths answer 500 this often
        int retryAfterSecs = 5;  // for throttle and unavailable
        int delayMs = 1000;      // for slow
        int toleranceSecs = 300; // webhook-timestamp tolerance
        bool rejectInvalid = false;
    };

    static std::optional<Mode> modeFromName(const QString &name);
    static QString modeName(Mode mode);
    static QStringList modeNames();

    explicit ProviderServer(Options options, QObject *parent = nullptr);

    // Validates the secrets and opens the log; an error message or an empty string.
    QString start();
    // Adds a listener; may be called several times so that one process offers many host:port
    // endpoints (a sender keeps separate connection pools per host:port). Returns the port
    // bound, or 0 with an error message.
    quint16 listen(const QHostAddress &address, quint16 port, QString *error);
    void flushLog() { m_log.flush(); }

private:
    struct Route
    {
        Mode mode = Mode::Ok;
        int parameter = -1; // the numeric segment after the mode, when there is one
        int second = -1;    // a numeric segment right after that one (hang-after's delay)
        bool isDefault = true;
    };

    void accept(QTcpServer *server);
    void handle(HttpConnection *connection, const HttpRequest &request);
    Route routeFor(const QByteArray &path) const;
    QByteArray statsJson() const;

    Options m_options;
    QList<QByteArray> m_keys;
    RequestLog m_log;

    qint64 m_received = 0;
    qint64 m_valid = 0;
    qint64 m_invalid = 0;
    qint64 m_unsigned = 0;
    qint64 m_malformed = 0;
    qint64 m_duplicates = 0;
    qint64 m_hanging = 0;
    QHash<QString, qint64> m_byStatus;
    QHash<QString, qint64> m_byMode;
    QSet<QByteArray> m_webhookIds;
    QHash<QByteArray, qint64> m_pathRequests; // hang-after paths -> requests so far
};

} // namespace OpsDeck::DemoProvider
