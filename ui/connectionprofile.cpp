// Named connection profiles kept in QSettings.
#include "connectionprofile.h"

#include <QSettings>

namespace OpsDeck {

namespace {

const QString kGroup = QStringLiteral("profiles");

// Profile names are free text; QSettings keys must not contain '/' or '\\'.
QString keyOf(const QString &name)
{
    return QString::fromLatin1(name.toUtf8().toPercentEncoding());
}

} // namespace

QList<ConnectionProfile> ConnectionProfiles::load(QSettings &settings)
{
    QList<ConnectionProfile> profiles;
    settings.beginGroup(kGroup);
    const QStringList groups = settings.childGroups();
    for (const QString &group : groups) {
        settings.beginGroup(group);
        ConnectionProfile p;
        p.name = settings.value(QStringLiteral("name")).toString();
        p.serverUrl = QUrl(settings.value(QStringLiteral("url")).toString());
        p.tokenFile = settings.value(QStringLiteral("tokenFile")).toString();
        settings.endGroup();
        if (!p.name.isEmpty())
            profiles.append(p);
    }
    settings.endGroup();
    std::sort(profiles.begin(), profiles.end(),
              [](const ConnectionProfile &a, const ConnectionProfile &b) { return a.name < b.name; });
    return profiles;
}

std::optional<ConnectionProfile> ConnectionProfiles::find(QSettings &settings, const QString &name)
{
    for (const ConnectionProfile &p : load(settings)) {
        if (p.name == name)
            return p;
    }
    return std::nullopt;
}

void ConnectionProfiles::save(QSettings &settings, const ConnectionProfile &profile)
{
    settings.beginGroup(kGroup);
    settings.beginGroup(keyOf(profile.name));
    settings.setValue(QStringLiteral("name"), profile.name);
    settings.setValue(QStringLiteral("url"), profile.serverUrl.toString());
    settings.setValue(QStringLiteral("tokenFile"), profile.tokenFile);
    settings.endGroup();
    settings.endGroup();
}

void ConnectionProfiles::remove(QSettings &settings, const QString &name)
{
    settings.remove(kGroup + QLatin1Char('/') + keyOf(name));
}

QString ConnectionProfiles::lastUsed(QSettings &settings)
{
    return settings.value(QStringLiteral("connection/lastProfile")).toString();
}

void ConnectionProfiles::setLastUsed(QSettings &settings, const QString &name)
{
    settings.setValue(QStringLiteral("connection/lastProfile"), name);
}

} // namespace OpsDeck
