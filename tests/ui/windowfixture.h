// What the main window's tests share: a seeded server, a connection to it, a port nothing answers.
#pragma once

#include "ui/consoleconnection.h"

#include "testserver.h"
#include "testsupport.h"

#include <QList>
#include <QString>
#include <QUrl>

namespace OpsDeck::Test {

struct Seeded
{
    qint64 organization = 0;
    qint64 provider = 0;
    QList<qint64> instances;
};

// One organization, one provider and three instances (web-alpha, web-bravo, db-charlie).
inline Seeded seed(TestServer &server)
{
    Seeded s;
    s.organization = server.createOrganization(QStringLiteral("Acme Hosting"));
    s.provider = server.createProvider(QStringLiteral("Ledger Inc"), s.organization, {QStringLiteral("ledger")});
    const QStringList names{QStringLiteral("web-alpha"), QStringLiteral("web-bravo"), QStringLiteral("db-charlie")};
    for (const QString &name : names)
        s.instances.append(server.createInstance(name, s.organization, s.provider, QStringLiteral("ledger"),
                                                 QStringLiteral("alice")));
    return s;
}

// The server's operator, with the cache at cachePath.
inline ConsoleConnection connectionTo(TestServer &server, const QString &cachePath)
{
    ConsoleConnection c;
    c.baseUrl = server.baseUrl();
    c.token = server.operatorToken();
    c.profile = QStringLiteral("test");
    c.role = Actor::Operator;
    c.cachePath = cachePath;
    return c;
}

// Held for the whole test: nothing listens there, and nothing can.
inline QUrl deadServer()
{
    static const RefusingPort dead;
    return QUrl(dead.url());
}

} // namespace OpsDeck::Test
