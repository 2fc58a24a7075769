// Writes JSON straight into a byte buffer: the list routes' fast path (no QJsonObject per row).
#include "jsonwriter.h"

namespace OpsDeck {

JsonWriter::JsonWriter(qsizetype reserve)
{
    m_out.reserve(reserve);
}

void JsonWriter::separator()
{
    if (m_needComma)
        m_out += ',';
}

JsonWriter &JsonWriter::beginObject()
{
    separator();
    m_out += '{';
    m_needComma = false;
    return *this;
}

JsonWriter &JsonWriter::endObject()
{
    m_out += '}';
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::beginArray()
{
    separator();
    m_out += '[';
    m_needComma = false;
    return *this;
}

JsonWriter &JsonWriter::endArray()
{
    m_out += ']';
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::key(const char *name)
{
    separator();
    m_out += '"';
    m_out += name;
    m_out += "\":";
    m_needComma = false;
    return *this;
}

JsonWriter &JsonWriter::value(const QString &text)
{
    return utf8Value(text.toUtf8());
}

JsonWriter &JsonWriter::utf8Value(const QByteArray &utf8)
{
    separator();
    static const char hex[] = "0123456789abcdef";
    m_out += '"';
    // Copy runs of plain bytes in one append; only quotes, backslashes and controls are escaped.
    const char *begin = utf8.constData();
    const char *end = begin + utf8.size();
    const char *run = begin;
    for (const char *p = begin; p != end; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        m_out.append(run, p - run);
        run = p + 1;
        switch (c) {
        case '"': m_out += "\\\""; break;
        case '\\': m_out += "\\\\"; break;
        case '\n': m_out += "\\n"; break;
        case '\r': m_out += "\\r"; break;
        case '\t': m_out += "\\t"; break;
        default: {
            const char escaped[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
            m_out.append(escaped, sizeof(escaped));
        }
        }
    }
    m_out.append(run, end - run);
    m_out += '"';
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::value(qint64 number)
{
    separator();
    m_out += QByteArray::number(number);
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::null()
{
    separator();
    m_out += "null";
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::raw(const QByteArray &json)
{
    separator();
    m_out += json;
    m_needComma = true;
    return *this;
}

JsonWriter &JsonWriter::nullableValue(const QString &text)
{
    return text.isEmpty() ? null() : value(text);
}

JsonWriter &JsonWriter::nullableUtf8Value(const QByteArray &utf8)
{
    return utf8.isEmpty() ? null() : utf8Value(utf8);
}

} // namespace OpsDeck
