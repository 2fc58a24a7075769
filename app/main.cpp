// opsdeck: the operator console (command line, settings, translations, embedded server).
#include "embeddedserver.h"
#include "screenshotter.h"

#include "ui/connectionprofile.h"
#include "ui/credentialstore.h"
#include "ui/mainwindow.h"

#include "models/cache.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTemporaryDir>
#include <QTranslator>

#include <cstdio>
#include <memory>

using namespace OpsDeck;

namespace {

int usageError(const QString &message)
{
    std::fprintf(stderr, "opsdeck: %s\n", qPrintable(message));
    return 2;
}

// --help and --version print and exit: they need no display, so they get no GUI application.
bool onlyPrints(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        const QByteArray arg(argv[i]);
        if (arg == "-h" || arg == "--help" || arg == "-?" || arg == "--help-all" || arg == "-v" || arg == "--version")
            return true;
    }
    return false;
}

// The languages the console is translated into ("en", "fr"), from the translations it carries.
QStringList consoleLanguages()
{
    QStringList languages;
    const QStringList files = QDir(QStringLiteral(":/i18n")).entryList({QStringLiteral("opsdeck_*.qm")}, QDir::Files);
    for (const QString &file : files)
        languages.append(file.mid(8).chopped(3));
    return languages;
}

// The value of --language, read before the parser: the help it prints is in that language.
QString languageArgument(const QStringList &arguments)
{
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        if (arguments.at(i) == QLatin1String("--language") && i + 1 < arguments.size())
            return arguments.at(i + 1);
        if (arguments.at(i).startsWith(QLatin1String("--language=")))
            return arguments.at(i).mid(11);
    }
    return {};
}

// Qt's own texts (standard buttons, --help) and the console's, in the language of `locale`.
void installTranslations(QCoreApplication &app, const QLocale &locale)
{
    auto *qt = new QTranslator(&app);
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(qt);
    auto *own = new QTranslator(&app);
    if (own->load(locale, QStringLiteral("opsdeck"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        QApplication::installTranslator(own);
}

} // namespace

int main(int argc, char **argv)
{
    const std::unique_ptr<QCoreApplication> application = onlyPrints(argc, argv)
                                                              ? std::make_unique<QCoreApplication>(argc, argv)
                                                              : std::make_unique<QApplication>(argc, argv);
    QCoreApplication &app = *application;
    QApplication::setOrganizationName(QStringLiteral("OpsDeck"));
    QApplication::setApplicationName(QStringLiteral("opsdeck"));
    QApplication::setApplicationDisplayName(QStringLiteral("OpsDeck"));
    QApplication::setApplicationVersion(QStringLiteral(OPSDECK_VERSION));
    // The system's locale (LANG, LC_ALL), unless --language names another: then dates and
    // numbers follow that language too.
    const QString language = languageArgument(QCoreApplication::arguments());
    const bool knownLanguage = consoleLanguages().contains(language);
    if (knownLanguage)
        QLocale::setDefault(QLocale(language));
    installTranslations(app, QLocale());

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate(
        "main", "Operator console of the OpsDeck lifecycle control plane. With no server and no profile it "
                "starts an embedded server on this machine."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption serverOption(QStringLiteral("server"),
                                          QApplication::translate("main", "Control plane to connect to."),
                                          QStringLiteral("URL"));
    const QCommandLineOption tokenFileOption(QStringLiteral("token-file"),
                                             QApplication::translate("main", "File holding the bearer token."),
                                             QApplication::translate("main", "FILE"));
    const QCommandLineOption profileOption(QStringLiteral("profile"),
                                           QApplication::translate("main", "Saved connection profile to use."),
                                           QApplication::translate("main", "NAME"));
    const QCommandLineOption embeddedOption(QStringLiteral("embedded"),
                                            QApplication::translate("main", "Start an embedded server (default "
                                                                            "when no server or profile is given)."));
    const QCommandLineOption demoOption(QStringLiteral("demo"),
                                        QApplication::translate("main", "Embedded server with live demo data."));
    const QCommandLineOption languageOption(
        QStringLiteral("language"),
        QApplication::translate("main", "Language of the console: %1 (default: the system's).")
            .arg(consoleLanguages().join(QStringLiteral(", "))),
        QApplication::translate("main", "LANGUAGE"));
    QCommandLineOption screenshotOption(QStringLiteral("screenshot"),
                                        QStringLiteral("Save a PNG of each view to DIR, then quit."),
                                        QStringLiteral("DIR"));
    screenshotOption.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOptions({serverOption, tokenFileOption, profileOption, embeddedOption, demoOption, languageOption,
                       screenshotOption});
    parser.process(app);
    if (parser.isSet(languageOption) && !knownLanguage)
        return usageError(QApplication::translate("main", "no translation into '%1' (there are: %2)")
                              .arg(parser.value(languageOption), consoleLanguages().join(QStringLiteral(", "))));

    // Screenshots show the console as it first starts, whatever this user's window looks like,
    // and leave the user's settings alone.
    std::unique_ptr<QTemporaryDir> screenshotSettings;
    if (parser.isSet(screenshotOption)) {
        screenshotSettings = std::make_unique<QTemporaryDir>();
        QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, screenshotSettings->path());
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, screenshotSettings->path());
    }

    const bool demo = parser.isSet(demoOption);
    const bool embedded = demo || parser.isSet(embeddedOption)
                          || (!parser.isSet(serverOption) && !parser.isSet(profileOption));
    if (embedded && (parser.isSet(serverOption) || parser.isSet(profileOption)))
        return usageError(QApplication::translate("main", "--embedded and --demo cannot be combined with "
                                                          "--server or --profile"));
    // The walk through the views acts on what it shows (it cancels a callback, sends test events,
    // with reasons of its own): on the embedded server's data only, never on a real server's.
    if (parser.isSet(screenshotOption) && !embedded)
        return usageError(QStringLiteral("--screenshot runs on the embedded server only (with --demo): it acts on "
                                         "the data it shows"));

    ConsoleConnection connection;
    QString tokenError;
    if (!embedded) {
        QSettings settings;
        if (parser.isSet(profileOption)) {
            const auto profile = ConnectionProfiles::find(settings, parser.value(profileOption));
            if (!profile)
                return usageError(QApplication::translate("main", "no connection profile named '%1'")
                                      .arg(parser.value(profileOption)));
            connection.profile = profile->name;
            connection.baseUrl = profile->serverUrl;
            if (!profile->tokenFile.isEmpty() && !parser.isSet(tokenFileOption))
                connection.token = CredentialStore::readTokenFile(profile->tokenFile, &tokenError);
        }
        if (parser.isSet(serverOption)) {
            connection.baseUrl = QUrl::fromUserInput(parser.value(serverOption));
            if (!connection.baseUrl.isValid() || connection.baseUrl.host().isEmpty())
                return usageError(QApplication::translate("main", "'%1' is not a server URL")
                                      .arg(parser.value(serverOption)));
            if (connection.profile.isEmpty())
                connection.profile = connection.baseUrl.host() + QLatin1Char('_')
                                     + QString::number(connection.baseUrl.port(80));
        }
        if (parser.isSet(tokenFileOption)) {
            connection.token = CredentialStore::readTokenFile(parser.value(tokenFileOption), &tokenError);
            if (connection.token.isEmpty())
                return usageError(tokenError);
        }
        if (connection.token.isEmpty())
            connection.token = qEnvironmentVariable("OPSDECK_TOKEN");
    }

    MainWindow window;
    window.show();

    EmbeddedServer server;
    Screenshotter *screenshotter = nullptr;
    if (parser.isSet(screenshotOption))
        screenshotter = new Screenshotter(&window, parser.value(screenshotOption), &server, &app);

    if (embedded) {
        window.setStartupMessage(demo ? QApplication::translate("main", "Starting the embedded server with demo data…")
                                      : QApplication::translate("main", "Starting the embedded server…"));
        QObject::connect(&server, &EmbeddedServer::started, &window, [&window, demo](const QUrl &url, const QString &token) {
            ConsoleConnection c;
            c.baseUrl = url;
            c.token = token;
            c.profile = demo ? QStringLiteral("demo") : QStringLiteral("embedded");
            c.role = Actor::Operator;
            c.embedded = true;
            if (demo) {
                // Every demo starts a new server whose ids repeat the last one's: that demo's cached
                // rows would pass for newer versions of these (and show in its screenshots).
                const QString cache = Cache::defaultPath(c.profile, c.token);
                for (const QString &suffix : {QString(), QStringLiteral("-wal"), QStringLiteral("-shm")})
                    QFile::remove(cache + suffix);
            }
            window.connectTo(c);
        });
        QObject::connect(&server, &EmbeddedServer::failed, &window, [&window](const QString &message) {
            window.showFatalError(QApplication::translate("main", "The embedded server did not start: %1").arg(message));
        });
        server.start(demo);
    } else if (connection.token.isEmpty()) {
        // A profile whose token lives in the keychain: read it without blocking the window.
        auto *store = new CredentialStore(&window);
        window.setStartupMessage(QApplication::translate("main", "Reading the token from the system keychain…"));
        QObject::connect(store, &CredentialStore::tokenRead, &window,
                         [&window, connection](const QString &, const QString &token) mutable {
                             connection.token = token;
                             window.connectTo(connection);
                         });
        QObject::connect(store, &CredentialStore::failed, &window,
                         [&window, tokenError](const QString &, const QString &message, bool) {
                             window.showFatalError(
                                 QApplication::translate("main", "No token for this server: %1. Give one with "
                                                                 "--token-file or File › Connect to….")
                                     .arg(tokenError.isEmpty() ? message : tokenError));
                         });
        store->read(connection.profile);
    } else {
        window.connectTo(connection);
    }
    if (screenshotter)
        screenshotter->start();

    const int status = QApplication::exec();
    window.saveSettings();
    server.stop();
    return status;
}
