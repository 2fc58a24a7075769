// The embeddable control plane: storage, HTTP API and change feed in the thread that created it.
#include "controlplane.h"

#include "server/api/accessapi.h"
#include "server/api/apicontext.h"
#include "server/api/instancesapi.h"
#include "server/api/organizationsapi.h"
#include "server/api/systemapi.h"
#include "server/auth/tokenstore.h"
#include "server/feed/changefeed.h"
#include "server/http/httpserver.h"
#include "server/http/requestguard.h"
#include "server/http/idempotencystore.h"
#include "server/http/metrics.h"
#include "server/http/router.h"
#include "server/outbox/deliveryapi.h"
#include "server/outbox/deliveryrepository.h"
#include "server/outbox/deliveryschedule.h"
#include "server/outbox/outboxservice.h"
#include "server/outbox/workerhealth.h"
#include "server/storage/database.h"
#include "server/storage/journal.h"
#include "server/storage/walcheckpointer.h"

#include <QDebug>
#include <QFile>
#include <QHostAddress>
#include <QNetworkRequest>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QTcpServer>
#include <QSet>
#include <QUrlQuery>
#include <QWebSocket>

namespace OpsDeck {

namespace {

// The most a watcher may send in one frame or message: room for a ping or a close, nothing more.
constexpr quint64 kWatchMessageLimit = 4096;

} // namespace

struct ControlPlane::Apis
{
    explicit Apis(ApiContext c)
        : ctx(c)
    {
    }
    ApiContext ctx;
    Metrics metrics;
    WorkerHealth workerHealth;
    std::unique_ptr<IdempotencyStore> idempotency;
    std::unique_ptr<SystemApi> system;
    std::unique_ptr<OrganizationsApi> organizations;
    std::unique_ptr<InstancesApi> instances;
    std::unique_ptr<AccessApi> access;
    std::unique_ptr<DeliveryApi> deliveries;
    std::unique_ptr<OutboxService> outbox;
};

ControlPlane::ControlPlane(ServerOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
    , m_db(std::make_unique<Database>(m_options.databaseUrl))
    , m_tokens(std::make_unique<TokenStore>(*m_db))
    , m_router(std::make_unique<Router>())
    , m_journal(std::make_unique<Journal>(*m_db))
{
}

ControlPlane::~ControlPlane()
{
    stop();
}

bool ControlPlane::start(Problem *error)
{
    if (m_http)
        return true;
    // A schedule that does not parse would silently become the default; refuse it instead.
    QString scheduleError;
    if (!retryScheduleFor(m_options, &scheduleError)) {
        if (error)
            *error = Problem::make(500, QStringLiteral("invalid-configuration"), QStringLiteral("Invalid configuration"),
                                   scheduleError);
        return false;
    }
    if (!m_db->isOpen() && (!m_db->open(error) || !m_db->migrate(error)))
        return false;
    // Callback URLs stored before registration kept one spelling of each: brought to it, so an
    // instance registered now with another spelling finds the endpoint it shares. A failure
    // leaves them as they were, as before, and is said.
    {
        Problem urls;
        if (DeliveryRepository(*m_db, *m_journal).canonicalizeEndpointUrls(&urls) < 0)
            qWarning().noquote() << "callback URLs left as stored:" << urls.detail;
    }
    if (m_db->backend() == Database::Backend::Sqlite && !startCheckpointer(error))
        return false;
    m_feed = new ChangeFeed(*m_db, m_options.feedRetention, this);
    connect(m_feed, &ChangeFeed::appended, this, &ControlPlane::eventsAppended);
    m_feed->setCallerCheck([this](const Caller &caller) { return caller.tokenId <= 0 || m_tokens->isLive(caller.tokenId); });
    m_apis = std::make_unique<Apis>(ApiContext{*m_db, *m_journal, *m_feed, *m_tokens, m_options});
    m_apis->idempotency = std::make_unique<IdempotencyStore>(*m_db);
    m_apis->idempotency->abandonRunningAtStart();
    registerRoutes();

    m_http = new HttpServer(*m_db, *m_router, *m_tokens, *m_apis->idempotency, m_apis->metrics,
                            m_options.maxBodyBytes, this);
    m_http->setDeferredFlush([this](QTcpSocket *socket) { m_feed->answerNow(socket); });
    // Our own listening socket rather than QHttpServer's, so each connection gets its request
    // size guard before QHttpServer reads from it.
    QTcpServer *listener = nullptr;
    if (!m_options.tlsCert.isEmpty() || !m_options.tlsKey.isEmpty()) {
        QFile certFile(m_options.tlsCert);
        QFile keyFile(m_options.tlsKey);
        if (!certFile.open(QIODevice::ReadOnly) || !keyFile.open(QIODevice::ReadOnly)) {
            if (error)
                *error = Problem::make(500, QStringLiteral("tls-unavailable"), QStringLiteral("TLS unavailable"),
                                       QStringLiteral("cannot read %1 or %2").arg(m_options.tlsCert, m_options.tlsKey));
            stop();
            return false;
        }
        const QSslCertificate cert(&certFile, QSsl::Pem);
        QSslKey key(&keyFile, QSsl::Rsa, QSsl::Pem);
        if (key.isNull()) {
            keyFile.seek(0);
            key = QSslKey(&keyFile, QSsl::Ec, QSsl::Pem);
        }
        if (cert.isNull() || key.isNull()) {
            if (error)
                *error = Problem::make(500, QStringLiteral("tls-unavailable"), QStringLiteral("TLS unavailable"),
                                       QStringLiteral("%1 or %2 is not a PEM certificate/key").arg(m_options.tlsCert, m_options.tlsKey));
            stop();
            return false;
        }
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setLocalCertificate(cert);
        tls.setPrivateKey(key);
        tls.setProtocol(QSsl::SecureProtocols);
        auto *server = new GuardedSslServer(m_options.maxBodyBytes, m_options.idleTimeout, m_http);
        server->setSslConfiguration(tls);
        listener = server;
    } else {
        listener = new GuardedTcpServer(m_options.maxBodyBytes, m_options.idleTimeout, m_http);
    }
    connect(m_http, &HttpServer::newWebSocketConnection, this, &ControlPlane::acceptWebSockets);
    QHostAddress address;
    if (m_options.host == QLatin1String("localhost"))
        address = QHostAddress::LocalHost;
    else if (!address.setAddress(m_options.host))
        address = QHostAddress::Any;
    m_port = listener->listen(address, m_options.port) ? listener->serverPort() : 0;
    if (m_port != 0)
        m_http->bind(listener);
    if (m_port == 0) {
        if (error)
            *error = Problem::make(500, QStringLiteral("listen-failed"), QStringLiteral("Cannot listen"),
                                   QStringLiteral("cannot listen on %1:%2").arg(m_options.host).arg(m_options.port));
        stop();
        return false;
    }
    if (m_options.deliveryWorker) {
        m_apis->outbox = std::make_unique<OutboxService>(m_options, *m_feed, &m_apis->workerHealth);
        connect(m_feed, &ChangeFeed::appended, m_apis->outbox.get(), &OutboxService::wake);
        m_apis->outbox->start();
    }
    return true;
}

bool ControlPlane::startCheckpointer(Problem *error)
{
    // SQLite checkpoints on the connection whose commit makes the log long: here the HTTP
    // thread's, which would then copy the delivery store's pages and sync the file while requests
    // wait. A thread of its own copies the log for every connection of the server instead (the
    // store's turns this off too).
    m_checkpointer = std::make_unique<WalCheckpointer>(m_options.databaseUrl, std::chrono::milliseconds(100));
    if (!m_checkpointer->start(error) || !m_db->exec(QStringLiteral("PRAGMA wal_autocheckpoint=0"), error)) {
        m_checkpointer.reset();
        return false;
    }
    return true;
}

void ControlPlane::stop()
{
    if (m_apis && m_apis->outbox)
        m_apis->outbox->stop();
    if (m_feed)
        m_feed->closeAll();
    if (m_http) {
        m_http->answerSetAside();
        delete m_http;
        m_http = nullptr;
    }
    if (m_feed) {
        delete m_feed;
        m_feed = nullptr;
    }
    m_apis.reset();
    if (m_checkpointer) {
        // Its last checkpoint copies what is left; from here this connection checkpoints itself
        // again (createToken() may still write through it).
        m_checkpointer.reset();
        if (m_db->isOpen())
            m_db->exec(QStringLiteral("PRAGMA wal_autocheckpoint=1000"));
    }
    m_router = std::make_unique<Router>();
    m_port = 0;
}

int ControlPlane::requestsWaitingForTheLock() const
{
    return m_http ? m_http->requestsSetAside() : 0;
}

bool ControlPlane::isListening() const
{
    return m_http && m_port != 0;
}

quint16 ControlPlane::port() const
{
    return m_port;
}

QUrl ControlPlane::baseUrl() const
{
    QUrl url;
    url.setScheme(m_options.tlsCert.isEmpty() ? QStringLiteral("http") : QStringLiteral("https"));
    url.setHost(m_options.host);
    url.setPort(m_port);
    return url;
}

QString ControlPlane::createToken(const QString &role, const QString &subject, const QString &name)
{
    const auto actor = roleFromName(role);
    if (!actor)
        return {};
    Problem problem;
    if (!m_db->isOpen() && (!m_db->open(&problem) || !m_db->migrate(&problem)))
        return {};
    QString bearer;
    if (!m_tokens->create(*actor, subject, name.isEmpty() ? role : name, &bearer, &problem)) {
        return {};
    }
    return bearer;
}

Database &ControlPlane::database()
{
    return *m_db;
}

ChangeFeed &ControlPlane::feed()
{
    Q_ASSERT(m_feed);
    return *m_feed;
}

const Router &ControlPlane::router() const
{
    return *m_router;
}

Router &ControlPlane::router()
{
    return *m_router;
}

void ControlPlane::registerRoutes()
{
    m_apis->system = std::make_unique<SystemApi>(m_apis->ctx, m_apis->metrics, m_apis->workerHealth, *m_router);
    m_apis->system->addRoutes(*m_router);
    m_apis->organizations = std::make_unique<OrganizationsApi>(m_apis->ctx);
    m_apis->organizations->addRoutes(*m_router);
    m_apis->instances = std::make_unique<InstancesApi>(m_apis->ctx);
    m_apis->instances->addRoutes(*m_router);
    m_apis->access = std::make_unique<AccessApi>(m_apis->ctx);
    m_apis->access->addRoutes(*m_router);
    m_apis->deliveries = std::make_unique<DeliveryApi>(m_apis->ctx);
    m_apis->deliveries->addRoutes(*m_router);
    // The watch route is answered by the WebSocket upgrade; a plain GET is told to upgrade, with
    // or without a token: the handshake checks it, in Authorization or ?access_token= (which a
    // plain route would not read, and refused as unauthenticated).
    m_router->add("GET", QStringLiteral("/api/v1/watch"), {}, false, [](Request &) {
        return Response::problem(Problem::make(426, QStringLiteral("upgrade-required"), QStringLiteral("Upgrade required"),
                                               QStringLiteral("/api/v1/watch is a WebSocket; send Upgrade: websocket")))
            .withHeader(QByteArrayLiteral("Upgrade"), QByteArrayLiteral("websocket"));
    });
}

void ControlPlane::acceptWebSockets()
{
    // Closed on the next turn of the event loop, not at once: QWebSocket has already queued the
    // reading of what came with the handshake, which would then read a closed socket (Qt 6.4 warns
    // "QIODevice::peek (QTcpSocket): device not open" for every refused watch).
    // Owned by the control plane meanwhile: one stopped before the close runs deletes it (and the
    // queued close with it).
    const auto refuse = [this](std::unique_ptr<QWebSocket> socket, int code, const QString &reason) {
        QWebSocket *s = socket.release();
        s->setParent(this);
        QMetaObject::invokeMethod(
            s,
            [s, code, reason] {
                s->close(QWebSocketProtocol::CloseCode(code), reason);
                s->deleteLater();
            },
            Qt::QueuedConnection);
    };
    while (m_http && m_http->hasPendingWebSocketConnections()) {
        std::unique_ptr<QWebSocket> socket = m_http->nextPendingWebSocketConnection();
        if (!socket)
            continue;
        // The feed reads nothing from a watcher: anything larger than a ping is closed with 1009
        // as its header arrives, where Qt would have buffered a message of any size.
        socket->setMaxAllowedIncomingFrameSize(kWatchMessageLimit);
        socket->setMaxAllowedIncomingMessageSize(kWatchMessageLimit);
        const QUrl url = socket->requestUrl();
        const QUrlQuery query(url);
        if (url.path() != QLatin1String("/api/v1/watch")) {
            refuse(std::move(socket), 4404, QStringLiteral("not-found"));
            continue;
        }
        QByteArray bearer = TokenStore::bearerOf(socket->request().rawHeader("Authorization"));
        if (bearer.isEmpty())
            bearer = query.queryItemValue(QStringLiteral("access_token")).toUtf8();
        const auto caller = m_tokens->authenticate(bearer);
        if (!caller) {
            refuse(std::move(socket), 4401, QStringLiteral("unauthenticated"));
            continue;
        }
        // As the REST routes do, a parameter it does not know (a misspelt "after" would watch
        // from now on) or one given twice is refused rather than ignored. Its name is cut to 32
        // characters: a close reason is at most 123 bytes of UTF-8, and Qt would cut one in two.
        QString unknown;
        QSet<QString> seen;
        for (const auto &[key, value] : query.queryItems()) {
            if ((key != QLatin1String("after") && key != QLatin1String("access_token")) || seen.contains(key)) {
                unknown = key;
                break;
            }
            seen.insert(key);
        }
        if (!unknown.isNull()) {
            refuse(std::move(socket), 4400, QStringLiteral("invalid-request: %1").arg(unknown.left(32)));
            continue;
        }
        std::optional<qint64> after;
        if (query.hasQueryItem(QStringLiteral("after"))) {
            after = canonicalNumber(query.queryItemValue(QStringLiteral("after")));
            if (!after) {
                refuse(std::move(socket), 4400, QStringLiteral("invalid-request: after"));
                continue;
            }
            Problem gone;
            if (!m_feed->read(*caller, *after, 1, &gone)) {
                refuse(std::move(socket), 4410, QStringLiteral("gone"));
                continue;
            }
        }
        m_feed->watch(std::move(socket), *caller, after);
    }
}

} // namespace OpsDeck
