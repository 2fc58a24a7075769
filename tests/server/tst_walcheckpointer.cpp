// The write-ahead log checkpointer: pages a writer leaves in the log reach the database file
// without the writer checkpointing, and the log starts over instead of growing; the server runs
// one for all of its connections.
#include "testserver.h"

#include "server/controlplane.h"
#include "server/storage/database.h"
#include "server/storage/walcheckpointer.h"

#include <QFile>
#include <QFileInfo>
#include <QtEndian>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

using namespace OpsDeck;

namespace {

constexpr qint64 kRowBytes = 1024;

// A connection that never checkpoints itself, the way the outbox store's does not.
bool openWriter(Database &db, Problem *problem)
{
    return db.open(problem) && db.exec(QStringLiteral("PRAGMA wal_autocheckpoint=0"), problem)
           && db.exec(QStringLiteral("CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, data BLOB NOT NULL)"), problem);
}

// `rows` rows of kRowBytes random bytes in one transaction.
bool write(Database &db, int rows)
{
    if (!db.begin())
        return false;
    QSqlQuery q(db.connection());
    q.prepare(QStringLiteral("INSERT INTO blobs (data) VALUES (randomblob(?))"));
    for (int i = 0; i < rows; ++i) {
        q.addBindValue(kRowBytes);
        if (!q.exec())
            return false;
    }
    return db.commit();
}

// The log length at which a commit on this connection checkpoints (0: never).
int autoCheckpointPages(Database &db)
{
    QSqlQuery q(db.connection());
    return q.exec(QStringLiteral("PRAGMA wal_autocheckpoint")) && q.next() ? q.value(0).toInt() : -1;
}

qint64 fileSize(const QString &path)
{
    return QFileInfo(path).size();
}

// The log's checkpoint sequence number (bytes 12-15 of its header, big-endian): SQLite adds one
// each time the log starts over from its beginning. -1 while there is no header.
qint64 logSequence(const QString &databasePath)
{
    QFile log(databasePath + QStringLiteral("-wal"));
    if (!log.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray header = log.read(16);
    if (header.size() < 16)
        return -1;
    return qFromBigEndian<quint32>(header.constData() + 12);
}

} // namespace

class tst_WalCheckpointer : public QObject
{
    Q_OBJECT

private slots:
    void init();
    void copiesTheLogIntoTheDatabase();
    void logStartsOverInsteadOfGrowing();
    void logStartsOverUnderAWriterThatKeepsWriting();
    void longLogIsCutBackWhenItStartsOver();
    void stopCopiesWhatIsLeft();
    void refusesWhatIsNotSqlite();
    void serverCheckpointsForItsConnections();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QString m_path;
    QString m_url;
};

void tst_WalCheckpointer::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_path = m_dir->filePath(QStringLiteral("wal.db"));
    m_url = QStringLiteral("sqlite://") + m_path;
}

void tst_WalCheckpointer::copiesTheLogIntoTheDatabase()
{
    Database writer(m_url);
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    QVERIFY(write(writer, 2000));
    // Everything written is still in the log only: the database file holds the first pages.
    QVERIFY2(fileSize(m_path) < 200 * 1024, qPrintable(QString::number(fileSize(m_path))));

    WalCheckpointer checkpointer(m_url, std::chrono::milliseconds(10));
    QVERIFY2(checkpointer.start(&problem), qPrintable(problem.detail));
    QVERIFY(checkpointer.isRunning());
    QTRY_VERIFY2(fileSize(m_path) >= 2000 * kRowBytes, qPrintable(QString::number(fileSize(m_path))));
    QTRY_VERIFY(checkpointer.progress().logFrames > 0
                && checkpointer.progress().copiedFrames == checkpointer.progress().logFrames);
}

void tst_WalCheckpointer::logStartsOverInsteadOfGrowing()
{
    Database writer(m_url);
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    WalCheckpointer checkpointer(m_url, std::chrono::milliseconds(10));
    QVERIFY2(checkpointer.start(&problem), qPrintable(problem.detail));
    // Ten rounds of 2 MiB: once a round is in the database file, the next commit writes the log
    // from its beginning again, so it stays near one round's size instead of reaching 20 MiB.
    constexpr int kRounds = 10;
    constexpr int kRowsPerRound = 2048;
    for (int round = 1; round <= kRounds; ++round) {
        QVERIFY(write(writer, kRowsPerRound));
        // A checkpoint that began after this commit, and found every frame of the log copied.
        const qint64 after = checkpointer.progress().checkpoints + 1;
        QTRY_VERIFY2(checkpointer.progress().checkpoints > after
                         && checkpointer.progress().copiedFrames == checkpointer.progress().logFrames,
                     qPrintable(QStringLiteral("round %1: %2 of %3 frames copied")
                                    .arg(round)
                                    .arg(checkpointer.progress().copiedFrames)
                                    .arg(checkpointer.progress().logFrames)));
        QVERIFY(fileSize(m_path) >= round * kRowsPerRound * kRowBytes);
    }
    const qint64 log = fileSize(m_path + QStringLiteral("-wal"));
    QVERIFY2(log < 3 * kRowsPerRound * (kRowBytes + 512), qPrintable(QStringLiteral("log %1 bytes").arg(log)));
}

void tst_WalCheckpointer::logStartsOverUnderAWriterThatKeepsWriting()
{
    Database writer(m_url);
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    // A restart once the log holds 2 MiB, under commits of 256 KiB a millisecond apart, the way
    // the outbox store writes under a backlog (between a round's record and the next claim). A
    // passive checkpoint never finds the whole log copied then (frames land while it copies), so
    // without restarts the log never starts over: 192 commits leave it at 70 MB.
    //
    // How long the log gets before it starts over depends on the disk, not on the checkpointer:
    // a sync that takes 200 ms lets the writer add 50 commits meanwhile. So what is counted is how
    // often the log started over, read from its own header, and the writer goes on until it has
    // three times (about 30 commits on an idle machine; 192 left 3 to 8 under a disk kept busy).
    constexpr qint64 kRestartFrames = 512;
    WalCheckpointer checkpointer(m_url, std::chrono::milliseconds(5), kRestartFrames);
    QVERIFY2(checkpointer.start(&problem), qPrintable(problem.detail));
    constexpr int kMaxCommits = 768;
    constexpr int kRowsPerCommit = 256;
    constexpr int kStartsOver = 3;
    int startedOver = 0;
    int copiedCommits = 0; // commits the log held when it last started over: in the database file
    qint64 sequence = logSequence(m_path);
    for (int i = 1; i <= kMaxCommits && startedOver < kStartsOver; ++i) {
        QVERIFY(write(writer, kRowsPerCommit));
        const qint64 now = logSequence(m_path);
        if (now != sequence) {
            ++startedOver;
            copiedCommits = i - 1;
        }
        sequence = now;
        QThread::msleep(1);
    }
    QVERIFY2(startedOver >= kStartsOver,
             qPrintable(QStringLiteral("the log started over %1 times in %2 commits").arg(startedOver).arg(kMaxCommits)));
    QVERIFY(checkpointer.progress().restarts > 0);
    QVERIFY2(fileSize(m_path) >= copiedCommits * kRowsPerCommit * kRowBytes, qPrintable(QString::number(fileSize(m_path))));
}

void tst_WalCheckpointer::longLogIsCutBackWhenItStartsOver()
{
    Database writer(m_url);
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    // 48 MiB into the log with nobody copying it, the way a stalled disk lets it grow.
    for (int i = 0; i < 6; ++i)
        QVERIFY(write(writer, 8192));
    const qint64 grown = fileSize(m_path + QStringLiteral("-wal"));
    QVERIFY2(grown > Database::SqliteLogSizeLimit, qPrintable(QString::number(grown)));

    WalCheckpointer checkpointer(m_url, std::chrono::milliseconds(10));
    QVERIFY2(checkpointer.start(&problem), qPrintable(problem.detail));
    // 48 MiB copied and synced: patience for a shared disk, not a speed limit.
    QTRY_VERIFY_WITH_TIMEOUT(checkpointer.progress().logFrames > 0
                                 && checkpointer.progress().copiedFrames == checkpointer.progress().logFrames,
                             60000);
    const qint64 sequence = logSequence(m_path);
    QVERIFY(write(writer, 1));
    QCOMPARE_NE(logSequence(m_path), sequence);
    const qint64 cut = fileSize(m_path + QStringLiteral("-wal"));
    QVERIFY2(cut <= Database::SqliteLogSizeLimit, qPrintable(QStringLiteral("log %1 bytes").arg(cut)));
}

void tst_WalCheckpointer::stopCopiesWhatIsLeft()
{
    Database writer(m_url);
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    // An interval no test waits for: only stop()'s own checkpoint can copy the pages.
    WalCheckpointer checkpointer(m_url, std::chrono::hours(1));
    QVERIFY2(checkpointer.start(&problem), qPrintable(problem.detail));
    QVERIFY(write(writer, 1000));
    QVERIFY(fileSize(m_path) < 200 * 1024);
    checkpointer.stop();
    QVERIFY(!checkpointer.isRunning());
    QVERIFY2(fileSize(m_path) >= 1000 * kRowBytes, qPrintable(QString::number(fileSize(m_path))));
}

void tst_WalCheckpointer::refusesWhatIsNotSqlite()
{
    WalCheckpointer checkpointer(QStringLiteral("mysql://nowhere/db"), std::chrono::milliseconds(10));
    Problem problem;
    QVERIFY(!checkpointer.start(&problem));
    QVERIFY(!checkpointer.isRunning());
    QVERIFY(!problem.detail.isEmpty());
}

void tst_WalCheckpointer::serverCheckpointsForItsConnections()
{
    // Without the delivery worker, so that nothing of the outbox store's is running.
    const auto server = Test::TestServer::withoutDeliveryWorker();
    QVERIFY2(server->isRunning(), qPrintable(server->error()));
    if (!server->databaseUrl().startsWith(QLatin1String("sqlite://")))
        QSKIP("SQLite's write-ahead log only");
    ControlPlane &plane = server->controlPlane();
    QVERIFY(plane.walCheckpointer() && plane.walCheckpointer()->isRunning());
    // A commit of the HTTP thread never copies the log into the file and syncs it while requests
    // wait: the server's checkpointer does that for every connection.
    QCOMPARE(autoCheckpointPages(plane.database()), 0);
    QCOMPARE(server->request("POST", QStringLiteral("/api/v1/organizations"),
                             QJsonObject{{QStringLiteral("name"), QStringLiteral("acme")}}, server->operatorToken())
                 .status,
             201);

    const QString path = server->databaseUrl().mid(int(qstrlen("sqlite://")));
    Database writer(server->databaseUrl());
    Problem problem;
    QVERIFY2(openWriter(writer, &problem), qPrintable(problem.detail));
    QVERIFY(write(writer, 2000));
    QTRY_VERIFY2(fileSize(path) >= 2000 * kRowBytes, qPrintable(QString::number(fileSize(path))));

    // Stopped, the server's connection checkpoints on its own again (tokens may still be created).
    plane.stop();
    QVERIFY(!plane.walCheckpointer());
    QCOMPARE(autoCheckpointPages(plane.database()), 1000);
}

QTEST_GUILESS_MAIN(tst_WalCheckpointer)
#include "tst_walcheckpointer.moc"
