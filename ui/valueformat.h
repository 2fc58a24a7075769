// Reading dotted JSON paths and turning field values, and the server's answers, into text.
#pragma once

#include "core/actor.h"
#include "core/resourcekind.h"

#include <QJsonObject>
#include <QJsonValue>

namespace OpsDeck {

struct ApiResult;

// "callback.url" -> object["callback"]["url"]; Undefined when any step is missing.
QJsonValue valueAt(const QJsonObject &object, const QString &dottedKey);
QString displayText(FieldSpec::Type type, const QJsonValue &value);
// Local time, to the second: what an operator compares with their clock.
QString displayTimestamp(const QString &rfc3339);
// A role as the console's language names it ("operator", "opérateur"); actorName() is the
// role's code, which the server and the filters speak.
QString roleText(Actor role);
// The same for a role's code as the server sends it; an unknown code is shown as it is.
QString roleText(const QString &code);
// How far away a moment is, to the unit that matters: "in 45 s", "in 3 min 5 s", "in 2 h 5 min",
// "in 3 d 4 h"; "now" when it has come.
QString countdownText(qint64 msFromNow);
// What the server said, in its words: a problem's detail names the blocking objects and the
// allowed actions; "HTTP 500" when the answer carried no problem.
QString problemText(const ApiResult &result);

} // namespace OpsDeck
