// The filter query line: tokenizer and parser against a resource kind.
#include "query.h"

#include "querysyntax.h"

#include <QCoreApplication>
#include <QDate>

#include <algorithm>

namespace OpsDeck {

using namespace QuerySyntax;

namespace {

struct Token
{
    QString text;      // quotes removed
    int position = 0;
    bool quotedWhole = false; // the whole token was one quoted phrase
};

// "5xx" is the hundred numbers from 500, "50x" the ten from 500: the first and how many. Digits
// first, then at least one x and nothing else.
std::optional<std::pair<qint64, qint64>> parseNumberClass(QStringView text)
{
    qsizetype digits = 0;
    while (digits < text.size() && text.at(digits) >= u'0' && text.at(digits) <= u'9')
        ++digits;
    if (digits == 0 || digits == text.size() || text.size() > 18)
        return std::nullopt;
    qint64 first = text.left(digits).toLongLong();
    qint64 span = 1;
    for (qsizetype i = digits; i < text.size(); ++i) {
        if (text.at(i) != u'x' && text.at(i) != u'X')
            return std::nullopt;
        first *= 10;
        span *= 10;
    }
    return std::pair{first, span};
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
    // Messages are translated in the query language's context, the one lupdate files them under.
    Q_DECLARE_TR_FUNCTIONS(OpsDeck::Query)

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
            else if (f.type == FieldSpec::Type::Id && !f.references.isEmpty()) {
                result.query.referenceFields.append(i);
                result.query.referenceKinds.append(f.references);
            }
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
            // An integer's value may be a class of numbers: status:5xx is 500 to 599.
            const bool classes = spec.type == FieldSpec::Type::Integer && !isComparison(op);
            bool allNumbers = true;
            bool anyClass = false;
            for (const QString &v : std::as_const(term.values)) {
                bool ok = false;
                const qint64 n = v.toLongLong(&ok);
                const std::optional<std::pair<qint64, qint64>> range =
                    classes && !ok ? parseNumberClass(v) : std::nullopt;
                allNumbers = allNumbers && (ok || range);
                anyClass = anyClass || range.has_value();
                term.integers.append(range ? range->first : n);
                term.spans.append(range ? range->second : 1);
            }
            if (!anyClass)
                term.spans.clear();
            if (!allNumbers) {
                term.spans.clear();
                if (spec.references.isEmpty() || isComparison(op)) {
                    const bool classLike = spec.type == FieldSpec::Type::Integer && isComparison(op)
                                           && parseNumberClass(value).has_value();
                    if (classLike)
                        return fail(tr("%1 compares with a number; a class like 5xx goes with ':' or '='").arg(typed));
                    return fail(spec.type == FieldSpec::Type::Integer && !isComparison(op)
                                    ? tr("%1 needs a number or a class like 5xx").arg(typed)
                                    : tr("%1 needs a number").arg(typed));
                }
                term.integers.clear(); // compared by the referenced object's name
            }
            break;
        }
        case FieldSpec::Type::Number:
        case FieldSpec::Type::Ratio: {
            // A ratio reads as a percentage ("failure_rate>50%"); a bare number is the fraction.
            const bool percent = spec.type == FieldSpec::Type::Ratio && value.endsWith(QLatin1Char('%'));
            bool ok = false;
            const double d = (percent ? value.chopped(1) : value).toDouble(&ok) / (percent ? 100.0 : 1.0);
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

} // namespace

QString QueryError::toString() const
{
    if (isNull())
        return {};
    return QCoreApplication::translate("OpsDeck::Query", "column %1: %2").arg(position + 1).arg(message);
}

QueryParse parseQuery(QStringView text, const ResourceKind &kind)
{
    return Parser(text, kind).run();
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
