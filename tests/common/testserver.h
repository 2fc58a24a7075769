// The shared fixture: a real control plane on an ephemeral loopback port and a blocking client.
#pragma once

#include "testdatabase.h"

#include "server/controlplane.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

#include <memory>

class QNetworkAccessManager;
class QNetworkReply;

namespace OpsDeck::Test {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

struct Reply
{
    int status = 0;          // 0 when the connection failed
    HeaderList headers;
    QByteArray body;
    QString networkError;

    QByteArray header(const QByteArray &name) const; // case-insensitive
    QJsonObject json() const;                        // {} when the body is not an object
    QJsonArray items() const { return json().value(QStringLiteral("items")).toArray(); }
    QString code() const { return json().value(QStringLiteral("code")).toString(); } // problem code
};

// Starts in its constructor on a fresh database of the selected backend (see TestDatabase);
// check isRunning() (QVERIFY2(server.isRunning(), qPrintable(server.error())). Host, port and
// database of `options` are replaced; callback URLs on loopback are allowed unless
// allowPrivateCallbacks is false (the tests' demo provider listens on 127.0.0.1).
class TestServer final
{
public:
    explicit TestServer(ServerOptions options = {}, bool allowPrivateCallbacks = true);
    ~TestServer();
    TestServer(const TestServer &) = delete;
    TestServer &operator=(const TestServer &) = delete;

    bool isRunning() const;
    QString error() const { return m_error; }
    ControlPlane &controlPlane() { return *m_server; }
    QUrl baseUrl() const;
    QString databaseUrl() const { return m_db.url(); }
    const TestDatabase &testDatabase() const { return m_db; }

    // A new bearer token (cached per role+subject): "operator", "provider" with the provider id,
    // "owner" with the owner name.
    QString token(const QString &role, const QString &subject = {});
    QString operatorToken() { return token(QStringLiteral("operator")); }

    // Blocking request for test code (runs a local event loop, so the in-process server answers).
    // path is relative to baseUrl(), e.g. "/api/v1/instances?limit=5"; an empty token sends no
    // Authorization header.
    Reply request(const QByteArray &method, const QString &path, const QByteArray &body = {},
                  const QString &token = {}, const HeaderList &extraHeaders = {});
    Reply request(const QByteArray &method, const QString &path, const QJsonObject &body,
                  const QString &token = {}, const HeaderList &extraHeaders = {});
    // The same against any server (a child process, another fixture).
    static Reply send(const QUrl &baseUrl, const QByteArray &method, const QString &path,
                      const QByteArray &body = {}, const QString &token = {}, const HeaderList &extraHeaders = {});
    // send()'s request, not waited for: the reply (`nam`'s child) finishes as the test's event
    // loop runs (QTRY_*), while the in-process server answers others or waits.
    static QNetworkReply *start(QNetworkAccessManager &nam, const QUrl &baseUrl, const QByteArray &method,
                                const QString &path, const QByteArray &body = {}, const QString &token = {},
                                const HeaderList &extraHeaders = {});
    Reply get(const QString &path, const QString &token) { return request("GET", path, QByteArray(), token); }
    Reply post(const QString &path, const QJsonObject &body, const QString &token)
    {
        return request("POST", path, body, token);
    }

    // A gauge or counter of /metrics with the given labels ("" for none); -1 when it is not there.
    double metric(const QByteArray &name, const QByteArray &labels = {}) { return metric(baseUrl(), name, labels); }
    static double metric(const QUrl &baseUrl, const QByteArray &name, const QByteArray &labels = {});

    // A server whose delivery worker does not run: the test arranges delivery states itself.
    static std::unique_ptr<TestServer> withoutDeliveryWorker();

    // Convenience for arranging tests: each returns the created object's id, or 0 on failure.
    qint64 createOrganization(const QString &name);
    qint64 createProvider(const QString &name, qint64 organizationId, const QStringList &applications);
    qint64 createInstance(const QString &name, qint64 organizationId, qint64 providerId,
                          const QString &application, const QString &owner);
    // Registers a PENDING instance's callback at `callbackUrl` (by default a loopback port where
    // nothing listens: its notifications retry in the background). The secret, or empty on failure.
    QString registerInstance(qint64 instanceId, const QString &callbackUrl = QStringLiteral("http://127.0.0.1:9/hook"));
    // The usual cast: organization "acme" and its provider "crm" of application "crm". False if
    // either could not be created.
    bool createAcmeAndCrm(qint64 *organizationId, qint64 *providerId);

private:
    TestDatabase m_db;
    std::unique_ptr<ControlPlane> m_server;
    QString m_error;
    QHash<QString, QString> m_tokens;
};

} // namespace OpsDeck::Test
