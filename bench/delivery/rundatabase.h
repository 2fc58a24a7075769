// The delivery benchmark's storage of one run: a SQLite file, or a PostgreSQL database of its own.
#pragma once

#include <QString>

namespace OpsDeck::Bench {

// A fresh SQLite file `name`.db in `dir`, or, when `clusterUrl` names a PostgreSQL cluster
// (--database), a fresh database on it, dropped when the run ends (a history run's is a GB).
class RunDatabase final
{
public:
    RunDatabase(const QString &name, const QString &clusterUrl, const QString &dir);
    ~RunDatabase();
    RunDatabase(const RunDatabase &) = delete;
    RunDatabase &operator=(const RunDatabase &) = delete;

    const QString &url() const { return m_url; }

private:
    QString m_cluster;
    QString m_url;
    QString m_pgName;
};

} // namespace OpsDeck::Bench
