// What the delivery API tests arrange: a server without a delivery worker (the states are the
// tests' to set), an organization and provider, registered instances whose first notification is
// PENDING, and a provider with a delivery in every state.
#pragma once

#include "testserver.h"

#include "server/storage/database.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QSqlQuery>
#include <QtTest>

#include <memory>

namespace OpsDeck::Test {

class DeliveryApiFixture
{
protected:
    // Starts the server; call from initTestCase.
    void startServer()
    {
        m_server = TestServer::withoutDeliveryWorker();
        QVERIFY2(m_server->isRunning(), qPrintable(m_server->error()));
        QVERIFY(m_server->createAcmeAndCrm(&m_org, &m_provider));
    }

    // A registered instance: its first notification is PENDING. Returns the instance id.
    qint64 registeredInstance(qint64 provider = 0, const QString &application = QStringLiteral("crm"));
    // A provider of its own with one delivery in each of FAILED (two), CANCELLED, PENDING and
    // DELIVERED: their ids by name ("failed1", "failed2", "cancelled", "pending", "delivered").
    QHash<QString, qint64> oneProviderInEveryState(qint64 *provider);
    QJsonArray auditOf(qint64 delivery);
    qint64 lastSeq();
    QJsonArray deliveries(qint64 instance);
    QJsonObject delivery(qint64 id);
    Reply post(const QString &path, const QByteArray &body = QByteArray("{}"));
    // Runs SQL on the server's database, as another process would.
    bool store(const QString &sql);
    // The delivery's lease_until as stored, "NULL" when it has none.
    QString leaseOf(qint64 delivery);

    // Nobody listens there; with the worker off nothing is sent anyway.
    const QString Nowhere = QStringLiteral("http://127.0.0.1:9/hook");

    std::unique_ptr<TestServer> m_server;
    qint64 m_org = 0;
    qint64 m_provider = 0;
    int m_counter = 0;
};

inline qint64 DeliveryApiFixture::registeredInstance(qint64 provider, const QString &application)
{
    const qint64 instance = m_server->createInstance(QStringLiteral("i%1").arg(++m_counter), m_org,
                                                     provider > 0 ? provider : m_provider, application, QStringLiteral("alice"));
    const Reply r = m_server->post(QStringLiteral("/api/v1/instances/%1/register").arg(instance),
                                   {{QStringLiteral("callback_url"), Nowhere}}, m_server->operatorToken());
    return r.status == 200 ? instance : 0;
}

inline QJsonArray DeliveryApiFixture::deliveries(qint64 instance)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries?instance=%1").arg(instance), m_server->operatorToken()).items();
}

inline QJsonObject DeliveryApiFixture::delivery(qint64 id)
{
    return m_server->get(QStringLiteral("/api/v1/deliveries/%1").arg(id), m_server->operatorToken()).json();
}

inline Reply DeliveryApiFixture::post(const QString &path, const QByteArray &body)
{
    return m_server->request("POST", path, body, m_server->operatorToken());
}

inline bool DeliveryApiFixture::store(const QString &sql)
{
    Database admin(m_server->databaseUrl());
    return admin.open() && admin.exec(sql);
}

inline QHash<QString, qint64> DeliveryApiFixture::oneProviderInEveryState(qint64 *provider)
{
    const QString application = QStringLiteral("app%1").arg(++m_counter);
    *provider = m_server->createProvider(QStringLiteral("p%1").arg(m_counter), m_org, {application});
    QHash<QString, qint64> ids;
    if (*provider <= 0)
        return ids;
    for (const char *name : {"failed1", "failed2", "cancelled", "pending", "delivered"}) {
        const qint64 instance = registeredInstance(*provider, application);
        if (instance <= 0)
            return {};
        ids.insert(QLatin1String(name), deliveries(instance).first().toObject().value(QStringLiteral("id")).toInteger());
    }
    const bool arranged =
        store(QStringLiteral("UPDATE deliveries SET state = 'FAILED', next_attempt_at = NULL, attempts = 3 WHERE id IN (%1, %2)")
                  .arg(ids.value(QStringLiteral("failed1")))
                  .arg(ids.value(QStringLiteral("failed2"))))
        && store(QStringLiteral("UPDATE deliveries SET state = 'DELIVERED', next_attempt_at = NULL WHERE id = %1")
                     .arg(ids.value(QStringLiteral("delivered"))))
        && post(QStringLiteral("/api/v1/deliveries/%1/cancel").arg(ids.value(QStringLiteral("cancelled")))).status == 200;
    return arranged ? ids : QHash<QString, qint64>();
}

inline QJsonArray DeliveryApiFixture::auditOf(qint64 delivery)
{
    return m_server->get(QStringLiteral("/api/v1/audit?kind=delivery&object_id=%1&limit=200").arg(delivery), m_server->operatorToken())
        .items();
}

inline qint64 DeliveryApiFixture::lastSeq()
{
    return m_server->get(QStringLiteral("/api/v1/events"), m_server->operatorToken()).json().value(QStringLiteral("last_seq")).toInteger();
}

inline QString DeliveryApiFixture::leaseOf(qint64 delivery)
{
    Database admin(m_server->databaseUrl());
    if (!admin.open())
        return QStringLiteral("unreadable");
    QSqlQuery q(admin.connection());
    if (!q.exec(QStringLiteral("SELECT lease_until FROM deliveries WHERE id = %1").arg(delivery)) || !q.next())
        return QStringLiteral("unreadable");
    return q.isNull(0) ? QStringLiteral("NULL") : q.value(0).toString();
}

} // namespace OpsDeck::Test
