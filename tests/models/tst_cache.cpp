// Tests for the offline cache: a real SQLite file on its worker thread, rebuilt when damaged.
#include "models/cache.h"

#include "syncfixture.h"
#include "testsupport.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

using namespace OpsDeck;
using OpsDeck::Test::breakFreelistCount;

namespace {

QJsonObject row(qint64 id, qint64 version, const QString &status = QStringLiteral("RUNNING"))
{
    return {{QStringLiteral("id"), id},
            {QStringLiteral("version"), version},
            {QStringLiteral("name"), QStringLiteral("app-%1").arg(id)},
            {QStringLiteral("status"), status}};
}

// Collects every chunk of one load.
QList<QJsonObject> loadAll(Cache &cache, const QString &kind)
{
    QSignalSpy spy(&cache, &Cache::rowsLoaded);
    cache.load(kind);
    QList<QJsonObject> rows;
    for (;;) {
        if (spy.isEmpty() && !spy.wait(10000))
            return rows;
        const QList<QVariant> args = spy.takeFirst();
        if (args.at(0).toString() == kind)
            rows += args.at(1).value<QList<QJsonObject>>();
        if (args.at(2).toBool())
            return rows;
    }
}

qint64 cursorOf(Cache &cache)
{
    QSignalSpy spy(&cache, &Cache::cursorLoaded);
    cache.loadCursor();
    if (!spy.wait(10000))
        return -2;
    return spy.first().first().toLongLong();
}

bool openCache(Cache &cache)
{
    QSignalSpy spy(&cache, &Cache::opened);
    cache.open();
    return spy.wait(10000) && spy.first().first().toBool();
}

QStringList asideFiles(const QString &path)
{
    const QFileInfo info(path);
    return QDir(info.absolutePath()).entryList({info.fileName() + QStringLiteral(".corrupt-*")}, QDir::Files);
}

void setUserVersion(const QString &path, int version)
{
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("tamper"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("PRAGMA user_version = %1").arg(version)));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("tamper"));
}

} // namespace

class tst_Cache final : public QObject
{
    Q_OBJECT

private slots:
    void roundTrip();
    void openTwice();
    void newerVersionWins();
    void removeAndReplace();
    void serverTextsStoredAsTheyAre_data();
    void serverTextsStoredAsTheyAre();
    void cursor();
    void largeLoadComesInChunks();
    void schemaMismatchRebuilt();
    void garbageFileRebuilt_data();
    void garbageFileRebuilt();
    void damageFoundAfterRowsAreOut();
    void verifyKeepsAHealthyFile();
    void workerThreadOwnsTheConnection();
    void defaultPathIsPerProfile();
    void defaultPathIsPerToken();
};

void tst_Cache::roundTrip()
{
    const QString path = Test::scratchDir() + QStringLiteral("/a.sqlite");
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        cache.store(QStringLiteral("instances"), {row(1, 1), row(2, 1)});
        cache.store(QStringLiteral("providers"), {row(1, 3)});
        QCOMPARE(loadAll(cache, QStringLiteral("instances")), (QList<QJsonObject>{row(1, 1), row(2, 1)}));
    }
    // A new session on the same file sees the same rows.
    Cache again(path);
    QSignalSpy rebuilt(&again, &Cache::cacheRebuilt);
    QVERIFY(openCache(again));
    QCOMPARE(loadAll(again, QStringLiteral("instances")), (QList<QJsonObject>{row(1, 1), row(2, 1)}));
    QCOMPARE(loadAll(again, QStringLiteral("providers")), (QList<QJsonObject>{row(1, 3)}));
    QCOMPARE(loadAll(again, QStringLiteral("audit")), QList<QJsonObject>{});
    QCOMPARE(rebuilt.count(), 0);
}

void tst_Cache::openTwice()
{
    Cache cache(Test::scratchDir() + QStringLiteral("/twice.sqlite"));
    QSignalSpy rebuilt(&cache, &Cache::cacheRebuilt);
    QVERIFY(openCache(cache));
    cache.store(QStringLiteral("instances"), {row(1, 1)});
    QVERIFY(openCache(cache));
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(1, 1)});
    QCOMPARE(rebuilt.count(), 0);
    QVERIFY(cache.isOpen());
}

void tst_Cache::newerVersionWins()
{
    Cache cache(Test::scratchDir() + QStringLiteral("/v.sqlite"));
    QVERIFY(openCache(cache));
    cache.store(QStringLiteral("instances"), {row(1, 5, QStringLiteral("STOPPED"))});
    cache.store(QStringLiteral("instances"), {row(1, 4, QStringLiteral("RUNNING"))}); // late and old
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(1, 5, QStringLiteral("STOPPED"))});
    cache.store(QStringLiteral("instances"), {row(1, 6, QStringLiteral("RUNNING"))});
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(1, 6, QStringLiteral("RUNNING"))});
}

void tst_Cache::removeAndReplace()
{
    Cache cache(Test::scratchDir() + QStringLiteral("/r.sqlite"));
    QVERIFY(openCache(cache));
    cache.store(QStringLiteral("instances"), {row(1, 1), row(2, 1), row(3, 1)});
    cache.remove(QStringLiteral("instances"), {2});
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), (QList<QJsonObject>{row(1, 1), row(3, 1)}));
    cache.replaceKind(QStringLiteral("instances"), {row(9, 1)});
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(9, 1)});
    cache.clearAll();
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{});
}

void tst_Cache::serverTextsStoredAsTheyAre_data()
{
    QTest::addColumn<bool>("replace");
    QTest::newRow("store") << false;
    QTest::newRow("replaceKind") << true;
}

void tst_Cache::serverTextsStoredAsTheyAre()
{
    QFETCH(bool, replace);
    const QString path = Test::scratchDir() + QStringLiteral("/texts-%1.sqlite").arg(replace);
    const QList<QJsonObject> rows{row(1, 2), row(2, 3)};
    // Spaces no serializer of ours writes: the stored bodies must be these very texts.
    QList<QByteArray> texts;
    for (const QJsonObject &r : rows)
        texts << QJsonDocument(r).toJson(QJsonDocument::Indented);
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        if (replace)
            cache.replaceKind(QStringLiteral("instances"), rows, texts);
        else
            cache.store(QStringLiteral("instances"), rows, texts);
        // A texts list that does not match the rows is not used: the rows are written from the objects.
        cache.store(QStringLiteral("providers"), rows, {texts.first()});
        QCOMPARE(loadAll(cache, QStringLiteral("instances")), rows);
        QCOMPARE(loadAll(cache, QStringLiteral("providers")), rows);
    }
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("texts"));
        db.setDatabaseName(path);
        QVERIFY(db.open());
        QSqlQuery q(db);
        QVERIFY(q.exec(QStringLiteral("SELECT kind, body FROM rows ORDER BY kind, id")));
        QList<QByteArray> instances;
        QList<QByteArray> providers;
        while (q.next())
            (q.value(0).toString() == QLatin1String("instances") ? instances : providers) << q.value(1).toByteArray();
        QCOMPARE(instances, texts);
        QCOMPARE(providers.size(), 2);
        QCOMPARE(providers.first(), QJsonDocument(rows.first()).toJson(QJsonDocument::Compact));
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("texts"));
}

void tst_Cache::cursor()
{
    const QString path = Test::scratchDir() + QStringLiteral("/c.sqlite");
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        QCOMPARE(cursorOf(cache), -1);
        cache.saveCursor(41);
        cache.saveCursor(42);
        QCOMPARE(cursorOf(cache), 42);
    }
    Cache again(path);
    QVERIFY(openCache(again));
    QCOMPARE(cursorOf(again), 42);
}

void tst_Cache::largeLoadComesInChunks()
{
    Cache cache(Test::scratchDir() + QStringLiteral("/big.sqlite"));
    QVERIFY(openCache(cache));
    QList<QJsonObject> rows;
    for (int i = 1; i <= 12000; ++i)
        rows << row(i, 1);
    cache.store(QStringLiteral("instances"), rows);
    QSignalSpy spy(&cache, &Cache::rowsLoaded);
    cache.load(QStringLiteral("instances"));
    QTRY_VERIFY(!spy.isEmpty() && spy.last().at(2).toBool());
    QCOMPARE(spy.count(), 4); // a first screenful of 500 on its own, then 5000 + 5000 + 1500
    QCOMPARE(spy.first().at(1).value<QList<QJsonObject>>().size(), 500);
    QCOMPARE(spy.first().at(1).value<QList<QJsonObject>>().first(), row(1, 1));
    int total = 0;
    for (const auto &args : spy)
        total += int(args.at(1).value<QList<QJsonObject>>().size());
    QCOMPARE(total, 12000);
}

void tst_Cache::schemaMismatchRebuilt()
{
    const QString path = Test::scratchDir() + QStringLiteral("/s.sqlite");
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        cache.store(QStringLiteral("instances"), {row(1, 1)});
        QCOMPARE(loadAll(cache, QStringLiteral("instances")).size(), 1);
    }
    setUserVersion(path, 99);
    Cache cache(path);
    QSignalSpy rebuilt(&cache, &Cache::cacheRebuilt);
    QVERIFY(openCache(cache));
    QCOMPARE(rebuilt.count(), 1);
    QVERIFY(rebuilt.first().first().toString().contains(QStringLiteral("schema version 99")));
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{});
    QCOMPARE(asideFiles(path).size(), 1);
    cache.store(QStringLiteral("instances"), {row(2, 1)}); // the new file works
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(2, 1)});
}

void tst_Cache::garbageFileRebuilt_data()
{
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("reason");
    QTest::newRow("text") << QByteArray("this is not a database, it is a shopping list\n").repeated(200)
                          << QStringLiteral("could not be read");
    QByteArray header("SQLite format 3");
    header.append('\0');
    QTest::newRow("truncated sqlite") << header + QByteArray(84, '\x7f') << QStringLiteral("could not be read");
}

void tst_Cache::garbageFileRebuilt()
{
    QFETCH(QByteArray, content);
    QFETCH(QString, reason);
    const QString path = Test::scratchDir() + QStringLiteral("/g-%1.sqlite").arg(QString::fromLatin1(QTest::currentDataTag()).replace(u' ', u'-'));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
    }
    Cache cache(path);
    QSignalSpy rebuilt(&cache, &Cache::cacheRebuilt);
    QVERIFY(openCache(cache));
    QCOMPARE(rebuilt.count(), 1);
    QVERIFY2(rebuilt.first().first().toString().contains(reason), qPrintable(rebuilt.first().first().toString()));
    const QStringList aside = asideFiles(path);
    QCOMPARE(aside.size(), 1);
    QFile kept(QFileInfo(path).absolutePath() + u'/' + aside.first());
    QVERIFY(kept.open(QIODevice::ReadOnly));
    QCOMPARE(kept.readAll(), content); // moved aside untouched, for inspection
    cache.store(QStringLiteral("instances"), {row(1, 1)});
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(1, 1)});
}

void tst_Cache::damageFoundAfterRowsAreOut()
{
    const QString path = Test::scratchDir() + QStringLiteral("/late-check.sqlite");
    QList<QJsonObject> rows;
    for (int i = 1; i <= 300; ++i)
        rows << row(i, 1);
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        cache.store(QStringLiteral("instances"), rows);
        cache.saveCursor(42);
        QCOMPARE(cursorOf(cache), qint64(42));
    }
    breakFreelistCount(path);
    if (QTest::currentTestFailed())
        return;
    Cache cache(path);
    QStringList order;
    connect(&cache, &Cache::cursorLoaded, &cache, [&order](qint64 seq) { order << QStringLiteral("cursor %1").arg(seq); });
    connect(&cache, &Cache::cacheRebuilt, &cache, [&order](const QString &reason) { order << reason; });
    // Opening only reads the header: the rows and the cursor come out before the full check.
    QVERIFY(openCache(cache));
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), rows);
    QCOMPARE(cursorOf(cache), qint64(42));
    QTRY_COMPARE(order.size(), 2);
    QCOMPARE(order.first(), QStringLiteral("cursor 42"));
    QVERIFY2(order.last().contains(QStringLiteral("damaged")), qPrintable(order.last()));
    QCOMPARE(asideFiles(path).size(), 1);
    QCOMPARE(cursorOf(cache), qint64(-1)); // a fresh file
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{});
    cache.store(QStringLiteral("instances"), {row(7, 1)});
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(7, 1)});
}

void tst_Cache::verifyKeepsAHealthyFile()
{
    const QString path = Test::scratchDir() + QStringLiteral("/healthy.sqlite");
    {
        Cache cache(path);
        QVERIFY(openCache(cache));
        cache.store(QStringLiteral("instances"), {row(1, 1)});
    }
    Cache cache(path);
    QSignalSpy rebuilt(&cache, &Cache::cacheRebuilt);
    QVERIFY(openCache(cache));
    cache.verify();
    QCOMPARE(cursorOf(cache), qint64(-1)); // answered after the check, in order
    QCOMPARE(loadAll(cache, QStringLiteral("instances")), QList<QJsonObject>{row(1, 1)});
    QCOMPARE(rebuilt.count(), 0);
    QVERIFY(asideFiles(path).isEmpty());
}

void tst_Cache::workerThreadOwnsTheConnection()
{
    Cache cache(Test::scratchDir() + QStringLiteral("/t.sqlite"));
    QVERIFY(cache.workerThread() != QThread::currentThread());
    QVERIFY(cache.workerThread()->isRunning());
    QVERIFY(openCache(cache));
    const QStringList names = QSqlDatabase::connectionNames();
    QCOMPARE(names.size(), 1);
    // In the worker's thread the connection is open...
    auto *probe = new QObject;
    probe->moveToThread(cache.workerThread());
    connect(cache.workerThread(), &QThread::finished, probe, &QObject::deleteLater);
    bool openThere = false;
    QMetaObject::invokeMethod(probe, [&openThere, &names] { openThere = QSqlDatabase::database(names.first(), false).isOpen(); },
                              Qt::BlockingQueuedConnection);
    QVERIFY(openThere);
    // ...and Qt refuses it to any other thread.
    QTest::ignoreMessage(QtWarningMsg, "QSqlDatabasePrivate::database: requested database does not belong to the calling thread.");
    QVERIFY(!QSqlDatabase::database(names.first(), false).isOpen());
}

void tst_Cache::defaultPathIsPerProfile()
{
    QStandardPaths::setTestModeEnabled(true);
    const QString a = Cache::defaultPath(QStringLiteral("prod"), QString());
    const QString b = Cache::defaultPath(QStringLiteral("staging/eu"), QString());
    QVERIFY(a != b);
    QVERIFY(a.endsWith(QStringLiteral("/prod.sqlite")));
    QVERIFY(b.endsWith(QStringLiteral("/staging_eu.sqlite")));
    QVERIFY(a.startsWith(QStandardPaths::writableLocation(QStandardPaths::CacheLocation)));
}

void tst_Cache::defaultPathIsPerToken()
{
    // What a server lists depends on the token: an owner's console must not start from the rows
    // an operator's cached on the same machine, nor the other way round.
    QStandardPaths::setTestModeEnabled(true);
    const QString operatorToken = QStringLiteral("opsdeck_operator_secret");
    const QString ownerToken = QStringLiteral("opsdeck_owner_secret");
    const QString op = Cache::defaultPath(QStringLiteral("prod"), operatorToken);
    QCOMPARE(Cache::defaultPath(QStringLiteral("prod"), operatorToken), op); // stable: offline starts find it
    QVERIFY(op != Cache::defaultPath(QStringLiteral("prod"), ownerToken));
    QVERIFY(op != Cache::defaultPath(QStringLiteral("staging"), operatorToken));
    QVERIFY2(QRegularExpression(QStringLiteral("/prod-[0-9a-f]{16}\\.sqlite$")).match(op).hasMatch(), qPrintable(op));
    QVERIFY(!op.contains(QStringLiteral("secret")));
}

QTEST_GUILESS_MAIN(tst_Cache)
#include "tst_cache.moc"
