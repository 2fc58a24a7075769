// The delivery benchmark's storage of one run: a SQLite file, or a PostgreSQL database of its own.
#include "rundatabase.h"

#include "server/storage/database.h"

#include <QDir>
#include <QRandomGenerator>
#include <QUrl>

namespace OpsDeck::Bench {

namespace {

// Runs one statement on the cluster's own database, not a run's.
void runOnCluster(const QString &clusterUrl, const QString &sql)
{
    Database admin(clusterUrl);
    Problem problem;
    if (!admin.open(&problem) || !admin.exec(sql, &problem))
        qFatal("%s: %s", qPrintable(sql), qPrintable(problem.detail));
}

} // namespace

RunDatabase::RunDatabase(const QString &name, const QString &clusterUrl, const QString &dir)
    : m_cluster(clusterUrl)
{
    if (m_cluster.isEmpty()) {
        m_url = QStringLiteral("sqlite://") + QDir(dir).filePath(name + QStringLiteral(".db"));
        return;
    }
    m_pgName = QStringLiteral("opsdeck_bench_%1").arg(QRandomGenerator::global()->generate64(), 16, 16, QLatin1Char('0'));
    runOnCluster(m_cluster, QStringLiteral("CREATE DATABASE %1").arg(m_pgName));
    QUrl url(m_cluster);
    url.setPath(QLatin1Char('/') + m_pgName);
    m_url = url.toString();
}

RunDatabase::~RunDatabase()
{
    if (!m_pgName.isEmpty())
        runOnCluster(m_cluster, QStringLiteral("DROP DATABASE IF EXISTS %1 WITH (FORCE)").arg(m_pgName));
}

} // namespace OpsDeck::Bench
