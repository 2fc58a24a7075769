// What the DeliveryRepository's source files share: feed kinds and SQL parameter helpers.
#include "deliverysql.h"

#include "server/storage/database.h"

#include <QSqlQuery>
#include <QStringList>

namespace OpsDeck::DeliverySql {

QVariant nullText()
{
    return QVariant(QMetaType::fromType<QString>());
}

QVariant textOrNull(const QString &text)
{
    return text.isEmpty() ? nullText() : QVariant(text);
}

Problem failed(const QSqlQuery &q)
{
    return Database::sqlProblem(q);
}

QString idList(const QList<qint64> &ids)
{
    QStringList parts;
    parts.reserve(ids.size());
    for (qint64 id : ids)
        parts.append(QString::number(id));
    return parts.join(QLatin1Char(','));
}

} // namespace OpsDeck::DeliverySql
