// The main window's server connection: choosing one, switching to it, its role and its certificate.
#include "mainwindow.h"

#include "connectiondialog.h"
#include "credentialstore.h"
#include "dashboardpage.h"
#include "detailpane.h"
#include "messagebox.h"
#include "resourceview.h"
#include "valueformat.h"

#include "models/apiclient.h"
#include "models/cache.h"
#include "models/connectionstatus.h"
#include "models/syncengine.h"

#include <QDateTime>
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>

namespace OpsDeck {

void MainWindow::openConnectionDialog()
{
    auto *dialog = new ConnectionDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        ConsoleConnection c;
        const ConnectionProfile profile = dialog->profile();
        c.baseUrl = profile.serverUrl;
        c.profile = profile.name;
        c.token = dialog->token();
        if (!c.token.isEmpty()) {
            connectTo(c);
            return;
        }
        // The token was stored earlier: in the profile's file, or in the keychain.
        QString error;
        if (!profile.tokenFile.isEmpty()) {
            c.token = CredentialStore::readTokenFile(profile.tokenFile, &error);
            if (c.token.isEmpty())
                MessageBox::warning(this, tr("No token"), error);
            else
                connectTo(c);
            return;
        }
        auto *store = new CredentialStore(this);
        connect(store, &CredentialStore::tokenRead, this, [this, store, c](const QString &, const QString &token) mutable {
            store->deleteLater();
            c.token = token;
            connectTo(c);
        });
        connect(store, &CredentialStore::failed, this, [this, store](const QString &, const QString &message, bool) {
            store->deleteLater();
            MessageBox::warning(this, tr("No token"),
                                tr("%1. Open File › Connect to… again and give the token.").arg(message));
        });
        store->read(profile.name);
    });
    dialog->open();
}

void MainWindow::updateWindowTitle()
{
    // The platform adds the application's name after the title ("demo (embedded server) — OpsDeck"),
    // or shows it alone for an empty one.
    if (m_connection.baseUrl.isEmpty())
        setWindowTitle(QString());
    else if (m_connection.embedded)
        setWindowTitle(tr("%1 (embedded server)").arg(m_connection.profile));
    else
        setWindowTitle(m_connection.profile.isEmpty() ? m_connection.baseUrl.toString() : m_connection.profile);
}

void MainWindow::connectTo(const ConsoleConnection &connection)
{
    m_connection = connection;
    updateWindowTitle();
    m_serverLabel->setText(tr("%1 · %2").arg(connection.baseUrl.toString(), roleText(connection.role)));
    applyRole(connection.role);

    // A fresh client, cache and engine per connection; the old ones go once the views point at
    // the new models.
    SyncEngine *oldSync = m_sync;
    ApiClient *oldApi = m_api;
    Cache *oldCache = m_cache;
    disconnect(oldSync->status(), nullptr, this, nullptr);
    disconnect(oldSync, nullptr, this, nullptr);
    oldSync->stop();

    m_api = new ApiClient(this);
    m_api->setObjectName(QStringLiteral("apiClient"));
    m_actionsInFlight.clear(); // the old client's answers never come

    m_api->setBaseUrl(connection.baseUrl);
    m_api->setToken(connection.token);
    connect(m_api, &ApiClient::pendingMutationsChanged, this, &MainWindow::setPendingOperations);
    connect(m_api, &ApiClient::unauthenticated, this, [this](const Problem &problem) {
        m_cacheNotice->setText(tr("The server refused the token: %1")
                                   .arg(problem.detail.isEmpty() ? problem.title : problem.detail));
        m_cacheNotice->show();
    });
    connect(m_api, &ApiClient::sslErrors, this, &MainWindow::onSslErrors);
    m_sslAsked = false;
    m_cache = new Cache(connection.cachePath.isEmpty() ? Cache::defaultPath(connection.profile, connection.token)
                                                   : connection.cachePath,
                        this);
    connect(m_cache, &Cache::cacheRebuilt, this, &MainWindow::onCacheRebuilt);
    m_sync = new SyncEngine(m_api, m_cache, this);
    m_sync->setObjectName(QStringLiteral("syncEngine"));
    connect(m_sync->status(), &ConnectionStatus::changed, this, &MainWindow::onConnectionChanged);
    connect(m_sync, &SyncEngine::problem, this, [this](const Problem &problem) {
        statusBar()->showMessage(problem.detail.isEmpty() ? problem.title : problem.detail, 10000);
    });
    bindModels();
    delete oldSync;
    delete oldApi;
    delete oldCache;

    m_cacheNotice->hide();
    m_dashboard->setDeliveryWorker({}, {}); // the last server's, until this one answers
    // Until the first contact the rows are the cache's, as of its last write (read before opening
    // it, which may write).
    QDateTime cachedAsOf;
    for (const QString &suffix : {QString(), QStringLiteral("-wal")}) {
        const QFileInfo info(m_cache->filePath() + suffix);
        if (info.exists() && (!cachedAsOf.isValid() || info.lastModified() > cachedAsOf))
            cachedAsOf = info.lastModified();
    }
    m_sync->status()->setCachedAsOf(cachedAsOf);
    m_cache->open();
    m_sync->start();
    onConnectionChanged();
    discoverRole();
}

void MainWindow::discoverRole()
{
    // A profile or token file does not say what the token may do: the server does. Until it
    // answers (or when it is unreachable) the role given at connection time stays.
    m_api->get(QStringLiteral("/whoami"), this, [this](const ApiResult &result) {
        if (!result.ok())
            return;
        const auto role = roleFromName(result.object().value(QStringLiteral("role")).toString());
        if (!role || *role == m_connection.role)
            return;
        m_connection.role = *role;
        m_serverLabel->setText(tr("%1 · %2").arg(m_connection.baseUrl.toString(), roleText(*role)));
        applyRole(*role);
    });
}

void MainWindow::applyRole(Actor role)
{
    m_detail->setRole(role);
    // An empty table says why it is empty; an owner's callbacks are empty because the server
    // shows callbacks to operators and providers only.
    const bool owner = role == Actor::Owner;
    const QString hidden = tr("The owner role does not see callbacks or endpoints: they are for operators and "
                              "the providers they are sent to.");
    if (ResourceView *view = resourceView(QStringLiteral("deliveries")))
        view->setEmptyText(owner ? hidden
                                 : tr("No callbacks yet: one is queued each time a registered instance changes state."));
    if (ResourceView *view = resourceView(QStringLiteral("endpoints")))
        view->setEmptyText(owner ? hidden : tr("No endpoints yet: one appears when an instance registers its callback URL."));
    // Nor do their dashboard cards count 0 as if there were none.
    for (const QString &kind : {QStringLiteral("deliveries"), QStringLiteral("endpoints")})
        m_dashboard->setKindHidden(kind, owner);
    // The worker's figures count every provider's attempts and endpoints.
    m_dashboard->setDeliveryWorkerHidden(role != Actor::Operator);
}

void MainWindow::onSslErrors(const QList<QSslError> &errors, const QUrl &url)
{
    // Asked once per connection: the requests failed already, and a relist follows a yes.
    if (m_sslAsked)
        return;
    m_sslAsked = true;
    QStringList lines;
    for (const QSslError &e : errors)
        lines.append(QStringLiteral("• ") + e.errorString());
    const auto answer = MessageBox::question(
        this, tr("Untrusted certificate"),
        tr("The certificate of %1 is not trusted:\n%2\n\nConnect anyway? Only do this if you know why the "
           "certificate is not trusted.")
            .arg(url.host(), lines.join(QLatin1Char('\n'))));
    if (answer != QMessageBox::Yes)
        return;
    m_api->setAcceptedSslErrors(errors);
    m_sync->relist(tr("certificate accepted"));
}

} // namespace OpsDeck
