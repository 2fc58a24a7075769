// Realistic demo data (organizations, providers, instances in every state) for the CLI and the console.
#pragma once

#include "core/problem.h"

namespace OpsDeck {

class Database;

class DemoSeeder final
{
public:
    struct Counts
    {
        int organizations = 0;
        int providers = 0;
        int instances = 0;
    };

    // db is not owned and must be open and migrated.
    explicit DemoSeeder(Database &db);

    // Where the seeded providers registered their instances' callbacks. Every instance that left
    // PENDING has one, as registration is what leaves it; without a URL set here each provider
    // gets https://<provider>.provider.example/opsdeck/callbacks (a reserved name that never
    // resolves: those notifications retry and fail, as to a provider that went away).
    void setCallbackUrl(const QString &url) { m_callbackUrl = url; }

    // Adds the data set in one transaction with batched inserts (250k instances take seconds).
    // Seeded rows get one audit entry and no feed events: clients list before they watch.
    bool seed(int instances, Problem *error = nullptr);
    Counts counts() const { return m_counts; }

private:
    Database &m_db;
    QString m_callbackUrl;
    Counts m_counts;
};

} // namespace OpsDeck
