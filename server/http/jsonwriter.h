// Writes JSON straight into a byte buffer: the list routes' fast path (no QJsonObject per row).
#pragma once

#include <QByteArray>
#include <QString>

namespace OpsDeck {

// Callers produce well-formed JSON by construction: beginObject/endObject pair up, and key()
// precedes each member value. Commas are inserted automatically.
class JsonWriter final
{
public:
    explicit JsonWriter(qsizetype reserve = 4096);

    JsonWriter &beginObject();
    JsonWriter &endObject();
    JsonWriter &beginArray();
    JsonWriter &endArray();
    JsonWriter &key(const char *name); // a literal ASCII name that needs no escaping

    JsonWriter &value(const QString &text);
    // A string already in UTF-8 (valid UTF-8: the caller's promise).
    JsonWriter &utf8Value(const QByteArray &utf8);
    JsonWriter &value(qint64 number);
    JsonWriter &null();
    JsonWriter &raw(const QByteArray &json); // already-encoded JSON (stored objects)
    // A string, or null when the text is empty or null.
    JsonWriter &nullableValue(const QString &text);
    JsonWriter &nullableUtf8Value(const QByteArray &utf8);

    const QByteArray &data() const { return m_out; }

private:
    void separator();

    QByteArray m_out;
    bool m_needComma = false;
};

} // namespace OpsDeck
