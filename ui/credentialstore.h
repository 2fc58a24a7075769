// Bearer tokens per profile: in the system keychain when one answers, else in a token file.
#pragma once

#include <QObject>

namespace OpsDeck {

class CredentialStore final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(CredentialStore)

public:
    explicit CredentialStore(QObject *parent = nullptr);

    // Whether this build has keychain support at all.
    static bool keychainCompiledIn();
    // Reads a token file (first line, trimmed); an empty result comes with a human error.
    static QString readTokenFile(const QString &path, QString *error);
    // Writes a token file readable only by its owner.
    static bool writeTokenFile(const QString &path, const QString &token, QString *error);

    // Asynchronous: tokenRead or failed follows, never both; a keychain that does not answer
    // within the timeout counts as unavailable.
    void read(const QString &profile);
    void write(const QString &profile, const QString &token);
    void setTimeout(int milliseconds) { m_timeoutMs = milliseconds; }

signals:
    void tokenRead(const QString &profile, const QString &token);
    void written(const QString &profile);
    // keychainUnavailable: no keychain service answered, so the caller should offer a token file.
    void failed(const QString &profile, const QString &message, bool keychainUnavailable);

private:
    int m_timeoutMs = 4000;
};

} // namespace OpsDeck
