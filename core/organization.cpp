// The organization state machine of spec §2.
#include "organization.h"

namespace OpsDeck::Organization {

const StateMachine &machine()
{
    static const StateMachine m(
        QStringLiteral("organization"), {Available, Deleted},
        {
            {Available, QStringLiteral("delete"), Deleted, Actor::Operator,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Delete"))},
            {Deleted, QStringLiteral("restore"), Available, Actor::Operator,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Restore"))},
        });
    return m;
}

} // namespace OpsDeck::Organization
