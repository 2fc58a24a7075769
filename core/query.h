// The filter query line: `state:failed provider:acme -status:running age>1h "quoted text" words`.
#pragma once

#include "resourcekind.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>
#include <QUtf8StringView>
#include <QVariant>

#include <optional>
#include <vector>

namespace OpsDeck {

struct QueryTerm
{
    enum class Op {
        Match,        // ":"  text contains, state/id/number equals (state: also by prefix)
        Equal,        // "="  exact (case-insensitive) ; "!=" is Equal negated
        Less,         // "<"
        LessEqual,    // "<="
        Greater,      // ">"
        GreaterEqual, // ">="
    };

    QString field;          // as typed, lower-cased ("state", "age", "provider")
    int fieldIndex = -1;    // into ResourceKind::fields
    FieldSpec::Type type = FieldSpec::Type::Text;
    QString references;     // copied from the field: provider:acme compares the provider's name
    Op op = Op::Match;
    bool negated = false;   // "-field:value" or "field!=value"
    QStringList values;     // as typed; "a,b" gives alternatives, any of which matches
    // Decoded forms of values (same length as values, only for the types that need them).
    QList<qint64> integers;          // Id/Integer, Timestamp compared with a date (ms since epoch)
    // Integer alternatives written as a class ("status:5xx"): how many values each covers from
    // integers[i] on (100 for "5xx", 1 for "503"). Empty when every alternative is exact.
    QList<qint64> spans;
    QList<double> numbers;           // Number
    std::optional<qint64> ageMs;     // Timestamp compared with a duration: the age of the timestamp
    int position = 0;                // 0-based column of the token
};

struct QueryWord
{
    QString text;
    bool negated = false;   // "-word": rows containing it are excluded
    int position = 0;
};

struct Query
{
    QList<QueryTerm> terms;
    QList<QueryWord> words;
    QList<int> textFields;  // fields free words are searched in
    // Fields naming another object (provider_id), and the kind each names ("providers"): free
    // words are searched in that object's name, which is what the table shows there.
    QList<int> referenceFields;
    QStringList referenceKinds;

    bool isEmpty() const { return terms.isEmpty() && words.isEmpty(); }
};

struct QueryError
{
    int position = -1;      // 0-based column where the problem starts
    int length = 0;
    QString message;        // "unknown field 'colour' (known: id, name, ...)"

    bool isNull() const { return message.isEmpty(); }
    // "column 8: unknown field ..." (1-based column, as shown to the user)
    QString toString() const;
};

struct QueryParse
{
    Query query;
    QueryError error;

    bool ok() const { return error.isNull(); }
};

// Never throws and never crashes on any input; an empty or blank line is an empty query.
QueryParse parseQuery(QStringView text, const ResourceKind &kind);

// What a query reads from one row, so models can answer from their compact storage.
class QueryRow
{
public:
    virtual ~QueryRow();
    // The raw value of kind.fields[field], as fieldRawValue() makes it.
    virtual QVariant value(int field) const = 0;
    // The text free words are searched in (Text, State and Id fields); implementations that hold
    // strings answer without a QVariant.
    virtual QString text(int field) const;
    // The name of object `id` of kind `kindName` ("providers"), or empty when unknown.
    virtual QString referenceName(const QString &kindName, qint64 id) const;
    // A number equal for equal texts of this source (an interned string's index), or -1: lets a
    // QueryTextMemo test each distinct text once instead of once per row.
    virtual int textId(int field) const;
};

// Remembers whether each distinct text contains each free word of one query. Reset it when the
// query changes or the source renumbers its texts.
class QueryTextMemo final
{
public:
    void reset() { m_words.clear(); }
    // -1 unknown, else 0/1.
    int lookup(int word, int textId) const;
    void store(int word, int textId, bool contains);

private:
    std::vector<std::vector<qint8>> m_words;
};

class JsonQueryRow final : public QueryRow
{
public:
    // Both must outlive this object (not owned).
    JsonQueryRow(const ResourceKind &kind, const QJsonObject &object);
    QVariant value(int field) const override;

private:
    const ResourceKind &m_kind;
    const QJsonObject &m_object;
};

bool matches(const Query &query, const QueryRow &row, qint64 nowMs, QueryTextMemo *memo = nullptr);
// One term alone, negation not applied: what matches() tests for each term.
bool termMatches(const QueryTerm &term, const QueryRow &row, qint64 nowMs);
// True when every row `narrower` matches is sure to match `wider` too ("state:run dat" narrows
// "state:ru da"), so a filter may test only the rows `wider` accepted. Conservative: false when
// unsure, and always false for terms that depend on the clock (age>1h).
bool queryNarrows(const Query &narrower, const Query &wider);
// `haystack` contains `needle` ignoring case, as QStringView::contains(needle, Qt::CaseInsensitive)
// answers; `foldedNeedle` is needle.toCaseFolded(). Faster on ASCII text, allocates nothing.
bool containsIgnoringCase(QStringView haystack, QStringView needle, QStringView foldedNeedle);
// The same for a UTF-8 haystack: bytes compared directly while both sides are ASCII, else decoded
// and answered by Qt's rules.
bool containsIgnoringCase(QUtf8StringView haystack, QStringView needle, QStringView foldedNeedle);

// Names a query may use for a kind, preferred forms in field order ("id", "name", "state", ..., "age").
QStringList queryFieldNames(const ResourceKind &kind);
// Completions for the token being typed: field names ("prov" -> "provider:"), then state values
// ("state:fa" -> "state:failed"), keeping a leading '-'.
QStringList queryCompletions(QStringView token, const ResourceKind &kind);
// "90m" -> 5400000; s, m, h, d, w; nullopt when not a duration.
std::optional<qint64> parseDuration(QStringView text);

} // namespace OpsDeck
