// The French translation: every message of translations/opsdeck_fr.ts is translated and keeps its
// placeholders and accelerator, the build carries it in :/i18n, and the console built with it
// speaks French where an operator looks first (navigation, menus, actions, columns, detail pane),
// its accelerators apart within each menu and dialog.
#include "ui/bulkretrydialog.h"
#include "ui/connectiondialog.h"
#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/messagebox.h"
#include "ui/resourceview.h"
#include "ui/statebadgelabel.h"

#include "models/resourcemodel.h"

#include "testserver.h"
#include "windowfixture.h"

#include <QAbstractButton>
#include <QAction>
#include <QApplication>
#include <QFile>
#include <QFrame>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QRegularExpression>
#include <QSet>
#include <QSettings>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolBar>
#include <QTranslator>
#include <QXmlStreamReader>

using namespace OpsDeck;
using namespace OpsDeck::Test;

namespace {

const QString FrenchTs = QStringLiteral(OPSDECK_SOURCE_DIR "/translations/opsdeck_fr.ts");

struct Message
{
    QString context;
    QString source;
    bool numerus = false;
    QString type;              // "unfinished", "vanished", "obsolete" or empty
    QStringList translations;  // the translation, or each plural form
    qint64 line = 0;

    QString where() const { return QStringLiteral("line %1 (%2: \"%3\")").arg(line).arg(context, source); }
};

// Every message of a .ts file; an empty list and `error` set when it does not read.
QList<Message> readTs(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = file.errorString();
        return {};
    }
    QList<Message> messages;
    QXmlStreamReader xml(&file);
    QString context;
    Message message;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            messages.append(message);
            continue;
        }
        if (!xml.isStartElement())
            continue;
        const QStringView name = xml.name();
        if (name == QLatin1String("name")) {
            context = xml.readElementText();
        } else if (name == QLatin1String("message")) {
            message = Message();
            message.context = context;
            message.numerus = xml.attributes().value(QLatin1String("numerus")) == QLatin1String("yes");
            message.line = xml.lineNumber();
        } else if (name == QLatin1String("source")) {
            message.source = xml.readElementText();
        } else if (name == QLatin1String("translation")) {
            message.type = xml.attributes().value(QLatin1String("type")).toString();
            if (!message.numerus)
                message.translations.append(xml.readElementText());
        } else if (name == QLatin1String("numerusform")) {
            message.translations.append(xml.readElementText());
        }
    }
    if (xml.hasError())
        *error = QStringLiteral("%1 at line %2").arg(xml.errorString()).arg(xml.lineNumber());
    return xml.hasError() ? QList<Message>() : messages;
}

// %1..%9 and %n, in order: a translation may move them, never lose or add one.
QStringList placeholders(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("%([1-9]|n)"));
    QStringList found;
    for (auto it = pattern.globalMatch(text); it.hasNext();)
        found.append(it.next().captured(0));
    found.sort();
    return found;
}

// The character after each single '&' ("&&" is a literal ampersand).
QString mnemonics(const QString &text)
{
    QString found;
    for (qsizetype i = 0; i + 1 < text.size(); ++i) {
        if (text.at(i) != u'&')
            continue;
        if (text.at(i + 1) != u'&')
            found.append(text.at(i + 1).toLower());
        ++i;
    }
    return found;
}

// The accelerators of one menu or dialog that are taken twice; empty when they are apart.
QString collisions(const QStringList &texts)
{
    QHash<QChar, QStringList> taken;
    for (const QString &text : texts) {
        for (QChar c : mnemonics(text))
            taken[c].append(text);
    }
    QStringList twice;
    for (auto it = taken.cbegin(); it != taken.cend(); ++it) {
        if (it.value().size() > 1)
            twice.append(it.value().join(QStringLiteral(" / ")));
    }
    return twice.join(QStringLiteral("; "));
}

} // namespace

class tst_Translations : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void everyMessageIsTranslated();
    void placeholdersAndAcceleratorsAreKept();
    void buildCarriesTheTranslation();
    void windowSpeaksFrench();
    void dialogsKeepTheirAcceleratorsApart();

private:
    // Fails the test when a text shown is not one of the file's translations (the caller then
    // returns: QTest::currentTestFailed()).
    void verifyFrench(const QStringList &texts, const char *where);

    QTemporaryDir m_dir;
    QList<Message> m_messages;
    QSet<QString> m_french;            // every translation of the file
    QSet<QString> m_englishOnly;       // sources whose translation differs from them
    QHash<QString, QString> m_byKey;   // "context\nsource" -> translation
};

void tst_Translations::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_translations"));
    QVERIFY(m_dir.isValid());
    QString error;
    m_messages = readTs(FrenchTs, &error);
    QVERIFY2(error.isEmpty(), qPrintable(FrenchTs + QStringLiteral(": ") + error));
    QVERIFY2(m_messages.size() > 300, qPrintable(QString::number(m_messages.size())));
    for (const Message &m : std::as_const(m_messages)) {
        for (const QString &t : m.translations)
            m_french.insert(t);
        if (!m.numerus && !m.translations.isEmpty()) {
            m_byKey.insert(m.context + u'\n' + m.source, m.translations.first());
            if (m.translations.first() != m.source)
                m_englishOnly.insert(m.source);
        }
    }
    for (const Message &m : std::as_const(m_messages)) {
        // A source that reads the same in French somewhere ("Instances") is French too.
        if (!m.numerus && !m.translations.isEmpty() && m.translations.first() == m.source)
            m_englishOnly.remove(m.source);
    }

    // Installed before anything reads the resource kinds, whose titles are translated once.
    auto *french = new QTranslator(qApp);
    QVERIFY(french->load(QLocale(QLocale::French), QStringLiteral("opsdeck"), QStringLiteral("_"),
                         QStringLiteral(":/i18n")));
    QVERIFY(QCoreApplication::installTranslator(french));
}

void tst_Translations::init()
{
    QSettings().clear();
    // No dialog may ever block a test.
    MessageBox::setAutoAnswer(QMessageBox::Ok);
}

void tst_Translations::everyMessageIsTranslated()
{
    QStringList bad;
    for (const Message &m : std::as_const(m_messages)) {
        if (!m.type.isEmpty())
            bad.append(m.type + QStringLiteral(": ") + m.where());
        else if (m.translations.isEmpty() || m.translations.contains(QString()))
            bad.append(QStringLiteral("empty: ") + m.where());
        // French has two forms: one for 0 and 1, one for more.
        else if (m.numerus && m.translations.size() != 2)
            bad.append(QStringLiteral("%1 plural forms: ").arg(m.translations.size()) + m.where());
    }
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(u'\n')));
}

void tst_Translations::placeholdersAndAcceleratorsAreKept()
{
    QStringList bad;
    for (const Message &m : std::as_const(m_messages)) {
        for (const QString &t : m.translations) {
            if (placeholders(t) != placeholders(m.source))
                bad.append(QStringLiteral("placeholders %1 in \"%2\": ").arg(placeholders(t).join(u' '), t)
                           + m.where());
            if (mnemonics(t).size() != mnemonics(m.source).size())
                bad.append(QStringLiteral("accelerator in \"%1\": ").arg(t) + m.where());
        }
    }
    QVERIFY2(bad.isEmpty(), qPrintable(bad.join(u'\n')));
}

void tst_Translations::buildCarriesTheTranslation()
{
    // What app/main.cpp loads for --language fr or a French locale.
    QTranslator translator;
    QVERIFY(translator.load(QLocale(QStringLiteral("fr_CA")), QStringLiteral("opsdeck"), QStringLiteral("_"),
                            QStringLiteral(":/i18n")));
    QCOMPARE(translator.language(), QStringLiteral("fr"));
    QStringList stale;
    for (const Message &m : std::as_const(m_messages)) {
        const QByteArray context = m.context.toUtf8();
        const QByteArray source = m.source.toUtf8();
        // A plural message's forms: the first for 1, the second for 2 and more.
        for (qsizetype form = 0; form < m.translations.size(); ++form) {
            const QString compiled = m.numerus
                                         ? translator.translate(context.constData(), source.constData(), nullptr,
                                                                int(form + 1))
                                         : translator.translate(context.constData(), source.constData());
            if (compiled != m.translations.at(form))
                stale.append(QStringLiteral("\"%1\" compiled, not \"%2\": ").arg(compiled, m.translations.at(form))
                             + m.where());
        }
    }
    QVERIFY2(stale.isEmpty(), qPrintable(stale.join(u'\n')));
}

void tst_Translations::verifyFrench(const QStringList &texts, const char *where)
{
    QStringList english;
    for (const QString &text : texts) {
        // Each shown text is one of the file's translations: a text left out of tr() is not.
        if (!m_french.contains(text) || m_englishOnly.contains(text))
            english.append(QLatin1Char('"') + text + QLatin1Char('"'));
    }
    const QString shown = english.join(QStringLiteral(", "));
    QVERIFY2(english.isEmpty(), qPrintable(QStringLiteral("%1: not French: %2").arg(QLatin1String(where), shown)));
}

void tst_Translations::windowSpeaksFrench()
{
    TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    const Seeded s = seed(server);

    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.connectTo(connectionTo(server, m_dir.filePath(QStringLiteral("french.sqlite"))));
    const QString live = m_byKey.value(QStringLiteral("OpsDeck::ConnectionStatus\nLive"));
    QVERIFY(!live.isEmpty());
    QTRY_COMPARE(w.connectionStatusText(), live);

    // Navigation: each page, and the first one as the file says it.
    auto *navigation = w.findChild<QListWidget *>(QStringLiteral("navigation"));
    QVERIFY(navigation);
    QStringList pages;
    for (int row = 0; row < navigation->count(); ++row)
        pages.append(navigation->item(row)->text());
    QCOMPARE(pages.size(), 8);
    verifyFrench(pages, "navigation");
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(pages.first(), m_byKey.value(QStringLiteral("OpsDeck::MainWindow\nDashboard")));

    // The selected instance: its actions fill the detail pane and the Actions menu.
    w.showView(QStringLiteral("instances"));
    ResourceView *view = w.resourceView(QStringLiteral("instances"));
    QVERIFY(view);
    QTRY_COMPARE(view->table()->model()->rowCount(), 3);
    QVERIFY(view->selectId(s.instances.first()));
    auto *detail = w.findChild<DetailPane *>();
    QVERIFY(detail);
    QTRY_VERIFY(!detail->objectActions().isEmpty());

    // Menus: the bar's titles, then each menu's entries, accelerators apart in each.
    QStringList titles;
    for (QAction *a : w.menuBar()->actions()) {
        if (a->menu())
            titles.append(a->menu()->title());
    }
    QCOMPARE(titles.size(), 4);
    verifyFrench(titles, "menu bar");
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(titles.first(), m_byKey.value(QStringLiteral("OpsDeck::MainWindow\n&File")));
    QVERIFY2(collisions(titles).isEmpty(), qPrintable(collisions(titles)));
    for (QAction *a : w.menuBar()->actions()) {
        QMenu *menu = a->menu();
        if (!menu)
            continue;
        emit menu->aboutToShow(); // the Actions menu is filled as it opens
        QStringList entries;
        for (QAction *entry : menu->actions()) {
            if (!entry->isSeparator())
                entries.append(entry->text());
        }
        QVERIFY2(!entries.isEmpty(), qPrintable(menu->title()));
        verifyFrench(entries, qPrintable(menu->title()));
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(collisions(entries).isEmpty(), qPrintable(menu->title() + QStringLiteral(": ") + collisions(entries)));
    }

    // The toolbar, the detail pane's actions and tabs.
    QStringList actions;
    for (QToolBar *bar : w.findChildren<QToolBar *>()) {
        for (QAction *a : bar->actions()) {
            if (!a->isSeparator() && !a->text().isEmpty())
                actions.append(a->text());
        }
    }
    auto *tabs = detail->findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    QVERIFY(tabs);
    for (int i = 0; i < tabs->count(); ++i)
        actions.append(tabs->tabText(i));
    verifyFrench(actions, "toolbars and detail pane");
    if (QTest::currentTestFailed())
        return;

    // Column titles of every table, and the dashboard's card titles.
    QStringList columns;
    for (const QString &kind : {QStringLiteral("organizations"), QStringLiteral("instances"),
                                QStringLiteral("deliveries"), QStringLiteral("endpoints"), QStringLiteral("audit")}) {
        ResourceView *v = w.resourceView(kind);
        QVERIFY2(v, qPrintable(kind));
        const QAbstractItemModel *model = v->table()->model();
        for (int c = 0; c < model->columnCount(); ++c)
            columns.append(model->headerData(c, Qt::Horizontal).toString());
    }
    for (QFrame *card : w.findChildren<QFrame *>(QRegularExpression(QStringLiteral("^card_")))) {
        if (auto *heading = card->findChild<QLabel *>())
            columns.append(heading->text());
    }
    verifyFrench(columns, "columns and cards");
    if (QTest::currentTestFailed())
        return;

    // A state is read aloud in French words, in a table's state cell (the code stays shown) as on
    // a badge of the dashboard.
    const QAbstractItemModel *rows = view->table()->model();
    QStringList stateCells;
    for (int c = 0; c < rows->columnCount(); ++c) {
        const QVariant spoken = rows->index(0, c).data(Qt::AccessibleTextRole);
        if (spoken.isValid())
            stateCells.append(spoken.toString());
    }
    QCOMPARE(stateCells.size(), 1);
    const QString code = rows->index(0, 0).data(ResourceModel::StateRole).toString();
    const QString spoken = m_byKey.value(QStringLiteral("OpsDeck::StateName\n") + code.toLower());
    QVERIFY2(!spoken.isEmpty(), qPrintable(code));
    QCOMPARE(stateCells.first(), spoken);
    const QList<StateBadgeLabel *> badges = w.findChildren<StateBadgeLabel *>();
    QVERIFY(!badges.isEmpty());
    for (const StateBadgeLabel *badge : badges) {
        const QString english = badge->state().toLower().replace(QLatin1Char('_'), QLatin1Char(' '));
        const QString french = m_byKey.value(QStringLiteral("OpsDeck::StateName\n") + english);
        QVERIFY2(!french.isEmpty(), qPrintable(badge->state()));
        QVERIFY2(badge->accessibleName().endsWith(QLatin1Char(' ') + french), qPrintable(badge->accessibleName()));
    }

    // The role is named in French where a sentence speaks of it; its code ("operator") is what the
    // server and the filters speak.
    const QString role = m_byKey.value(QStringLiteral("OpsDeck::Roles\noperator"));
    QVERIFY(!role.isEmpty() && role != QLatin1String("operator"));
    auto *diagramTitle = detail->findChild<QLabel *>(QStringLiteral("diagramTitle"));
    QVERIFY(diagramTitle);
    QCOMPARE(diagramTitle->text(), m_byKey.value(QStringLiteral("OpsDeck::DetailPane\nHighlighted: what the %1 role may do now")).arg(role));
}

void tst_Translations::dialogsKeepTheirAcceleratorsApart()
{
    const auto shown = [](const QWidget &dialog) {
        QStringList texts;
        for (const QLabel *label : dialog.findChildren<QLabel *>())
            texts.append(label->text());
        for (const QAbstractButton *button : dialog.findChildren<QAbstractButton *>())
            texts.append(button->text());
        return texts;
    };
    ConnectionDialog connection;
    const QStringList connectionTexts = shown(connection);
    QVERIFY2(collisions(connectionTexts).isEmpty(), qPrintable(collisions(connectionTexts)));
    QVERIFY(connectionTexts.contains(m_byKey.value(QStringLiteral("OpsDeck::ConnectionDialog\n&Profile:"))));

    BulkRetryScope scope;
    scope.state = QStringLiteral("FAILED");
    scope.endpointId = 5;
    scope.endpointText = QStringLiteral("#5");
    BulkRetryDialog retry(nullptr, scope);
    const QStringList retryTexts = shown(retry);
    QVERIFY2(collisions(retryTexts).isEmpty(), qPrintable(collisions(retryTexts)));
    QVERIFY(retryTexts.contains(m_byKey.value(QStringLiteral("OpsDeck::BulkRetryDialog\n&Failed"))));
}

QTEST_MAIN(tst_Translations)
#include "tst_translations.moc"
