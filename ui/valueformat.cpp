// Reading dotted JSON paths, formatting field values and the server's problems.
#include "valueformat.h"

#include "models/apiclient.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>

namespace OpsDeck {

namespace {

// Compact JSON has no spaces, so a word-wrapping label could not break it: give it some.
QString breakable(QString json)
{
    json.replace(QStringLiteral("\",\""), QStringLiteral("\", \""));
    json.replace(QStringLiteral(",\""), QStringLiteral(", \""));
    json.replace(QStringLiteral("\":"), QStringLiteral("\": "));
    return json;
}

} // namespace

QJsonValue valueAt(const QJsonObject &object, const QString &dottedKey)
{
    const QStringList parts = dottedKey.split(QLatin1Char('.'));
    QJsonValue v = object;
    for (const QString &part : parts) {
        if (!v.isObject())
            return QJsonValue(QJsonValue::Undefined);
        v = v.toObject().value(part);
    }
    return v;
}

QString displayTimestamp(const QString &rfc3339)
{
    const QDateTime at = QDateTime::fromString(rfc3339, Qt::ISODateWithMs);
    if (!at.isValid())
        return rfc3339;
    return at.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString roleText(Actor role)
{
    switch (role) {
    case Actor::Operator: return QCoreApplication::translate("OpsDeck::Roles", "operator");
    case Actor::Provider: return QCoreApplication::translate("OpsDeck::Roles", "provider");
    case Actor::Owner: return QCoreApplication::translate("OpsDeck::Roles", "owner");
    case Actor::Controller: return QCoreApplication::translate("OpsDeck::Roles", "controller");
    case Actor::System: return QCoreApplication::translate("OpsDeck::Roles", "system");
    }
    return actorName(role);
}

QString roleText(const QString &code)
{
    const std::optional<Actor> role = actorFromName(code);
    return role ? roleText(*role) : code;
}

QString countdownText(qint64 msFromNow)
{
    // The context is written out in each call: lupdate reads only literal ones.
    if (msFromNow <= 0)
        return QCoreApplication::translate("OpsDeck::DetailPane", "now");
    // Rounded up: "in 0 s" would be a moment that has not come yet.
    const qint64 s = (msFromNow + 999) / 1000;
    if (s < 60)
        return QCoreApplication::translate("OpsDeck::DetailPane", "in %1 s").arg(s);
    if (s < 3600)
        return QCoreApplication::translate("OpsDeck::DetailPane", "in %1 min %2 s").arg(s / 60).arg(s % 60);
    if (s < 86400)
        return QCoreApplication::translate("OpsDeck::DetailPane", "in %1 h %2 min").arg(s / 3600).arg(s % 3600 / 60);
    return QCoreApplication::translate("OpsDeck::DetailPane", "in %1 d %2 h").arg(s / 86400).arg(s % 86400 / 3600);
}

QString displayText(FieldSpec::Type type, const QJsonValue &value)
{
    if (value.isNull() || value.isUndefined())
        return QCoreApplication::translate("OpsDeck::DetailPane", "—");
    switch (type) {
    case FieldSpec::Type::Timestamp:
        return displayTimestamp(value.toString());
    case FieldSpec::Type::Boolean:
        return value.toBool() ? QCoreApplication::translate("OpsDeck::DetailPane", "yes")
                              : QCoreApplication::translate("OpsDeck::DetailPane", "no");
    case FieldSpec::Type::Number:
        return QLocale().toString(value.toDouble(), 'g', 4);
    case FieldSpec::Type::Ratio:
        return percentText(value.toDouble());
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
        if (value.isDouble())
            return QString::number(value.toInteger());
        break;
    case FieldSpec::Type::Json:
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
        break;
    }
    if (value.isArray()) {
        QStringList items;
        bool allStrings = true;
        for (const QJsonValue &item : value.toArray()) {
            allStrings = allStrings && item.isString();
            items.append(item.toString());
        }
        if (allStrings)
            return items.join(QStringLiteral(", "));
        return breakable(QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact)));
    }
    if (value.isObject())
        return breakable(QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact)));
    if (value.isDouble())
        return QLocale::c().toString(value.toDouble(), 'g', 15);
    if (value.isBool())
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return value.toString();
}

QString problemText(const ApiResult &result)
{
    if (!result.problem)
        return QCoreApplication::translate("OpsDeck::MainWindow", "HTTP %1").arg(result.status);
    // No answer came: the console's own words say what failed, the network's what it saw.
    if (result.status == 0 && !result.problem->detail.isEmpty())
        return QCoreApplication::translate("OpsDeck::MainWindow", "%1: %2").arg(result.problem->title, result.problem->detail);
    return result.problem->detail.isEmpty() ? result.problem->title : result.problem->detail;
}

} // namespace OpsDeck
