// Named connection profiles (server URL, optional token file) kept in QSettings.
#pragma once

#include <QList>
#include <QString>
#include <QUrl>

#include <optional>

class QSettings;

namespace OpsDeck {

struct ConnectionProfile
{
    QString name;
    QUrl serverUrl;
    QString tokenFile; // used when no keychain answers; empty = token in the keychain

    bool isValid() const { return !name.isEmpty() && serverUrl.isValid() && !serverUrl.host().isEmpty(); }
};

class ConnectionProfiles final
{
public:
    static QList<ConnectionProfile> load(QSettings &settings);
    static std::optional<ConnectionProfile> find(QSettings &settings, const QString &name);
    static void save(QSettings &settings, const ConnectionProfile &profile);
    static void remove(QSettings &settings, const QString &name);
    static QString lastUsed(QSettings &settings);
    static void setLastUsed(QSettings &settings, const QString &name);
};

} // namespace OpsDeck
