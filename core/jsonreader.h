// Strict JSON decoding with JSON-Pointer field paths: the one way request and response bodies are read.
#pragma once

#include "problem.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QSet>
#include <QStringList>

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

namespace OpsDeck {

// Reads one JSON object field by field and collects every error with its path, so one answer
// can tell the client everything that is wrong with its body. Errors are shared with nested
// readers created by object()/arrayObjects().
//
//   JsonReader r(body);                      // parses; a syntax error is recorded at "/"
//   const QString name = r.string("name");   // "/name: required" if missing
//   const QString st = r.oneOf("status", {"RUNNING", "STOPPED"});
//   r.rejectUnknown();                       // "/colour: unknown field"
//   if (!r.ok()) return r.problem();         // 400 invalid-request with "errors": [...]
class JsonReader final
{
public:
    explicit JsonReader(const QByteArray &body);
    explicit JsonReader(const QJsonObject &object);

    bool ok() const { return m_errors->isEmpty(); }
    // Of a body that is no object, only the error that says so.
    QList<FieldError> errors() const { return m_unusable ? m_errors->first(std::min<qsizetype>(1, m_errors->size())) : *m_errors; }
    // 400 "invalid-request" (or "malformed-json") carrying the errors in "errors" (the first
    // MaxListedErrors; "errors_omitted" counts the rest) and the first MaxErrorsInDetail in "detail".
    Problem problem() const;
    static constexpr qsizetype MaxListedErrors = 100;
    static constexpr qsizetype MaxErrorsInDetail = 10;
    void addError(const QString &key, const QString &message);
    // An error about something beside the body (a header, say), named by `path` as it is.
    void addErrorAt(const QString &path, const QString &message);

    bool has(const QString &key) const;
    const QJsonObject &object() const { return m_object; }
    QString pathOf(const QString &key) const;

    // Required fields (an error when missing or of the wrong type; the fallback is returned).
    QString string(const QString &key, int maxLength = 1024);
    qint64 integer(const QString &key, qint64 min = 0, qint64 max = std::numeric_limits<qint32>::max());
    bool boolean(const QString &key);
    QString oneOf(const QString &key, const QStringList &allowed);
    // A name people read, type and match (an organization's, an instance's, its owner's): a
    // string without the white space around it, not empty, and without what characterError()
    // refuses (a NUL, a line break or a tab would break one-line lists, logs and tokens).
    QString name(const QString &key, int maxLength = 200);
    // Why `text` may not be such a name once trimmed (empty, or what characterError() says), or
    // empty: for names that come from elsewhere than a JSON body (a command line).
    static QString nameError(const QString &text);
    // Why `text` may not be such a name (half a surrogate pair, its first control character or
    // line separator, or a character that reorders or hides text), or empty.
    static QString characterError(const QString &text);
    // The same for a name compared exactly as given (an application, an owner token's subject),
    // which also may not begin or end with white space.
    static QString exactNameError(const QString &text);

    // Optional fields: std::nullopt when absent or null; a type error when present and wrong.
    std::optional<QString> optString(const QString &key, int maxLength = 1024);
    // An optional name(): std::nullopt when absent or null, else checked and trimmed like one.
    std::optional<QString> optName(const QString &key, int maxLength = 200);
    std::optional<qint64> optInteger(const QString &key, qint64 min = 0,
                                     qint64 max = std::numeric_limits<qint32>::max());
    std::optional<bool> optBoolean(const QString &key);
    std::optional<QString> optOneOf(const QString &key, const QStringList &allowed);
    std::optional<QStringList> optStringList(const QString &key, int maxItems = 100, int maxLength = 1024);

    // Nested object with the path extended; a missing required object is an error.
    JsonReader child(const QString &key, bool required = true);
    bool isPresent() const { return m_present; }

    // After reading: every key not read (or listed in alsoAllowed) is an "unknown field" error.
    void rejectUnknown(const QStringList &alsoAllowed = {});

private:
    JsonReader(const QJsonObject &object, const QString &path, std::shared_ptr<QList<FieldError>> errors,
               bool present);
    QJsonValue take(const QString &key);

    QJsonObject m_object;
    QString m_path;
    std::shared_ptr<QList<FieldError>> m_errors;
    QSet<QString> m_read;
    bool m_present = true;
    bool m_malformed = false;
    // The body is no object at all (malformed, or another JSON value): its one error says so,
    // and nothing read from it adds "required" errors for fields that may well be there.
    bool m_unusable = false;
};

} // namespace OpsDeck
