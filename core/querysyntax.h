// The query language's field names and operators, shared by the parser, the matcher and completion.
#pragma once

#include "query.h"

#include <QList>
#include <QString>

namespace OpsDeck::QuerySyntax {

struct FieldName
{
    QString name;
    int index = -1;
    bool age = false;
    bool preferred = false;
};

// The names a query may give the kind's fields: preferred forms in field order, then "age", then
// the aliases that are accepted but not advertised.
QList<FieldName> fieldNames(const ResourceKind &kind);
// A column title as a field name: lower case, anything but letters and digits one "_" ("Next
// attempt" -> "next_attempt").
QString titleAsName(const QString &title);
const FieldName *findField(const QList<FieldName> &names, const QString &typed);
bool isFieldChar(QChar c);

inline bool isComparison(QueryTerm::Op op)
{
    return op != QueryTerm::Op::Match && op != QueryTerm::Op::Equal;
}

} // namespace OpsDeck::QuerySyntax
