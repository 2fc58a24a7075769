// Connection profiles in QSettings, and the token kept in a file when no keychain answers.
#include "ui/connectiondialog.h"
#include "ui/connectionprofile.h"
#include "ui/credentialstore.h"

#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace OpsDeck;

class tst_ConnectionDialog : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void profilesRoundTrip();
    void tokenFile();
    void keychainAnswersOrSaysWhy();
    void dialogSavesProfileAndTokenFile();
    void dialogRejectsBadUrl();
    void labelsAndHintsReadWhole();
};

void tst_ConnectionDialog::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_connectiondialog"));
}

void tst_ConnectionDialog::init()
{
    QSettings().clear();
}

void tst_ConnectionDialog::profilesRoundTrip()
{
    QSettings settings;
    ConnectionProfiles::save(settings, {QStringLiteral("prod/eu"), QUrl(QStringLiteral("https://ops.example:8443")), {}});
    ConnectionProfiles::save(settings, {QStringLiteral("lab"), QUrl(QStringLiteral("http://10.0.0.5:8080")),
                                        QStringLiteral("/tmp/lab.token")});
    const QList<ConnectionProfile> profiles = ConnectionProfiles::load(settings);
    QCOMPARE(profiles.size(), 2);
    QCOMPARE(profiles.at(0).name, QStringLiteral("lab"));
    QCOMPARE(profiles.at(0).tokenFile, QStringLiteral("/tmp/lab.token"));
    // A '/' in a name does not split it into settings groups.
    const auto prod = ConnectionProfiles::find(settings, QStringLiteral("prod/eu"));
    QVERIFY(prod);
    QCOMPARE(prod->serverUrl, QUrl(QStringLiteral("https://ops.example:8443")));
    ConnectionProfiles::remove(settings, QStringLiteral("prod/eu"));
    QVERIFY(!ConnectionProfiles::find(settings, QStringLiteral("prod/eu")));
}

void tst_ConnectionDialog::tokenFile()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("t.token"));
    QString error;
    QVERIFY2(CredentialStore::writeTokenFile(path, QStringLiteral("secret-token"), &error), qPrintable(error));
    QCOMPARE(QFile(path).permissions() & (QFileDevice::ReadGroup | QFileDevice::ReadOther), QFileDevice::Permissions());
    QCOMPARE(CredentialStore::readTokenFile(path, &error), QStringLiteral("secret-token"));
    QCOMPARE(CredentialStore::readTokenFile(dir.filePath(QStringLiteral("missing")), &error), QString());
    QVERIFY2(error.contains(QStringLiteral("missing")), qPrintable(error));
}

void tst_ConnectionDialog::keychainAnswersOrSaysWhy()
{
    // Whatever this machine has, the store answers exactly once, and a missing keychain is
    // reported as such (so the dialog can offer a token file) rather than hanging.
    CredentialStore store;
    store.setTimeout(3000);
    QSignalSpy read(&store, &CredentialStore::tokenRead);
    QSignalSpy failed(&store, &CredentialStore::failed);
    store.read(QStringLiteral("no-such-profile-%1").arg(QCoreApplication::applicationPid()));
    QTRY_VERIFY_WITH_TIMEOUT(read.count() + failed.count() == 1, 10000);
    QCOMPARE(read.count(), 0);
    QVERIFY(!failed.at(0).at(1).toString().isEmpty());
}

void tst_ConnectionDialog::dialogSavesProfileAndTokenFile()
{
    QTemporaryDir dir;
    const QString tokenPath = dir.filePath(QStringLiteral("lab.token"));
    ConnectionDialog dialog;
    dialog.findChild<QComboBox *>(QStringLiteral("profileCombo"))->setCurrentText(QStringLiteral("lab"));
    dialog.findChild<QLineEdit *>(QStringLiteral("serverUrlEdit"))->setText(QStringLiteral("http://127.0.0.1:8080"));
    dialog.findChild<QLineEdit *>(QStringLiteral("tokenEdit"))->setText(QStringLiteral("tok-123"));
    dialog.findChild<QLineEdit *>(QStringLiteral("tokenFileEdit"))->setText(tokenPath);
    dialog.accept();
    QTRY_COMPARE(dialog.result(), int(QDialog::Accepted));
    QSettings settings;
    const auto profile = ConnectionProfiles::find(settings, QStringLiteral("lab"));
    QVERIFY(profile);
    QCOMPARE(profile->serverUrl, QUrl(QStringLiteral("http://127.0.0.1:8080")));
    QCOMPARE(ConnectionProfiles::lastUsed(settings), QStringLiteral("lab"));
    QString error;
    QCOMPARE(CredentialStore::readTokenFile(tokenPath, &error), QStringLiteral("tok-123"));
}

void tst_ConnectionDialog::dialogRejectsBadUrl()
{
    ConnectionDialog dialog;
    dialog.findChild<QComboBox *>(QStringLiteral("profileCombo"))->setCurrentText(QStringLiteral("x"));
    dialog.findChild<QLineEdit *>(QStringLiteral("serverUrlEdit"))->setText(QStringLiteral("http://"));
    dialog.accept();
    QCOMPARE(dialog.result(), int(QDialog::Rejected));
    auto *error = dialog.findChild<QLabel *>(QStringLiteral("connectionError"));
    QVERIFY(error && !error->isHidden());
    QSettings settings;
    QVERIFY(!ConnectionProfiles::find(settings, QStringLiteral("x")));
}

QTEST_MAIN(tst_ConnectionDialog)
void tst_ConnectionDialog::labelsAndHintsReadWhole()
{
    ConnectionDialog dialog;
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    // Each label's mnemonic reaches its field (a label without a buddy shows its "&").
    int mnemonics = 0;
    for (const QLabel *label : dialog.findChildren<QLabel *>()) {
        if (!label->text().contains(QLatin1Char('&')))
            continue;
        ++mnemonics;
        QVERIFY2(label->buddy(), qPrintable(label->text()));
    }
    QCOMPARE(mnemonics, 4);
    // The hints in the empty fields are read whole at the dialog's own size.
    for (const QLineEdit *edit : dialog.findChildren<QLineEdit *>()) {
        if (edit->placeholderText().isEmpty() || !edit->isVisible())
            continue;
        const int room = edit->width() - 12; // the frame and the text margins
        QVERIFY2(edit->fontMetrics().horizontalAdvance(edit->placeholderText()) <= room,
                 qPrintable(QStringLiteral("%1: %2 px of hint in %3 px").arg(edit->objectName()).arg(
                     edit->fontMetrics().horizontalAdvance(edit->placeholderText())).arg(room)));
    }
}

#include "tst_connectiondialog.moc"
