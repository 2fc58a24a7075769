// The filter query line: tokenizer, parser against a resource kind, matcher and completion.
#include "query.h"

#include <QCoreApplication>
#include <QDate>

#include <algorithm>

namespace OpsDeck {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("OpsDeck::Query", text);
}

struct FieldName
{
    QString name;
    int index = -1;
    bool age = false;
    bool preferred = false;
};

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
    if (!kind.stateField.isEmpty())
        add(QStringLiteral("status"), kind.fieldIndex(kind.stateField), false, false);
    for (int i = 0; i < kind.fields.size(); ++i) {
        const QString &key = kind.fields.at(i).key;
        if (key.contains(u'.'))
            add(key.section(u'.', -1), i, false, false);
    }
    return names;
}

const FieldName *findField(const QList<FieldName> &names, const QString &typed)
{
    for (const FieldName &n : names) {
        if (n.name.compare(typed, Qt::CaseInsensitive) == 0)
            return &n;
    }
    return nullptr;
}

struct Token
{
    QString text;      // quotes removed
    int position = 0;
    bool quotedWhole = false; // the whole token was one quoted phrase
};

bool isFieldChar(QChar c)
{
    return c.isLetterOrNumber() || c == u'_' || c == u'.';
}

std::optional<qint64> parseDate(QStringView text)
{
    if (text.size() == 10) {
        const QDate date = QDate::fromString(text.toString(), Qt::ISODate);
        if (!date.isValid())
            return std::nullopt;
        return QDate(1970, 1, 1).daysTo(date) * 86400000LL;
    }
    return parseTimestamp(text);
}

bool compareValues(double a, QueryTerm::Op op, double b)
{
    switch (op) {
    case QueryTerm::Op::Match:
    case QueryTerm::Op::Equal:
        return a == b;
    case QueryTerm::Op::Less:
        return a < b;
    case QueryTerm::Op::LessEqual:
        return a <= b;
    case QueryTerm::Op::Greater:
        return a > b;
    case QueryTerm::Op::GreaterEqual:
        return a >= b;
    }
    return false;
}

bool compareValues(qint64 a, QueryTerm::Op op, qint64 b)
{
    switch (op) {
    case QueryTerm::Op::Match:
    case QueryTerm::Op::Equal:
        return a == b;
    case QueryTerm::Op::Less:
        return a < b;
    case QueryTerm::Op::LessEqual:
        return a <= b;
    case QueryTerm::Op::Greater:
        return a > b;
    case QueryTerm::Op::GreaterEqual:
        return a >= b;
    }
    return false;
}

bool isComparison(QueryTerm::Op op)
{
    return op != QueryTerm::Op::Match && op != QueryTerm::Op::Equal;
}

QString opText(QueryTerm::Op op, bool negated)
{
    switch (op) {
    case QueryTerm::Op::Match:
        return QStringLiteral(":");
    case QueryTerm::Op::Equal:
        return negated ? QStringLiteral("!=") : QStringLiteral("=");
    case QueryTerm::Op::Less:
        return QStringLiteral("<");
    case QueryTerm::Op::LessEqual:
        return QStringLiteral("<=");
    case QueryTerm::Op::Greater:
        return QStringLiteral(">");
    case QueryTerm::Op::GreaterEqual:
        return QStringLiteral(">=");
    }
    return {};
}

class Parser
{
public:
    Parser(QStringView text, const ResourceKind &kind)
        : m_text(text), m_kind(kind), m_names(fieldNames(kind))
    {
    }

    QueryParse run()
    {
        QueryParse result;
        for (int i = 0; i < m_kind.fields.size(); ++i) {
            const FieldSpec &f = m_kind.fields.at(i);
            if (f.type == FieldSpec::Type::Text || f.type == FieldSpec::Type::State || f.key == QLatin1String("id"))
                result.query.textFields.append(i);
        }
        QList<Token> tokens;
        if (!tokenize(&tokens, &result.error))
            return result;
        for (const Token &token : std::as_const(tokens)) {
            if (!parseToken(token, &result.query, &result.error))
                return result;
        }
        return result;
    }

private:
    bool tokenize(QList<Token> *tokens, QueryError *error)
    {
        const qsizetype n = m_text.size();
        qsizetype i = 0;
        while (i < n) {
            if (m_text.at(i).isSpace()) {
                ++i;
                continue;
            }
            Token token;
            token.position = int(i);
            token.quotedWhole = m_text.at(i) == u'"';
            while (i < n && !m_text.at(i).isSpace()) {
                if (m_text.at(i) == u'"') {
                    const qsizetype close = m_text.indexOf(u'"', i + 1);
                    if (close < 0) {
                        *error = QueryError{int(i), int(n - i), tr("unterminated quote")};
                        return false;
                    }
                    token.text += m_text.mid(i + 1, close - i - 1);
                    i = close + 1;
                    if (i < n && !m_text.at(i).isSpace())
                        token.quotedWhole = false;
                } else {
                    token.text += m_text.at(i);
                    ++i;
                }
            }
            tokens->append(token);
        }
        return true;
    }

    bool parseToken(const Token &token, Query *query, QueryError *error)
    {
        const QString &text = token.text;
        if (token.quotedWhole) {
            if (!text.isEmpty())
                query->words.append(QueryWord{text, false, token.position});
            return true;
        }
        qsizetype start = 0;
        bool negated = false;
        if (text.startsWith(u'-')) {
            negated = true;
            start = 1;
        }
        qsizetype end = start;
        while (end < text.size() && isFieldChar(text.at(end)))
            ++end;
        QueryTerm::Op op = QueryTerm::Op::Match;
        qsizetype opLength = 0;
        if (end > start && end < text.size()) {
            const QStringView rest = QStringView(text).mid(end);
            if (rest.startsWith(u"!=")) {
                op = QueryTerm::Op::Equal, opLength = 2, negated = !negated;
            } else if (rest.startsWith(u"<=")) {
                op = QueryTerm::Op::LessEqual, opLength = 2;
            } else if (rest.startsWith(u">=")) {
                op = QueryTerm::Op::GreaterEqual, opLength = 2;
            } else if (rest.startsWith(u':')) {
                op = QueryTerm::Op::Match, opLength = 1;
            } else if (rest.startsWith(u'=')) {
                op = QueryTerm::Op::Equal, opLength = 1;
            } else if (rest.startsWith(u'<')) {
                op = QueryTerm::Op::Less, opLength = 1;
            } else if (rest.startsWith(u'>')) {
                op = QueryTerm::Op::Greater, opLength = 1;
            }
        }
        if (opLength == 0) {
            const QString word = text.mid(start);
            if (!word.isEmpty())
                query->words.append(QueryWord{word, negated, token.position});
            return true;
        }

        // Positions in the original line: quotes only ever appear in the value part.
        const int fieldPos = token.position + int(start);
        const int valuePos = token.position + int(end + opLength);
        const QString typed = text.mid(start, end - start).toLower();
        const FieldName *name = findField(m_names, typed);
        if (!name) {
            QStringList known;
            for (const FieldName &n : std::as_const(m_names)) {
                if (n.preferred)
                    known << n.name;
            }
            *error = QueryError{fieldPos, int(end - start),
                                tr("unknown field '%1' (known: %2)").arg(typed, known.join(QLatin1String(", ")))};
            return false;
        }
        const FieldSpec &spec = m_kind.fields.at(name->index);
        QueryTerm term;
        term.field = typed;
        term.fieldIndex = name->index;
        term.type = spec.type;
        term.references = spec.references;
        term.op = op;
        term.negated = negated;
        term.position = token.position;
        const QString value = text.mid(end + opLength);
        const int valueLength = std::max(1, int(value.size()));
        auto fail = [&](const QString &message) {
            *error = QueryError{valuePos, valueLength, message};
            return false;
        };
        if (value.isEmpty())
            return fail(tr("%1 needs a value").arg(typed));
        const QString opShown = opText(op, negated);

        if (name->age) {
            if (!isComparison(op))
                return fail(tr("%1 compares with <, <=, > or >= (e.g. %1>1h)").arg(typed));
            const auto age = parseDuration(value);
            if (!age)
                return fail(tr("%1 needs a duration like 1h, 30m, 2d").arg(typed));
            term.ageMs = age;
            term.values = {value};
            query->terms.append(term);
            return true;
        }

        switch (spec.type) {
        case FieldSpec::Type::Timestamp:
            if (isComparison(op)) {
                if (const auto age = parseDuration(value)) {
                    term.ageMs = age;
                } else if (const auto when = parseDate(value)) {
                    term.integers = {*when};
                } else {
                    return fail(tr("%1 needs a duration like 1h, 30m, 2d or a date like 2026-11-29").arg(typed));
                }
                term.values = {value};
            } else {
                if (value.size() != 10 || !parseDate(value))
                    return fail(tr("%1 needs a date like 2026-11-29 (or compare: %1>1h)").arg(typed));
                term.values = {value};
                term.integers = {*parseDate(value)};
            }
            break;
        case FieldSpec::Type::Id:
        case FieldSpec::Type::Integer: {
            term.values = isComparison(op) ? QStringList{value} : value.split(u',', Qt::SkipEmptyParts);
            bool allNumbers = true;
            for (const QString &v : std::as_const(term.values)) {
                bool ok = false;
                const qint64 n = v.toLongLong(&ok);
                allNumbers = allNumbers && ok;
                term.integers.append(n);
            }
            if (!allNumbers) {
                if (spec.references.isEmpty() || isComparison(op))
                    return fail(tr("%1 needs a number").arg(typed));
                term.integers.clear(); // compared by the referenced object's name
            }
            break;
        }
        case FieldSpec::Type::Number: {
            bool ok = false;
            const double d = value.toDouble(&ok);
            if (!ok)
                return fail(tr("%1 needs a number").arg(typed));
            term.values = {value};
            term.numbers = {d};
            break;
        }
        case FieldSpec::Type::Boolean: {
            const QString v = value.toLower();
            if (isComparison(op))
                return fail(tr("%1 compares only with ':', '=' or '!=', not '%2'").arg(typed, opShown));
            if (v == QLatin1String("true") || v == QLatin1String("yes"))
                term.integers = {1};
            else if (v == QLatin1String("false") || v == QLatin1String("no"))
                term.integers = {0};
            else
                return fail(tr("%1 needs true or false").arg(typed));
            term.values = {v};
            break;
        }
        case FieldSpec::Type::State:
            if (isComparison(op))
                return fail(tr("%1 compares only with ':', '=' or '!=', not '%2'").arg(typed, opShown));
            term.values = value.split(u',', Qt::SkipEmptyParts);
            // Values are not checked against the known states: composite and future states
            // must stay searchable, and a query remembered per view may name a state of another kind.
            break;
        case FieldSpec::Type::Text:
        case FieldSpec::Type::Json:
            if (isComparison(op))
                return fail(tr("%1 compares only with ':', '=' or '!=', not '%2'").arg(typed, opShown));
            term.values = value.split(u',', Qt::SkipEmptyParts);
            break;
        }
        if (term.values.isEmpty())
            return fail(tr("%1 needs a value").arg(typed));
        query->terms.append(term);
        return true;
    }

    QStringView m_text;
    const ResourceKind &m_kind;
    QList<FieldName> m_names;
};

bool valueMatches(const QueryTerm &term, const QueryRow &row, qint64 nowMs)
{
    const QVariant v = row.value(term.fieldIndex);
    if (!v.isValid())
        return false;
    switch (term.type) {
    case FieldSpec::Type::Timestamp: {
        const qint64 t = v.toLongLong();
        if (term.ageMs)
            return compareValues(nowMs - t, term.op, *term.ageMs);
        if (term.integers.isEmpty())
            return false;
        if (!isComparison(term.op))
            return t >= term.integers.first() && t < term.integers.first() + 86400000LL;
        return compareValues(t, term.op, term.integers.first());
    }
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer: {
        const qint64 n = v.toLongLong();
        if (!term.integers.isEmpty()) {
            return std::any_of(term.integers.cbegin(), term.integers.cend(),
                               [&](qint64 wanted) { return compareValues(n, term.op, wanted); });
        }
        const QString name = row.referenceName(term.references, n);
        if (name.isEmpty())
            return false;
        return std::any_of(term.values.cbegin(), term.values.cend(), [&](const QString &wanted) {
            return term.op == QueryTerm::Op::Equal ? name.compare(wanted, Qt::CaseInsensitive) == 0
                                                   : name.contains(wanted, Qt::CaseInsensitive);
        });
    }
    case FieldSpec::Type::Number:
        return !term.numbers.isEmpty() && compareValues(v.toDouble(), term.op, term.numbers.first());
    case FieldSpec::Type::Boolean:
        return !term.integers.isEmpty() && (v.toBool() ? 1 : 0) == term.integers.first();
    case FieldSpec::Type::State: {
        const QString s = v.toString();
        return std::any_of(term.values.cbegin(), term.values.cend(), [&](const QString &wanted) {
            return term.op == QueryTerm::Op::Equal ? s.compare(wanted, Qt::CaseInsensitive) == 0
                                                   : s.startsWith(wanted, Qt::CaseInsensitive);
        });
    }
    case FieldSpec::Type::Text:
    case FieldSpec::Type::Json: {
        const QString s = v.toString();
        return std::any_of(term.values.cbegin(), term.values.cend(), [&](const QString &wanted) {
            return term.op == QueryTerm::Op::Equal ? s.compare(wanted, Qt::CaseInsensitive) == 0
                                                   : s.contains(wanted, Qt::CaseInsensitive);
        });
    }
    }
    return false;
}

} // namespace

QString QueryError::toString() const
{
    if (isNull())
        return {};
    return tr("column %1: %2").arg(position + 1).arg(message);
}

QueryParse parseQuery(QStringView text, const ResourceKind &kind)
{
    return Parser(text, kind).run();
}

QueryRow::~QueryRow() = default;

QString QueryRow::text(int field) const
{
    const QVariant v = value(field);
    return v.isValid() ? v.toString() : QString();
}

int QueryRow::textId(int field) const
{
    Q_UNUSED(field)
    return -1;
}

QString QueryRow::referenceName(const QString &kindName, qint64 id) const
{
    Q_UNUSED(kindName)
    Q_UNUSED(id)
    return {};
}

JsonQueryRow::JsonQueryRow(const ResourceKind &kind, const QJsonObject &object)
    : m_kind(kind), m_object(object)
{
}

QVariant JsonQueryRow::value(int field) const
{
    if (field < 0 || field >= m_kind.fields.size())
        return {};
    const FieldSpec &spec = m_kind.fields.at(field);
    return fieldRawValue(spec.type, jsonValueAt(m_object, spec.key));
}

bool matches(const Query &query, const QueryRow &row, qint64 nowMs, QueryTextMemo *memo)
{
    for (const QueryTerm &term : query.terms) {
        if (valueMatches(term, row, nowMs) == term.negated)
            return false;
    }
    for (int w = 0; w < query.words.size(); ++w) {
        const QueryWord &word = query.words.at(w);
        bool found = false;
        for (int field : query.textFields) {
            const int id = memo ? row.textId(field) : -1;
            if (id >= 0) {
                int known = memo->lookup(w, id);
                if (known < 0) {
                    known = row.text(field).contains(word.text, Qt::CaseInsensitive) ? 1 : 0;
                    memo->store(w, id, known == 1);
                }
                found = known == 1;
            } else {
                found = row.text(field).contains(word.text, Qt::CaseInsensitive);
            }
            if (found)
                break;
        }
        if (found == word.negated)
            return false;
    }
    return true;
}

bool termMatches(const QueryTerm &term, const QueryRow &row, qint64 nowMs)
{
    return valueMatches(term, row, nowMs);
}

namespace {

// Every row `narrower` matches on this term also matches `wider`.
bool termNarrows(const QueryTerm &narrower, const QueryTerm &wider)
{
    if (narrower.ageMs || wider.ageMs || narrower.fieldIndex != wider.fieldIndex || narrower.op != wider.op
        || narrower.negated != wider.negated)
        return false;
    if (narrower.values == wider.values && narrower.integers == wider.integers && narrower.numbers == wider.numbers)
        return true;
    // Longer values on substring / prefix matches: "state:ru" -> "state:run", "name:da" -> "name:dat".
    // A negated term narrows the other way round, one alternative less included.
    const bool prefix = narrower.type == FieldSpec::Type::State;
    const bool substring = narrower.type == FieldSpec::Type::Text || narrower.type == FieldSpec::Type::Json;
    if (narrower.op != QueryTerm::Op::Match || !(prefix || substring) || !narrower.integers.isEmpty()
        || !wider.integers.isEmpty())
        return false;
    auto implies = [&](const QString &longer, const QString &shorter) {
        return prefix ? longer.startsWith(shorter, Qt::CaseInsensitive) : longer.contains(shorter, Qt::CaseInsensitive);
    };
    const QStringList &inner = narrower.negated ? wider.values : narrower.values;
    const QStringList &outer = narrower.negated ? narrower.values : wider.values;
    // Each alternative of the inner term is one of the outer term's, made longer.
    return std::all_of(inner.cbegin(), inner.cend(), [&](const QString &v) {
        return std::any_of(outer.cbegin(), outer.cend(), [&](const QString &w) { return implies(v, w); });
    });
}

} // namespace

bool queryNarrows(const Query &narrower, const Query &wider)
{
    if (narrower.textFields != wider.textFields)
        return false;
    for (const QueryTerm &w : wider.terms) {
        if (!std::any_of(narrower.terms.cbegin(), narrower.terms.cend(),
                         [&](const QueryTerm &n) { return termNarrows(n, w); }))
            return false;
    }
    for (const QueryWord &w : wider.words) {
        // A word found in a field is found through any longer word containing it; a negated word
        // excludes more rows when it is shorter.
        const bool implied = std::any_of(narrower.words.cbegin(), narrower.words.cend(), [&](const QueryWord &n) {
            if (n.negated != w.negated)
                return false;
            return w.negated ? w.text.contains(n.text, Qt::CaseInsensitive) : n.text.contains(w.text, Qt::CaseInsensitive);
        });
        if (!implied)
            return false;
    }
    return true;
}

namespace {

// The ASCII search both forms share: `h` holds UTF-16 or UTF-8 code units; any unit above ASCII
// (a multi-byte sequence may fold to ASCII, the Kelvin sign to 'k') hands over to `qtAnswer`.
template<typename Unit, typename QtAnswer>
bool containsAscii(const Unit *h, qsizetype size, QStringView foldedNeedle, QtAnswer qtAnswer)
{
    const qsizetype m = foldedNeedle.size();
    if (m == 0)
        return true;
    const char16_t *n = foldedNeedle.utf16();
    for (qsizetype j = 0; j < m; ++j) {
        if (n[j] >= 0x80)
            return qtAnswer();
    }
    auto fold = [](Unit c) { return char16_t(c >= Unit('A') && c <= Unit('Z') ? c + 32 : c); };
    for (qsizetype i = 0; i < size; ++i) {
        if (h[i] >= 0x80)
            return qtAnswer();
        if (size - i < m)
            return false;
        if (fold(h[i]) != n[0])
            continue;
        qsizetype j = 1;
        for (; j < m; ++j) {
            if (h[i + j] >= 0x80)
                return qtAnswer();
            if (fold(h[i + j]) != n[j])
                break;
        }
        if (j == m)
            return true;
    }
    return false;
}

} // namespace

bool containsIgnoringCase(QStringView haystack, QStringView needle, QStringView foldedNeedle)
{
    return containsAscii(haystack.utf16(), haystack.size(), foldedNeedle,
                         [&] { return haystack.contains(needle, Qt::CaseInsensitive); });
}

bool containsIgnoringCase(QUtf8StringView haystack, QStringView needle, QStringView foldedNeedle)
{
    return containsAscii(reinterpret_cast<const uchar *>(haystack.data()), haystack.size(), foldedNeedle,
                         [&] { return haystack.toString().contains(needle, Qt::CaseInsensitive); });
}

int QueryTextMemo::lookup(int word, int textId) const
{
    if (word >= int(m_words.size()) || textId >= int(m_words[size_t(word)].size()))
        return -1;
    return m_words[size_t(word)][size_t(textId)];
}

void QueryTextMemo::store(int word, int textId, bool contains)
{
    if (word >= int(m_words.size()))
        m_words.resize(size_t(word) + 1);
    std::vector<qint8> &known = m_words[size_t(word)];
    if (textId >= int(known.size()))
        known.resize(size_t(textId) + 1 + known.size() / 2, qint8(-1));
    known[size_t(textId)] = contains ? 1 : 0;
}

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

std::optional<qint64> parseDuration(QStringView text)
{
    if (text.isEmpty())
        return std::nullopt;
    qint64 total = 0;
    qsizetype i = 0;
    while (i < text.size()) {
        qint64 n = 0;
        const qsizetype digitsStart = i;
        while (i < text.size() && text.at(i).isDigit() && text.at(i).unicode() < 128) {
            n = n * 10 + text.at(i).digitValue();
            if (n > 1000000000LL)
                return std::nullopt;
            ++i;
        }
        if (i == digitsStart || i == text.size())
            return std::nullopt;
        qint64 unit = 0;
        switch (text.at(i).toLower().unicode()) {
        case 's':
            unit = 1000;
            break;
        case 'm':
            unit = 60 * 1000;
            break;
        case 'h':
            unit = 3600 * 1000;
            break;
        case 'd':
            unit = 86400 * 1000;
            break;
        case 'w':
            unit = 7 * 86400 * 1000LL;
            break;
        default:
            return std::nullopt;
        }
        total += n * unit;
        ++i;
    }
    return total;
}

} // namespace OpsDeck
