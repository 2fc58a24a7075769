// The selected object: fields, diagram, actions and history.
#include "detailpane.h"

#include "attemptlogview.h"
#include "statebadgelabel.h"
#include "statediagramwidget.h"
#include "valueformat.h"

#include "core/endpoint.h"
#include "core/instance.h"
#include "core/statemachine.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QResizeEvent>
#include <QScopeGuard>
#include <QScrollArea>
#include <QSet>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace OpsDeck {

namespace {

// A field's value, wrapped. Its height at its width is also its minimum: the form (in a scroll
// area) then gives a long value all of its lines however its layout passes ran, where a word-
// wrapped QLabel's height for width alone left some values clipped to one line and a half.
class WrappedValue final : public QLabel
{
public:
    using QLabel::QLabel;

    QSize minimumSizeHint() const override
    {
        QSize size = QLabel::minimumSizeHint();
        if (width() > 0)
            size.setHeight(qMax(size.height(), heightForWidth(width())));
        return size;
    }

protected:
    void resizeEvent(QResizeEvent *event) override
    {
        QLabel::resizeEvent(event);
        if (event->size().width() != event->oldSize().width())
            updateGeometry();
    }
};

// Actions a person can take: transitions only the controller or the system takes are not buttons.
bool isUserAction(const Transition &t)
{
    return bool(t.actors & kUserRoles);
}

QString offlineReason()
{
    return DetailPane::tr("Offline: the console is read-only until the server answers again.");
}

QString rowObjectName(const QString &key)
{
    return QStringLiteral("field_") + QString(key).replace(QLatin1Char('.'), QLatin1Char('_'));
}

} // namespace

DetailPane::DetailPane(QWidget *parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("detailPane"));
    setAccessibleName(tr("Details of the selected object"));

    m_stack = new QStackedWidget(this);
    m_empty = new QLabel(tr("Select a row to see its details, state diagram and history."), m_stack);
    m_empty->setObjectName(QStringLiteral("detailEmpty"));
    m_empty->setAlignment(Qt::AlignCenter);
    m_empty->setWordWrap(true);
    m_empty->setForegroundRole(QPalette::PlaceholderText);
    m_stack->addWidget(m_empty);

    auto *page = new QWidget(m_stack);
    // Wrapped, and never wider than the pane's share: a name without a break ("instance.
    // status_changed") is cut at the pane's edge instead of widening the window past the screen.
    m_title = new WrappedValue(page);
    m_title->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_title->setMinimumWidth(80);
    m_title->setObjectName(QStringLiteral("detailTitle"));
    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.3);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setWordWrap(true);
    m_subtitle = new QLabel(page);
    m_subtitle->setObjectName(QStringLiteral("detailSubtitle"));
    m_subtitle->setForegroundRole(QPalette::PlaceholderText);
    m_badge = new StateBadgeLabel(page);
    m_badge->setObjectName(QStringLiteral("detailBadge"));

    // Why the object waits on something else (its endpoint paused, say): above the actions.
    m_holdNote = new QLabel(page);
    m_holdNote->setObjectName(QStringLiteral("detailHold"));
    m_holdNote->setWordWrap(true);
    m_holdNote->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_holdNote->setFrameShape(QFrame::StyledPanel);
    m_holdNote->setMargin(6);
    m_holdNote->hide();

    m_actions = new QToolBar(page);
    m_actions->setObjectName(QStringLiteral("detailActions"));
    m_actions->setAccessibleName(tr("Actions"));
    m_actions->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_actions->setIconSize(QSize(16, 16));

    auto *header = new QHBoxLayout;
    auto *titles = new QVBoxLayout;
    titles->addWidget(m_title);
    titles->addWidget(m_subtitle);
    header->addLayout(titles, 1);
    header->addWidget(m_badge, 0, Qt::AlignTop);

    m_tabs = new QTabWidget(page);
    m_tabs->setObjectName(QStringLiteral("detailTabs"));
    m_tabs->setAccessibleName(tr("Views of the selected object"));
    m_tabs->setDocumentMode(true);

    // Overview: the fields.
    auto *scroll = new QScrollArea(m_tabs);
    scroll->setObjectName(QStringLiteral("detailOverview"));
    scroll->setAccessibleName(tr("Fields"));
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *overview = new QWidget(scroll);
    m_formHost = new QWidget(overview);
    m_form = new QFormLayout(m_formHost);
    m_form->setContentsMargins(0, 0, 0, 0);
    m_form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // In a narrow pane a row whose label and value do not both fit puts the value under its
    // label, instead of the form growing wider than the pane and clipping its values.
    m_form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    auto *overviewLayout = new QVBoxLayout(overview);
    overviewLayout->addWidget(m_formHost);
    overviewLayout->addStretch(1);
    scroll->setWidget(overview);
    m_tabs->addTab(scroll, tr("Overview"));

    // Lifecycle: the state diagram, on a tab of its own. Below a delivery's fields it ran off a
    // laptop's screen, and shrunk to the room left its labels could not be read.
    m_lifecyclePage = new QWidget(m_tabs);
    m_lifecyclePage->setObjectName(QStringLiteral("detailLifecycle"));
    m_diagramTitle = new QLabel(m_lifecyclePage);
    m_diagramTitle->setObjectName(QStringLiteral("diagramTitle"));
    QFont sectionFont = m_diagramTitle->font();
    sectionFont.setBold(true);
    m_diagramTitle->setFont(sectionFont);
    // Wrapped: in a longer language it would otherwise widen the pane past its share.
    m_diagramTitle->setWordWrap(true);
    m_diagram = new StateDiagramWidget(m_lifecyclePage);
    m_diagram->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    auto *lifecycleLayout = new QVBoxLayout(m_lifecyclePage);
    lifecycleLayout->setContentsMargins(0, 8, 0, 0);
    lifecycleLayout->addWidget(m_diagramTitle);
    lifecycleLayout->addWidget(m_diagram, 1);

    // Attempts: a delivery's requests and what its endpoint answered.
    m_attempts = new AttemptLogView(m_tabs);
    m_tabs->addTab(m_attempts, tr("Attempts"));

    // History: the audit entries of this object.
    auto *historyPage = new QWidget(m_tabs);
    historyPage->setObjectName(QStringLiteral("detailHistory"));
    m_historyPage = historyPage;
    m_history = new QTreeWidget(historyPage);
    m_history->setObjectName(QStringLiteral("historyList"));
    m_history->setAccessibleName(tr("History"));
    // A timeline, newest first: each entry two lines (when and what; who and why).
    m_history->setRootIsDecorated(false);
    m_history->setUniformRowHeights(false);
    m_history->setHeaderHidden(true);
    m_history->setColumnCount(1);
    m_history->setWordWrap(true);
    m_history->setAlternatingRowColors(true);
    m_history->setTextElideMode(Qt::ElideNone);
    m_historyStatus = new QLabel(historyPage);
    m_historyStatus->setObjectName(QStringLiteral("historyStatus"));
    m_historyStatus->setWordWrap(true);
    auto *historyLayout = new QVBoxLayout(historyPage);
    historyLayout->setContentsMargins(0, 4, 0, 0);
    historyLayout->addWidget(m_historyStatus);
    historyLayout->addWidget(m_history, 1);
    m_tabs->addTab(m_lifecyclePage, tr("Lifecycle"));
    m_tabs->addTab(historyPage, tr("History"));

    m_json = new QPlainTextEdit(m_tabs);
    m_json->setObjectName(QStringLiteral("detailJson"));
    m_json->setAccessibleName(tr("Object as JSON"));
    m_json->setReadOnly(true);
    m_json->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_tabs->addTab(m_json, tr("JSON"));

    auto *pageLayout = new QVBoxLayout(page);
    pageLayout->setContentsMargins(8, 8, 8, 8);
    pageLayout->addLayout(header);
    pageLayout->addWidget(m_holdNote);
    pageLayout->addWidget(m_actions);
    pageLayout->addWidget(m_tabs, 1);
    m_stack->addWidget(page);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_stack);

    m_clock = new QTimer(this);
    m_clock->setInterval(1000);
    connect(m_clock, &QTimer::timeout, this, &DetailPane::updateCountdowns);
}

void DetailPane::setRole(Actor role)
{
    m_role = role;
    m_diagram->setRole(role);
    updateDiagramGate();
    rebuildActions();
}

void DetailPane::setReadOnly(bool readOnly)
{
    if (m_readOnly == readOnly)
        return;
    m_readOnly = readOnly;
    updateDiagramGate();
    rebuildActions();
}

void DetailPane::updateDiagramGate()
{
    // Offline every action is disabled: the diagram highlights none either, and says why.
    QStringList held = m_hold.actions;
    if (m_readOnly && m_kind && m_kind->machine) {
        for (const Transition &t : m_kind->machine->transitions())
            held.append(t.action);
        held.removeDuplicates();
    }
    m_diagram->setHeldActions(held);
    m_diagramTitle->setText(m_readOnly ? tr("Offline: no action until the server answers again")
                                       : tr("Highlighted: what the %1 role may do now").arg(roleText(m_role)));
}

qint64 DetailPane::objectId() const
{
    return m_object.value(QStringLiteral("id")).toInteger(-1);
}

bool DetailPane::updateHold()
{
    const Hold hold = m_kind && m_holdLookup ? m_holdLookup(*m_kind, m_object) : Hold();
    if (hold.reason == m_hold.reason && hold.actions == m_hold.actions)
        return false;
    m_hold = hold;
    m_holdNote->setText(m_hold.reason);
    m_holdNote->setVisible(!m_hold.reason.isEmpty());
    updateDiagramGate();
    return true;
}

void DetailPane::refreshHold()
{
    // Asked on every change of the endpoints (a busy one's health, each second): the toolbar
    // is made anew only when the hold changed.
    if (updateHold())
        rebuildActions();
}

QString DetailPane::holdText() const
{
    return m_holdNote->isHidden() ? QString() : m_holdNote->text();
}

QString DetailPane::currentState() const
{
    if (!m_kind || m_kind->stateField.isEmpty())
        return {};
    return m_object.value(m_kind->stateField).toString();
}

void DetailPane::clear()
{
    m_kind = nullptr;
    m_object = {};
    m_hold = {};
    m_holdNote->hide();
    m_diagram->setHeldActions({});
    m_countdowns.clear();
    m_clock->stop();
    m_attempts->clear();
    m_stack->setCurrentWidget(m_empty);
}

void DetailPane::showObject(const ResourceKind *kind, const QJsonObject &object)
{
    Q_ASSERT(kind);
    const qint64 id = object.value(QStringLiteral("id")).toInteger(-1);
    const bool sameObject = m_kind == kind && objectId() == id;
    m_kind = kind;
    m_object = object;

    const QString name = kind->nameField.isEmpty() ? QString() : valueAt(object, kind->nameField).toString();
    const QString what = kind->itemTitle; // one object: "Instance #42"
    m_title->setText(name.isEmpty() ? tr("%1 #%2").arg(what).arg(id) : name);
    // Cut at the pane's edge when it has nowhere to wrap: the whole of it on hover.
    m_title->setToolTip(m_title->text());
    m_subtitle->setText(object.contains(QStringLiteral("version"))
                            ? tr("%1 #%2 · version %3")
                                  .arg(what)
                                  .arg(id)
                                  .arg(object.value(QStringLiteral("version")).toInteger())
                            : tr("%1 #%2").arg(what).arg(id));
    const QString state = currentState();
    m_badge->setState(state);
    m_badge->setVisible(!state.isEmpty());

    m_diagram->setMachine(kind->machine);
    m_diagram->setRole(m_role);
    m_diagram->setCurrentState(state);
    updateDiagramGate();

    rebuildForm();
    updateHold();
    rebuildActions();
    m_json->setPlainText(QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented)));
    m_stack->setCurrentIndex(1);

    const bool isDelivery = kind->name == QLatin1String("deliveries");
    if (!sameObject) {
        m_history->clear();
        m_historyStatus->setText(tr("Loading the history…"));
        m_historyStatus->show();
        m_attempts->clear();
        if (isDelivery)
            m_attempts->setMessage(tr("Loading the attempts…"));
    }
    // A tab this kind has not (an entry's history, an endpoint's attempts) gives way to the
    // overview, not to whichever tab happens to follow it.
    QWidget *const shown = m_tabs->currentWidget();
    m_tabs->setTabVisible(m_tabs->indexOf(m_attempts), isDelivery);
    m_tabs->setTabVisible(m_tabs->indexOf(m_lifecyclePage), kind->machine != nullptr);
    // Each change of a delivery is an attempt or an action: its log has news.
    if (isDelivery && id >= 0)
        emit attemptsRequested(id);
    // The audit log names kinds the way the change feed does ("instance"); an audit entry has
    // no history of its own.
    const bool hasHistory = kind->name != QLatin1String("audit");
    m_tabs->setTabVisible(m_tabs->indexOf(m_historyPage), hasHistory);
    if (!m_tabs->isTabVisible(m_tabs->indexOf(shown)))
        m_tabs->setCurrentIndex(0);
    const QString auditKind = kind->feedKind.isEmpty() ? kind->name : kind->feedKind;
    if (id >= 0 && hasHistory)
        emit historyRequested(auditKind, id);
}

void DetailPane::rebuildForm()
{
    // A field the user had put the keyboard on keeps it: the rows are made anew on every update.
    const QWidget *focused = QApplication::focusWidget();
    const QString focusedRow = focused && m_formHost->isAncestorOf(focused) ? focused->objectName() : QString();
    const auto restoreFocus = qScopeGuard([this, &focusedRow] {
        if (focusedRow.isEmpty())
            return;
        if (auto *row = m_formHost->findChild<QWidget *>(focusedRow, Qt::FindDirectChildrenOnly)) {
            row->show(); // the layout would show it on the next turn; only a shown widget takes focus
            row->setFocus(Qt::OtherFocusReason);
        }
    });
    while (m_form->rowCount() > 0)
        m_form->removeRow(0);
    m_countdowns.clear();
    if (!m_kind)
        return;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();

    QSet<QString> shown;
    auto addRow = [this, now](const QString &key, const QString &title, FieldSpec::Type type, const QJsonValue &value,
                         const QString &references = QString()) {
        QWidget *field = nullptr;
        if (type == FieldSpec::Type::State && value.isString()) {
            auto *badge = new StateBadgeLabel(m_formHost);
            badge->setState(value.toString());
            field = badge;
        } else {
            QString text = displayText(type, value);
            const std::optional<qint64> id = references.isEmpty() ? std::nullopt : referenceId(value);
            if (id && m_lookup) {
                const QString name = m_lookup(references, *id);
                if (!name.isEmpty())
                    text = tr("%1 (#%2)").arg(name, text);
            }
            auto *label = new WrappedValue(m_formHost);
            setFieldText(label, title, text);
            // Long values wrap instead of widening the pane beyond its splitter share.
            label->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
            label->setMinimumWidth(80);
            label->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
            label->setWordWrap(true);
            if (type == FieldSpec::Type::Timestamp && value.isString()) {
                label->setToolTip(value.toString());
                // The next attempt, the give-up time, the destroy time: how long is what matters.
                const QDateTime at = QDateTime::fromString(value.toString(), Qt::ISODateWithMs);
                if (at.isValid() && at.toMSecsSinceEpoch() > now)
                    m_countdowns.append({label, title, at.toMSecsSinceEpoch(), text});
            }
            field = label;
        }
        field->setObjectName(rowObjectName(key));
        // A badge has only its state to say: its title goes with it ("Status: running"), as it
        // does with a value ("Owner: alice").
        if (auto *badge = qobject_cast<StateBadgeLabel *>(field))
            badge->setTitle(title);
        m_form->addRow(tr("%1:").arg(title), field);
    };

    for (const FieldSpec &f : m_kind->fields) {
        const QString references =
            referencedKindName(f, f.referencesFrom.isEmpty() ? QString() : valueAt(m_object, f.referencesFrom).toString());
        addRow(f.key, f.title, f.type, valueAt(m_object, f.key), references);
        shown.insert(f.key.section(QLatin1Char('.'), 0, 0));
    }
    // Fields the server sends that the description does not list yet: show them too, so the
    // pane really shows the whole object.
    for (auto it = m_object.constBegin(); it != m_object.constEnd(); ++it) {
        if (shown.contains(it.key()))
            continue;
        addRow(it.key(), it.key(), it.value().isObject() || it.value().isArray() ? FieldSpec::Type::Json
                                                                                 : FieldSpec::Type::Text,
               it.value());
    }
    updateCountdowns();
}

void DetailPane::setFieldText(QLabel *label, const QString &title, const QString &text)
{
    label->setText(text);
    // The field the reader is on keeps the name it was read with: a name that changed every
    // second of a countdown would be said again every second. It is brought up to date once the
    // focus moves on (the next tick).
    if (!label->hasFocus())
        label->setAccessibleName(tr("%1: %2").arg(title, text));
}

void DetailPane::updateCountdowns()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    bool ticking = false;
    for (const Countdown &c : std::as_const(m_countdowns)) {
        if (!c.label)
            continue;
        // Once the moment has come the plain time says enough; the next change of the object
        // brings the next moment.
        setFieldText(c.label, c.title, c.at > now ? tr("%1 (%2)").arg(c.text, countdownText(c.at - now)) : c.text);
        // A field with the focus kept its name: the clock goes on until the focus has left it
        // and the name has caught up, even once its moment has come.
        ticking = ticking || c.at > now || c.label->hasFocus();
    }
    if (ticking && !m_clock->isActive())
        m_clock->start();
    else if (!ticking)
        m_clock->stop();
}

void DetailPane::rebuildActions()
{
    // clear() only detaches the actions; they are the toolbar's children and must go too.
    const QList<QAction *> old = m_actions->actions();
    m_actions->clear();
    qDeleteAll(old);
    if (!m_kind || !m_kind->machine) {
        m_actions->setVisible(false);
        return;
    }
    m_actions->setVisible(true);
    const StateMachine &machine = *m_kind->machine;
    const QString state = currentState();
    const qint64 id = objectId();
    const QString kindName = m_kind->name;

    QStringList seen;
    for (const Transition &t : machine.transitions()) {
        if (!isUserAction(t) || seen.contains(t.action))
            continue;
        seen.append(t.action);
        // The label of the transition this state would take: "Retry" from FAILED, "Retry now"
        // from PENDING; the first in the table otherwise.
        QString label = transitionLabel(t);
        for (const Transition &here : machine.transitions()) {
            if (here.from == state && here.action == t.action && isUserAction(here) && !here.label.isEmpty()) {
                label = transitionLabel(here);
                break;
            }
        }
        QAction *action = m_actions->addAction(label);
        action->setObjectName(QStringLiteral("action_") + t.action);
        Refusal refusal;
        const auto allowed = machine.find(state, t.action, m_role, &refusal);
        QString why;
        if (m_readOnly) {
            why = offlineReason();
        } else if (!allowed) {
            why = refusal.code == QLatin1String("forbidden-transition")
                      ? tr("The %1 role may not %2 in state %3.").arg(roleText(m_role), t.action, state)
                      : tr("Not possible in state %1 (%2).").arg(state, refusal.message);
        }
        if (why.isEmpty() && m_hold.actions.contains(t.action))
            why = m_hold.reason;
        action->setEnabled(allowed.has_value() && why.isEmpty());
        action->setToolTip(why.isEmpty() ? tr("%1: %2 → %3").arg(label, state, allowed->to) : why);
        connect(action, &QAction::triggered, this,
                [this, kindName, id, a = t.action] { emit actionRequested(kindName, id, a); });
    }
    addOperations();
}

void DetailPane::addOperations()
{
    struct Operation
    {
        QString action;
        QString label;
        QString description;
        QString refusal; // why it cannot be done now; empty when it can
    };
    const QString state = currentState();
    QList<Operation> operations;
    if (m_kind->name == QLatin1String("endpoints")) {
        operations.append({QStringLiteral("test"), tr("Send test event"),
                           tr("Sends an opsdeck.test callback, signed and retried like any other."),
                           state == Endpoint::Active
                               ? QString()
                               : tr("A test event needs an active endpoint: resume it first.")});
    } else if (m_kind->name == QLatin1String("instances")) {
        operations.append({QStringLiteral("rotate-secret"), tr("Rotate secret"),
                           tr("A new signing secret, shown once; the old one keeps signing for a grace period."),
                           state == Instance::Destroyed
                               ? tr("The instance is destroyed: nothing is signed for it any more.")
                               : valueAt(m_object, QStringLiteral("callback.url")).toString().isEmpty()
                               ? tr("No callback is registered: there is no secret to rotate.")
                               : QString()});
    } else if (m_kind->name == QLatin1String("deliveries")) {
        // Any delivery can start a bulk retry: the dialog starts from its state and its endpoint,
        // and offers other states, its provider's endpoints or every endpoint as well.
        operations.append({QStringLiteral("bulk-retry"), tr("Bulk retry…"),
                           tr("Choose states and an endpoint or provider, see how many callbacks that is, "
                              "then retry them together."),
                           QString()});
    }
    if (operations.isEmpty())
        return;
    const bool person = m_role == Actor::Operator || m_role == Actor::Provider;
    const qint64 id = objectId();
    const QString kindName = m_kind->name;
    m_actions->addSeparator();
    for (const Operation &op : std::as_const(operations)) {
        QAction *action = m_actions->addAction(op.label);
        action->setObjectName(QStringLiteral("action_") + op.action);
        QString why = op.refusal;
        if (m_readOnly)
            why = offlineReason();
        else if (!person)
            why = tr("The %1 role may not do this.").arg(roleText(m_role));
        action->setEnabled(why.isEmpty());
        action->setToolTip(why.isEmpty() ? op.description : why);
        connect(action, &QAction::triggered, this,
                [this, kindName, id, a = op.action] { emit actionRequested(kindName, id, a); });
    }
}

void DetailPane::setHistory(qint64 objectId, const QList<QJsonObject> &entries)
{
    if (objectId != this->objectId())
        return;
    m_history->clear();
    QList<QTreeWidgetItem *> items;
    const ResourceKind *audit = resourceKindByName(u"audit");
    const FieldSpec *actorField = audit ? audit->field(u"actor.subject") : nullptr;
    for (const QJsonObject &e : entries) {
        const QJsonObject actor = e.value(QStringLiteral("actor")).toObject();
        const QString role = actor.value(QStringLiteral("role")).toString();
        QString subject = actor.value(QStringLiteral("subject")).toString();
        // A provider acts under its id: named as the audit view names it.
        if (const QString kind = actorField ? referencedKindName(*actorField, role) : QString(); !kind.isEmpty() && m_lookup) {
            const std::optional<qint64> id = referenceId(QJsonValue(subject));
            if (const QString name = id ? m_lookup(kind, *id) : QString(); !name.isEmpty())
                subject = name;
        }
        const QString who = subject.isEmpty() ? roleText(role) : tr("%1 (%2)").arg(subject, roleText(role));
        const QString from = e.value(QStringLiteral("from")).toString();
        const QString to = e.value(QStringLiteral("to")).toString();
        QString change = e.value(QStringLiteral("action")).toString();
        if (!from.isEmpty() || !to.isEmpty())
            change = tr("%1: %2 → %3").arg(change, from.isEmpty() ? tr("(new)") : from, to);
        const QString reason = e.value(QStringLiteral("reason")).toString();
        const QString when = displayTimestamp(e.value(QStringLiteral("at")).toString());
        auto *item = new QTreeWidgetItem(
            {tr("%1   %2\n%3%4").arg(when, change, who, reason.isEmpty() ? QString() : tr(" — “%1”").arg(reason))});
        item->setToolTip(0, reason);
        items.append(item);
    }
    m_history->addTopLevelItems(items);
    // Other roles see the audit entries of their own objects only (an organization's are the
    // operators'): an empty history is then no proof that nothing happened.
    QString empty = m_role == Actor::Operator ? tr("No recorded changes yet.")
                                              : tr("No changes recorded that the %1 role may see.").arg(roleText(m_role));
    // A callback's own attempts are no audit entries: the history lists what people did to it.
    if (m_kind && m_kind->name == QLatin1String("deliveries"))
        empty = tr("%1 Its attempts are on the Attempts tab.").arg(empty);
    m_historyStatus->setText(entries.isEmpty() ? empty : QString());
    m_historyStatus->setVisible(entries.isEmpty());
}

void DetailPane::setAttempts(qint64 deliveryId, const QJsonArray &attempts)
{
    if (!m_kind || m_kind->name != QLatin1String("deliveries") || deliveryId != objectId())
        return;
    m_attempts->setAttempts(attempts);
    if (attempts.isEmpty()) {
        const QString next = m_object.value(QStringLiteral("next_attempt_at")).toString();
        m_attempts->setMessage(next.isEmpty() ? tr("No attempt was made.")
                                              : tr("No attempt yet; the first is due %1.").arg(displayTimestamp(next)));
    }
}

void DetailPane::setAttemptsError(qint64 deliveryId, const QString &message)
{
    if (!m_kind || m_kind->name != QLatin1String("deliveries") || deliveryId != objectId())
        return;
    m_attempts->setMessage(tr("The attempts could not be loaded: %1").arg(message));
}

void DetailPane::setHistoryError(qint64 objectId, const QString &message)
{
    if (objectId != this->objectId())
        return;
    m_historyStatus->setText(tr("The history could not be loaded: %1").arg(message));
    m_historyStatus->show();
}

QList<QAction *> DetailPane::objectActions() const
{
    return m_kind ? m_actions->actions() : QList<QAction *>();
}

QString DetailPane::fieldText(const QString &key) const
{
    const QWidget *w = m_formHost->findChild<QWidget *>(rowObjectName(key));
    if (const auto *label = qobject_cast<const QLabel *>(w))
        return label->text();
    if (const auto *badge = qobject_cast<const StateBadgeLabel *>(w))
        return badge->state();
    return {};
}

} // namespace OpsDeck
