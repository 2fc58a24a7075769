// The resource-kind descriptions: one table per kind, shared by sync engine, cache, models and views.
#include "resourcekind.h"

#include "delivery.h"
#include "endpoint.h"
#include "instance.h"
#include "organization.h"

#include <QCoreApplication>
#include <QDate>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>

#include <algorithm>
#include <iterator>

namespace OpsDeck {

namespace {

constexpr const char *kContext = "OpsDeck::ResourceKind";

using Type = FieldSpec::Type;

// Titles are marked with QT_TR_NOOP in KindTable so lupdate finds them, and translated here.
FieldSpec field(const char *key, const char *title, Type type, bool visible, int width,
                const char *references = "")
{
    return FieldSpec{QString::fromLatin1(key), QCoreApplication::translate(kContext, title), type, visible,
                     width, QString::fromLatin1(references), {}};
}

// A field naming an object of the kind another field of the row names.
FieldSpec referring(FieldSpec spec, const char *kindField)
{
    spec.referencesFrom = QString::fromLatin1(kindField);
    return spec;
}

ResourceKind kind(const char *name, const char *feedKind, const char *title, const char *itemTitle,
                  const char *stateField,
                  const StateMachine *machine, QList<FieldSpec> fields, const char *nameField,
                  QStringList states)
{
    ResourceKind k;
    k.name = QString::fromLatin1(name);
    k.feedKind = QString::fromLatin1(feedKind);
    k.title = QCoreApplication::translate(kContext, title);
    k.itemTitle = QCoreApplication::translate(kContext, itemTitle);
    k.stateField = QString::fromLatin1(stateField);
    k.machine = machine;
    k.fields = std::move(fields);
    k.nameField = QString::fromLatin1(nameField);
    k.states = std::move(states);
    return k;
}

// The tables, in a class whose translation context is the kinds': lupdate files the titles
// marked in it under that context, where field() and kind() look them up.
struct KindTable
{
    Q_DECLARE_TR_FUNCTIONS(OpsDeck::ResourceKind)

public:
    static QList<ResourceKind> build();
};

QList<ResourceKind> KindTable::build()
{
    QList<ResourceKind> kinds;

    kinds << kind("organizations", "organization", QT_TR_NOOP("Organizations"), QT_TR_NOOP("Organization"),
                  "status", &Organization::machine(),
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("name", QT_TR_NOOP("Name"), Type::Text, true, 200),
                   field("status", QT_TR_NOOP("Status"), Type::State, true, 110),
                   field("version", QT_TR_NOOP("Version"), Type::Integer, false, 70),
                   field("created_at", QT_TR_NOOP("Created"), Type::Timestamp, true, 160),
                   field("updated_at", QT_TR_NOOP("Updated"), Type::Timestamp, true, 160),
                   field("deleted_at", QT_TR_NOOP("Deleted"), Type::Timestamp, false, 160)},
                  "name", Organization::machine().states());

    kinds << kind("providers", "provider", QT_TR_NOOP("Providers"), QT_TR_NOOP("Provider"), "", nullptr,
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("name", QT_TR_NOOP("Name"), Type::Text, true, 200),
                   field("organization_id", QT_TR_NOOP("Organization"), Type::Id, true, 100, "organizations"),
                   field("applications", QT_TR_NOOP("Applications"), Type::Json, true, 220),
                   field("version", QT_TR_NOOP("Version"), Type::Integer, false, 70),
                   field("created_at", QT_TR_NOOP("Created"), Type::Timestamp, true, 160),
                   field("updated_at", QT_TR_NOOP("Updated"), Type::Timestamp, false, 160)},
                  "name", {});

    kinds << kind("instances", "instance", QT_TR_NOOP("Instances"), QT_TR_NOOP("Instance"),
                  "status", &Instance::machine(),
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("name", QT_TR_NOOP("Name"), Type::Text, true, 200),
                   field("organization_id", QT_TR_NOOP("Organization"), Type::Id, true, 100, "organizations"),
                   field("provider_id", QT_TR_NOOP("Provider"), Type::Id, true, 100, "providers"),
                   field("application", QT_TR_NOOP("Application"), Type::Text, true, 140),
                   field("owner", QT_TR_NOOP("Owner"), Type::Text, true, 120),
                   field("status", QT_TR_NOOP("Status"), Type::State, true, 110),
                   field("version", QT_TR_NOOP("Version"), Type::Integer, false, 70),
                   field("created_at", QT_TR_NOOP("Created"), Type::Timestamp, true, 160),
                   field("updated_at", QT_TR_NOOP("Updated"), Type::Timestamp, true, 160),
                   field("status_changed_at", QT_TR_NOOP("Status changed"), Type::Timestamp, false, 160),
                   field("callback.url", QT_TR_NOOP("Callback URL"), Type::Text, false, 220),
                   field("callback.signing", QT_TR_NOOP("Signing"), Type::Text, false, 140),
                   field("awaiting_ack.reason", QT_TR_NOOP("Awaiting acknowledgement"), Type::Text, false, 160),
                   field("awaiting_ack.delivery_id", QT_TR_NOOP("Awaited delivery"), Type::Id, false, 100,
                         "deliveries"),
                   field("awaiting_ack.event_type", QT_TR_NOOP("Awaited notification"), Type::Text, false, 160),
                   field("destroy_after", QT_TR_NOOP("Destroy after"), Type::Timestamp, false, 160)},
                  "name", Instance::machine().states());

    kinds << kind("deliveries", "delivery", QT_TR_NOOP("Callbacks"), QT_TR_NOOP("Callback delivery"),
                  "state", &Delivery::machine(),
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("webhook_id", QT_TR_NOOP("Webhook ID"), Type::Text, false, 200),
                   // What a provider going down its failed callbacks looks for, in the order it
                   // reads them: the state and why it failed, whose notification it is (the
                   // instance: most rows share one event type), when it is tried again. The state
                   // has room for "held" beside a PENDING badge (its endpoint paused or disabled),
                   // taken from the error, which is cut short anyway.
                   field("state", QT_TR_NOOP("State"), Type::State, true, 150),
                   field("last_status", QT_TR_NOOP("Last status"), Type::Integer, true, 90),
                   field("last_error", QT_TR_NOOP("Last error"), Type::Text, true, 180),
                   // Shown by name: room for the usual instance and provider names.
                   field("instance_id", QT_TR_NOOP("Instance"), Type::Id, true, 170, "instances"),
                   field("attempts", QT_TR_NOOP("Attempts"), Type::Integer, true, 80),
                   field("next_attempt_at", QT_TR_NOOP("Next attempt"), Type::Timestamp, true, 160),
                   // Wide enough for "instance.status_changed".
                   field("event_type", QT_TR_NOOP("Event"), Type::Text, true, 210),
                   field("provider_id", QT_TR_NOOP("Provider"), Type::Id, true, 120, "providers"),
                   field("endpoint_id", QT_TR_NOOP("Endpoint"), Type::Id, false, 90, "endpoints"),
                   field("give_up_at", QT_TR_NOOP("Gives up"), Type::Timestamp, false, 160),
                   field("created_at", QT_TR_NOOP("Created"), Type::Timestamp, false, 160),
                   field("updated_at", QT_TR_NOOP("Updated"), Type::Timestamp, true, 160),
                   field("version", QT_TR_NOOP("Version"), Type::Integer, false, 70),
                   field("body", QT_TR_NOOP("Body"), Type::Json, false, 300)},
                  "event_type", Delivery::machine().states());
    kinds.last().newestFirst = true;

    kinds << kind("endpoints", "endpoint", QT_TR_NOOP("Endpoints"), QT_TR_NOOP("Endpoint"),
                  "state", &Endpoint::machine(),
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("url", QT_TR_NOOP("URL"), Type::Text, true, 260),
                   field("provider_id", QT_TR_NOOP("Provider"), Type::Id, true, 120, "providers"),
                   field("state", QT_TR_NOOP("State"), Type::State, true, 110),
                   field("consecutive_failures", QT_TR_NOOP("Consecutive failures"), Type::Integer, true, 90),
                   field("last_success_at", QT_TR_NOOP("Last success"), Type::Timestamp, true, 160),
                   field("failure_rate", QT_TR_NOOP("Failure rate"), Type::Ratio, true, 90),
                   field("failing_since", QT_TR_NOOP("Failing since"), Type::Timestamp, false, 160),
                   field("last_failure_at", QT_TR_NOOP("Last failure"), Type::Timestamp, false, 160),
                   // When it last answered nothing while attempts were out, before those time out.
                   field("last_silent_at", QT_TR_NOOP("Last silent"), Type::Timestamp, false, 160),
                   field("silent_count", QT_TR_NOOP("Silences"), Type::Integer, false, 80),
                   field("success_count", QT_TR_NOOP("Successes"), Type::Integer, false, 90),
                   field("failure_count", QT_TR_NOOP("Failures"), Type::Integer, false, 90),
                   field("paused_at", QT_TR_NOOP("Paused"), Type::Timestamp, false, 160),
                   field("version", QT_TR_NOOP("Version"), Type::Integer, false, 70),
                   field("created_at", QT_TR_NOOP("Created"), Type::Timestamp, false, 160),
                   field("updated_at", QT_TR_NOOP("Updated"), Type::Timestamp, false, 160)},
                  "url", Endpoint::machine().states());

    kinds << kind("audit", "", QT_TR_NOOP("Audit"), QT_TR_NOOP("Audit entry"), "", nullptr,
                  // When, who, did what to which object, and why, before the finer detail.
                  // A provider acts under its id, shown by its name as the object is.
                  {field("id", QT_TR_NOOP("ID"), Type::Id, true, 70),
                   field("at", QT_TR_NOOP("At"), Type::Timestamp, true, 160),
                   referring(field("actor.subject", QT_TR_NOOP("Actor"), Type::Text, true, 120), "actor.role"),
                   field("action", QT_TR_NOOP("Action"), Type::Text, true, 100),
                   field("kind", QT_TR_NOOP("Kind"), Type::Text, true, 90),
                   referring(field("object_id", QT_TR_NOOP("Object"), Type::Id, true, 140), "kind"),
                   field("reason", QT_TR_NOOP("Reason"), Type::Text, true, 260),
                   field("from", QT_TR_NOOP("From"), Type::Text, true, 110),
                   field("to", QT_TR_NOOP("To"), Type::Text, true, 110),
                   field("actor.role", QT_TR_NOOP("Role"), Type::Text, true, 90)},
                  "action", {});
    kinds.last().newestFirst = true;

    return kinds;
}

} // namespace

int ResourceKind::fieldIndex(QStringView key) const
{
    for (int i = 0; i < fields.size(); ++i) {
        if (fields.at(i).key == key)
            return i;
    }
    return -1;
}

const FieldSpec *ResourceKind::field(QStringView key) const
{
    const int index = fieldIndex(key);
    return index < 0 ? nullptr : &fields.at(index);
}

const QList<ResourceKind> &resourceKinds()
{
    static const QList<ResourceKind> kinds = KindTable::build();
    return kinds;
}

const ResourceKind *resourceKindByName(QStringView name)
{
    for (const ResourceKind &k : resourceKinds()) {
        if (k.name == name)
            return &k;
    }
    return nullptr;
}

QString referencedKindName(const FieldSpec &field, QStringView fromValue)
{
    if (!field.references.isEmpty())
        return field.references;
    if (field.referencesFrom.isEmpty())
        return {};
    const ResourceKind *kind = resourceKindByFeedKind(fromValue);
    return kind ? kind->name : QString();
}

std::optional<qint64> referenceId(const QJsonValue &value)
{
    if (value.isDouble())
        return value.toInteger();
    if (!value.isString())
        return std::nullopt;
    const QString text = value.toString();
    bool ok = false;
    const qint64 id = text.toLongLong(&ok);
    // Digits alone: "+1", " 1" or "01" is a name that looks like a number.
    if (!ok || id <= 0 || text != QString::number(id))
        return std::nullopt;
    return id;
}

const ResourceKind *resourceKindByFeedKind(QStringView feedKind)
{
    if (feedKind.isEmpty())
        return nullptr;
    for (const ResourceKind &k : resourceKinds()) {
        if (k.feedKind == feedKind)
            return &k;
    }
    return nullptr;
}

StateTone stateTone(QStringView state)
{
    // Composite states ("STARTING+ERROR") read as their worst part.
    if (state.contains(u"ERROR", Qt::CaseInsensitive) || state.contains(u"FAIL", Qt::CaseInsensitive))
        return StateTone::Bad;
    const QString s = state.toString().toUpper();
    static const QStringList good = {QStringLiteral("RUNNING"), QStringLiteral("DELIVERED"),
                                     QStringLiteral("AVAILABLE"), QStringLiteral("ACTIVE"),
                                     QStringLiteral("SUCCEEDED"), QStringLiteral("READY")};
    static const QStringList busy = {QStringLiteral("PENDING"), QStringLiteral("STARTING"),
                                     QStringLiteral("STOPPING"), QStringLiteral("CREATING"),
                                     QStringLiteral("DELETING"), QStringLiteral("UPDATING"),
                                     QStringLiteral("IN PROGRESS"), QStringLiteral("IN_PROGRESS"),
                                     QStringLiteral("PROVISIONING"), QStringLiteral("DEPROVISIONING"),
                                     QStringLiteral("BUILDING"), QStringLiteral("QUEUED")};
    static const QStringList bad = {QStringLiteral("DISABLED"), QStringLiteral("BROKEN")};
    static const QStringList gone = {QStringLiteral("DELETED"), QStringLiteral("DESTROYED"),
                                     QStringLiteral("SUPERSEDED"), QStringLiteral("CANCELLED"),
                                     QStringLiteral("CANCELED"), QStringLiteral("PURGED")};
    if (good.contains(s))
        return StateTone::Good;
    if (busy.contains(s) || s.endsWith(QLatin1String("ING")))
        return StateTone::Busy;
    if (bad.contains(s))
        return StateTone::Bad;
    if (gone.contains(s))
        return StateTone::Gone;
    return StateTone::Neutral;
}

QString stateName(QStringView state)
{
    static const struct
    {
        const char *code;
        const char *name;
    } names[] = {
        {"ACTIVE", QT_TRANSLATE_NOOP("OpsDeck::StateName", "active")},
        {"AVAILABLE", QT_TRANSLATE_NOOP("OpsDeck::StateName", "available")},
        {"BROKEN", QT_TRANSLATE_NOOP("OpsDeck::StateName", "broken")},
        {"BUILDING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "building")},
        {"CANCELED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "cancelled")},
        {"CANCELLED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "cancelled")},
        {"CREATING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "creating")},
        {"DELETED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "deleted")},
        {"DELETING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "deleting")},
        {"DELIVERED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "delivered")},
        {"DEPROVISIONING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "deprovisioning")},
        {"DESTROYED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "destroyed")},
        {"DISABLED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "disabled")},
        {"ERROR", QT_TRANSLATE_NOOP("OpsDeck::StateName", "error")},
        {"FAILED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "failed")},
        {"IDLE", QT_TRANSLATE_NOOP("OpsDeck::StateName", "idle")},
        {"IN_PROGRESS", QT_TRANSLATE_NOOP("OpsDeck::StateName", "in progress")},
        {"PAUSED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "paused")},
        {"PENDING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "pending")},
        {"PROVISIONING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "provisioning")},
        {"PURGED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "purged")},
        {"QUEUED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "queued")},
        {"READY", QT_TRANSLATE_NOOP("OpsDeck::StateName", "ready")},
        {"RUNNING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "running")},
        {"STARTING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "starting")},
        {"STOPPED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "stopped")},
        {"STOPPING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "stopping")},
        {"SUCCEEDED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "succeeded")},
        {"SUPERSEDED", QT_TRANSLATE_NOOP("OpsDeck::StateName", "superseded")},
        {"UNKNOWN", QT_TRANSLATE_NOOP("OpsDeck::StateName", "unknown")},
        {"UPDATING", QT_TRANSLATE_NOOP("OpsDeck::StateName", "updating")},
    };
    QStringList words;
    for (const QStringView part : state.split(u'+', Qt::SkipEmptyParts)) {
        QString code = part.trimmed().toString().toUpper();
        code.replace(QLatin1Char(' '), QLatin1Char('_'));
        const auto known = std::find_if(std::begin(names), std::end(names),
                                        [&code](const auto &entry) { return code == QLatin1String(entry.code); });
        words.append(known != std::end(names) ? QCoreApplication::translate("OpsDeck::StateName", known->name)
                                              : code.toLower().replace(QLatin1Char('_'), QLatin1Char(' ')));
    }
    return words.join(QCoreApplication::translate("OpsDeck::StateName", ", "));
}

QJsonValue jsonValueAt(const QJsonObject &object, QStringView dottedKey)
{
    const qsizetype dot = dottedKey.indexOf(u'.');
    if (dot < 0)
        return object.value(dottedKey);
    const QJsonValue head = object.value(dottedKey.left(dot));
    if (!head.isObject())
        return QJsonValue(QJsonValue::Undefined);
    return jsonValueAt(head.toObject(), dottedKey.mid(dot + 1));
}

QVariant fieldRawValue(FieldSpec::Type type, const QJsonValue &value)
{
    if (value.isNull() || value.isUndefined())
        return {};
    switch (type) {
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
        if (value.isDouble())
            return QVariant::fromValue<qint64>(value.toInteger());
        if (value.isString()) {
            bool ok = false;
            const qint64 n = value.toString().toLongLong(&ok);
            return ok ? QVariant::fromValue<qint64>(n) : QVariant(value.toString());
        }
        return {};
    case FieldSpec::Type::Timestamp:
        if (value.isString()) {
            if (const auto ms = parseTimestamp(value.toString()))
                return QVariant::fromValue<qint64>(*ms);
        }
        return {};
    case FieldSpec::Type::Number:
    case FieldSpec::Type::Ratio:
        return value.isDouble() ? QVariant(value.toDouble()) : QVariant();
    case FieldSpec::Type::Boolean:
        return value.isBool() ? QVariant(value.toBool()) : QVariant();
    case FieldSpec::Type::Json:
        if (value.isArray())
            return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
        if (value.isObject())
            return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
        return value.toVariant().toString();
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
        if (value.isString())
            return value.toString();
        return value.toVariant().toString();
    }
    return {};
}

namespace {

// Reads `count` digits at `pos`; -1 when any is not a digit.
int digits(QStringView text, qsizetype pos, int count)
{
    if (pos + count > text.size())
        return -1;
    int n = 0;
    for (int i = 0; i < count; ++i) {
        const char16_t c = text.at(pos + i).unicode();
        if (c < u'0' || c > u'9') // ASCII only: QChar::isDigit() takes any script's digits
            return -1;
        n = n * 10 + (c - u'0');
    }
    return n;
}

} // namespace

std::optional<qint64> parseTimestamp(QStringView text)
{
    // The server's own form ("2026-11-29T21:30:00.123Z") is parsed by hand: models parse
    // hundreds of thousands of them and QDateTime::fromString is the slow path. What the hand
    // parser takes, the server (which reads with QDateTime) takes alike (tests/fuzz/fuzz_timestamps):
    // anything else, such as more than three digits of fraction, goes the slow path.
    const int year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
    const int hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
    if (year >= 0 && month >= 0 && day >= 0 && hour >= 0 && minute >= 0 && second >= 0
        && text.size() >= 20 && text.at(4) == u'-' && text.at(7) == u'-'
        && (text.at(10) == u'T' || text.at(10) == u't' || text.at(10) == u' ')
        && text.at(13) == u':' && text.at(16) == u':') {
        qsizetype pos = 19;
        int millis = 0;
        if (text.at(pos) == u'.') {
            const qsizetype first = ++pos;
            for (int scale = 100; pos < first + 3 && digits(text, pos, 1) >= 0; ++pos, scale /= 10)
                millis += digits(text, pos, 1) * scale;
            if (pos == first)
                return std::nullopt; // a dot without digits
        }
        if (pos == text.size() - 1 && (text.at(pos) == u'Z' || text.at(pos) == u'z')) {
            const QDate date(year, month, day);
            if (date.isValid() && hour < 24 && minute < 60 && second < 60) {
                const qint64 days = QDate(1970, 1, 1).daysTo(date);
                return ((days * 24 + hour) * 60 + minute) * 60000LL + second * 1000LL + millis;
            }
            // Out of range here, yet Qt may read it ("24:00:00" is the next day's midnight).
        }
    }
    const QDateTime dt = QDateTime::fromString(text.toString(), Qt::ISODateWithMs);
    if (!dt.isValid() || dt.timeSpec() == Qt::LocalTime)
        return std::nullopt;
    return dt.toMSecsSinceEpoch();
}

QString percentText(double ratio)
{
    return QCoreApplication::translate("OpsDeck::ResourceKind", "%1 %").arg(QLocale().toString(100.0 * ratio, 'g', 3));
}

} // namespace OpsDeck
