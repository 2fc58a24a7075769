// Bearer tokens per profile in the system keychain or a token file.
#include "credentialstore.h"

#include <QFile>
#include <QPointer>
#include <QSaveFile>
#include <QTimer>

#ifdef OPSDECK_HAVE_KEYCHAIN
#include <qt6keychain/keychain.h>
#endif

#include <memory>

namespace OpsDeck {

namespace {

const QString kService = QStringLiteral("OpsDeck");

} // namespace

CredentialStore::CredentialStore(QObject *parent)
    : QObject(parent)
{
}

bool CredentialStore::keychainCompiledIn()
{
#ifdef OPSDECK_HAVE_KEYCHAIN
    return true;
#else
    return false;
#endif
}

QString CredentialStore::readTokenFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        if (error)
            *error = tr("Cannot read the token file %1: %2").arg(path, file.errorString());
        return {};
    }
    const QString token = QString::fromUtf8(file.readLine(8192)).trimmed();
    if (token.isEmpty() && error)
        *error = tr("The token file %1 is empty").arg(path);
    return token;
}

bool CredentialStore::writeTokenFile(const QString &path, const QString &token, QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        if (error)
            *error = tr("Cannot write the token file %1: %2").arg(path, file.errorString());
        return false;
    }
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    file.write(token.toUtf8() + '\n');
    if (!file.commit()) {
        if (error)
            *error = tr("Cannot write the token file %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

#ifdef OPSDECK_HAVE_KEYCHAIN

namespace {

bool isUnavailable(QKeychain::Error error)
{
    return error == QKeychain::NoBackendAvailable || error == QKeychain::NotImplemented
           || error == QKeychain::OtherError;
}

} // namespace

void CredentialStore::read(const QString &profile)
{
    auto *job = new QKeychain::ReadPasswordJob(kService, this);
    job->setAutoDelete(true);
    job->setKey(profile);
    // Whichever comes first, the job's answer or the timeout, decides; the other is ignored.
    auto done = std::make_shared<bool>(false);
    connect(job, &QKeychain::Job::finished, this, [this, profile, done](QKeychain::Job *j) {
        if (std::exchange(*done, true))
            return;
        auto *readJob = static_cast<QKeychain::ReadPasswordJob *>(j);
        if (readJob->error() == QKeychain::NoError)
            emit tokenRead(profile, readJob->textData());
        else if (readJob->error() == QKeychain::EntryNotFound)
            emit failed(profile, tr("No token is stored for the profile %1").arg(profile), false);
        else
            emit failed(profile, tr("The system keychain is not available (%1)").arg(readJob->errorString()),
                        isUnavailable(readJob->error()));
    });
    QTimer::singleShot(m_timeoutMs, this, [this, profile, done] {
        if (std::exchange(*done, true))
            return;
        emit failed(profile, tr("No system keychain service answered"), true);
    });
    job->start();
}

void CredentialStore::write(const QString &profile, const QString &token)
{
    auto *job = new QKeychain::WritePasswordJob(kService, this);
    job->setAutoDelete(true);
    job->setKey(profile);
    job->setTextData(token);
    auto done = std::make_shared<bool>(false);
    connect(job, &QKeychain::Job::finished, this, [this, profile, done](QKeychain::Job *j) {
        if (std::exchange(*done, true))
            return;
        if (j->error() == QKeychain::NoError)
            emit written(profile);
        else
            emit failed(profile, tr("The system keychain is not available (%1)").arg(j->errorString()),
                        isUnavailable(j->error()));
    });
    QTimer::singleShot(m_timeoutMs, this, [this, profile, done] {
        if (std::exchange(*done, true))
            return;
        emit failed(profile, tr("No system keychain service answered"), true);
    });
    job->start();
}

#else

void CredentialStore::read(const QString &profile)
{
    QTimer::singleShot(0, this, [this, profile] {
        emit failed(profile, tr("This build has no system keychain support"), true);
    });
}

void CredentialStore::write(const QString &profile, const QString &)
{
    QTimer::singleShot(0, this, [this, profile] {
        emit failed(profile, tr("This build has no system keychain support"), true);
    });
}

#endif

} // namespace OpsDeck
