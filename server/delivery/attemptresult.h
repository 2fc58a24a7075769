// The outcome of one callback attempt, as the attempt log records it.
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>
#include <QUrl>

#include <optional>

namespace OpsDeck {

struct AttemptResult
{
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    // Stable error classes (spec §3), empty when delivered.
    static inline const QString Dns = QStringLiteral("dns");
    static inline const QString Connect = QStringLiteral("connect");
    static inline const QString Tls = QStringLiteral("tls");
    static inline const QString Timeout = QStringLiteral("timeout");
    static inline const QString Http = QStringLiteral("http");
    static inline const QString InvalidUrl = QStringLiteral("invalid-url");
    // A secret that does not decode; the attempt was not sent.
    static inline const QString Signing = QStringLiteral("signing");
    // Logged by the outbox, not the sender: the worker that held the delivery stopped (or lost
    // its storage) before recording the attempt's outcome, so nobody knows it.
    static inline const QString Interrupted = QStringLiteral("interrupted");

    bool delivered = false;   // a 2xx within the timeout
    int httpStatus = 0;       // 0 when no response arrived
    QString errorClass;       // one of the above, empty when delivered
    QString errorMessage;
    bool gone = false;        // 410: disable the endpoint
    std::optional<QDateTime> retryAfter; // from a 429/503 Retry-After, already capped
    QUrl url;
    qint64 webhookTimestamp = 0;
    Headers requestHeaders;   // signatures redacted
    QByteArray requestBody;
    Headers responseHeaders;
    QByteArray responseBody;  // at most MaxResponseBodyBytes
    bool responseTruncated = false;
    qint64 latencyMs = 0;
    QDateTime startedAt;

    static constexpr qsizetype MaxResponseBodyBytes = 4096;

    // snake_case members for the attempt log and the API; bodies as UTF-8 text.
    QJsonObject toJson() const;
};

} // namespace OpsDeck
