// A fresh, empty database for one test: a SQLite file in a temp dir or a PostgreSQL database.
#include "testdatabase.h"

#include <QDir>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QUrl>
#include <QUuid>

namespace OpsDeck::Test {

namespace {

// Runs one statement on the cluster's maintenance database.
QString runOnCluster(const QString &sql)
{
    const QUrl url(qEnvironmentVariable("OPSDECK_TEST_POSTGRES_URL"));
    const QString name = QStringLiteral("opsdeck-test-admin-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    QString error;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), name);
        db.setHostName(url.host());
        db.setPort(url.port(5432));
        db.setDatabaseName(url.path().mid(1));
        db.setUserName(url.userName());
        db.setPassword(url.password());
        if (!db.open()) {
            error = db.lastError().text();
        } else {
            QSqlQuery q(db);
            if (!q.exec(sql))
                error = q.lastError().text();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return error;
}

} // namespace

bool TestDatabase::wantsPostgres()
{
    return qEnvironmentVariable("OPSDECK_TEST_BACKEND").compare(QLatin1String("postgresql"), Qt::CaseInsensitive) == 0;
}

QString TestDatabase::unavailableReason()
{
    if (wantsPostgres() && qEnvironmentVariableIsEmpty("OPSDECK_TEST_POSTGRES_URL"))
        return QStringLiteral("OPSDECK_TEST_BACKEND=postgresql but OPSDECK_TEST_POSTGRES_URL is not set "
                              "(scripts/check starts a cluster and sets it)");
    return {};
}

TestDatabase::TestDatabase()
{
    if (!m_dir.isValid()) {
        m_error = QStringLiteral("cannot create a temporary directory");
        return;
    }
    if (!wantsPostgres()) {
        m_url = QStringLiteral("sqlite://") + QDir(m_dir.path()).absoluteFilePath(QStringLiteral("opsdeck.db"));
        return;
    }
    m_postgres = true;
    const QString reason = unavailableReason();
    if (!reason.isEmpty()) {
        m_error = reason;
        return;
    }
    m_pgName = QStringLiteral("opsdeck_t_%1").arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
    const QString error = runOnCluster(QStringLiteral("CREATE DATABASE %1").arg(m_pgName));
    if (!error.isEmpty()) {
        m_error = QStringLiteral("CREATE DATABASE failed: %1").arg(error);
        m_pgName.clear();
        return;
    }
    QUrl url(qEnvironmentVariable("OPSDECK_TEST_POSTGRES_URL"));
    url.setPath(QLatin1Char('/') + m_pgName);
    m_url = url.toString();
}

TestDatabase::~TestDatabase()
{
    if (!m_pgName.isEmpty())
        runOnCluster(QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(m_pgName));
}

bool execWith(QSqlQuery &q, const QString &sql, const QVariantList &values)
{
    if (!q.prepare(sql))
        return false;
    for (const QVariant &v : values)
        q.addBindValue(v);
    return q.exec();
}

} // namespace OpsDeck::Test
