// The selected object: every field as a form, its state-machine diagram, its actions (enabled
// exactly when the machine allows them for the role) and its history from the audit log.
#pragma once

#include "core/actor.h"
#include "core/resourcekind.h"
#include "models/resourcemodel.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QPointer>
#include <QWidget>

#include <functional>

class QFormLayout;
class QLabel;
class QPlainTextEdit;
class QStackedWidget;
class QTabWidget;
class QTimer;
class QToolBar;
class QTreeWidget;

namespace OpsDeck {

class AttemptLogView;
class StateBadgeLabel;
class StateDiagramWidget;

class DetailPane final : public QWidget
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DetailPane)

public:
    explicit DetailPane(QWidget *parent = nullptr);

    void setRole(Actor role);
    Actor role() const { return m_role; }
    // Names for reference fields ("provider_id" shows the provider's name next to its id).
    void setReferenceLookup(ReferenceLookup lookup) { m_lookup = std::move(lookup); }
    // Offline the console is read-only: every action is disabled and says why.
    void setReadOnly(bool readOnly);
    // What holds the shown object back though its own state allows an action: a delivery whose
    // endpoint is paused or disabled is sent nothing, so "Retry now" would promise what the
    // server refuses. The pane says why, above the actions, and disables the held ones.
    struct Hold
    {
        QString reason;      // empty: nothing holds it
        QStringList actions; // the actions (routes) it holds back
    };
    using HoldLookup = std::function<Hold(const ResourceKind &kind, const QJsonObject &object)>;
    void setHoldLookup(HoldLookup lookup) { m_holdLookup = std::move(lookup); }
    // Asks the hold lookup again for the shown object (what it depends on changed).
    void refreshHold();
    QString holdText() const;

    // Shows an object of `kind` (not owned; a static description). Showing a newer version of
    // the object already shown updates it in place and keeps the history.
    void showObject(const ResourceKind *kind, const QJsonObject &object);
    void clear();
    const ResourceKind *kind() const { return m_kind; }
    const QJsonObject &object() const { return m_object; }
    qint64 objectId() const;

    // The history timeline, newest first; entries are audit entries as the API returns them.
    void setHistory(qint64 objectId, const QList<QJsonObject> &entries);
    void setHistoryError(qint64 objectId, const QString &message);
    // A delivery's attempts ("attempt_log" of GET /deliveries/{id}), shown on their own tab.
    void setAttempts(qint64 deliveryId, const QJsonArray &attempts);
    void setAttemptsError(qint64 deliveryId, const QString &message);
    AttemptLogView *attemptLog() const { return m_attempts; }
    // The shown object's actions as the pane's toolbar offers them (separators included), for
    // the window's Actions menu: the toolbar's buttons take no keyboard focus. Empty when no
    // object is shown.
    QList<QAction *> objectActions() const;

    // The text a form row shows, for tests and screen readers (empty when the row is absent).
    QString fieldText(const QString &key) const;

signals:
    // The pane needs the audit entries of this object (kind = the audit "kind", e.g. "instance").
    void historyRequested(const QString &auditKind, qint64 objectId);
    // The pane shows a delivery: its attempts are wanted (again after each change of it).
    void attemptsRequested(qint64 deliveryId);
    // An action the state machine allows was chosen; carrying it out is the caller's job.
    void actionRequested(const QString &kindName, qint64 objectId, const QString &action);

private:
    void rebuildForm();
    void rebuildActions();
    // Asks the hold lookup for the shown object; true when what holds it changed.
    bool updateHold();
    // What the diagram highlights and its title say: the hold's actions held back, and every one
    // while offline.
    void updateDiagramGate();
    // Kind-specific requests that are no transition (a test event, a new secret, a bulk retry).
    void addOperations();
    void updateCountdowns();
    QString currentState() const;

    Actor m_role = Actor::Operator;
    bool m_readOnly = false;
    const ResourceKind *m_kind = nullptr; // not owned
    QJsonObject m_object;
    ReferenceLookup m_lookup;
    HoldLookup m_holdLookup;
    Hold m_hold;
    QLabel *m_holdNote = nullptr;

    QStackedWidget *m_stack = nullptr;
    QLabel *m_empty = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_subtitle = nullptr;
    StateBadgeLabel *m_badge = nullptr;
    QToolBar *m_actions = nullptr;
    QTabWidget *m_tabs = nullptr;
    QWidget *m_formHost = nullptr;
    QFormLayout *m_form = nullptr;
    QWidget *m_lifecyclePage = nullptr;
    QLabel *m_diagramTitle = nullptr;
    StateDiagramWidget *m_diagram = nullptr;
    QWidget *m_historyPage = nullptr;
    AttemptLogView *m_attempts = nullptr;
    QTreeWidget *m_history = nullptr;
    QLabel *m_historyStatus = nullptr;
    QPlainTextEdit *m_json = nullptr;
    // Future timestamps in the form count down to their moment: the label and the moment (ms
    // since the epoch) with the text before the countdown.
    struct Countdown
    {
        QPointer<QLabel> label;
        QString title;
        qint64 at = 0;
        QString text;
    };
    // A field's value and what a screen reader says of it: its title with the value. A label's
    // accessible name is all that is read of it, so the title alone would hide the value. Not
    // renamed while it has the focus.
    static void setFieldText(QLabel *label, const QString &title, const QString &text);
    QList<Countdown> m_countdowns;
    QTimer *m_clock = nullptr;
};

} // namespace OpsDeck
