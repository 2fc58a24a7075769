// Chooses or edits a connection profile and its token.
#include "connectiondialog.h"

#include "credentialstore.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QStandardPaths>
#include <QToolButton>
#include <QVBoxLayout>

namespace OpsDeck {

ConnectionDialog::ConnectionDialog(QWidget *parent)
    : QDialog(parent)
    , m_store(new CredentialStore(this))
{
    setObjectName(QStringLiteral("connectionDialog"));
    setWindowTitle(tr("Connect to a server"));

    m_profile = new QComboBox(this);
    m_profile->setObjectName(QStringLiteral("profileCombo"));
    m_profile->setEditable(true);
    m_profile->setAccessibleName(tr("Profile"));
    m_url = new QLineEdit(this);
    m_url->setObjectName(QStringLiteral("serverUrlEdit"));
    m_url->setPlaceholderText(QStringLiteral("https://opsdeck.example.org"));
    m_url->setAccessibleName(tr("Server URL"));
    m_token = new QLineEdit(this);
    m_token->setObjectName(QStringLiteral("tokenEdit"));
    m_token->setEchoMode(QLineEdit::Password);
    m_token->setAccessibleName(tr("Token"));
    m_token->setPlaceholderText(tr("Bearer token (made with: opsdeck-server token create)"));
    m_tokenFile = new QLineEdit(this);
    m_tokenFile->setObjectName(QStringLiteral("tokenFileEdit"));
    m_tokenFile->setAccessibleName(tr("Token file"));
    m_tokenFile->setPlaceholderText(tr("Only needed when no system keychain is available"));
    auto *browse = new QToolButton(this);
    browse->setText(tr("Browse…"));
    auto *fileRow = new QHBoxLayout;
    fileRow->addWidget(m_tokenFile, 1);
    fileRow->addWidget(browse);

    m_keychainStatus = new QLabel(this);
    m_keychainStatus->setObjectName(QStringLiteral("keychainStatus"));
    m_keychainStatus->setWordWrap(true);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("connectionError"));
    m_error->setWordWrap(true);
    m_error->setForegroundRole(QPalette::BrightText);
    m_error->hide();

    auto *form = new QFormLayout;
    form->addRow(tr("&Profile:"), m_profile);
    form->addRow(tr("Server &URL:"), m_url);
    form->addRow(tr("&Token:"), m_token);
    // A row of a layout gets no buddy from addRow(): without one its mnemonic would show as "&".
    auto *fileLabel = new QLabel(tr("Token &file:"), this);
    fileLabel->setBuddy(m_tokenFile);
    form->addRow(fileLabel, fileRow);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_keychainStatus);
    layout->addWidget(m_error);
    layout->addWidget(m_buttons);
    // The hints in the empty fields are read whole, in either language.
    for (QLineEdit *edit : {m_url, m_token, m_tokenFile})
        edit->setMinimumWidth(edit->fontMetrics().horizontalAdvance(edit->placeholderText()) + 16);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &ConnectionDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &ConnectionDialog::reject);
    connect(browse, &QToolButton::clicked, this, &ConnectionDialog::browseTokenFile);
    connect(m_profile, &QComboBox::currentTextChanged, this, &ConnectionDialog::loadProfile);
    connect(m_url, &QLineEdit::textChanged, this, &ConnectionDialog::validate);
    connect(m_store, &CredentialStore::tokenRead, this, &ConnectionDialog::onTokenRead);
    connect(m_store, &CredentialStore::failed, this, &ConnectionDialog::onTokenFailed);
    connect(m_store, &CredentialStore::written, this, [this](const QString &) {
        m_saving = false;
        QDialog::accept();
    });

    QSettings settings;
    for (const ConnectionProfile &p : ConnectionProfiles::load(settings))
        m_profile->addItem(p.name);
    const QString last = ConnectionProfiles::lastUsed(settings);
    if (!last.isEmpty())
        m_profile->setCurrentText(last);
    loadProfile(m_profile->currentText());
    validate();
}

ConnectionProfile ConnectionDialog::profile() const
{
    ConnectionProfile p;
    p.name = m_profile->currentText().trimmed();
    p.serverUrl = QUrl::fromUserInput(m_url->text().trimmed());
    p.tokenFile = m_tokenFile->text().trimmed();
    return p;
}

QString ConnectionDialog::token() const
{
    return m_token->text().trimmed();
}

void ConnectionDialog::loadProfile(const QString &name)
{
    QSettings settings;
    const auto p = ConnectionProfiles::find(settings, name);
    if (!p)
        return;
    m_url->setText(p->serverUrl.toString());
    m_tokenFile->setText(p->tokenFile);
    m_token->clear();
    m_keychainStatus->setText(tr("Looking for the token in the system keychain…"));
    m_store->read(name);
}

void ConnectionDialog::onTokenRead(const QString &profile, const QString &token)
{
    m_keychainAvailable = true;
    if (profile == m_profile->currentText() && m_token->text().isEmpty())
        m_token->setText(token);
    m_keychainStatus->setText(tr("The token is kept in the system keychain."));
}

void ConnectionDialog::onTokenFailed(const QString &profile, const QString &message, bool keychainUnavailable)
{
    Q_UNUSED(profile)
    m_keychainAvailable = !keychainUnavailable;
    if (keychainUnavailable) {
        m_keychainStatus->setText(
            tr("%1. The token cannot be kept in a keychain on this system: give a token file instead "
               "(it is created readable by you only).")
                .arg(message));
        if (m_tokenFile->text().isEmpty())
            m_tokenFile->setText(QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation)
                                 + QStringLiteral("/%1.token").arg(m_profile->currentText().trimmed()));
    } else {
        m_keychainStatus->setText(message);
    }
    if (m_saving) {
        m_saving = false;
        if (keychainUnavailable) {
            // Fall back to the file now rather than losing the token the user typed.
            accept();
        } else {
            m_error->setText(message);
            m_error->show();
        }
    }
}

void ConnectionDialog::browseTokenFile()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Token file"), m_tokenFile->text());
    if (!path.isEmpty())
        m_tokenFile->setText(path);
}

void ConnectionDialog::validate()
{
    const ConnectionProfile p = profile();
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(!m_url->text().trimmed().isEmpty());
    Q_UNUSED(p)
}

void ConnectionDialog::accept()
{
    const ConnectionProfile p = profile();
    if (!p.isValid()) {
        m_error->setText(tr("Give the profile a name and a server URL such as https://opsdeck.example.org."));
        m_error->show();
        return;
    }
    QSettings settings;
    ConnectionProfiles::save(settings, p);
    ConnectionProfiles::setLastUsed(settings, p.name);
    const QString t = token();
    if (t.isEmpty()) {
        // Nothing new to store: the token comes from the keychain or the file at connect time.
        QDialog::accept();
        return;
    }
    if (m_keychainAvailable && !m_saving && p.tokenFile.isEmpty()) {
        m_saving = true;
        m_store->write(p.name, t);
        return;
    }
    if (p.tokenFile.isEmpty()) {
        m_error->setText(tr("No keychain is available: give a token file to keep the token in."));
        m_error->show();
        return;
    }
    QString error;
    if (!CredentialStore::writeTokenFile(p.tokenFile, t, &error)) {
        m_error->setText(error);
        m_error->show();
        return;
    }
    QDialog::accept();
}

} // namespace OpsDeck
