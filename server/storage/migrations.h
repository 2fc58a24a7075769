// The schema, as versioned forward-only migrations shared by SQLite and PostgreSQL.
#pragma once

#include <QList>
#include <QStringList>

namespace OpsDeck {

struct Migration
{
    int version;
    QStringList statements; // {{id}} = the backend's auto-increment primary key
};

const QList<Migration> &migrations();

} // namespace OpsDeck
