// Reading dotted JSON paths and turning field values into the text the detail pane shows.
#pragma once

#include "core/resourcekind.h"

#include <QJsonObject>
#include <QJsonValue>

namespace OpsDeck {

// "callback.url" -> object["callback"]["url"]; Undefined when any step is missing.
QJsonValue valueAt(const QJsonObject &object, const QString &dottedKey);
QString displayText(FieldSpec::Type type, const QJsonValue &value);
// Local time, to the second: what an operator compares with their clock.
QString displayTimestamp(const QString &rfc3339);

} // namespace OpsDeck
