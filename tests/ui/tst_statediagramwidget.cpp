// The state diagram highlights exactly what the core/ table allows for the role in the current state.
#include "ui/statediagramwidget.h"
#include "ui/tonepalette.h"

#include "core/delivery.h"
#include "core/endpoint.h"
#include "core/instance.h"
#include "core/organization.h"
#include "core/sandbox.h"

#include "contrast.h"

#include <QSet>
#include <QTest>

using namespace OpsDeck;

namespace {

const StateMachine *machineNamed(const QString &name)
{
    return name == QLatin1String("instance")       ? &Instance::machine()
           : name == QLatin1String("organization") ? &Organization::machine()
           : name == QLatin1String("sandbox")      ? &Sandbox::machine()
           : name == QLatin1String("delivery")     ? &Delivery::machine()
                                                   : &Endpoint::machine();
}

} // namespace

class tst_StateDiagramWidget : public QObject
{
    Q_OBJECT

private slots:
    void highlighted_data();
    void highlighted();
    void everyStateHasABox_data();
    void everyStateHasABox();
    void paintsWithoutMachine();
    void heldActionsAreNotHighlighted();
    void noArrowRunsThroughABox_data();
    void noArrowRunsThroughABox();
    void oppositeArrowsKeepTheirLabelsApart();
    void noArrowStrikesALabelThrough_data();
    void noArrowStrikesALabelThrough();
    void dimmedTextIsReadable_data();
    void dimmedTextIsReadable();
};

void tst_StateDiagramWidget::highlighted_data()
{
    QTest::addColumn<QString>("machine");
    QTest::addColumn<QString>("state");
    QTest::addColumn<int>("role");
    QTest::addColumn<QStringList>("actions");

    const int op = int(Actor::Operator);
    const int owner = int(Actor::Owner);
    const int provider = int(Actor::Provider);
    QTest::newRow("instance RUNNING, operator") << "instance" << Instance::Running << op << QStringList{"stop"};
    QTest::newRow("instance RUNNING, owner") << "instance" << Instance::Running << owner << QStringList{"stop"};
    QTest::newRow("instance RUNNING, provider") << "instance" << Instance::Running << provider << QStringList{};
    QTest::newRow("instance STOPPED, operator") << "instance" << Instance::Stopped << op << QStringList{"start"};
    QTest::newRow("instance PENDING, provider")
        << "instance" << Instance::Pending << provider << QStringList{"register", "register"};
    QTest::newRow("instance DESTROYED, operator") << "instance" << Instance::Destroyed << op << QStringList{};
    QTest::newRow("organization AVAILABLE, operator")
        << "organization" << Organization::Available << op << QStringList{"delete"};
    QTest::newRow("organization DELETED, operator")
        << "organization" << Organization::Deleted << op << QStringList{"restore"};
    QTest::newRow("organization DELETED, owner") << "organization" << Organization::Deleted << owner << QStringList{};
    QTest::newRow("no current state") << "instance" << QString() << op << QStringList{};
}

void tst_StateDiagramWidget::highlighted()
{
    QFETCH(QString, machine);
    QFETCH(QString, state);
    QFETCH(int, role);
    QFETCH(QStringList, actions);

    StateDiagramWidget w;
    w.setMachine(machine == QLatin1String("instance") ? &Instance::machine() : &Organization::machine());
    w.setRole(Actor(role));
    w.setCurrentState(state);
    QStringList got;
    for (const Transition &t : w.highlightedTransitions()) {
        QCOMPARE(t.from, state);
        got.append(t.action);
    }
    QCOMPARE(got, actions);
    // The accessible description names the state and, when any, the allowed transitions.
    if (!state.isEmpty())
        QVERIFY2(w.accessibleDescription().contains(state), qPrintable(w.accessibleDescription()));
    w.resize(w.sizeHint());
    QVERIFY(!w.grab().isNull());
}

void tst_StateDiagramWidget::heldActionsAreNotHighlighted()
{
    // A PENDING delivery whose endpoint is paused: retry is held, cancel is not.
    StateDiagramWidget w;
    w.setMachine(&Delivery::machine());
    w.setRole(Actor::Operator);
    w.setCurrentState(Delivery::Pending);
    auto actions = [&w] {
        QStringList got;
        for (const Transition &t : w.highlightedTransitions())
            got.append(t.action);
        return got;
    };
    QVERIFY2(actions().contains(QStringLiteral("retry")), qPrintable(actions().join(u',')));
    w.setHeldActions({QStringLiteral("retry")});
    QVERIFY2(!actions().contains(QStringLiteral("retry")), qPrintable(actions().join(u',')));
    QVERIFY2(actions().contains(QStringLiteral("cancel")), qPrintable(actions().join(u',')));
    QVERIFY2(!w.accessibleDescription().contains(QStringLiteral("retry"), Qt::CaseInsensitive), qPrintable(w.accessibleDescription()));
    w.setHeldActions({});
    QVERIFY(actions().contains(QStringLiteral("retry")));
}

void tst_StateDiagramWidget::everyStateHasABox_data()
{
    QTest::addColumn<QString>("machine");
    QTest::newRow("instance") << "instance";
    QTest::newRow("organization") << "organization";
    QTest::newRow("sandbox") << "sandbox";
}

void tst_StateDiagramWidget::everyStateHasABox()
{
    QFETCH(QString, machine);
    const StateMachine *m = machineNamed(machine);
    StateDiagramWidget w;
    w.setMachine(m);
    QList<QRectF> boxes;
    for (const QString &state : m->states()) {
        const QRectF box = w.stateRect(state);
        QVERIFY2(!box.isEmpty(), qPrintable(state));
        // Boxes never overlap, so every state stays readable.
        for (const QRectF &other : std::as_const(boxes))
            QVERIFY2(!box.intersects(other), qPrintable(state));
        boxes.append(box);
    }
    // The widget asks for enough room to draw every box unscaled.
    for (const QRectF &box : std::as_const(boxes))
        QVERIFY(QRectF(QPointF(0, 0), QSizeF(w.sizeHint())).contains(box));
}

void tst_StateDiagramWidget::paintsWithoutMachine()
{
    StateDiagramWidget w;
    w.resize(300, 100);
    QVERIFY(w.highlightedTransitions().isEmpty());
    QVERIFY(w.stateRect(QStringLiteral("RUNNING")).isEmpty());
    QVERIFY(!w.grab().isNull());
}

void tst_StateDiagramWidget::noArrowRunsThroughABox_data()
{
    QTest::addColumn<QString>("machine");
    for (const char *name : {"instance", "organization", "sandbox", "delivery", "endpoint"})
        QTest::newRow(name) << QString::fromLatin1(name);
}

void tst_StateDiagramWidget::noArrowRunsThroughABox()
{
    // A vertical arrow between two boxes of a column passed through the boxes between them
    // (CANCELLED → DELIVERED through FAILED and SUPERSEDED), hiding both.
    QFETCH(QString, machine);
    const StateMachine *m = machineNamed(machine);
    StateDiagramWidget w;
    w.setMachine(m);
    for (const Transition &t : m->transitions()) {
        const QRectF a = w.stateRect(t.from);
        const QRectF b = w.stateRect(t.to);
        if (t.from == t.to || !qFuzzyCompare(a.center().x(), b.center().x()))
            continue;
        const QRectF between(QPointF(a.left(), qMin(a.bottom(), b.bottom())), QPointF(a.right(), qMax(a.top(), b.top())));
        for (const QString &other : m->states()) {
            if (other != t.from && other != t.to)
                QVERIFY2(!w.stateRect(other).intersects(between),
                         qPrintable(QStringLiteral("%1 → %2 runs through %3").arg(t.from, t.to, other)));
        }
    }
}

void tst_StateDiagramWidget::oppositeArrowsKeepTheirLabelsApart()
{
    // PENDING ⇄ FAILED and PENDING ⇄ CANCELLED: two pairs of opposite arrows side by side. Each
    // label sits on its own arrow's side of the pair (the side the arrow is moved to), so "Retry"
    // and "Give up" are not read as each other's, and no two labels overlap.
    StateDiagramWidget w;
    w.setMachine(&Delivery::machine());
    w.setCurrentState(Delivery::Failed);
    w.resize(w.sizeHint());
    QVERIFY(!w.grab().isNull());
    const QList<QPair<QString, QString>> pairs = {{Delivery::Pending, Delivery::Failed},
                                                  {Delivery::Pending, Delivery::Cancelled}};
    QList<QRectF> labels;
    for (const auto &[a, b] : pairs) {
        for (const auto &[from, to] : {std::pair(a, b), std::pair(b, a)}) {
            const QRectF label = w.labelRect(from, to);
            QVERIFY2(!label.isEmpty(), qPrintable(from + QStringLiteral(" → ") + to));
            const QPointF s = w.stateRect(from).center();
            const QPointF t = w.stateRect(to).center();
            // The side an arrow of a pair is moved to: the line's normal (dy, -dx).
            const QPointF side(t.y() - s.y(), s.x() - t.x());
            const QPointF away = label.center() - (s + t) / 2;
            QVERIFY2(away.x() * side.x() + away.y() * side.y() > 0,
                     qPrintable(QStringLiteral("the label of %1 → %2 is on the other arrow's side").arg(from, to)));
            labels.append(label);
        }
    }
    for (qsizetype i = 0; i < labels.size(); ++i)
        for (qsizetype j = i + 1; j < labels.size(); ++j)
            QVERIFY2(!labels.at(i).intersects(labels.at(j)), qPrintable(QStringLiteral("labels %1 and %2 overlap").arg(i).arg(j)));
}

void tst_StateDiagramWidget::noArrowStrikesALabelThrough_data()
{
    QTest::addColumn<QString>("machine");
    QTest::addColumn<QString>("state");
    for (const char *name : {"instance", "organization", "sandbox", "delivery", "endpoint"}) {
        for (const QString &state : machineNamed(QLatin1String(name))->states())
            QTest::addRow("%s %s", name, qPrintable(state)) << QString::fromLatin1(name) << state;
    }
}

void tst_StateDiagramWidget::noArrowStrikesALabelThrough()
{
    // The highlighted arrow (PENDING → CANCELLED, Cancel) was drawn across the label of CANCELLED
    // → DELIVERED. Labels are drawn over the arrows: no highlighted ink inside a dimmed label.
    QFETCH(QString, machine);
    QFETCH(QString, state);
    const StateMachine *m = machineNamed(machine);
    StateDiagramWidget w;
    w.setMachine(m);
    w.setRole(Actor::Operator);
    w.setCurrentState(state);
    w.resize(w.sizeHint());
    const QImage image = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    const QColor accent = w.palette().color(QPalette::Highlight);
    QSet<QPair<QString, QString>> hot;
    for (const Transition &t : w.highlightedTransitions())
        hot.insert({t.from, t.to});
    for (const Transition &t : m->transitions()) {
        const QRectF drawn = w.diagramToWidget().mapRect(w.labelRect(t.from, t.to));
        // Within the diagram's size: a label beside the last column's arrows reached past it,
        // and a pane as narrow as the diagram cut it off.
        QVERIFY2(QRectF(w.rect()).contains(drawn), qPrintable(t.from + QStringLiteral(" → ") + t.to));
        if (hot.contains({t.from, t.to}))
            continue;
        const QRect label = drawn.toAlignedRect().adjusted(2, 2, -2, -2);
        QVERIFY2(!label.isEmpty(), qPrintable(t.from + QStringLiteral(" → ") + t.to));
        int struck = 0;
        for (int y = label.top(); y <= label.bottom(); ++y) {
            for (int x = label.left(); x <= label.right(); ++x) {
                const QColor c = image.pixelColor(x, y);
                // Near the accent's hue and well saturated: the highlighted arrow's ink, not the
                // label's grey text on its light ground.
                if (c.hsvSaturation() > 90 && qAbs(c.hsvHue() - accent.hsvHue()) < 25)
                    ++struck;
            }
        }
        QVERIFY2(struck == 0, qPrintable(QStringLiteral("%1 → %2: %3 pixels of the highlighted arrow in its label")
                                             .arg(t.from, t.to)
                                             .arg(struck)));
    }
}

void tst_StateDiagramWidget::dimmedTextIsReadable_data()
{
    QTest::addColumn<bool>("dark");
    QTest::newRow("light") << false;
    QTest::newRow("dark") << true;
}

void tst_StateDiagramWidget::dimmedTextIsReadable()
{
    // What the role may not do now is dimmed, not faint: its labels and state names keep 4.5:1
    // (WCAG, text) against their ground. Half the text's ink gave 3.9:1.
    QFETCH(bool, dark);
    StateDiagramWidget w;
    if (dark)
        w.setPalette(darkPalette());
    w.setMachine(&Delivery::machine());
    w.setRole(Actor::Operator);
    w.setCurrentState(Delivery::Delivered); // nothing the operator may do: every label dimmed
    QVERIFY(w.highlightedTransitions().isEmpty());
    w.resize(w.sizeHint());
    const QImage image = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
    const auto inkAgainstGround = [&image](const QRect &r) {
        // The ground at the left padding; the ink is the pixel farthest from it.
        const QColor ground = image.pixelColor(r.left() + 1, r.center().y());
        double best = 1;
        for (int y = r.top(); y <= r.bottom(); ++y)
            for (int x = r.left(); x <= r.right(); ++x)
                best = qMax(best, Test::contrast(image.pixelColor(x, y), ground));
        return best;
    };
    for (const Transition &t : Delivery::machine().transitions()) {
        const QRect label = w.diagramToWidget().mapRect(w.labelRect(t.from, t.to)).toAlignedRect().adjusted(1, 1, -1, -1);
        const double ratio = inkAgainstGround(label);
        QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("the label of %1 → %2: %3:1").arg(t.from, t.to).arg(ratio, 0, 'f', 2)));
    }
    for (const QString &state : Delivery::machine().states()) {
        if (state == Delivery::Delivered)
            continue;
        const QRect box = w.diagramToWidget().mapRect(w.stateRect(state)).toAlignedRect().adjusted(3, 3, -3, -3);
        const double ratio = inkAgainstGround(box);
        QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1: %2:1").arg(state).arg(ratio, 0, 'f', 2)));
    }
}

QTEST_MAIN(tst_StateDiagramWidget)
#include "tst_statediagramwidget.moc"
