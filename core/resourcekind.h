// Resource kinds as descriptions: what the console lists, syncs, caches and filters for each kind.
#pragma once

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>
#include <QVariant>

#include <optional>

namespace OpsDeck {

class StateMachine;

struct FieldSpec
{
    enum class Type {
        Id,        // integer id (the row's own "id" or a reference such as "provider_id")
        Text,
        State,     // one of the kind's states; drawn as a badge
        Integer,
        Timestamp, // RFC 3339 on the wire; milliseconds since the epoch in models and queries
        Boolean,
        Json,      // an array or object shown as compact JSON
        Number,    // a real number
        Ratio,     // a fraction from 0 to 1 (a failure rate), shown and queried as a percentage
    };

    QString key;                   // JSON key; nested with '.', e.g. "callback.url"
    QString title;                 // translated column title
    Type type = Type::Text;
    bool visibleByDefault = true;
    int defaultWidth = 120;        // pixels at the default font
    QString references;            // for Id fields that point elsewhere: the kind name ("providers")
    // For a field whose target depends on the row (an audit entry's object): the key of the
    // field holding the target kind's feed name ("instance"). A value naming no kind, or an id
    // that is not a number (an operator's name as actor), is shown as it is.
    QString referencesFrom;

    bool isReference() const { return !references.isEmpty() || !referencesFrom.isEmpty(); }
};

// How a state reads at a glance; the UI maps tones to colours.
enum class StateTone {
    Neutral, // STOPPED, IDLE, PAUSED and anything unknown
    Good,    // RUNNING, DELIVERED, AVAILABLE, ACTIVE
    Busy,    // PENDING, STARTING, STOPPING, anything in progress
    Bad,     // FAILED, DISABLED, composite "+ERROR" states
    Gone,    // DELETED, DESTROYED, SUPERSEDED, CANCELLED
};

struct ResourceKind
{
    QString name;        // "instances": URL path segment under /api/v1 and view id
    QString feedKind;    // "instance" in change-feed events; empty when the kind has no feed events
    QString title;       // translated, "Instances"
    QString itemTitle;   // translated, one of them: "Instance" (dialogs, the detail pane's subtitle)
    QString stateField;  // "status", "state" or empty
    const StateMachine *machine = nullptr; // not owned; static tables from core/, may be null
    QList<FieldSpec> fields;
    QString nameField;   // the field that names a row for humans ("name", "url", ...)
    QStringList states;  // known state values (from the machine when there is one)
    // A log read from its newest entry (the audit trail, the callbacks): its views sort by id
    // descending until the user sorts otherwise, so what just happened is at the top.
    bool newestFirst = false;

    // Index into fields, or -1.
    int fieldIndex(QStringView key) const;
    const FieldSpec *field(QStringView key) const;
    bool hasVersion() const { return fieldIndex(u"version") >= 0; }
};

// Every kind the console knows, in navigation order. Built on first use, so install
// translators before the first call.
const QList<ResourceKind> &resourceKinds();
const ResourceKind *resourceKindByName(QStringView name);
const ResourceKind *resourceKindByFeedKind(QStringView feedKind);

StateTone stateTone(QStringView state);
// A state code as words in the user's language, for what reads it aloud: "running" for RUNNING,
// "starting, error" for STARTING+ERROR, "weird state" for an unknown WEIRD_STATE. The console
// shows the code itself, as the API, its filters and the logs spell it.
QString stateName(QStringView state);

// The kind a reference field points to in one row: its `references`, or for a field with
// `referencesFrom`, the kind whose feed name `fromValue` (that field's value in the row) is.
// Empty when the row points to no kind the console knows.
QString referencedKindName(const FieldSpec &field, QStringView fromValue);
// The id a reference cell holds: a JSON number, or a text of digits alone (an actor's subject).
std::optional<qint64> referenceId(const QJsonValue &value);

// The value at a dotted key ("callback.url"); undefined when any step is missing.
QJsonValue jsonValueAt(const QJsonObject &object, QStringView dottedKey);
// A field's raw value as models sort and queries compare it: qint64 for Id, Integer and
// Timestamp (ms since the epoch, UTC), double for Number, bool for Boolean, QString for Text,
// State and Json (compact); an invalid QVariant for null or absent.
QVariant fieldRawValue(FieldSpec::Type type, const QJsonValue &value);
// RFC 3339 with or without milliseconds -> ms since the epoch; nullopt when malformed.
std::optional<qint64> parseTimestamp(QStringView text);
// A Ratio field's value as the console shows it, in the user's locale: 0.3333 -> "33.3 %".
QString percentText(double ratio);

} // namespace OpsDeck
