// The organization state machine of spec §2.
#include "organization.h"

namespace OpsDeck::Organization {

const StateMachine &machine()
{
    static const StateMachine m(
        QStringLiteral("organization"), {Available, Deleted},
        {
            {Available, QStringLiteral("delete"), Deleted, Actor::Operator, QStringLiteral("Delete")},
            {Deleted, QStringLiteral("restore"), Available, Actor::Operator, QStringLiteral("Restore")},
        });
    return m;
}

} // namespace OpsDeck::Organization
