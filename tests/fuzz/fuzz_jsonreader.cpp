// Fuzz target: JsonReader, which reads every request body the server takes. Whatever the body,
// a handler's reads either all succeed with values inside the limits it asked for, or the
// reader answers a 400 problem whose errors each name a JSON pointer and say what is wrong.
#include "fuzzsupport.h"

#include "core/jsonreader.h"

#include <QJsonDocument>

using namespace OpsDeck;

namespace {

// Limits count characters: a surrogate pair is one.
qsizetype characters(const QString &text)
{
    return text.toUcs4().size();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    // The reads of a typical handler: required and optional fields of each kind, and an object.
    JsonReader r(body);
    const QString name = r.string(QStringLiteral("name"), 16);
    const qint64 count = r.integer(QStringLiteral("count"), 1, 100);
    const std::optional<bool> flag = r.optBoolean(QStringLiteral("flag"));
    const std::optional<QString> state = r.optOneOf(QStringLiteral("state"), {QStringLiteral("RUNNING"), QStringLiteral("STOPPED")});
    const std::optional<QStringList> tags = r.optStringList(QStringLiteral("tags"), 3, 8);
    const std::optional<qint64> limit = r.optInteger(QStringLiteral("limit"), -5, 5);
    JsonReader callback = r.child(QStringLiteral("callback"), false);
    const std::optional<QString> url = callback.optString(QStringLiteral("url"), 32);
    callback.rejectUnknown();
    r.rejectUnknown({QStringLiteral("note")});

    if (r.ok()) {
        FUZZ_CHECK(r.errors().isEmpty() && callback.ok());
        FUZZ_CHECK(characters(name) <= 16);
        FUZZ_CHECK(count >= 1 && count <= 100);
        FUZZ_CHECK(!state || *state == QLatin1String("RUNNING") || *state == QLatin1String("STOPPED"));
        if (tags) {
            FUZZ_CHECK(tags->size() <= 3);
            for (const QString &tag : *tags)
                FUZZ_CHECK(characters(tag) <= 8);
        }
        FUZZ_CHECK(!limit || (*limit >= -5 && *limit <= 5));
        FUZZ_CHECK(!url || characters(*url) <= 32);
        Q_UNUSED(flag);
        return 0;
    }
    // Errors are shared with the nested reader; each names where it is.
    FUZZ_CHECK(!callback.ok());
    for (const FieldError &e : r.errors()) {
        FUZZ_CHECK(e.path.startsWith(u'/'));
        FUZZ_CHECK(!e.message.isEmpty());
    }
    const Problem p = r.problem();
    FUZZ_CHECK(p.status == 400);
    FUZZ_CHECK(p.code == QLatin1String("invalid-request") || p.code == QLatin1String("malformed-json"));
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(p.toBytes(), &error);
    FUZZ_CHECK(error.error == QJsonParseError::NoError && doc.isObject());
    const qsizetype listed = doc.object().value(QStringLiteral("errors")).toArray().size();
    FUZZ_CHECK(listed >= 1 && listed <= JsonReader::MaxListedErrors);
    FUZZ_CHECK(listed == std::min(r.errors().size(), JsonReader::MaxListedErrors));
    return 0;
}
