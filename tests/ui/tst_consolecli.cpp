// The opsdeck command line, run as a child process: help without a display, readable usage errors,
// the language of the locale or of --language.
#include <QDir>
#include <QProcess>
#include <QProcessEnvironment>
#include <QtTest>

namespace {

const QString ConsolePath = QStringLiteral(OPSDECK_BINARY_DIR "/app/opsdeck");

struct Run
{
    int exitCode = -1;
    QString out;
    QString err;
};

// locale: the LC_ALL and LANG it runs with; the tests' own when empty.
Run runConsole(const QStringList &arguments, bool withDisplay, const QString &locale = {})
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!locale.isEmpty()) {
        env.insert(QStringLiteral("LC_ALL"), locale);
        env.insert(QStringLiteral("LANG"), locale);
    }
    env.remove(QStringLiteral("DISPLAY"));
    env.remove(QStringLiteral("WAYLAND_DISPLAY"));
    if (withDisplay)
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    else
        env.remove(QStringLiteral("QT_QPA_PLATFORM"));
    process.setProcessEnvironment(env);
    process.start(ConsolePath, arguments);
    Run run;
    if (!process.waitForFinished(30000)) {
        process.kill();
        process.waitForFinished();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace

class tst_ConsoleCli : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void helpNeedsNoDisplay_data();
    void helpNeedsNoDisplay();
    void usageErrors_data();
    void usageErrors();
    void languageOfTheLocaleOrTheOption_data();
    void languageOfTheLocaleOrTheOption();
};

void tst_ConsoleCli::initTestCase()
{
    QVERIFY2(QFileInfo::exists(ConsolePath), qPrintable(ConsolePath));
}

void tst_ConsoleCli::helpNeedsNoDisplay_data()
{
    QTest::addColumn<QString>("argument");
    QTest::addColumn<QString>("expected");
    QTest::newRow("--help") << QStringLiteral("--help") << QStringLiteral("--server <URL>");
    QTest::newRow("-h") << QStringLiteral("-h") << QStringLiteral("--token-file <FILE>");
    QTest::newRow("--version") << QStringLiteral("--version") << QStringLiteral("opsdeck ");
}

void tst_ConsoleCli::helpNeedsNoDisplay()
{
    QFETCH(QString, argument);
    QFETCH(QString, expected);
    const Run run = runConsole({argument}, false);
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains(expected), qPrintable(run.out + run.err));
}

void tst_ConsoleCli::usageErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");
    QTest::newRow("server and demo") << QStringList{QStringLiteral("--demo"), QStringLiteral("--server"), QStringLiteral("http://127.0.0.1:1")}
                                     << QStringLiteral("cannot be combined");
    QTest::newRow("no such profile") << QStringList{QStringLiteral("--profile"), QStringLiteral("nowhere-at-all")}
                                     << QStringLiteral("no connection profile named 'nowhere-at-all'");
    QTest::newRow("not a URL") << QStringList{QStringLiteral("--server"), QStringLiteral("http://")}
                               << QStringLiteral("is not a server URL");
    QTest::newRow("missing token file") << QStringList{QStringLiteral("--server"), QStringLiteral("http://127.0.0.1:1"),
                                                       QStringLiteral("--token-file"), QStringLiteral("/nonexistent/opsdeck-token")}
                                        << QStringLiteral("/nonexistent/opsdeck-token");
    QTest::newRow("unknown option") << QStringList{QStringLiteral("--frobnicate")} << QStringLiteral("Unknown option 'frobnicate'");
    QTest::newRow("untranslated language") << QStringList{QStringLiteral("--language"), QStringLiteral("xx")}
                                           << QStringLiteral("no translation into 'xx' (there are: en, fr)");
    // The walk through the views cancels a callback and sends test events: never on a real server.
    QTest::newRow("screenshots of a real server")
        << QStringList{QStringLiteral("--server"), QStringLiteral("http://127.0.0.1:1"), QStringLiteral("--screenshot"),
                       QDir::tempPath() + QStringLiteral("/opsdeck-shots-refused")}
        << QStringLiteral("--screenshot runs on the embedded server only");
}

void tst_ConsoleCli::usageErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const Run run = runConsole(arguments, true);
    QVERIFY2(run.exitCode != 0 && run.exitCode != -1, qPrintable(QString::number(run.exitCode) + run.err));
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
}

void tst_ConsoleCli::languageOfTheLocaleOrTheOption_data()
{
    QTest::addColumn<QString>("locale");
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("expected");
    const QString help = QStringLiteral("--help");
    QTest::newRow("C locale") << QString() << QStringList{help} << QStringLiteral("--token-file <FILE>");
    QTest::newRow("French locale") << QStringLiteral("fr_FR.UTF-8") << QStringList{help}
                                   << QStringLiteral("--token-file <FICHIER>");
    QTest::newRow("--language fr") << QString() << QStringList{help, QStringLiteral("--language"), QStringLiteral("fr")}
                                   << QStringLiteral("--token-file <FICHIER>");
    QTest::newRow("--language=en in a French locale")
        << QStringLiteral("fr_FR.UTF-8") << QStringList{QStringLiteral("--language=en"), help}
        << QStringLiteral("--token-file <FILE>");
}

void tst_ConsoleCli::languageOfTheLocaleOrTheOption()
{
    QFETCH(QString, locale);
    QFETCH(QStringList, arguments);
    QFETCH(QString, expected);
    const Run run = runConsole(arguments, false, locale);
    QCOMPARE(run.exitCode, 0);
    QVERIFY2(run.out.contains(expected), qPrintable(run.out + run.err));
}

QTEST_GUILESS_MAIN(tst_ConsoleCli)
#include "tst_consolecli.moc"
