// The main window without its server: offline from the cache, with its countdown to the next
// attempt, the detail pane kept across a relist, a corrupt cache rebuilt, a server restarted while
// the window stays open.
#include "ui/dashboardpage.h"
#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/messagebox.h"
#include "ui/resourceview.h"

#include "models/connectionstatus.h"
#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"
#include "models/syncengine.h"

#include "server/controlplane.h"

#include "windowfixture.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTableView>
#include <QLabel>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

using namespace OpsDeck;
using namespace OpsDeck::Test;

class tst_MainWindowOffline : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void offlineFromCache();
    void offlineCountsDown();
    void detailPaneKeptAcrossARelist();
    void corruptCacheIsRebuilt();
    void serverRestartMidSession();
    void actionWhoseServerWentAwaySaysNothingWasDone();

private:
    // Lists a seeded server into the cache at cachePath, then lets the server go.
    static void fillCache(const QString &cachePath);
    // A shown window on a server that is gone, with the rows of a cache filled by fillCache();
    // null when the cache could not be filled.
    std::unique_ptr<MainWindow> openOffline(const QString &cacheName);
    // A server of the test's own on a SQLite file in dir, which it can stop and start again
    // (options are kept for that), and the connection of an operator to it; null on failure.
    std::unique_ptr<ControlPlane> startOwnServer(const QTemporaryDir &dir, const QString &profile, ServerOptions *options,
                                                 ConsoleConnection *connection);
    // POSTs an organization as an operator would; its id, or 0 unless the server answered 201.
    static qint64 createOrganization(const ControlPlane &server, const QString &token, const QString &name);

    QTemporaryDir m_dir;
};

void tst_MainWindowOffline::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_mainwindowoffline"));
    QVERIFY(m_dir.isValid());
}

void tst_MainWindowOffline::init()
{
    QSettings().clear();
    // No dialog may ever block a test.
    MessageBox::setAutoAnswer(QMessageBox::Ok);
}

void tst_MainWindowOffline::fillCache(const QString &cachePath)
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server);
    MainWindow w;
    w.connectTo(connectionTo(server, cachePath));
    QTRY_COMPARE(w.resourceView(QStringLiteral("instances"))->table()->model()->rowCount(), 3);
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
}

std::unique_ptr<MainWindow> tst_MainWindowOffline::openOffline(const QString &cacheName)
{
    const QString cache = m_dir.filePath(cacheName);
    fillCache(cache);
    if (QTest::currentTestFailed())
        return nullptr;
    ConsoleConnection c;
    c.baseUrl = deadServer();
    c.token = QStringLiteral("stale");
    c.profile = QStringLiteral("test");
    c.cachePath = cache;
    auto w = std::make_unique<MainWindow>();
    w->show();
    w->connectTo(c);
    return w;
}

void tst_MainWindowOffline::offlineFromCache()
{
    // The server is gone: the console opens from its cache and says it is offline.
    const auto w = openOffline(QStringLiteral("offline.sqlite"));
    QVERIFY(w);
    w->showView(QStringLiteral("instances"));
    QTRY_COMPARE(w->resourceView(QStringLiteral("instances"))->table()->model()->rowCount(), 3);
    QTRY_VERIFY2(w->connectionStatusText().contains(QStringLiteral("Offline"))
                     || w->connectionStatusText().contains(QStringLiteral("Reconnecting")),
                 qPrintable(w->connectionStatusText()));
    QTRY_VERIFY_WITH_TIMEOUT(w->connectionStatusText().contains(QStringLiteral("Offline")), 20000);
    // One sentence: the state, where the rows come from, the next attempt.
    static const QRegularExpression wording(
        QStringLiteral("^Offline \\(cached data as of [^)]+\\)(, retrying( in \\d+ s|…))?$"));
    QVERIFY2(wording.match(w->connectionStatusText()).hasMatch(), qPrintable(w->connectionStatusText()));
    // Offline the console is read-only.
    w->resourceView(QStringLiteral("instances"))->table()->selectRow(0);
    QTRY_VERIFY(w->detailPane()->objectId() > 0);
    QAction *stop = w->detailPane()->findChild<QAction *>(QStringLiteral("action_stop"));
    QVERIFY(stop && !stop->isEnabled());
}

void tst_MainWindowOffline::offlineCountsDown()
{
    const auto w = openOffline(QStringLiteral("countdown.sqlite"));
    QVERIFY(w);
    auto *sync = w->findChild<SyncEngine *>(QStringLiteral("syncEngine"));
    QVERIFY(sync);
    const ConnectionStatus *status = sync->status();
    auto *label = w->findChild<QLabel *>(QStringLiteral("connectionStatus"));
    QVERIFY(label);

    // Once the retries are seconds apart, the status counts down to the next one...
    QTRY_VERIFY_WITH_TIMEOUT(status->nextAttemptMs() > 1000, 20000);
    static const QRegularExpression countdown(QStringLiteral("in \\d+ s"));
    QVERIFY2(status->text().contains(countdown), qPrintable(status->text()));
    // ...and the window says it in the status's own words, which tell where its rows come from.
    QTRY_COMPARE(w->connectionStatusText(), status->text());
    QVERIFY2(status->text().contains(QStringLiteral("(cached data as of ")), qPrintable(status->text()));
    QTRY_VERIFY2(label->text().contains(status->text().toHtmlEscaped()), qPrintable(label->text()));
    auto *dashboard = w->dashboard()->findChild<QLabel *>(QStringLiteral("dashboardConnection"));
    QVERIFY(dashboard);
    QTRY_VERIFY2(dashboard->text().contains(status->text()), qPrintable(dashboard->text()));
    // The shown seconds follow the model's as they drop, down to the last one.
    QTRY_VERIFY2_WITH_TIMEOUT(label->text().contains(QStringLiteral("in 1 s")), qPrintable(label->text()), 20000);
}

void tst_MainWindowOffline::detailPaneKeptAcrossARelist()
{
    const auto w = openOffline(QStringLiteral("relist.sqlite"));
    QVERIFY(w);
    w->showView(QStringLiteral("instances"));
    ResourceView *view = w->resourceView(QStringLiteral("instances"));
    ResourceModel *model = w->resourceModel(QStringLiteral("instances"));
    FilterProxyModel *proxy = w->filterModel(QStringLiteral("instances"));
    QTRY_COMPARE(proxy->rowCount(), 3);
    QTRY_VERIFY(!proxy->isFiltering());
    view->table()->selectRow(1);
    const qint64 id = view->currentObject().value(QStringLiteral("id")).toInteger(-1);
    QVERIFY(id > 0);
    QTRY_COMPARE(w->detailPane()->objectId(), id);
    auto *empty = w->detailPane()->findChild<QLabel *>(QStringLiteral("detailEmpty"));
    QVERIFY(empty && !empty->isVisible());

    // A relist (one reset): the same objects in another order, and new ones.
    QList<QJsonObject> relisted;
    for (int row = model->rowCount() - 1; row >= 0; --row)
        relisted.append(model->objectAt(row));
    QJsonObject newcomer = relisted.constFirst();
    for (qint64 newId : {id + 100, id + 101}) {
        newcomer[QStringLiteral("id")] = newId;
        newcomer[QStringLiteral("name")] = QStringLiteral("aa-new-%1").arg(newId);
        relisted.append(newcomer);
    }
    QSignalSpy reset(proxy, &QAbstractItemModel::modelReset);
    model->replaceAll(relisted);
    model->flush();
    QTRY_COMPARE(reset.count(), 1);
    QCOMPARE(proxy->rowCount(), 5);
    QCOMPARE(view->currentObject().value(QStringLiteral("id")).toInteger(), id);
    QCOMPARE(view->table()->selectionModel()->selectedRows().size(), 1);
    QCOMPARE(w->detailPane()->objectId(), id);
    QVERIFY(!empty->isVisible());

    // A relist without it: nothing is selected, and the pane no longer shows it.
    QList<QJsonObject> without;
    for (const QJsonObject &object : std::as_const(relisted)) {
        if (object.value(QStringLiteral("id")).toInteger() != id)
            without.append(object);
    }
    model->replaceAll(without);
    model->flush();
    QTRY_COMPARE(reset.count(), 2);
    QVERIFY(!view->table()->currentIndex().isValid());
    QVERIFY(view->table()->selectionModel()->selectedRows().isEmpty());
    QCOMPARE(w->detailPane()->objectId(), -1);
    QVERIFY(empty->isVisible());
}

void tst_MainWindowOffline::corruptCacheIsRebuilt()
{
    const QString cache = m_dir.filePath(QStringLiteral("corrupt.sqlite"));
    {
        QFile file(cache);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(8192, '\x5a'));
    }
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server);
    MainWindow w;
    w.show();
    w.connectTo(connectionTo(server, cache));
    QTRY_COMPARE(w.resourceView(QStringLiteral("instances"))->table()->model()->rowCount(), 3);
    QTRY_VERIFY(w.connectionStatusText().contains(QStringLiteral("Live")));
    // The user is told, and the bad file was moved aside rather than deleted.
    QTRY_VERIFY2(w.findChild<QLabel *>(QStringLiteral("cacheNotice"))
                     && w.findChild<QLabel *>(QStringLiteral("cacheNotice"))->text().contains(QStringLiteral("rebuilt")),
                 "no cache notice");
    const QStringList aside = QDir(m_dir.path()).entryList({QStringLiteral("corrupt.sqlite.corrupt*")});
    QVERIFY2(!aside.isEmpty(), qPrintable(QDir(m_dir.path()).entryList().join(' ')));
}

std::unique_ptr<ControlPlane> tst_MainWindowOffline::startOwnServer(const QTemporaryDir &dir, const QString &profile,
                                                                    ServerOptions *options, ConsoleConnection *connection)
{
    options->databaseUrl = QStringLiteral("sqlite://") + dir.filePath(QStringLiteral("server.sqlite"));
    auto server = std::make_unique<ControlPlane>(*options);
    if (!server->start())
        return nullptr;
    connection->baseUrl = server->baseUrl();
    connection->token = server->createToken(QStringLiteral("operator"), QStringLiteral("test"));
    connection->profile = profile;
    connection->cachePath = m_dir.filePath(profile + QStringLiteral(".sqlite"));
    return connection->token.isEmpty() ? nullptr : std::move(server);
}

qint64 tst_MainWindowOffline::createOrganization(const ControlPlane &server, const QString &token, const QString &name)
{
    QNetworkAccessManager nam;
    QNetworkRequest request(QUrl(server.baseUrl().toString() + QStringLiteral("/api/v1/organizations")));
    request.setRawHeader("Authorization", "Bearer " + token.toUtf8());
    request.setHeader(QNetworkRequest::ContentTypeHeader, QByteArrayLiteral("application/json"));
    QNetworkReply *reply = nam.post(request, QJsonDocument(QJsonObject{{QStringLiteral("name"), name}}).toJson());
    QSignalSpy finished(reply, &QNetworkReply::finished);
    if (!reply->isFinished() && !finished.wait(10000))
        return 0;
    const bool created = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 201;
    const qint64 id = QJsonDocument::fromJson(reply->readAll()).object().value(QStringLiteral("id")).toInteger();
    reply->deleteLater();
    return created ? id : 0;
}

void tst_MainWindowOffline::serverRestartMidSession()
{
    // A server of our own on a file database, so it can be stopped and started again on the
    // same port while the window stays open.
    QTemporaryDir dir;
    ServerOptions options;
    ConsoleConnection c;
    auto server = startOwnServer(dir, QStringLiteral("restart"), &options, &c);
    QVERIFY(server);
    const quint16 port = server->port();
    const QString token = c.token;
    MainWindow w;
    w.show();
    w.connectTo(c);
    QTRY_VERIFY2(w.connectionStatusText().contains(QStringLiteral("Live")), qPrintable(w.connectionStatusText()));

    server->stop();
    server.reset();
    QTRY_VERIFY2_WITH_TIMEOUT(!w.connectionStatusText().contains(QStringLiteral("Live")),
                              qPrintable(w.connectionStatusText()), 20000);
    // The status bar says so too.
    auto *label = w.findChild<QLabel *>(QStringLiteral("connectionStatus"));
    QVERIFY(label && !label->text().contains(QStringLiteral("Live")));

    options.port = port;
    server = std::make_unique<ControlPlane>(options);
    QVERIFY(server->start());
    QTRY_VERIFY2_WITH_TIMEOUT(w.connectionStatusText().contains(QStringLiteral("Live")),
                              qPrintable(w.connectionStatusText()), 60000);

    // And the feed flows again: a new organization made on the server shows up.
    QVERIFY(createOrganization(*server, token, QStringLiteral("After Restart")) > 0);
    w.showView(QStringLiteral("organizations"));
    QTRY_COMPARE(w.resourceView(QStringLiteral("organizations"))->table()->model()->rowCount(), 1);
}

void tst_MainWindowOffline::actionWhoseServerWentAwaySaysNothingWasDone()
{
    // The server goes away while the reason is being typed: the action goes out to nothing, and
    // the console says that nothing was done, not only "Connection refused".
    QTemporaryDir dir;
    ServerOptions options;
    ConsoleConnection c;
    auto server = startOwnServer(dir, QStringLiteral("going"), &options, &c);
    QVERIFY(server);
    const qint64 id = createOrganization(*server, c.token, QStringLiteral("Going Away"));
    QVERIFY(id > 0);

    MainWindow w;
    w.show();
    w.connectTo(c);
    QTRY_VERIFY2(w.connectionStatusText().contains(QStringLiteral("Live")), qPrintable(w.connectionStatusText()));
    w.showView(QStringLiteral("organizations"));
    ResourceView *view = w.resourceView(QStringLiteral("organizations"));
    QTRY_VERIFY(view->selectId(id));
    QTRY_COMPARE(w.detailPane()->objectId(), id);

    MessageBox::setNextText(QStringLiteral("closing down"));
    MessageBox::setWhileAsking([&server] {
        server->stop();
        server.reset();
    });
    emit w.detailPane()->actionRequested(QStringLiteral("organizations"), id, QStringLiteral("delete"));
    QVERIFY(!server); // stopped while the dialog was open
    QTRY_VERIFY2_WITH_TIMEOUT(MessageBox::lastText().contains(QStringLiteral("Nothing was done")),
                              qPrintable(MessageBox::lastText()), 20000);
    QVERIFY2(MessageBox::lastText().startsWith(QStringLiteral("The server could not be reached: ")),
             qPrintable(MessageBox::lastText()));
}

QTEST_MAIN(tst_MainWindowOffline)
#include "tst_mainwindowoffline.moc"
