// The query language's field names, and completion of what is being typed.
#include "querysyntax.h"

namespace OpsDeck {

namespace QuerySyntax {

namespace {

QString preferredName(const ResourceKind &kind, const FieldSpec &f)
{
    if (!kind.stateField.isEmpty() && f.key == kind.stateField)
        return QStringLiteral("state");
    if (f.type == FieldSpec::Type::Timestamp && f.key.endsWith(QLatin1String("_at")))
        return f.key.chopped(3);
    if (f.type == FieldSpec::Type::Id && !f.references.isEmpty() && f.key.endsWith(QLatin1String("_id"))
        && !f.key.contains(u'.'))
        return f.key.chopped(3);
    return f.key;
}

} // namespace

QList<FieldName> fieldNames(const ResourceKind &kind)
{
    QList<FieldName> names;
    auto add = [&names](const QString &name, int index, bool age, bool preferred) {
        for (const FieldName &n : std::as_const(names)) {
            if (n.name == name)
                return;
        }
        names.append(FieldName{name, index, age, preferred});
    };
    for (int i = 0; i < kind.fields.size(); ++i)
        add(preferredName(kind, kind.fields.at(i)), i, false, true);
    int ageIndex = kind.fieldIndex(u"created_at");
    if (ageIndex < 0) {
        for (int i = 0; i < kind.fields.size() && ageIndex < 0; ++i) {
            if (kind.fields.at(i).type == FieldSpec::Type::Timestamp)
                ageIndex = i;
        }
    }
    if (ageIndex >= 0)
        add(QStringLiteral("age"), ageIndex, true, true);
    // Aliases that are accepted but not advertised.
    for (int i = 0; i < kind.fields.size(); ++i)
        add(kind.fields.at(i).key, i, false, false);
    // "status" is the state, except where the kind has a last HTTP status (deliveries): the API
    // filters deliveries by that under the name "status", and the line must not read it otherwise.
    if (const int lastStatus = kind.fieldIndex(u"last_status"); lastStatus >= 0)
        add(QStringLiteral("status"), lastStatus, false, false);
    else if (!kind.stateField.isEmpty())
        add(QStringLiteral("status"), kind.fieldIndex(kind.stateField), false, false);
    for (int i = 0; i < kind.fields.size(); ++i) {
        const QString &key = kind.fields.at(i).key;
        if (key.contains(u'.'))
            add(key.section(u'.', -1), i, false, false);
    }
    // A column's title as the table shows it, in the console's language ("Object", "Objet"):
    // what a user reads in the header is what they type.
    for (int i = 0; i < kind.fields.size(); ++i) {
        const QString alias = titleAsName(kind.fields.at(i).title);
        if (!alias.isEmpty())
            add(alias, i, false, false);
    }
    return names;
}

QString titleAsName(const QString &title)
{
    QString name;
    for (const QChar c : title.toLower()) {
        if (isFieldChar(c) && c != u'.')
            name += c;
        else if (!name.isEmpty() && !name.endsWith(u'_'))
            name += u'_';
    }
    while (name.endsWith(u'_'))
        name.chop(1);
    return name;
}

const FieldName *findField(const QList<FieldName> &names, const QString &typed)
{
    for (const FieldName &n : names) {
        if (n.name.compare(typed, Qt::CaseInsensitive) == 0)
            return &n;
    }
    return nullptr;
}

bool isFieldChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'_' || c == u'.';
}

} // namespace QuerySyntax

using namespace QuerySyntax;

QStringList queryFieldNames(const ResourceKind &kind)
{
    QStringList names;
    for (const FieldName &n : fieldNames(kind)) {
        if (n.preferred)
            names << n.name;
    }
    return names;
}

QStringList queryCompletions(QStringView token, const ResourceKind &kind)
{
    QString prefix;
    if (token.startsWith(u'-')) {
        prefix = QStringLiteral("-");
        token = token.mid(1);
    }
    qsizetype end = 0;
    while (end < token.size() && isFieldChar(token.at(end)))
        ++end;
    const QList<FieldName> names = fieldNames(kind);
    QStringList out;
    if (end == token.size()) {
        for (const FieldName &n : names) {
            if (!n.preferred || !n.name.startsWith(token, Qt::CaseInsensitive))
                continue;
            const FieldSpec &spec = kind.fields.at(n.index);
            const bool compares = n.age || spec.type == FieldSpec::Type::Timestamp;
            out << prefix + n.name + (compares ? QStringLiteral(">") : QStringLiteral(":"));
        }
        return out;
    }
    const QStringView rest = token.mid(end);
    const qsizetype opLength = rest.startsWith(u"!=") ? 2 : (rest.startsWith(u':') || rest.startsWith(u'=')) ? 1 : 0;
    if (opLength == 0)
        return out;
    const FieldName *name = findField(names, token.left(end).toString().toLower());
    if (!name || name->age)
        return out;
    const FieldSpec &spec = kind.fields.at(name->index);
    const QString head = prefix + token.left(end + opLength).toString();
    // Completes the last of comma-separated alternatives.
    const QStringView value = token.mid(end + opLength);
    const qsizetype comma = value.lastIndexOf(u',');
    const QString before = comma < 0 ? QString() : value.left(comma + 1).toString();
    const QStringView partial = comma < 0 ? value : value.mid(comma + 1);
    QStringList candidates;
    if (spec.type == FieldSpec::Type::State)
        candidates = kind.states;
    else if (spec.type == FieldSpec::Type::Boolean)
        candidates = {QStringLiteral("true"), QStringLiteral("false")};
    for (const QString &c : std::as_const(candidates)) {
        if (c.startsWith(partial, Qt::CaseInsensitive))
            out << head + before + c.toLower();
    }
    return out;
}

} // namespace OpsDeck
