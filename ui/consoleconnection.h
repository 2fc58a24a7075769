// What the console needs to talk to one server: where, as whom, and which cache file is its own.
#pragma once

#include "core/actor.h"

#include <QString>
#include <QUrl>

namespace OpsDeck {

struct ConsoleConnection
{
    QUrl baseUrl;                // http(s)://host:port of the control plane
    QString token;               // bearer token
    QString profile;             // names the cache file and the window title ("embedded", "demo", ...)
    Actor role = Actor::Operator; // what the token may do; drives which actions are enabled
    QString cachePath;           // empty = the models' default under the cache location
    bool embedded = false;       // the server runs inside this process
};

} // namespace OpsDeck
