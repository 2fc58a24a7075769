// Tests for the filter query line: parsing, error messages with columns, matching and completion.
#include "core/query.h"
#include "core/querysyntax.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace OpsDeck;

namespace {

QString opName(QueryTerm::Op op)
{
    switch (op) {
    case QueryTerm::Op::Match:
        return QStringLiteral(":");
    case QueryTerm::Op::Equal:
        return QStringLiteral("=");
    case QueryTerm::Op::Less:
        return QStringLiteral("<");
    case QueryTerm::Op::LessEqual:
        return QStringLiteral("<=");
    case QueryTerm::Op::Greater:
        return QStringLiteral(">");
    case QueryTerm::Op::GreaterEqual:
        return QStringLiteral(">=");
    }
    return {};
}

// A compact, readable picture of a parsed query, so rows of the table stay one line each.
QString describe(const ResourceKind &kind, const Query &q)
{
    QStringList parts;
    for (const QueryTerm &t : q.terms) {
        QString s = (t.negated ? QStringLiteral("-") : QString()) + kind.fields.at(t.fieldIndex).key
            + opName(t.op) + t.values.join(u',');
        if (t.ageMs)
            s += QStringLiteral("[age %1]").arg(*t.ageMs);
        parts << s;
    }
    for (const QueryWord &w : q.words)
        parts << (w.negated ? QStringLiteral("-'") : QStringLiteral("'")) + w.text + u'\'';
    return parts.join(QLatin1String(" | "));
}

QJsonObject instance(qint64 id, const QString &name, const QString &status, qint64 provider,
                     const QString &created, const QString &updated, const QString &owner = QStringLiteral("alice"))
{
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("name"), name},
                       {QStringLiteral("organization_id"), 1},
                       {QStringLiteral("provider_id"), provider},
                       {QStringLiteral("application"), QStringLiteral("wiki")},
                       {QStringLiteral("owner"), owner},
                       {QStringLiteral("status"), status},
                       {QStringLiteral("version"), 3},
                       {QStringLiteral("created_at"), created},
                       {QStringLiteral("updated_at"), updated},
                       {QStringLiteral("callback"), QJsonObject{{QStringLiteral("url"), QStringLiteral("https://acme.example/cb")},
                                                                {QStringLiteral("signing"), QStringLiteral("standard-webhooks")}}}};
}

// Provider names resolved the way the models resolve them.
class NamedRow final : public QueryRow
{
public:
    NamedRow(const ResourceKind &kind, const QJsonObject &object) : m_row(kind, object) {}
    QVariant value(int field) const override { return m_row.value(field); }
    QString referenceName(const QString &kindName, qint64 id) const override
    {
        if (kindName == QLatin1String("providers"))
            return id == 7 ? QStringLiteral("Acme Hosting") : QStringLiteral("Globex");
        return {};
    }

private:
    JsonQueryRow m_row;
};

const qint64 kNow = *parseTimestamp(u"2026-11-29T12:00:00.000Z");

} // namespace

class tst_Query final : public QObject
{
    Q_OBJECT

private slots:
    void titleAsName_data();
    void titleAsName();
    void parseValid_data();
    void parseValid();
    void parseInvalid_data();
    void parseInvalid();
    void ratioReadsAsPercentage_data();
    void ratioReadsAsPercentage();
    void numberClasses_data();
    void numberClasses();
    void matchRows_data();
    void matchRows();
    void durations_data();
    void durations();
    void completions_data();
    void completions();
    void knownNames();
    void errorText();
    void noCrashOnOddInput_data();
    void noCrashOnOddInput();
    void narrows_data();
    void narrows();
    void containsIgnoringCaseAsQt_data();
    void containsIgnoringCaseAsQt();
};

void tst_Query::narrows_data()
{
    QTest::addColumn<QString>("narrower");
    QTest::addColumn<QString>("wider");
    QTest::addColumn<bool>("expected");

    QTest::newRow("same") << "state:running acme" << "state:running acme" << true;
    QTest::newRow("word grew") << "dataviz-ac" << "dataviz-a" << true;
    QTest::newRow("word added") << "dataviz acme" << "dataviz" << true;
    QTest::newRow("term added") << "state:running dataviz" << "dataviz" << true;
    QTest::newRow("state prefix grew") << "state:runn" << "state:ru" << true;
    QTest::newRow("state alias") << "status:running" << "state:run" << true;
    QTest::newRow("text term grew") << "name:viz-ac" << "name:viz" << true;
    QTest::newRow("alternative dropped") << "state:running" << "state:running,stopped" << true;
    QTest::newRow("alternative added") << "state:running,stopped" << "state:running" << false;
    QTest::newRow("word shrank") << "dataviz-a" << "dataviz-ac" << false;
    QTest::newRow("term removed") << "dataviz" << "state:running dataviz" << false;
    QTest::newRow("negated word shrank") << "-acm" << "-acme" << true;
    QTest::newRow("negated word grew") << "-acme" << "-acm" << false;
    QTest::newRow("negated state shrank") << "-state:fa" << "-state:failed" << true;
    QTest::newRow("negated state grew") << "-state:failed" << "-state:fa" << false;
    QTest::newRow("equal is exact") << "state=runn" << "state=ru" << false;
    QTest::newRow("ages depend on the clock") << "age>1h" << "age>1h" << false;
    QTest::newRow("different numbers") << "provider:8" << "provider:7" << false;
    QTest::newRow("a class is not its first number") << "version:1x" << "version:10" << false;
    QTest::newRow("the same class") << "version:1x state:run" << "version:1x" << true;
    QTest::newRow("everything narrows nothing") << "acme" << "" << true;
    QTest::newRow("nothing is narrower than everything") << "" << "acme" << false;
}

void tst_Query::narrows()
{
    QFETCH(QString, narrower);
    QFETCH(QString, wider);
    QFETCH(bool, expected);
    const ResourceKind &kind = *resourceKindByName(u"instances");
    const QueryParse n = parseQuery(narrower, kind);
    const QueryParse w = parseQuery(wider, kind);
    QVERIFY(n.ok());
    QVERIFY(w.ok());
    QCOMPARE(queryNarrows(n.query, w.query), expected);
}

void tst_Query::containsIgnoringCaseAsQt_data()
{
    QTest::addColumn<QString>("haystack");
    QTest::addColumn<QString>("needle");

    QTest::newRow("ascii hit") << "Dataviz-ACME-01" << "acme-0";
    QTest::newRow("ascii miss") << "Dataviz-ACME-01" << "acme-1";
    QTest::newRow("at the end") << "billing" << "ING";
    QTest::newRow("longer than text") << "crm" << "crm-acme";
    QTest::newRow("empty needle") << "crm" << "";
    QTest::newRow("empty text") << "" << "a";
    QTest::newRow("non-ascii needle") << "wiki-ÄRGER" << "ärger";
    QTest::newRow("kelvin sign folds to k") << "KELVIN-\u212A" << "kelvin-k";
    QTest::newRow("kelvin sign inside a match") << "ab\u212Acd" << "abkc";
    QTest::newRow("partial overlaps") << "aaab" << "aab";
    QTest::newRow("ascii needle after non-ascii text") << "über-acme" << "ACME";
    QTest::newRow("non-ascii text, no match") << "über-acme" << "globex";
    QTest::newRow("three-byte sequence") << "a€b" << "€B";
}

void tst_Query::containsIgnoringCaseAsQt()
{
    QFETCH(QString, haystack);
    QFETCH(QString, needle);
    const bool expected = haystack.contains(needle, Qt::CaseInsensitive);
    QCOMPARE(containsIgnoringCase(haystack, needle, needle.toCaseFolded()), expected);
    // The same answer from the UTF-8 bytes a model keeps.
    const QByteArray utf8 = haystack.toUtf8();
    QCOMPARE(containsIgnoringCase(QUtf8StringView(utf8.constData(), utf8.size()), needle, needle.toCaseFolded()), expected);
}

void tst_Query::titleAsName_data()
{
    QTest::addColumn<QString>("title");
    QTest::addColumn<QString>("name");
    QTest::newRow("one word") << "Object" << "object";
    QTest::newRow("two words") << "Next attempt" << "next_attempt";
    QTest::newRow("French, accents kept") << QString::fromUtf8("Dernière réponse") << QString::fromUtf8("dernière_réponse");
    QTest::newRow("punctuation and parentheses") << "Status (HTTP)" << "status_http";
    QTest::newRow("an apostrophe") << QString::fromUtf8("Fin d’essai") << QString::fromUtf8("fin_d_essai");
    QTest::newRow("nothing to name") << " — " << "";
}

void tst_Query::titleAsName()
{
    QFETCH(QString, title);
    QFETCH(QString, name);
    QCOMPARE(QuerySyntax::titleAsName(title), name);
}

void tst_Query::parseValid_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("parsed");

    QTest::newRow("empty") << "instances" << "" << "";
    QTest::newRow("blank") << "instances" << "   \t " << "";
    QTest::newRow("state alias") << "instances" << "state:failed" << "status:failed";
    QTest::newRow("status field") << "instances" << "status:running" << "status:running";
    QTest::newRow("state on deliveries") << "deliveries" << "state:failed" << "state:failed";
    // On deliveries "status" is what the API calls it there: the last HTTP status.
    QTest::newRow("status on deliveries") << "deliveries" << "status:500" << "last_status:500";
    QTest::newRow("dash negation") << "instances" << "-status:running" << "-status:running";
    QTest::newRow("not equal") << "instances" << "status!=RUNNING" << "-status=RUNNING";
    QTest::newRow("dash and not equal cancel") << "instances" << "-status!=RUNNING" << "status=RUNNING";
    QTest::newRow("provider by name") << "instances" << "provider:acme" << "provider_id:acme";
    QTest::newRow("provider by id") << "instances" << "provider:7" << "provider_id:7";
    QTest::newRow("age") << "instances" << "age>1h" << "created_at>1h[age 3600000]";
    QTest::newRow("age compound") << "instances" << "age<=1h30m" << "created_at<=1h30m[age 5400000]";
    QTest::newRow("updated duration") << "instances" << "updated<30m" << "updated_at<30m[age 1800000]";
    QTest::newRow("created date") << "instances" << "created>=2026-11-01" << "created_at>=2026-11-01";
    QTest::newRow("created day") << "instances" << "created:2026-11-29" << "created_at:2026-11-29";
    QTest::newRow("version") << "instances" << "version>=3" << "version>=3";
    QTest::newRow("field case") << "instances" << "STATE:Failed" << "status:Failed";
    QTest::newRow("alternatives") << "instances" << "state:running,stopped" << "status:running,stopped";
    QTest::newRow("quoted value") << "instances" << "name:\"my app\"" << "name:my app";
    QTest::newRow("quoted phrase") << "instances" << "\"quoted text\"" << "'quoted text'";
    QTest::newRow("quoted field-like phrase") << "instances" << "\"colour:red\"" << "'colour:red'";
    QTest::newRow("free words") << "instances" << "free text" << "'free' | 'text'";
    QTest::newRow("negated word") << "instances" << "-legacy" << "-'legacy'";
    QTest::newRow("dotted key") << "instances" << "callback.url:acme" << "callback.url:acme";
    QTest::newRow("last dotted part") << "instances" << "signing:standard" << "callback.signing:standard";
    QTest::newRow("full key alias") << "instances" << "provider_id=7" << "provider_id=7";
    QTest::newRow("number field") << "endpoints" << "failure_rate>0.5" << "failure_rate>0.5";
    QTest::newRow("age on audit is at") << "audit" << "age<1d" << "at<1d[age 86400000]";
    // A column's title, as the header shows it, names its field too.
    QTest::newRow("title: Object") << "audit" << "object:2" << "object_id:2";
    QTest::newRow("title: Actor") << "audit" << "actor:alice" << "actor.subject:alice";
    QTest::newRow("title of two words") << "deliveries" << "gives_up<1h" << "give_up_at<1h[age 3600000]";
    QTest::newRow("title: Awaited delivery") << "instances" << "awaited_delivery:12" << "awaiting_ack.delivery_id:12";
    QTest::newRow("everything")
        << "instances"
        << "state:failed provider:acme -status:running age>1h updated<30m version>=3 \"quoted text\" free text"
        << "status:failed | provider_id:acme | -status:running | created_at>1h[age 3600000] | "
           "updated_at<30m[age 1800000] | version>=3 | 'quoted text' | 'free' | 'text'";
}

void tst_Query::parseValid()
{
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(QString, parsed);
    const ResourceKind *k = resourceKindByName(kind);
    QVERIFY(k);
    const QueryParse p = parseQuery(text, *k);
    QVERIFY2(p.ok(), qPrintable(p.error.toString()));
    QCOMPARE(describe(*k, p.query), parsed);
}

void tst_Query::parseInvalid_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("position");
    QTest::addColumn<QString>("message");

    const QString instanceFields = QStringLiteral(
        "id, name, organization, provider, application, owner, state, version, created, updated, "
        "status_changed, callback.url, callback.signing, awaiting_ack.reason, awaiting_ack.delivery_id, awaiting_ack.event_type, "
        "destroy_after, age");
    QTest::newRow("unknown field") << "instances" << "colour:red" << 0
                                   << "unknown field 'colour' (known: " + instanceFields + ")";
    QTest::newRow("unknown field after text") << "instances" << "abc -colour:red" << 5
                                              << "unknown field 'colour' (known: " + instanceFields + ")";
    QTest::newRow("unterminated quote") << "instances" << "state:failed \"abc" << 13 << "unterminated quote";
    QTest::newRow("unterminated quote in value") << "instances" << "name:\"abc" << 5 << "unterminated quote";
    QTest::newRow("age not a duration") << "instances" << "age>soon" << 4 << "age needs a duration like 1h, 30m, 2d";
    QTest::newRow("age bad unit") << "instances" << "age>5y" << 4 << "age needs a duration like 1h, 30m, 2d";
    QTest::newRow("age with colon") << "instances" << "age:1h" << 4 << "age compares with <, <=, > or >= (e.g. age>1h)";
    QTest::newRow("empty value") << "instances" << "state:" << 6 << "state needs a value";
    QTest::newRow("state comparison") << "instances" << "state>running" << 6
                                      << "state compares only with ':', '=' or '!=', not '>'";
    QTest::newRow("text comparison") << "instances" << "name<b" << 5
                                     << "name compares only with ':', '=' or '!=', not '<'";
    QTest::newRow("version not a number") << "instances" << "version>=three" << 9 << "version needs a number";
    QTest::newRow("provider comparison by name") << "instances" << "provider>acme" << 9 << "provider needs a number";
    QTest::newRow("updated garbage") << "instances" << "updated<later" << 8
                                     << "updated needs a duration like 1h, 30m, 2d or a date like 2026-11-29";
    QTest::newRow("created colon duration") << "instances" << "created:1h" << 8
                                            << "created needs a date like 2026-11-29 (or compare: created>1h)";
    QTest::newRow("number field") << "endpoints" << "failure_rate>high" << 13 << "failure_rate needs a number";
    QTest::newRow("status class compared") << "deliveries" << "status>=5xx" << 8
                                           << "status compares with a number; a class like 5xx goes with ':' or '='";
    QTest::newRow("status neither number nor class") << "deliveries" << "status:5x5" << 7
                                                     << "status needs a number or a class like 5xx";
    QTest::newRow("status class without digits") << "deliveries" << "status:2xx,xx" << 7
                                                  << "status needs a number or a class like 5xx";
    QTest::newRow("second term wrong") << "instances" << "state:running  owner:bob  version<x" << 34
                                       << "version needs a number";
}

void tst_Query::parseInvalid()
{
    QFETCH(QString, kind);
    QFETCH(QString, text);
    QFETCH(int, position);
    QFETCH(QString, message);
    const ResourceKind *k = resourceKindByName(kind);
    QVERIFY(k);
    const QueryParse p = parseQuery(text, *k);
    QVERIFY(!p.ok());
    QCOMPARE(p.error.message, message);
    QCOMPARE(p.error.position, position);
    QVERIFY(p.error.length >= 1);
}

void tst_Query::matchRows_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QJsonObject>("row");
    QTest::addColumn<bool>("expected");

    const QJsonObject failedOld = instance(12, QStringLiteral("billing-prod"), QStringLiteral("STOPPED"), 7,
                                           QStringLiteral("2026-11-29T09:00:00.000Z"),
                                           QStringLiteral("2026-11-29T11:50:00.000Z"));
    const QJsonObject runningNew = instance(13, QStringLiteral("wiki test"), QStringLiteral("RUNNING"), 8,
                                            QStringLiteral("2026-11-29T11:30:00.000Z"),
                                            QStringLiteral("2026-11-29T11:00:00Z"), QStringLiteral("bob"));
    QJsonObject noCallback = runningNew;
    noCallback.insert(QStringLiteral("callback"), QJsonValue::Null);

    QTest::newRow("empty matches") << "" << failedOld << true;
    QTest::newRow("state prefix") << "state:stop" << failedOld << true;
    QTest::newRow("state case") << "state:STOPPED" << failedOld << true;
    QTest::newRow("state other") << "state:running" << failedOld << false;
    QTest::newRow("state alternatives") << "state:running,stopped" << failedOld << true;
    QTest::newRow("negated state") << "-status:running" << failedOld << true;
    QTest::newRow("negated state excludes") << "-status:running" << runningNew << false;
    QTest::newRow("not equal") << "status!=RUNNING" << runningNew << false;
    QTest::newRow("provider name contains") << "provider:acme" << failedOld << true;
    QTest::newRow("provider name other") << "provider:acme" << runningNew << false;
    QTest::newRow("provider exact name") << "provider=\"acme hosting\"" << failedOld << true;
    QTest::newRow("provider id") << "provider:8" << runningNew << true;
    QTest::newRow("age older") << "age>1h" << failedOld << true;
    QTest::newRow("age younger") << "age>1h" << runningNew << false;
    QTest::newRow("age less") << "age<1h" << runningNew << true;
    QTest::newRow("updated recently") << "updated<30m" << failedOld << true;
    QTest::newRow("updated long ago") << "updated<30m" << runningNew << false;
    QTest::newRow("created day") << "created:2026-11-29" << failedOld << true;
    QTest::newRow("created other day") << "created:2026-11-28" << failedOld << false;
    QTest::newRow("created after date") << "created>2026-11-29T10:00:00Z" << runningNew << true;
    QTest::newRow("version ge") << "version>=3" << failedOld << true;
    QTest::newRow("version gt") << "version>3" << failedOld << false;
    QTest::newRow("id equals") << "id:12" << failedOld << true;
    QTest::newRow("free word in name") << "billing" << failedOld << true;
    QTest::newRow("free word in owner") << "BOB" << runningNew << true;
    QTest::newRow("free word missing") << "payroll" << failedOld << false;
    QTest::newRow("free word in the provider's name") << "hosting" << failedOld << true;
    QTest::newRow("free word in another provider's name") << "globex" << failedOld << false;
    QTest::newRow("negated word in the provider's name") << "-globex" << runningNew << false;
    QTest::newRow("quoted phrase") << "\"wiki test\"" << runningNew << true;
    QTest::newRow("negated word") << "-wiki" << runningNew << false;
    QTest::newRow("all words needed") << "billing wiki" << failedOld << true;
    QTest::newRow("all words needed, one missing") << "billing nope" << failedOld << false;
    QTest::newRow("nested field") << "callback.url:acme.example" << failedOld << true;
    QTest::newRow("null nested field") << "signing:standard" << noCallback << false;
    QTest::newRow("null nested negated") << "-signing:standard" << noCallback << true;
    QTest::newRow("combined") << "state:stopped provider:acme age>1h updated<30m version>=3 billing" << failedOld
                              << true;
    QTest::newRow("combined one fails") << "state:stopped provider:acme age>4h" << failedOld << false;
}

void tst_Query::ratioReadsAsPercentage_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("expected");
    // An endpoint failing 60 % of its attempts.
    QTest::newRow("over a percentage") << "failure_rate>50%" << true;
    QTest::newRow("under a percentage") << "failure_rate<50%" << false;
    QTest::newRow("over a higher one") << "failure_rate>70%" << false;
    QTest::newRow("fraction as stored") << "failure_rate>0.5" << true;
    QTest::newRow("fractional percentage") << "failure_rate>=59.5%" << true;
}

void tst_Query::ratioReadsAsPercentage()
{
    QFETCH(QString, text);
    QFETCH(bool, expected);
    const ResourceKind &kind = *resourceKindByName(u"endpoints");
    const QueryParse p = parseQuery(text, kind);
    QVERIFY2(p.ok(), qPrintable(p.error.toString()));
    const QJsonObject endpoint{{QStringLiteral("id"), 4}, {QStringLiteral("url"), QStringLiteral("https://hooks.example/cb")},
                               {QStringLiteral("state"), QStringLiteral("ACTIVE")}, {QStringLiteral("failure_rate"), 0.6}};
    QCOMPARE(matches(p.query, NamedRow(kind, endpoint), kNow), expected);
    QVERIFY(!parseQuery(QStringLiteral("failure_rate>half%"), kind).ok());
}

void tst_Query::numberClasses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QList<int>>("expected"); // the last statuses of the deliveries that match

    // A 0 stands for a delivery without an HTTP answer (a timeout, or not attempted yet).
    QTest::newRow("class") << "status:5xx" << QList<int>{500, 503, 599};
    QTest::newRow("upper case") << "status:5XX" << QList<int>{500, 503, 599};
    QTest::newRow("with '='") << "status=4xx" << QList<int>{404, 410};
    QTest::newRow("narrower class") << "status:50x" << QList<int>{500, 503};
    QTest::newRow("classes and a status") << "status:4xx,503" << QList<int>{404, 410, 503};
    QTest::newRow("negated") << "-status:2xx" << QList<int>{0, 404, 410, 500, 503, 599};
    QTest::newRow("not equal") << "status!=5xx" << QList<int>{0, 200, 404, 410};
    QTest::newRow("exact still exact") << "status:503" << QList<int>{503};
    QTest::newRow("comparison") << "status>=500" << QList<int>{500, 503, 599};
}

void tst_Query::numberClasses()
{
    QFETCH(QString, text);
    QFETCH(QList<int>, expected);
    const ResourceKind &kind = *resourceKindByName(u"deliveries");
    const QueryParse p = parseQuery(text, kind);
    QVERIFY2(p.ok(), qPrintable(p.error.toString()));
    QList<int> matched;
    for (const int status : {0, 200, 404, 410, 500, 503, 599}) {
        QJsonObject row{{QStringLiteral("id"), 1}, {QStringLiteral("state"), QStringLiteral("FAILED")}};
        row.insert(QStringLiteral("last_status"), status > 0 ? QJsonValue(status) : QJsonValue(QJsonValue::Null));
        if (matches(p.query, JsonQueryRow(kind, row), kNow))
            matched << status;
    }
    QCOMPARE(matched, expected);
}

void tst_Query::matchRows()
{
    QFETCH(QString, text);
    QFETCH(QJsonObject, row);
    QFETCH(bool, expected);
    const ResourceKind &kind = *resourceKindByName(u"instances");
    const QueryParse p = parseQuery(text, kind);
    QVERIFY2(p.ok(), qPrintable(p.error.toString()));
    QCOMPARE(matches(p.query, NamedRow(kind, row), kNow), expected);
}

void tst_Query::durations_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("ms");

    QTest::newRow("seconds") << "45s" << qint64(45000);
    QTest::newRow("minutes") << "30m" << qint64(1800000);
    QTest::newRow("hours") << "1h" << qint64(3600000);
    QTest::newRow("days") << "2d" << qint64(172800000);
    QTest::newRow("weeks") << "1w" << qint64(604800000);
    QTest::newRow("compound") << "1d2h" << qint64(93600000);
    QTest::newRow("upper case unit") << "2H" << qint64(7200000);
    QTest::newRow("no unit") << "15" << qint64(-1);
    QTest::newRow("unit only") << "h" << qint64(-1);
    QTest::newRow("bad unit") << "3y" << qint64(-1);
    QTest::newRow("negative") << "-1h" << qint64(-1);
    QTest::newRow("empty") << "" << qint64(-1);
    QTest::newRow("overflow guarded") << "99999999999999h" << qint64(-1);
}

void tst_Query::durations()
{
    QFETCH(QString, text);
    QFETCH(qint64, ms);
    const auto parsed = parseDuration(text);
    QCOMPARE(parsed.value_or(-1), ms);
}

void tst_Query::completions_data()
{
    QTest::addColumn<QString>("token");
    QTest::addColumn<QStringList>("expected");

    QTest::newRow("field prefix") << "prov" << QStringList{"provider:"};
    QTest::newRow("several fields") << "st" << QStringList{"state:", "status_changed>"};
    QTest::newRow("negated field") << "-ow" << QStringList{"-owner:"};
    QTest::newRow("age") << "ag" << QStringList{"age>"};
    QTest::newRow("state values") << "state:" << QStringList{"state:pending", "state:running", "state:stopped", "state:destroyed"};
    QTest::newRow("state value prefix") << "state:st" << QStringList{"state:stopped"};
    QTest::newRow("status keeps typed name") << "-status:RU" << QStringList{"-status:running"};
    QTest::newRow("after comma") << "state:running,p" << QStringList{"state:running,pending"};
    QTest::newRow("text field has none") << "name:a" << QStringList{};
    QTest::newRow("unknown field") << "colour:" << QStringList{};
    QTest::newRow("nothing matches") << "zz" << QStringList{};
}

void tst_Query::completions()
{
    QFETCH(QString, token);
    QFETCH(QStringList, expected);
    QCOMPARE(queryCompletions(token, *resourceKindByName(u"instances")), expected);
}

void tst_Query::knownNames()
{
    const QStringList names = queryFieldNames(*resourceKindByName(u"deliveries"));
    QVERIFY(names.contains(QStringLiteral("state")));
    QVERIFY(names.contains(QStringLiteral("provider")));
    QVERIFY(names.contains(QStringLiteral("instance")));
    QVERIFY(names.contains(QStringLiteral("age")));
    QVERIFY(!names.contains(QStringLiteral("provider_id")));
}

void tst_Query::errorText()
{
    const QueryParse p = parseQuery(u"owner:bob colour:red", *resourceKindByName(u"providers"));
    QVERIFY(!p.ok());
    QVERIFY(p.error.toString().startsWith(QStringLiteral("column 1: unknown field 'owner'")));
    QCOMPARE(QueryError().toString(), QString());
}

void tst_Query::noCrashOnOddInput_data()
{
    QTest::addColumn<QString>("text");
    QTest::newRow("lone dash") << "-";
    QTest::newRow("lone quote pair") << "\"\"";
    QTest::newRow("operators only") << ":<=>";
    QTest::newRow("dash colon") << "-:x";
    QTest::newRow("comma only value") << "state:,";
    QTest::newRow("unicode") << "näme:ü état:é";
    QTest::newRow("many quotes") << "a\"b\"c\"d\"";
}

void tst_Query::noCrashOnOddInput()
{
    QFETCH(QString, text);
    for (const ResourceKind &kind : resourceKinds()) {
        const QueryParse p = parseQuery(text, kind);
        // Either a query or an error with a position inside the line.
        if (!p.ok())
            QVERIFY(p.error.position >= 0 && p.error.position <= text.size());
        else
            QVERIFY(p.query.terms.size() + p.query.words.size() <= text.size());
    }
}

QTEST_GUILESS_MAIN(tst_Query)
#include "tst_query.moc"
