// The callback delivery state machine of spec §3.
#include "delivery.h"

namespace OpsDeck::Delivery {

const StateMachine &machine()
{
    static const Actors people = Actors(Actor::Operator) | Actor::Provider;
    static const Actors worker = Actor::Controller;
    const QString retry = QStringLiteral("retry");
    const QString supersede = QStringLiteral("supersede");
    static const StateMachine m(
        QStringLiteral("delivery"), {Pending, Delivered, Failed, Superseded, Cancelled},
        {
            {Pending, QStringLiteral("deliver"), Delivered, worker, QStringLiteral("Delivered")},
            // An attempt already in flight when the delivery was cancelled, answered 2xx: the
            // provider has the notification, whatever the cancel meant to spare it.
            {Cancelled, QStringLiteral("deliver"), Delivered, worker, QStringLiteral("Delivered (in flight when cancelled)")},
            {Pending, QStringLiteral("exhaust"), Failed, worker, QStringLiteral("Give up")},
            {Pending, supersede, Superseded, worker, QStringLiteral("Supersede")},
            {Failed, supersede, Superseded, worker, QStringLiteral("Supersede")},
            {Pending, retry, Pending, people, QStringLiteral("Retry now")},
            {Failed, retry, Pending, people, QStringLiteral("Retry")},
            {Cancelled, retry, Pending, people, QStringLiteral("Retry")},
            {Pending, QStringLiteral("cancel"), Cancelled, people, QStringLiteral("Cancel")},
        });
    return m;
}

} // namespace OpsDeck::Delivery
