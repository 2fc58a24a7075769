// RFC 9457 problem details.
#include "problem.h"

#include <QJsonDocument>

namespace OpsDeck {

QString Problem::type() const
{
    return QStringLiteral("urn:opsdeck:problem:") + code;
}

QJsonObject Problem::toJson() const
{
    QJsonObject o = extensions;
    o.insert(QStringLiteral("type"), type());
    o.insert(QStringLiteral("title"), title);
    o.insert(QStringLiteral("status"), status);
    o.insert(QStringLiteral("code"), code);
    if (!detail.isEmpty())
        o.insert(QStringLiteral("detail"), detail);
    return o;
}

QByteArray Problem::toBytes() const
{
    return QJsonDocument(toJson()).toJson(QJsonDocument::Compact);
}

Problem Problem::fromJson(int httpStatus, const QByteArray &body)
{
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(body, &err);
    if (err.error == QJsonParseError::NoError && doc.isObject()) {
        QJsonObject o = doc.object();
        const QString code = o.value(QStringLiteral("code")).toString();
        if (!code.isEmpty() || o.contains(QStringLiteral("title"))) {
            Problem p;
            p.status = o.value(QStringLiteral("status")).toInt(httpStatus);
            p.code = code.isEmpty() ? QStringLiteral("unknown") : code;
            p.title = o.value(QStringLiteral("title")).toString();
            p.detail = o.value(QStringLiteral("detail")).toString();
            for (const char *k : {"type", "title", "status", "code", "detail"})
                o.remove(QLatin1String(k));
            p.extensions = o;
            return p;
        }
    }
    return make(httpStatus, QStringLiteral("unexpected-response"),
                QStringLiteral("Unexpected response"),
                QString::fromUtf8(body.left(512)));
}

Problem Problem::make(int status, const QString &code, const QString &title, const QString &detail)
{
    Problem p;
    p.status = status;
    p.code = code;
    p.title = title;
    p.detail = detail;
    return p;
}

Problem &Problem::with(const QString &key, const QJsonValue &value)
{
    extensions.insert(key, value);
    return *this;
}

} // namespace OpsDeck
