// The embeddable control plane: storage, HTTP API and change feed in the thread that created it.
#pragma once

#include "core/problem.h"
#include "serveroptions.h"

#include <QObject>
#include <QUrl>

#include <memory>

namespace OpsDeck {

class ChangeFeed;
class Database;
class HttpServer;
class Journal;
class Router;
class TokenStore;
class WalCheckpointer;

// The console runs one inside a worker thread, the tests one per test case, opsdeck-server one
// per process; all of them talk to it over HTTP only.
class ControlPlane final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ControlPlane)

public:
    explicit ControlPlane(ServerOptions options, QObject *parent = nullptr);
    ~ControlPlane() override;

    // Opens the database, applies migrations and starts listening.
    bool start(Problem *error = nullptr);
    // Closes the listener, answers pending long-polls and the requests waiting for the write
    // lock, and closes WebSockets; idempotent.
    void stop();
    bool isListening() const;
    // Requests set aside until the write lock is free (HttpServer).
    int requestsWaitingForTheLock() const;

    quint16 port() const;
    QUrl baseUrl() const; // http(s)://host:port, no trailing slash
    const ServerOptions &options() const { return m_options; }

    // Creates a bearer token (role: operator|provider|owner); empty when the role is unknown or
    // the database refused.
    QString createToken(const QString &role, const QString &subject, const QString &name = {});

    Database &database();
    ChangeFeed &feed();
    const Router &router() const;
    // Routes added before the first request that needs them (an embedding program's own, or a
    // test's that drives the HTTP front through a handler of its making).
    Router &router();
    // SQLite: the thread that copies the write-ahead log into the database file while the control
    // plane runs; null on PostgreSQL and when stopped.
    const WalCheckpointer *walCheckpointer() const { return m_checkpointer.get(); }

Q_SIGNALS:
    // After each committed change-feed event (seq = the newest).
    void eventsAppended(qint64 seq);

private:
    bool startCheckpointer(Problem *error);
    void registerRoutes();
    void acceptWebSockets();

    ServerOptions m_options;
    std::unique_ptr<Database> m_db;
    std::unique_ptr<TokenStore> m_tokens;
    std::unique_ptr<Router> m_router;
    std::unique_ptr<Journal> m_journal;
    std::unique_ptr<WalCheckpointer> m_checkpointer;
    struct Apis;
    std::unique_ptr<Apis> m_apis;
    ChangeFeed *m_feed = nullptr;   // child
    HttpServer *m_http = nullptr;   // child
    quint16 m_port = 0;
};

} // namespace OpsDeck
