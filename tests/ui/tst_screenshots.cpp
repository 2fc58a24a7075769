// opsdeck --demo --screenshot run as a child process, as the documentation's screenshots are made:
// it quits with 0 after writing every shot the documentation lists, each a whole picture.
#include <QDir>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

namespace {

const QString ConsolePath = QStringLiteral(OPSDECK_BINARY_DIR "/app/opsdeck");

} // namespace

class tst_Screenshots : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void shot_data();
    void shot();
    void nothingElseIsWritten();

private:
    QTemporaryDir m_home; // the run's own settings, data and cache: the user's are left alone
    QString m_directory;
    QString m_output;
    QString m_errors;
};

void tst_Screenshots::initTestCase()
{
    QVERIFY2(QFileInfo::exists(ConsolePath), qPrintable(ConsolePath));
    QVERIFY(m_home.isValid());
    m_directory = m_home.filePath(QStringLiteral("shots"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("HOME"), m_home.path());
    for (const char *name : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"})
        env.insert(QString::fromLatin1(name), m_home.filePath(QString::fromLatin1(name).toLower()));
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(ConsolePath, {QStringLiteral("--demo"), QStringLiteral("--screenshot"), m_directory});
    // Each step waits for what it shows, each at most half a minute.
    const bool finished = process.waitForFinished(280000);
    if (!finished) {
        process.kill();
        process.waitForFinished();
    }
    m_output = QString::fromUtf8(process.readAllStandardOutput());
    m_errors = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(finished, qPrintable(m_errors));
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    // A shot that could not be taken is said on stderr, with why, and the run fails.
    QVERIFY2(process.exitCode() == 0, qPrintable(m_errors));
}

void tst_Screenshots::shot_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("window"); // the whole window at 1400×860, else a part of it or a dialog

    for (const char *name : {"dashboard", "organizations", "instances", "sandboxes", "bindings", "catalog", "callbacks",
                             "callbacks-attempts", "callbacks-lifecycle", "callbacks-test-event", "audit", "instances-dark", "offline"})
        QTest::newRow(name) << QString::fromLatin1(name) << true;
    for (const char *name : {"detail-pane", "detail-lifecycle", "detail-history", "callbacks-bulk-retry"})
        QTest::newRow(name) << QString::fromLatin1(name) << false;
}

void tst_Screenshots::shot()
{
    QFETCH(QString, name);
    QFETCH(bool, window);
    const QString path = m_directory + QLatin1Char('/') + name + QStringLiteral(".png");
    QVERIFY2(m_output.split(QLatin1Char('\n')).contains(path), qPrintable(m_output));
    const QImage image(path);
    QVERIFY2(!image.isNull(), qPrintable(path));
    if (window) {
        QCOMPARE(image.size(), QSize(1400, 860));
    } else {
        QVERIFY2(image.width() >= 300 && image.width() < 1400, qPrintable(QString::number(image.width())));
        QVERIFY2(image.height() >= 150 && image.height() < 860, qPrintable(QString::number(image.height())));
    }
}

void tst_Screenshots::nothingElseIsWritten()
{
    // The documentation lists every file: a shot nobody describes would go stale unnoticed.
    const QStringList files = QDir(m_directory).entryList(QDir::Files);
    QCOMPARE(files.size(), 17);
}

QTEST_MAIN(tst_Screenshots)
#include "tst_screenshots.moc"
