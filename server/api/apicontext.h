// What every API resource needs: storage, the journal, the feed, the token store and the options.
#pragma once

#include "server/serveroptions.h"

namespace OpsDeck {

class ChangeFeed;
class Database;
class Journal;
class TokenStore;

// Not owned; the ControlPlane keeps them alive as long as its routes.
struct ApiContext
{
    Database &db;
    Journal &journal;
    ChangeFeed &feed;
    TokenStore &tokens;
    const ServerOptions &options;
};

} // namespace OpsDeck
