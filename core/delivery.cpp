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
            {Pending, QStringLiteral("deliver"), Delivered, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Delivered"))},
            // An attempt already in flight when the delivery was cancelled, answered 2xx: the
            // provider has the notification, whatever the cancel meant to spare it.
            {Cancelled, QStringLiteral("deliver"), Delivered, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Delivered (in flight when cancelled)"))},
            // The same for an attempt in flight when a newer notification superseded it.
            {Superseded, QStringLiteral("deliver"), Delivered, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Delivered (in flight when superseded)"))},
            {Pending, QStringLiteral("exhaust"), Failed, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Give up"))},
            {Pending, supersede, Superseded, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Supersede"))},
            {Failed, supersede, Superseded, worker,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Supersede"))},
            {Pending, retry, Pending, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Retry now"))},
            {Failed, retry, Pending, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Retry"))},
            {Cancelled, retry, Pending, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Retry"))},
            {Pending, QStringLiteral("cancel"), Cancelled, people,
             QStringLiteral(QT_TRANSLATE_NOOP("OpsDeck::StateMachine", "Cancel"))},
        });
    return m;
}

} // namespace OpsDeck::Delivery
