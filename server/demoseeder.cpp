// Realistic demo data (organizations, providers, instances in every state) for the CLI and the console.
#include "demoseeder.h"

#include "core/endpoint.h"
#include "core/instance.h"
#include "core/organization.h"
#include "core/problem.h"
#include "core/webhooksignature.h"
#include "server/storage/database.h"
#include "server/storage/timestamps.h"
#include "server/storage/transaction.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSqlQuery>
#include <QStringList>

#include <algorithm>

namespace OpsDeck {

namespace {

const QStringList kOrganizations = {
    QStringLiteral("Ville de Lyon"), QStringLiteral("Métropole Nantes"), QStringLiteral("Acme Logistics"),
    QStringLiteral("Hôpital Saint-Éloi"), QStringLiteral("Northwind Traders"), QStringLiteral("Université de Rennes"),
    QStringLiteral("Contoso Energy"), QStringLiteral("Fabrikam Health"), QStringLiteral("Blue Yonder Airlines"),
    QStringLiteral("Communauté d'agglomération du Grand Angoulême"), QStringLiteral("Tailspin Toys"),
    QStringLiteral("Wide World Importers"),
};

struct ProviderSeed
{
    const char *name;
    int organization; // index into kOrganizations
    QStringList applications;
};

const QList<ProviderSeed> kProviders = {
    {"OpenCitizen", 2, {QStringLiteral("citizen-portal"), QStringLiteral("e-petitions")}},
    {"Datagora", 4, {QStringLiteral("open-data-hub"), QStringLiteral("dataviz")}},
    {"Medisys", 7, {QStringLiteral("appointments"), QStringLiteral("patient-records")}},
    {"Campus Cloud", 5, {QStringLiteral("moodle"), QStringLiteral("library-search"), QStringLiteral("timetable")}},
};

const QStringList kOwners = {
    QStringLiteral("alice"), QStringLiteral("bruno"), QStringLiteral("chloe"), QStringLiteral("dmitri"),
    QStringLiteral("emma"), QStringLiteral("farid"), QStringLiteral("gaelle"), QStringLiteral("hiro"),
};

QString slug(const QString &name)
{
    QString s = name.normalized(QString::NormalizationForm_D).toLower();
    QString out;
    for (const QChar c : s) {
        if (c.isLetterOrNumber() && c.unicode() < 128)
            out += c;
        else if ((c.isSpace() || c == QLatin1Char('\'') || c == QLatin1Char('-')) && !out.endsWith(QLatin1Char('-')))
            out += QLatin1Char('-');
    }
    return out.left(24);
}

} // namespace

DemoSeeder::DemoSeeder(Database &db)
    : m_db(db)
{
}

bool DemoSeeder::seed(int instanceCount, Problem *error)
{
    Transaction tx(m_db);
    if (!tx.isActive()) {
        if (error)
            *error = Database::busyProblem(QStringLiteral("could not begin the demo data's transaction: the database's"
                                                          " write lock was held elsewhere, or the database did not answer"));
        return false;
    }
    // Demo data goes into an empty database only: a second run would add every organization,
    // provider and instance again beside the first ones (and into a real one, beside real data).
    {
        QSqlQuery q(m_db.connection());
        if (!q.exec(QStringLiteral("SELECT COUNT(*) FROM organizations")) || !q.next()) {
            if (error)
                *error = Database::sqlProblem(q);
            return false;
        }
        if (const qint64 n = q.value(0).toLongLong(); n > 0) {
            if (error)
                *error = Problem::make(409, QStringLiteral("not-empty"), QStringLiteral("Not empty"),
                                       QStringLiteral("the database already holds %1 organizations: demo data is seeded "
                                                      "into an empty database only")
                                           .arg(n));
            return false;
        }
    }
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString at = timestamp(now);
    QList<qint64> orgIds;
    for (const QString &name : kOrganizations) {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("INSERT INTO organizations (name, status, version, created_at, updated_at)"
                                 " VALUES (?, ?, 1, ?, ?) RETURNING id"));
        q.addBindValue(name);
        q.addBindValue(Organization::Available);
        q.addBindValue(at);
        q.addBindValue(at);
        if (!q.exec() || !q.next()) {
            if (error)
                *error = Database::sqlProblem(q);
            return false;
        }
        orgIds.append(q.value(0).toLongLong());
    }
    struct P
    {
        qint64 id;
        QStringList apps;
        QString callbackUrl;
    };
    QList<P> providers;
    for (const ProviderSeed &p : kProviders) {
        QSqlQuery q(m_db.connection());
        q.prepare(QStringLiteral("INSERT INTO providers (name, organization_id, applications, version, created_at,"
                                 " updated_at) VALUES (?, ?, ?, 1, ?, ?) RETURNING id"));
        q.addBindValue(QString::fromUtf8(p.name));
        q.addBindValue(orgIds.at(p.organization));
        q.addBindValue(QString::fromUtf8(QJsonDocument(QJsonArray::fromStringList(p.applications)).toJson(QJsonDocument::Compact)));
        q.addBindValue(at);
        q.addBindValue(at);
        if (!q.exec() || !q.next()) {
            if (error)
                *error = Database::sqlProblem(q);
            return false;
        }
        const qint64 providerId = q.value(0).toLongLong();
        // The endpoint its registered instances share.
        const QString url = m_callbackUrl.isEmpty()
                                ? QStringLiteral("https://%1.provider.example/opsdeck/callbacks").arg(slug(QString::fromUtf8(p.name)))
                                : m_callbackUrl;
        QSqlQuery e(m_db.connection());
        e.prepare(QStringLiteral("INSERT INTO endpoints (provider_id, url, state, version, created_at, updated_at)"
                                 " VALUES (?, ?, ?, 1, ?, ?)"));
        e.addBindValue(providerId);
        e.addBindValue(url);
        e.addBindValue(Endpoint::Active);
        e.addBindValue(at);
        e.addBindValue(at);
        if (!e.exec()) {
            if (error)
                *error = Database::sqlProblem(e);
            return false;
        }
        providers.append({providerId, p.applications, url});
    }

    // Multi-row inserts: one statement per batch keeps 250k rows to a few seconds on both backends.
    constexpr int kBatch = 200;
    constexpr int kColumns = 14;
    auto statement = [](int rows) {
        QString sql = QStringLiteral("INSERT INTO instances (name, organization_id, provider_id, application, owner, status,"
                                     " version, created_at, updated_at, status_changed_at, destroy_after, callback_url,"
                                     " callback_signing, secret) VALUES ");
        const QString row = QStringLiteral("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (int i = 0; i < rows; ++i)
            sql += i ? QStringLiteral(", ") + row : row;
        return sql;
    };
    const QVariant none(QMetaType::fromType<QString>());
    QSqlQuery full(m_db.connection());
    full.prepare(statement(kBatch));
    QRandomGenerator rng(20261129);
    const QStringList orgSlugs = [&] {
        QStringList s;
        for (const QString &n : kOrganizations)
            s.append(slug(n));
        return s;
    }();
    QVariantList values;
    values.reserve(kBatch * kColumns);
    auto flush = [&](int rows) {
        QSqlQuery partial(m_db.connection());
        QSqlQuery &q = rows == kBatch ? full : partial;
        if (rows != kBatch)
            q.prepare(statement(rows));
        for (const QVariant &v : std::as_const(values))
            q.addBindValue(v);
        const bool ok = q.exec();
        if (!ok && error)
            *error = Database::sqlProblem(q);
        values.clear();
        return ok;
    };
    int pending = 0;
    for (int i = 0; i < instanceCount; ++i) {
        const int orgIndex = int(rng.bounded(orgIds.size()));
        const P &provider = providers.at(int(rng.bounded(providers.size())));
        const QString app = provider.apps.at(int(rng.bounded(provider.apps.size())));
        const quint32 roll = rng.bounded(100);
        const QString status = roll < 60 ? Instance::Running
                               : roll < 85 ? Instance::Stopped
                               : roll < 95 ? Instance::Pending
                                           : Instance::Destroyed;
        const QDateTime created = now.addSecs(-qint64(rng.bounded(90 * 24 * 3600)));
        QDateTime changed = created.addSecs(qint64(rng.bounded(quint32(qMax<qint64>(1, created.secsTo(now))))));
        // A STOPPED instance is still within its 7 days of retention (one past them would have
        // been destroyed, its provider told): the first sweep has nothing to destroy.
        if (status == Instance::Stopped)
            changed = std::max(created, now.addSecs(-qint64(rng.bounded(6 * 24 * 3600))));
        values << QStringLiteral("%1-%2-%3").arg(app, orgSlugs.at(orgIndex)).arg(i + 1) << orgIds.at(orgIndex)
               << provider.id << app << kOwners.at(int(rng.bounded(kOwners.size()))) << status
               << qint64(status == Instance::Pending ? 1 : 2 + rng.bounded(6)) << timestamp(created) << timestamp(changed)
               << timestamp(changed)
               << (status == Instance::Stopped ? QVariant(timestamp(changed.addDays(7))) : none);
        // Registration is what leaves PENDING: every other instance has its callback.
        const bool registered = status != Instance::Pending;
        values << (registered ? QVariant(provider.callbackUrl) : none)
               << (registered ? QVariant(QStringLiteral("standard-webhooks")) : none)
               << (registered ? QVariant(WebhookSignature::generateSecret()) : none);
        if (++pending == kBatch) {
            if (!flush(kBatch))
                return false;
            pending = 0;
        }
    }
    if (pending > 0 && !flush(pending))
        return false;

    QSqlQuery audit(m_db.connection());
    audit.prepare(QStringLiteral("INSERT INTO audit (at, actor_role, actor_subject, action, kind, object_id, reason)"
                                 " VALUES (?, 'system', 'seed', 'seed', 'instance', 0, ?)"));
    audit.addBindValue(at);
    audit.addBindValue(QStringLiteral("demo data: %1 organizations, %2 providers, %3 instances")
                           .arg(kOrganizations.size()).arg(kProviders.size()).arg(instanceCount));
    if (!audit.exec() || !tx.commit()) {
        if (error)
            *error = Database::sqlProblem(audit);
        return false;
    }
    m_counts = {int(kOrganizations.size()), int(kProviders.size()), instanceCount};
    return true;
}

} // namespace OpsDeck
