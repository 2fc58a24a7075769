// Fuzz target: the filter query line. Any text must parse without crashing into a query or an
// error that points inside the text; a query that queryNarrows() calls narrower must never match
// a row the wider one rejects (the console then tests only the rows the wider one kept); and the
// fast case-insensitive search must answer as Qt does, on UTF-16 and on (even invalid) UTF-8.
#include "fuzzsupport.h"

#include "core/query.h"
#include "core/resourcekind.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>

using namespace OpsDeck;

namespace {

constexpr qint64 kNowMs = 1'800'000'000'000;

// A field's value from its text: absent when empty, else null, a boolean, a number or a string,
// whatever the field's type (rows from the network may hold anything).
QJsonValue valueOf(const QString &text)
{
    if (text == QLatin1String("null"))
        return QJsonValue(QJsonValue::Null);
    if (text == QLatin1String("true") || text == QLatin1String("false"))
        return text == QLatin1String("true");
    bool number = false;
    const double d = text.toDouble(&number);
    return number ? QJsonValue(d) : QJsonValue(text);
}

QJsonObject rowOf(const ResourceKind &kind, const QStringList &texts)
{
    QJsonObject row;
    for (qsizetype i = 0; i < kind.fields.size() && i < texts.size(); ++i) {
        if (texts.at(i).isEmpty())
            continue;
        const QString &key = kind.fields.at(i).key;
        const qsizetype dot = key.indexOf(u'.');
        if (dot < 0) {
            row.insert(key, valueOf(texts.at(i)));
        } else {
            QJsonObject inner = row.value(key.left(dot)).toObject();
            inner.insert(key.mid(dot + 1), valueOf(texts.at(i)));
            row.insert(key.left(dot), inner);
        }
    }
    return row;
}

QueryParse checkedParse(const QString &text, const ResourceKind &kind)
{
    QueryParse p = parseQuery(text, kind);
    if (!p.ok()) {
        FUZZ_CHECK(p.error.position >= 0 && p.error.length >= 0);
        // A missing value is marked at the end of the line: one column past its last character.
        FUZZ_CHECK(p.error.position + p.error.length <= text.size() + 1);
        FUZZ_CHECK(!p.error.toString().isEmpty());
    }
    for (const QueryTerm &t : p.query.terms)
        FUZZ_CHECK(t.fieldIndex >= 0 && t.fieldIndex < kind.fields.size());
    return p;
}

void checkContains(QStringView haystack, QStringView needle, QByteArrayView utf8)
{
    const QString folded = needle.toString().toCaseFolded();
    FUZZ_CHECK(containsIgnoringCase(haystack, needle, folded) == haystack.contains(needle, Qt::CaseInsensitive));
    const QString decoded = QString::fromUtf8(utf8);
    FUZZ_CHECK(containsIgnoringCase(QUtf8StringView(utf8.data(), utf8.size()), needle, folded)
               == decoded.contains(needle, Qt::CaseInsensitive));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    if (size < 1)
        return 0;
    const QList<ResourceKind> &kinds = resourceKinds();
    const ResourceKind &kind = kinds.at(data[0] % kinds.size());
    const QByteArrayView raw(reinterpret_cast<const char *>(data) + 1, qsizetype(size) - 1);
    // Lines: the narrower query, the wider one, then the row's field values in field order.
    const QStringList lines = QString::fromUtf8(raw).split(u'\n');
    const QString narrower = lines.value(0);
    const QString wider = lines.value(1);

    const QueryParse n = checkedParse(narrower, kind);
    const QueryParse w = checkedParse(wider, kind);
    if (n.ok() && w.ok()) {
        const QJsonObject object = rowOf(kind, lines.mid(2));
        const JsonQueryRow row(kind, object);
        const bool narrowerMatches = matches(n.query, row, kNowMs);
        const bool widerMatches = matches(w.query, row, kNowMs);
        if (queryNarrows(n.query, w.query))
            FUZZ_CHECK(!narrowerMatches || widerMatches);
    }

    // The needle is the first line; the haystack the rest, as UTF-16 and as the bytes it came from.
    const qsizetype newline = raw.indexOf('\n');
    if (newline >= 0)
        checkContains(QString::fromUtf8(raw.sliced(newline + 1)), narrower, raw.sliced(newline + 1));
    return 0;
}
