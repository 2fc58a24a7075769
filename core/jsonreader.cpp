// Strict JSON decoding with field paths.
#include "jsonreader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

#include <algorithm>
#include <cmath>

namespace OpsDeck {

namespace {

QString typeName(const QJsonValue &v)
{
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("boolean");
    case QJsonValue::Double: return QStringLiteral("number");
    case QJsonValue::String: return QStringLiteral("string");
    case QJsonValue::Array: return QStringLiteral("array");
    case QJsonValue::Object: return QStringLiteral("object");
    case QJsonValue::Undefined: break;
    }
    return QStringLiteral("nothing");
}

// JSON Pointer escaping (RFC 6901).
QString escapeToken(QString key)
{
    return key.replace(QLatin1Char('~'), QLatin1String("~0")).replace(QLatin1Char('/'), QLatin1String("~1"));
}

// A character's code as errors name it: "0009" in "U+0009".
QString codePoint(char16_t u)
{
    return QStringLiteral("%1").arg(u, 4, 16, QLatin1Char('0')).toUpper();
}

// Where a string of a text QJsonDocument took breaks RFC 8259 all the same, and how.
struct StringFault
{
    qsizetype offset = -1; // -1: none
    QString what;
};

// A \u escape of half a UTF-16 surrogate pair without its other half: QJsonDocument pairs a high
// half with whatever escape follows it (and keeps a lone half), so the text stored would not be the
// text sent. A control character written as itself (a raw tab or line break): JSON has it escaped,
// and QJsonDocument lets it through.
StringFault stringFault(const QByteArray &body)
{
    const auto escapeAt = [&body](qsizetype i) -> int { // the \uXXXX code unit at i, or -1
        if (i + 6 > body.size() || body.at(i) != '\\' || body.at(i + 1) != 'u')
            return -1;
        bool ok = false;
        const int unit = body.mid(i + 2, 4).toInt(&ok, 16);
        return ok ? unit : -1;
    };
    static const QString halfPair = QStringLiteral("a \\u escape of half a UTF-16 surrogate pair without the other half");
    bool inString = false;
    for (qsizetype i = 0; i < body.size(); ++i) {
        const char c = body.at(i);
        if (!inString) {
            inString = c == '"';
            continue;
        }
        if (c == '"') {
            inString = false;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            return {i, QStringLiteral("a control character (U+%1) written as itself in a string, where it must be "
                                      "escaped")
                           .arg(codePoint(char16_t(c)))};
        } else if (c == '\\') {
            const int unit = escapeAt(i);
            if (unit >= 0xD800 && unit <= 0xDBFF) {
                const int next = escapeAt(i + 6);
                if (next < 0xDC00 || next > 0xDFFF)
                    return {i, halfPair};
                i += 11; // both escapes
            } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
                return {i, halfPair};
            } else {
                ++i; // the escaped character (a quote or backslash too)
            }
        }
    }
    return {};
}

// A member name as the document decodes it, from its bytes between the quotes of a well-formed
// JSON text (every escape complete; unpaired surrogate halves are refused before this runs).
QString decodedName(QByteArrayView raw)
{
    QString name;
    name.reserve(raw.size());
    qsizetype run = 0; // start of the bytes not yet decoded
    for (qsizetype i = 0; i < raw.size(); ++i) {
        if (raw.at(i) != '\\')
            continue;
        name += QString::fromUtf8(raw.sliced(run, i - run));
        const char c = raw.at(i + 1);
        switch (c) {
        case 'b': name += QLatin1Char('\b'); break;
        case 'f': name += QLatin1Char('\f'); break;
        case 'n': name += QLatin1Char('\n'); break;
        case 'r': name += QLatin1Char('\r'); break;
        case 't': name += QLatin1Char('\t'); break;
        case 'u': name += QChar(char16_t(raw.sliced(i + 2, 4).toUShort(nullptr, 16))); i += 4; break;
        default: name += QLatin1Char(c); break; // '"', '\\', '/'
        }
        ++i;
        run = i + 1;
    }
    return name + QString::fromUtf8(raw.sliced(run));
}

// Where a name repeats within one object of a well-formed JSON text: the JSON Pointer of its
// second occurrence, or empty. RFC 8259 leaves the meaning of a repeated name to each reader;
// QJsonDocument keeps the last, another reader of the same bytes (a proxy, an audit tool) may
// keep the first, so a body that means two things is refused.
QString repeatedName(const QByteArray &body)
{
    struct Frame
    {
        bool object = false;
        bool expectName = false;
        QString name;  // the object's current member
        int index = 0; // the array's current element
        QSet<QString> names;
    };
    QList<Frame> frames;
    const auto pointer = [&frames] {
        QString path;
        for (const Frame &f : frames)
            path += QLatin1Char('/') + (f.object ? escapeToken(f.name) : QString::number(f.index));
        return path;
    };
    for (qsizetype i = 0; i < body.size(); ++i) {
        const char c = body.at(i);
        if (c == '{' || c == '[') {
            Frame f;
            f.object = c == '{';
            f.expectName = f.object;
            frames.append(f);
        } else if (c == '}' || c == ']') {
            if (!frames.isEmpty())
                frames.removeLast();
        } else if (c == ',' && !frames.isEmpty()) {
            Frame &top = frames.last();
            top.expectName = top.object;
            ++top.index;
        } else if (c == '"') {
            const qsizetype start = i;
            bool escaped = false;
            for (++i; i < body.size() && body.at(i) != '"'; ++i) {
                if (body.at(i) == '\\') {
                    escaped = true;
                    ++i;
                }
            }
            if (frames.isEmpty() || !frames.last().expectName)
                continue;
            Frame &top = frames.last();
            const QByteArrayView raw = QByteArrayView(body).sliced(start + 1, i - start - 1);
            // Escapes decoded as the document decodes them: "\u0061" and "a" are one name.
            const QString name = escaped ? decodedName(raw) : QString::fromUtf8(raw);
            top.expectName = false;
            top.name = name;
            if (top.names.contains(name))
                return pointer();
            top.names.insert(name);
        }
    }
    return {};
}

// Characters as a reader counts them: a surrogate pair (an emoji) is one, not two UTF-16 units.
qsizetype characters(const QString &text)
{
    qsizetype n = text.size();
    for (const QChar c : text)
        n -= c.isLowSurrogate() ? 1 : 0;
    return n;
}

} // namespace

JsonReader::JsonReader(const QByteArray &body)
    : m_errors(std::make_shared<QList<FieldError>>())
{
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(body, &err);
    const StringFault fault = err.error == QJsonParseError::NoError ? stringFault(body) : StringFault();
    if (err.error != QJsonParseError::NoError) {
        m_malformed = m_unusable = true;
        m_errors->append({QStringLiteral("/"), QStringLiteral("malformed JSON at offset %1: %2")
                                                   .arg(err.offset).arg(err.errorString())});
    } else if (fault.offset >= 0) {
        m_malformed = m_unusable = true;
        m_errors->append({QStringLiteral("/"), QStringLiteral("malformed JSON at offset %1: %2").arg(fault.offset).arg(fault.what)});
    } else if (const QString repeated = doc.isObject() ? repeatedName(body) : QString(); !repeated.isEmpty()) {
        m_unusable = true;
        m_errors->append({repeated, QStringLiteral("appears twice in one object")});
    } else if (!doc.isObject()) {
        m_unusable = true;
        m_errors->append({QStringLiteral("/"), QStringLiteral("expected an object")});
    } else {
        m_object = doc.object();
    }
}

JsonReader::JsonReader(const QJsonObject &object)
    : m_object(object)
    , m_errors(std::make_shared<QList<FieldError>>())
{
}

JsonReader::JsonReader(const QJsonObject &object, const QString &path,
                       std::shared_ptr<QList<FieldError>> errors, bool present)
    : m_object(object)
    , m_path(path)
    , m_errors(std::move(errors))
    , m_present(present)
{
}

Problem JsonReader::problem() const
{
    // A body of thousands of wrong fields gets an answer of the first ones, not one larger than
    // itself: the rest are counted.
    QJsonArray list;
    QStringList lines;
    const QList<FieldError> all = errors();
    const qsizetype counted = all.size();
    for (const FieldError &e : all) {
        if (list.size() == MaxListedErrors)
            break;
        list.append(QJsonObject{{QStringLiteral("path"), e.path}, {QStringLiteral("message"), e.message}});
        if (lines.size() < MaxErrorsInDetail)
            lines.append(e.toString());
    }
    Problem p = m_malformed
        ? Problem::make(400, QStringLiteral("malformed-json"), QStringLiteral("Malformed JSON"))
        : Problem::make(400, QStringLiteral("invalid-request"), QStringLiteral("Invalid request body"));
    const qsizetype unlisted = counted - lines.size();
    if (unlisted > 0)
        lines.append(QStringLiteral("and %1 more").arg(unlisted));
    p.detail = lines.join(QStringLiteral("; "));
    p.with(QStringLiteral("errors"), list);
    if (counted > list.size())
        p.with(QStringLiteral("errors_omitted"), qint64(counted - list.size()));
    return p;
}

QString JsonReader::pathOf(const QString &key) const
{
    return m_path + QLatin1Char('/') + escapeToken(key);
}

void JsonReader::addError(const QString &key, const QString &message)
{
    m_errors->append({key.isEmpty() ? (m_path.isEmpty() ? QStringLiteral("/") : m_path) : pathOf(key), message});
}

void JsonReader::addErrorAt(const QString &path, const QString &message)
{
    m_errors->append({path, message});
}

bool JsonReader::has(const QString &key) const
{
    return m_object.contains(key) && !m_object.value(key).isNull();
}

QJsonValue JsonReader::take(const QString &key)
{
    m_read.insert(key);
    return m_object.value(key);
}

QString JsonReader::string(const QString &key, int maxLength)
{
    if (!has(key)) {
        m_read.insert(key);
        addError(key, QStringLiteral("required"));
        return {};
    }
    return optString(key, maxLength).value_or(QString());
}

QString JsonReader::name(const QString &key, int maxLength)
{
    const qsizetype errorsBefore = m_errors->size();
    const QString value = string(key, maxLength).trimmed();
    if (m_errors->size() == errorsBefore) {
        if (const QString unreadable = nameError(value); !unreadable.isEmpty())
            addError(key, unreadable);
    }
    return value;
}

std::optional<QString> JsonReader::optName(const QString &key, int maxLength)
{
    if (!has(key)) {
        take(key);
        return std::nullopt;
    }
    return name(key, maxLength);
}

QString JsonReader::nameError(const QString &text)
{
    const QString trimmed = text.trimmed();
    return trimmed.isEmpty() ? QStringLiteral("must not be empty") : characterError(trimmed);
}

QString JsonReader::characterError(const QString &text)
{
    // A JSON escape can carry half of a surrogate pair, which no UTF-8 column can store.
    if (!QStringView(text).isValidUtf16())
        return QStringLiteral("must be valid Unicode text (it holds half of a surrogate pair)");
    for (const QChar c : text) {
        const char16_t u = c.unicode();
        const QChar::Category category = c.category();
        if (category == QChar::Other_Control || category == QChar::Separator_Line || category == QChar::Separator_Paragraph)
            return QStringLiteral("must not contain control characters or line breaks (U+%1)").arg(codePoint(u));
        // Embeddings, overrides and isolates reorder what follows them on screen; zero-width
        // spaces and joiners that join nothing make two names look alike. The marks and joiners
        // that right-to-left scripts and emoji need (U+200C to U+200F) stay.
        if ((u >= 0x202A && u <= 0x202E) || (u >= 0x2066 && u <= 0x2069) || u == 0x200B || u == 0x2060 || u == 0xFEFF)
            return QStringLiteral("must not contain invisible or direction-overriding characters (U+%1)").arg(codePoint(u));
    }
    return {};
}

QString JsonReader::exactNameError(const QString &text)
{
    if (text.trimmed() != text)
        return QStringLiteral("must not begin or end with white space");
    return characterError(text);
}

qint64 JsonReader::integer(const QString &key, qint64 min, qint64 max)
{
    if (!has(key)) {
        m_read.insert(key);
        addError(key, QStringLiteral("required"));
        return min;
    }
    return optInteger(key, min, max).value_or(min);
}

bool JsonReader::boolean(const QString &key)
{
    if (!has(key)) {
        m_read.insert(key);
        addError(key, QStringLiteral("required"));
        return false;
    }
    return optBoolean(key).value_or(false);
}

QString JsonReader::oneOf(const QString &key, const QStringList &allowed)
{
    if (!has(key)) {
        m_read.insert(key);
        addError(key, QStringLiteral("required: one of %1").arg(allowed.join(QStringLiteral(", "))));
        return {};
    }
    return optOneOf(key, allowed).value_or(QString());
}

std::optional<QString> JsonReader::optString(const QString &key, int maxLength)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isString()) {
        addError(key, QStringLiteral("expected a string, got %1").arg(typeName(v)));
        return std::nullopt;
    }
    const QString s = v.toString();
    if (characters(s) > maxLength) {
        addError(key, QStringLiteral("longer than %1 characters").arg(maxLength));
        return std::nullopt;
    }
    return s;
}

std::optional<qint64> JsonReader::optInteger(const QString &key, qint64 min, qint64 max)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isDouble()) {
        addError(key, QStringLiteral("expected an integer, got %1").arg(typeName(v)));
        return std::nullopt;
    }
    // A JSON number keeps integers exact up to 2^53 - 1: a range said to reach beyond would name
    // bounds that cannot be sent.
    constexpr qint64 kLargestExact = 9007199254740991;
    const qint64 bottom = std::max(min, -kLargestExact);
    const qint64 top = std::min(max, kLargestExact);
    const double d = v.toDouble();
    if (std::floor(d) != d) {
        addError(key, QStringLiteral("expected an integer, got %1").arg(QString::number(d, 'g', 17)));
        return std::nullopt;
    }
    if (d < double(bottom) || d > double(top)) {
        addError(key, QStringLiteral("expected an integer between %1 and %2, got %3")
                          .arg(bottom)
                          .arg(top)
                          .arg(QString::number(d, 'g', 17)));
        return std::nullopt;
    }
    return static_cast<qint64>(d);
}

std::optional<bool> JsonReader::optBoolean(const QString &key)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isBool()) {
        addError(key, QStringLiteral("expected a boolean, got %1").arg(typeName(v)));
        return std::nullopt;
    }
    return v.toBool();
}

std::optional<QString> JsonReader::optOneOf(const QString &key, const QStringList &allowed)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isString() || !allowed.contains(v.toString())) {
        addError(key, QStringLiteral("expected one of %1").arg(allowed.join(QStringLiteral(", "))));
        return std::nullopt;
    }
    return v.toString();
}

std::optional<QStringList> JsonReader::optStringList(const QString &key, int maxItems, int maxLength)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull())
        return std::nullopt;
    if (!v.isArray()) {
        addError(key, QStringLiteral("expected an array, got %1").arg(typeName(v)));
        return std::nullopt;
    }
    const QJsonArray a = v.toArray();
    if (a.size() > maxItems) {
        addError(key, QStringLiteral("more than %1 items").arg(maxItems));
        return std::nullopt;
    }
    QStringList out;
    bool good = true;
    for (int i = 0; i < a.size(); ++i) {
        const QString itemPath = pathOf(key) + QLatin1Char('/') + QString::number(i);
        if (!a.at(i).isString()) {
            m_errors->append({itemPath, QStringLiteral("expected a string, got %1").arg(typeName(a.at(i)))});
            good = false;
        } else if (characters(a.at(i).toString()) > maxLength) {
            m_errors->append({itemPath, QStringLiteral("longer than %1 characters").arg(maxLength)});
            good = false;
        } else {
            out.append(a.at(i).toString());
        }
    }
    if (!good)
        return std::nullopt;
    return out;
}

JsonReader JsonReader::child(const QString &key, bool required)
{
    const QJsonValue v = take(key);
    if (v.isUndefined() || v.isNull()) {
        if (required)
            addError(key, QStringLiteral("required"));
        return JsonReader(QJsonObject(), pathOf(key), m_errors, false);
    }
    if (!v.isObject()) {
        addError(key, QStringLiteral("expected an object, got %1").arg(typeName(v)));
        return JsonReader(QJsonObject(), pathOf(key), m_errors, false);
    }
    return JsonReader(v.toObject(), pathOf(key), m_errors, true);
}

void JsonReader::rejectUnknown(const QStringList &alsoAllowed)
{
    if (m_malformed)
        return;
    for (auto it = m_object.constBegin(); it != m_object.constEnd(); ++it) {
        if (!m_read.contains(it.key()) && !alsoAllowed.contains(it.key()))
            addError(it.key(), QStringLiteral("unknown field"));
    }
}

} // namespace OpsDeck
