// The filter query line: matching rows, comparing queries and the case-insensitive text search.
#include "query.h"

#include "querysyntax.h"

#include <algorithm>

namespace OpsDeck {

using namespace QuerySyntax;

namespace {

// Ids, integers and timestamps compare as qint64, numbers as double.
template<typename T>
bool compareValues(T a, QueryTerm::Op op, T b)
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
        if (!term.spans.isEmpty()) {
            // Classes (status:5xx) only come with ':' and '='.
            for (qsizetype i = 0; i < term.integers.size(); ++i) {
                if (n >= term.integers.at(i) && n - term.integers.at(i) < term.spans.at(i))
                    return true;
            }
            return false;
        }
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
    case FieldSpec::Type::Ratio:
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
        for (qsizetype r = 0; !found && r < query.referenceFields.size(); ++r) {
            const QVariant id = row.value(query.referenceFields.at(r));
            found = id.isValid()
                    && row.referenceName(query.referenceKinds.at(r), id.toLongLong()).contains(word.text, Qt::CaseInsensitive);
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
    if (narrower.values == wider.values && narrower.integers == wider.integers && narrower.spans == wider.spans
        && narrower.numbers == wider.numbers)
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
    if (narrower.textFields != wider.textFields || narrower.referenceFields != wider.referenceFields)
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

} // namespace OpsDeck
