// What the DeliveryRepository's source files share: feed kinds and SQL parameter helpers.
#pragma once

#include "core/problem.h"

#include <QList>
#include <QString>
#include <QVariant>

class QSqlQuery;

namespace OpsDeck::DeliverySql {

inline const QString kDelivery = QStringLiteral("delivery");
inline const QString kEndpoint = QStringLiteral("endpoint");

QVariant nullText();
QVariant textOrNull(const QString &text);
// The text, or a null QString (SQL NULL) when it is empty: textOrNull() for a Statement.
inline QString emptyAsNull(const QString &text) { return text.isEmpty() ? QString() : text; }
Problem failed(const QSqlQuery &q);
// "1,2,3", for ids written into a statement's text.
QString idList(const QList<qint64> &ids);

} // namespace OpsDeck::DeliverySql
