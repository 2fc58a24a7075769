// The shared fixture: a real control plane on an ephemeral loopback port and a blocking client.
#include "testserver.h"

#include <QEventLoop>
#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QTimer>

namespace OpsDeck::Test {

QByteArray Reply::header(const QByteArray &name) const
{
    for (const auto &h : headers) {
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    }
    return {};
}

QJsonObject Reply::json() const
{
    return QJsonDocument::fromJson(body).object();
}

TestServer::TestServer(ServerOptions options, bool allowPrivateCallbacks)
{
    if (!m_db.isValid()) {
        m_error = m_db.error();
        return;
    }
    options.host = QStringLiteral("127.0.0.1");
    options.port = 0;
    options.databaseUrl = m_db.url();
    options.allowPrivateCallbacks = allowPrivateCallbacks;
    m_server = std::make_unique<ControlPlane>(options);
    Problem problem;
    if (!m_server->start(&problem))
        m_error = problem.detail.isEmpty() ? problem.title : problem.detail;
}

TestServer::~TestServer()
{
    if (m_server)
        m_server->stop();
    m_server.reset();
}

bool TestServer::isRunning() const
{
    return m_server && m_server->isListening();
}

QUrl TestServer::baseUrl() const
{
    return m_server ? m_server->baseUrl() : QUrl();
}

QString TestServer::token(const QString &role, const QString &subject)
{
    const QString key = role + QLatin1Char('\n') + subject;
    auto it = m_tokens.find(key);
    if (it == m_tokens.end())
        it = m_tokens.insert(key, m_server ? m_server->createToken(role, subject, QStringLiteral("test")) : QString());
    return *it;
}

double TestServer::metric(const QUrl &baseUrl, const QByteArray &name, const QByteArray &labels)
{
    const QByteArray key = labels.isEmpty() ? name + ' ' : name + '{' + labels + "} ";
    for (const QByteArray &line : send(baseUrl, "GET", QStringLiteral("/metrics")).body.split('\n')) {
        if (line.startsWith(key))
            return line.mid(key.size()).toDouble();
    }
    return -1.0;
}

Reply TestServer::request(const QByteArray &method, const QString &path, const QJsonObject &body,
                          const QString &token, const HeaderList &extraHeaders)
{
    return request(method, path, QJsonDocument(body).toJson(QJsonDocument::Compact), token, extraHeaders);
}

Reply TestServer::request(const QByteArray &method, const QString &path, const QByteArray &body,
                          const QString &token, const HeaderList &extraHeaders)
{
    if (!m_server) {
        Reply reply;
        reply.networkError = m_error;
        return reply;
    }
    return send(baseUrl(), method, path, body, token, extraHeaders);
}

Reply TestServer::send(const QUrl &baseUrl, const QByteArray &method, const QString &path, const QByteArray &body,
                       const QString &token, const HeaderList &extraHeaders)
{
    Reply reply;
    QNetworkAccessManager nam;
    QNetworkReply *r = start(nam, baseUrl, method, path, body, token, extraHeaders);
    QEventLoop loop;
    QObject::connect(r, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    reply.status = r->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    reply.body = r->readAll();
    for (const auto &h : r->rawHeaderPairs())
        reply.headers.append(h);
    if (reply.status == 0)
        reply.networkError = r->errorString();
    delete r;
    return reply;
}

QNetworkReply *TestServer::start(QNetworkAccessManager &nam, const QUrl &baseUrl, const QByteArray &method,
                                 const QString &path, const QByteArray &body, const QString &token,
                                 const HeaderList &extraHeaders)
{
    QNetworkRequest req(QUrl(baseUrl.toString() + path));
    req.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    req.setTransferTimeout(120000);
    if (!body.isEmpty())
        req.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    if (!token.isEmpty())
        req.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    for (const auto &h : extraHeaders)
        req.setRawHeader(h.first, h.second);
    QNetworkReply *r = nam.sendCustomRequest(req, method, body);
    // Test servers over TLS use throwaway self-signed certificates.
    if (baseUrl.scheme() == QLatin1String("https"))
        r->ignoreSslErrors();
    return r;
}

qint64 TestServer::createOrganization(const QString &name)
{
    const Reply r = post(QStringLiteral("/api/v1/organizations"), {{QStringLiteral("name"), name}}, operatorToken());
    return r.status == 201 ? r.json().value(QStringLiteral("id")).toInteger() : 0;
}

std::unique_ptr<TestServer> TestServer::withoutDeliveryWorker()
{
    ServerOptions options;
    options.deliveryWorker = false;
    return std::make_unique<TestServer>(options);
}

bool TestServer::createAcmeAndCrm(qint64 *organizationId, qint64 *providerId)
{
    *organizationId = createOrganization(QStringLiteral("acme"));
    *providerId = *organizationId > 0 ? createProvider(QStringLiteral("crm"), *organizationId, {QStringLiteral("crm")}) : 0;
    return *providerId > 0;
}

qint64 TestServer::createProvider(const QString &name, qint64 organizationId, const QStringList &applications)
{
    const Reply r = post(QStringLiteral("/api/v1/providers"),
                         {{QStringLiteral("name"), name},
                          {QStringLiteral("organization_id"), organizationId},
                          {QStringLiteral("applications"), QJsonArray::fromStringList(applications)}},
                         operatorToken());
    return r.status == 201 ? r.json().value(QStringLiteral("id")).toInteger() : 0;
}

qint64 TestServer::createInstance(const QString &name, qint64 organizationId, qint64 providerId,
                                  const QString &application, const QString &owner)
{
    const Reply r = post(QStringLiteral("/api/v1/instances"),
                         {{QStringLiteral("name"), name},
                          {QStringLiteral("organization_id"), organizationId},
                          {QStringLiteral("provider_id"), providerId},
                          {QStringLiteral("application"), application},
                          {QStringLiteral("owner"), owner}},
                         operatorToken());
    return r.status == 201 ? r.json().value(QStringLiteral("id")).toInteger() : 0;
}

QString TestServer::registerInstance(qint64 instanceId, const QString &callbackUrl)
{
    const Reply r = post(QStringLiteral("/api/v1/instances/%1/register").arg(instanceId),
                         {{QStringLiteral("callback_url"), callbackUrl}}, operatorToken());
    return r.status == 200 ? r.json().value(QStringLiteral("secret")).toString() : QString();
}

} // namespace OpsDeck::Test
