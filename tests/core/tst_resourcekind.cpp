// Tests for the resource-kind descriptions and the helpers that read field values.
#include "core/resourcekind.h"
#include "core/statemachine.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QSet>
#include <QTest>

using namespace OpsDeck;

class tst_ResourceKind final : public QObject
{
    Q_OBJECT

private slots:
    void kindsAreWellFormed();
    void lookups_data();
    void lookups();
    void tones_data();
    void tones();
    void stateNames_data();
    void stateNames();
    void nestedValues();
    void rawValues_data();
    void rawValues();
    void timestamps_data();
    void timestamps();
    void endpointsCarryTheirHealth();
    void whyADeliveryFailedSitsByItsState();
    void percentages_data();
    void percentages();
};

void tst_ResourceKind::kindsAreWellFormed()
{
    QSet<QString> names;
    for (const ResourceKind &kind : resourceKinds()) {
        QVERIFY2(!names.contains(kind.name), qPrintable(kind.name));
        names.insert(kind.name);
        QVERIFY(!kind.title.isEmpty());
        QCOMPARE(kind.fields.value(0).key, QStringLiteral("id"));
        QCOMPARE(kind.fields.value(0).type, FieldSpec::Type::Id);
        QVERIFY2(kind.fieldIndex(kind.nameField) >= 0, qPrintable(kind.name));
        if (!kind.stateField.isEmpty()) {
            QVERIFY(kind.field(kind.stateField));
            QCOMPARE(kind.field(kind.stateField)->type, FieldSpec::Type::State);
            QVERIFY2(!kind.states.isEmpty(), qPrintable(kind.name));
        }
        if (kind.machine)
            QCOMPARE(kind.states, kind.machine->states());
        QSet<QString> keys;
        for (const FieldSpec &f : kind.fields) {
            QVERIFY2(!keys.contains(f.key), qPrintable(kind.name + u'.' + f.key));
            keys.insert(f.key);
            QVERIFY(!f.title.isEmpty());
            QVERIFY(f.defaultWidth > 0);
            if (!f.references.isEmpty())
                QVERIFY2(resourceKindByName(f.references), qPrintable(f.references));
        }
    }
    QVERIFY(names.contains(QStringLiteral("instances")));
    QVERIFY(names.contains(QStringLiteral("audit")));
}

void tst_ResourceKind::lookups_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("feedKind");
    QTest::addColumn<QString>("stateField");

    QTest::newRow("organizations") << "organizations" << "organization" << "status";
    QTest::newRow("providers") << "providers" << "provider" << "";
    QTest::newRow("instances") << "instances" << "instance" << "status";
    QTest::newRow("deliveries") << "deliveries" << "delivery" << "state";
    QTest::newRow("endpoints") << "endpoints" << "endpoint" << "state";
}

void tst_ResourceKind::lookups()
{
    QFETCH(QString, name);
    QFETCH(QString, feedKind);
    QFETCH(QString, stateField);
    const ResourceKind *byName = resourceKindByName(name);
    QVERIFY(byName);
    QCOMPARE(resourceKindByFeedKind(feedKind), byName);
    QCOMPARE(byName->feedKind, feedKind);
    QCOMPARE(byName->stateField, stateField);
    QCOMPARE(resourceKindByName(u"nothing"), nullptr);
    QCOMPARE(resourceKindByFeedKind(u""), nullptr);
}

void tst_ResourceKind::tones_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<int>("tone");

    QTest::newRow("running") << "RUNNING" << int(StateTone::Good);
    QTest::newRow("delivered") << "DELIVERED" << int(StateTone::Good);
    QTest::newRow("available") << "AVAILABLE" << int(StateTone::Good);
    QTest::newRow("pending") << "PENDING" << int(StateTone::Busy);
    QTest::newRow("starting") << "STARTING" << int(StateTone::Busy);
    QTest::newRow("stopping") << "stopping" << int(StateTone::Busy);
    QTest::newRow("in progress") << "in progress" << int(StateTone::Busy);
    QTest::newRow("failed") << "FAILED" << int(StateTone::Bad);
    QTest::newRow("composite error") << "STARTING+ERROR" << int(StateTone::Bad);
    QTest::newRow("stopped") << "STOPPED" << int(StateTone::Neutral);
    QTest::newRow("idle") << "IDLE" << int(StateTone::Neutral);
    QTest::newRow("paused") << "PAUSED" << int(StateTone::Neutral);
    QTest::newRow("deleted") << "DELETED" << int(StateTone::Gone);
    QTest::newRow("destroyed") << "DESTROYED" << int(StateTone::Gone);
    QTest::newRow("superseded") << "SUPERSEDED" << int(StateTone::Gone);
    QTest::newRow("cancelled") << "CANCELLED" << int(StateTone::Gone);
    QTest::newRow("unknown") << "WHATEVER" << int(StateTone::Neutral);
    QTest::newRow("empty") << "" << int(StateTone::Neutral);
}

void tst_ResourceKind::tones()
{
    QFETCH(QString, state);
    QFETCH(int, tone);
    QCOMPARE(int(stateTone(state)), tone);
}

void tst_ResourceKind::stateNames_data()
{
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("name");
    QTest::newRow("known") << "RUNNING" << "running";
    QTest::newRow("two words") << "IN_PROGRESS" << "in progress";
    QTest::newRow("spelled with a space") << "in progress" << "in progress";
    QTest::newRow("American spelling") << "CANCELED" << "cancelled";
    QTest::newRow("composite") << "STARTING+ERROR" << "starting, error";
    QTest::newRow("unknown") << "WEIRD_STATE" << "weird state";
    QTest::newRow("empty") << "" << "";
}

void tst_ResourceKind::stateNames()
{
    QFETCH(QString, state);
    QFETCH(QString, name);
    QCOMPARE(stateName(state), name);
}

void tst_ResourceKind::nestedValues()
{
    const QJsonObject o{{QStringLiteral("callback"), QJsonObject{{QStringLiteral("url"), QStringLiteral("https://x")}}},
                        {QStringLiteral("awaiting_ack"), QJsonValue::Null}};
    QCOMPARE(jsonValueAt(o, u"callback.url").toString(), QStringLiteral("https://x"));
    QVERIFY(jsonValueAt(o, u"callback.signing").isUndefined());
    QVERIFY(jsonValueAt(o, u"awaiting_ack.reason").isUndefined());
    QVERIFY(jsonValueAt(o, u"missing").isUndefined());
}

void tst_ResourceKind::rawValues_data()
{
    QTest::addColumn<int>("type");
    QTest::addColumn<QJsonValue>("json");
    QTest::addColumn<QVariant>("raw");

    QTest::newRow("id") << int(FieldSpec::Type::Id) << QJsonValue(42) << QVariant::fromValue<qint64>(42);
    QTest::newRow("integer from string") << int(FieldSpec::Type::Integer) << QJsonValue(QStringLiteral("7"))
                                         << QVariant::fromValue<qint64>(7);
    QTest::newRow("null") << int(FieldSpec::Type::Text) << QJsonValue(QJsonValue::Null) << QVariant();
    QTest::newRow("text") << int(FieldSpec::Type::Text) << QJsonValue(QStringLiteral("a")) << QVariant(QStringLiteral("a"));
    QTest::newRow("timestamp") << int(FieldSpec::Type::Timestamp) << QJsonValue(QStringLiteral("1970-01-01T00:00:01.500Z"))
                               << QVariant::fromValue<qint64>(1500);
    QTest::newRow("bad timestamp") << int(FieldSpec::Type::Timestamp) << QJsonValue(QStringLiteral("yesterday"))
                                   << QVariant();
    // Read as the server reads them (QDateTime), which refuses these three.
    QTest::newRow("timestamp in other digits") << int(FieldSpec::Type::Timestamp)
                                               << QJsonValue(QString::fromUtf8("\u0661\u0669\u0667\u0660-01-01T00:00:01Z"))
                                               << QVariant();
    QTest::newRow("timestamp with a dot and no fraction") << int(FieldSpec::Type::Timestamp)
                                                          << QJsonValue(QStringLiteral("1970-01-01T00:00:01.Z")) << QVariant();
    QTest::newRow("timestamp with second 60") << int(FieldSpec::Type::Timestamp)
                                              << QJsonValue(QStringLiteral("2016-12-31T23:59:60Z")) << QVariant();
    // Hour 24 is the next day's midnight, for the server and so here.
    QTest::newRow("timestamp at hour 24") << int(FieldSpec::Type::Timestamp) << QJsonValue(QStringLiteral("2026-11-29T24:00:00Z"))
                                          << QVariant::fromValue<qint64>(QDateTime(QDate(2026, 11, 30), QTime(0, 0), Qt::UTC).toMSecsSinceEpoch());
    // More than milliseconds: read as the server reads it, not cut to three digits.
    QTest::newRow("timestamp with microseconds")
        << int(FieldSpec::Type::Timestamp) << QJsonValue(QStringLiteral("1970-01-01T00:00:01.9996Z"))
        << QVariant::fromValue<qint64>(QDateTime::fromString(QStringLiteral("1970-01-01T00:00:01.9996Z"), Qt::ISODateWithMs).toMSecsSinceEpoch());
    QTest::newRow("json array") << int(FieldSpec::Type::Json)
                                << QJsonValue(QJsonArray{QStringLiteral("a"), QStringLiteral("b")})
                                << QVariant(QStringLiteral("[\"a\",\"b\"]"));
    QTest::newRow("number") << int(FieldSpec::Type::Number) << QJsonValue(0.25) << QVariant(0.25);
    QTest::newRow("boolean") << int(FieldSpec::Type::Boolean) << QJsonValue(true) << QVariant(true);
}

void tst_ResourceKind::rawValues()
{
    QFETCH(int, type);
    QFETCH(QJsonValue, json);
    QFETCH(QVariant, raw);
    QCOMPARE(fieldRawValue(FieldSpec::Type(type), json), raw);
}

void tst_ResourceKind::timestamps_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("ms");

    QTest::newRow("millis") << "2026-11-29T21:30:00.123Z" << qint64(1795987800123);
    QTest::newRow("no millis") << "2026-11-29T21:30:00Z" << qint64(1795987800000);
    QTest::newRow("offset") << "2026-11-29T22:30:00.123+01:00" << qint64(1795987800123);
    QTest::newRow("epoch") << "1970-01-01T00:00:00.000Z" << qint64(0);
    QTest::newRow("no zone") << "2026-11-29T21:30:00" << qint64(-1);
    QTest::newRow("bad month") << "2026-13-29T21:30:00Z" << qint64(-1);
    QTest::newRow("garbage") << "not a time" << qint64(-1);
}

void tst_ResourceKind::timestamps()
{
    QFETCH(QString, text);
    QFETCH(qint64, ms);
    QCOMPARE(parseTimestamp(text).value_or(-1), ms);
}

void tst_ResourceKind::endpointsCarryTheirHealth()
{
    // Every health field the server sends reaches the console (a model row holds listed fields only).
    const ResourceKind &endpoints = *resourceKindByName(u"endpoints");
    const QList<std::pair<const char *, FieldSpec::Type>> expected{
        {"consecutive_failures", FieldSpec::Type::Integer}, {"last_success_at", FieldSpec::Type::Timestamp},
        {"failure_rate", FieldSpec::Type::Ratio},           {"failing_since", FieldSpec::Type::Timestamp},
        {"last_failure_at", FieldSpec::Type::Timestamp},    {"success_count", FieldSpec::Type::Integer},
        {"failure_count", FieldSpec::Type::Integer},        {"paused_at", FieldSpec::Type::Timestamp},
        {"created_at", FieldSpec::Type::Timestamp},         {"updated_at", FieldSpec::Type::Timestamp},
        {"last_silent_at", FieldSpec::Type::Timestamp},     {"silent_count", FieldSpec::Type::Integer}};
    for (const auto &[key, type] : expected) {
        const FieldSpec *f = endpoints.field(QString::fromLatin1(key));
        QVERIFY2(f, key);
        QCOMPARE(f->type, type);
    }
}

void tst_ResourceKind::whyADeliveryFailedSitsByItsState()
{
    const ResourceKind &deliveries = *resourceKindByName(u"deliveries");
    const int state = deliveries.fieldIndex(QStringLiteral("state"));
    QVERIFY(state > 0);
    QCOMPARE(deliveries.fieldIndex(QStringLiteral("last_status")), state + 1);
    QCOMPARE(deliveries.fieldIndex(QStringLiteral("last_error")), state + 2);
    QVERIFY(deliveries.fields.at(state + 1).visibleByDefault && deliveries.fields.at(state + 2).visibleByDefault);
}

void tst_ResourceKind::percentages_data()
{
    QTest::addColumn<double>("ratio");
    QTest::addColumn<QString>("text");
    QTest::newRow("none") << 0.0 << QStringLiteral("0 %");
    QTest::newRow("a third") << 1.0 / 3.0 << QStringLiteral("33.3 %");
    QTest::newRow("all") << 1.0 << QStringLiteral("100 %");
    QTest::newRow("one in a thousand") << 0.001 << QStringLiteral("0.1 %");
}

void tst_ResourceKind::percentages()
{
    QFETCH(double, ratio);
    QFETCH(QString, text);
    QLocale::setDefault(QLocale::c());
    QCOMPARE(percentText(ratio), text);
}

QTEST_GUILESS_MAIN(tst_ResourceKind)
#include "tst_resourcekind.moc"
