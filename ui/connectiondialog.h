// Chooses or edits a connection profile (name, server URL) and its token (keychain or file).
#pragma once

#include "connectionprofile.h"

#include <QDialog>

class QComboBox;
class QLabel;
class QLineEdit;
class QDialogButtonBox;

namespace OpsDeck {

class CredentialStore;

class ConnectionDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConnectionDialog)

public:
    explicit ConnectionDialog(QWidget *parent = nullptr);

    ConnectionProfile profile() const;
    QString token() const;
    bool keychainAvailable() const { return m_keychainAvailable; }

    void accept() override;

private:
    void loadProfile(const QString &name);
    void onTokenRead(const QString &profile, const QString &token);
    void onTokenFailed(const QString &profile, const QString &message, bool keychainUnavailable);
    void browseTokenFile();
    void validate();

    QComboBox *m_profile = nullptr;
    QLineEdit *m_url = nullptr;
    QLineEdit *m_token = nullptr;
    QLineEdit *m_tokenFile = nullptr;
    QLabel *m_keychainStatus = nullptr;
    QLabel *m_error = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    CredentialStore *m_store = nullptr;
    bool m_keychainAvailable = false;
    bool m_saving = false;
};

} // namespace OpsDeck
