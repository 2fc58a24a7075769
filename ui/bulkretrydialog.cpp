// The bulk retry dialog: states and scope, the dry-run count of that choice, then the retry.
#include "bulkretrydialog.h"

#include "valueformat.h"

#include "core/delivery.h"
#include "core/statemachine.h"
#include "models/apiclient.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace OpsDeck {

namespace {

constexpr int kScopeKeyRole = Qt::UserRole;
constexpr int kScopeIdRole = Qt::UserRole + 1;

QString stateLabel(const QString &state)
{
    if (state == Delivery::Failed)
        return BulkRetryDialog::tr("&Failed");
    if (state == Delivery::Cancelled)
        return BulkRetryDialog::tr("&Cancelled");
    if (state == Delivery::Pending)
        return BulkRetryDialog::tr("&Pending (attempt now)");
    return state;
}

// A state's share of the count in the console's language ("2 failed"; in French the words agree
// with "rappels": "2 échoués").
QString countInState(const QString &state, int n)
{
    if (state == Delivery::Failed)
        return BulkRetryDialog::tr("%n failed", "callbacks in state FAILED", n);
    if (state == Delivery::Cancelled)
        return BulkRetryDialog::tr("%n cancelled", "callbacks in state CANCELLED", n);
    if (state == Delivery::Pending)
        return BulkRetryDialog::tr("%n pending", "callbacks in state PENDING", n);
    return BulkRetryDialog::tr("%1 %2").arg(n).arg(state.toLower());
}

} // namespace

QStringList BulkRetryDialog::retryableStates()
{
    // The server retries exactly the states the machine lets retry leave from. Pending ones are
    // only hurried, not given up on: they come last.
    QStringList states;
    for (const Transition &t : Delivery::machine().transitions()) {
        if (t.action == QLatin1String("retry") && !states.contains(t.from))
            states.append(t.from);
    }
    std::stable_partition(states.begin(), states.end(), [](const QString &s) { return s != Delivery::Pending; });
    return states;
}

BulkRetryDialog::BulkRetryDialog(ApiClient *api, const BulkRetryScope &scope, QWidget *parent)
    : QDialog(parent)
    , m_api(api)
{
    setObjectName(QStringLiteral("bulkRetryDialog"));
    setWindowTitle(tr("Retry callbacks"));
    setAccessibleName(tr("Retry callbacks"));

    auto *intro = new QLabel(tr("Every callback in the chosen states and scope starts a fresh schedule; "
                                "pending ones are attempted now. The count below follows your choice."),
                             this);
    intro->setWordWrap(true);

    auto *statesRow = new QHBoxLayout;
    const QStringList states = retryableStates();
    const QString initial = states.contains(scope.state) ? scope.state : Delivery::Failed;
    for (const QString &state : states) {
        auto *box = new QCheckBox(stateLabel(state), this);
        box->setObjectName(QStringLiteral("bulkRetryState_") + state);
        // The label as read, in the console's language (not the state's code), without its mnemonic.
        box->setAccessibleName(tr("Retry the callbacks in state: %1").arg(QString(stateLabel(state)).remove(QLatin1Char('&'))));
        box->setChecked(state == initial);
        connect(box, &QCheckBox::toggled, this, &BulkRetryDialog::recount);
        statesRow->addWidget(box);
        m_states.insert(state, box);
    }
    statesRow->addStretch(1);

    m_scope = new QComboBox(this);
    m_scope->setObjectName(QStringLiteral("bulkRetryScope"));
    m_scope->setAccessibleName(tr("Scope"));
    // Each scope carries the filter field it sets and its value; every endpoint sets none.
    auto addScope = [this](const QString &text, const QString &key, qint64 id) {
        m_scope->addItem(text);
        m_scope->setItemData(m_scope->count() - 1, key, kScopeKeyRole);
        m_scope->setItemData(m_scope->count() - 1, id, kScopeIdRole);
    };
    if (scope.endpointId > 0)
        addScope(tr("Endpoint %1").arg(scope.endpointText), QStringLiteral("endpoint"), scope.endpointId);
    if (scope.providerId > 0)
        addScope(tr("Every endpoint of provider %1").arg(scope.providerText), QStringLiteral("provider"), scope.providerId);
    addScope(tr("Every endpoint"), QString(), 0);
    connect(m_scope, &QComboBox::currentIndexChanged, this, &BulkRetryDialog::recount);

    m_count = new QLabel(this);
    m_count->setObjectName(QStringLiteral("bulkRetryCount"));
    m_count->setWordWrap(true);
    m_count->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_count->setFocusPolicy(Qt::TabFocus);
    m_count->setAccessibleName(tr("Callbacks that match"));
    QFont bold = m_count->font();
    bold.setBold(true);
    m_count->setFont(bold);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("bulkRetryError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    m_error->setFocusPolicy(Qt::TabFocus);
    m_error->setAccessibleName(tr("Retry failure"));
    m_error->hide();

    m_reason = new QLineEdit(this);
    m_reason->setObjectName(QStringLiteral("bulkRetryReason"));
    m_reason->setAccessibleName(tr("Reason"));
    m_reason->setPlaceholderText(tr("Why? The reason is kept in the audit log."));
    connect(m_reason, &QLineEdit::textChanged, this, &BulkRetryDialog::updateButtons);

    auto *form = new QFormLayout;
    form->addRow(tr("States:"), statesRow);
    auto *scopeLabel = new QLabel(tr("Sc&ope:"), this);
    scopeLabel->setBuddy(m_scope);
    form->addRow(scopeLabel, m_scope);
    form->addRow(tr("Matching:"), m_count);
    auto *reasonLabel = new QLabel(tr("Re&ason:"), this);
    reasonLabel->setBuddy(m_reason);
    form->addRow(reasonLabel, m_reason);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setObjectName(QStringLiteral("bulkRetryButton"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &BulkRetryDialog::retry);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &BulkRetryDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addStretch(1);
    layout->addSpacing(6);
    layout->addWidget(m_buttons);
    setMinimumWidth(520);

    m_countAgain = new QTimer(this);
    m_countAgain->setSingleShot(true);
    m_countAgain->setInterval(300);
    connect(m_countAgain, &QTimer::timeout, this, &BulkRetryDialog::countAgain);
    recount();
}

QStringList BulkRetryDialog::checkedStates() const
{
    QStringList states;
    for (const QString &state : retryableStates()) {
        if (m_states.value(state)->isChecked())
            states.append(state);
    }
    return states;
}

QJsonObject BulkRetryDialog::scopeFilter() const
{
    const QString key = m_scope->currentData(kScopeKeyRole).toString();
    if (key.isEmpty())
        return {};
    return {{key, m_scope->currentData(kScopeIdRole).toLongLong()}};
}

QString BulkRetryDialog::countText() const
{
    return m_count->text();
}

QString BulkRetryDialog::errorText() const
{
    return m_error->text();
}

void BulkRetryDialog::callbacksChanged()
{
    if (m_retrying || m_countAgain->isActive())
        return;
    m_countAgain->start();
}

void BulkRetryDialog::countAgain()
{
    if (m_retrying)
        return;
    // Nothing shown to keep (counting, or the count failed): as a new choice.
    if (m_total < 0) {
        recount();
        return;
    }
    // An older answer no longer counts; the shown count stays until this one answers.
    ++m_generation;
    askCount();
}

void BulkRetryDialog::recount()
{
    // A new choice: whatever the older one's dry run answers no longer counts.
    ++m_generation;
    m_total = -1;
    const QStringList states = checkedStates();
    if (states.isEmpty()) {
        m_count->setText(tr("Choose at least one state."));
        updateButtons();
        return;
    }
    if (!m_api) {
        m_count->setText(tr("Not connected."));
        updateButtons();
        return;
    }
    m_count->setText(tr("Counting…"));
    updateButtons();
    askCount();
}

void BulkRetryDialog::askCount()
{
    if (!m_api)
        return;
    // A dry run changes nothing: no operation waits on it in the status bar.
    RequestOptions dryRun;
    dryRun.readOnly = true;
    QJsonObject body = scopeFilter();
    body.insert(QStringLiteral("state"), QJsonArray::fromStringList(checkedStates()));
    body.insert(QStringLiteral("dry_run"), true);
    m_api->post(
        QStringLiteral("/deliveries/retry"), body, this,
        [this, generation = m_generation](const ApiResult &result) { onCounted(generation, result); }, dryRun);
}

void BulkRetryDialog::onCounted(int generation, const ApiResult &result)
{
    if (generation != m_generation)
        return;
    if (!result.ok()) {
        m_count->setText(tr("The count failed: %1").arg(problemText(result)));
        updateButtons();
        emit counted(-1);
        return;
    }
    const qint64 total = result.object().value(QStringLiteral("count")).toInteger();
    // The server's breakdown, in the order the states are offered.
    const QJsonObject byState = result.object().value(QStringLiteral("states")).toObject();
    const QStringList states = checkedStates();
    QStringList parts;
    for (const QString &s : states) {
        const qint64 n = byState.value(s).toInteger();
        if (n > 0)
            parts.append(countInState(s, int(n)));
    }
    m_total = total;
    QString text;
    if (total == 0)
        text = tr("No callback matches: there is nothing to retry.");
    else if (states.size() == 1)
        text = tr("%n callback(s)", nullptr, int(total));
    else
        text = tr("%1 (%2)").arg(tr("%n callback(s)", nullptr, int(total)), parts.join(QStringLiteral(", ")));
    // Retried, these still wait for their endpoint: "retry" must not read as "send now".
    if (const qint64 held = result.object().value(QStringLiteral("held")).toInteger(); held > 0)
        text += QLatin1Char('\n') + tr("Held by a paused or disabled endpoint: %1, sent once it is resumed.").arg(held);
    m_count->setText(text);
    // A second line (the held ones) must not be cut: the dialog grows to show it, never shrinks.
    layout()->activate();
    if (sizeHint().height() > height())
        resize(width(), sizeHint().height());
    updateButtons();
    emit counted(total);
}

void BulkRetryDialog::retry()
{
    if (m_total <= 0 || m_retrying || !m_api || m_reason->text().trimmed().isEmpty())
        return;
    m_retrying = true;
    setBusy(true);
    m_error->clear();
    m_error->hide();
    m_count->setText(tr("Retrying…"));
    QJsonObject body = scopeFilter();
    body.insert(QStringLiteral("state"), QJsonArray::fromStringList(checkedStates()));
    body.insert(QStringLiteral("reason"), m_reason->text().trimmed());
    m_api->post(QStringLiteral("/deliveries/retry"), body, this, [this](const ApiResult &result) { onRetried(result); });
}

void BulkRetryDialog::onRetried(const ApiResult &result)
{
    m_retrying = false;
    setBusy(false);
    if (result.ok()) {
        emit retried(result.object().value(QStringLiteral("retried")).toInteger(),
                     result.object().value(QStringLiteral("held")).toInteger());
        accept();
        return;
    }
    // One transaction: a refused retry changed nothing, and the choice can be retried as it is.
    m_error->setText(tr("Nothing was retried: %1").arg(problemText(result)));
    m_error->show();
    recount();
}

void BulkRetryDialog::setBusy(bool busy)
{
    for (QCheckBox *box : std::as_const(m_states))
        box->setEnabled(!busy);
    m_scope->setEnabled(!busy);
    m_reason->setEnabled(!busy);
    updateButtons();
}

void BulkRetryDialog::updateButtons()
{
    QPushButton *ok = m_buttons->button(QDialogButtonBox::Ok);
    // Every action asks why, and the audit log keeps the answer: no retry without one.
    ok->setEnabled(m_total > 0 && !m_retrying && !m_reason->text().trimmed().isEmpty());
    ok->setText(m_total > 0 ? tr("Retry %n callback(s)", nullptr, int(m_total)) : tr("Retry"));
}

} // namespace OpsDeck
