// The dashboard: per-kind state counts and the connection at a glance.
#include "dashboardpage.h"

#include "modelchanges.h"
#include "statebadgelabel.h"
#include "valueformat.h"

#include <QAbstractItemModel>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QJsonObject>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QMouseEvent>
#include <QScrollArea>
#include <QTimer>
#include <QVBoxLayout>

namespace OpsDeck {

namespace {

const char *kKindProperty = "opsdeckKind";
const char *kQueryProperty = "opsdeckQuery";

} // namespace

DashboardPage::DashboardPage(QWidget *parent)
    : QWidget(parent)
    , m_refresh(new QTimer(this))
{
    setObjectName(QStringLiteral("dashboardView"));
    setAccessibleName(tr("Dashboard"));
    m_refresh->setSingleShot(true);
    // Counting walks every row: at most a few times a second, however fast events arrive.
    m_refresh->setInterval(300);
    connect(m_refresh, &QTimer::timeout, this, &DashboardPage::refresh);

    // The cards scroll inside the page: three of them side by side would otherwise set the
    // minimum width of every page (the pages share the widest one's), past a 1024-pixel screen.
    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("dashboardScroll"));
    scroll->setAccessibleName(tr("Dashboard cards"));
    // Not a Tab stop of its own: Tab goes from the navigation to the first card, and the area
    // scrolls to the focused card.
    scroll->setFocusPolicy(Qt::NoFocus);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto *content = new QWidget(scroll);
    scroll->setWidget(content);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->addWidget(scroll);

    auto *heading = new QLabel(tr("Dashboard"), content);
    QFont headingFont = heading->font();
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.5);
    headingFont.setBold(true);
    heading->setFont(headingFont);
    m_connection = new QLabel(content);
    m_connection->setObjectName(QStringLiteral("dashboardConnection"));
    m_connection->setForegroundRole(QPalette::PlaceholderText);
    m_connection->setWordWrap(true);

    m_grid = new QGridLayout;
    m_grid->setSpacing(12);
    auto *layout = new QVBoxLayout(content);
    layout->setContentsMargins(16, 12, 16, 12);
    layout->addWidget(heading);
    layout->addWidget(m_connection);
    layout->addSpacing(8);
    layout->addLayout(m_grid);
    layout->addStretch(1);
}

DashboardPage::~DashboardPage()
{
    // The models outlive the page; nothing they emit may reach it while it is torn down.
    for (const Card &card : std::as_const(m_cards)) {
        if (card.model)
            disconnect(card.model.data(), nullptr, this, nullptr);
    }
}

QWidget *DashboardPage::newCard(const QString &objectName, const QString &title, const QString &kindName)
{
    auto *frame = new QFrame(this);
    frame->setObjectName(objectName);
    frame->setFrameShape(QFrame::StyledPanel);
    frame->setAutoFillBackground(true);
    frame->setBackgroundRole(QPalette::Base);
    if (!kindName.isEmpty()) {
        frame->setCursor(Qt::PointingHandCursor);
        // Reachable by Tab, opened by Enter or Space, as by a click.
        frame->setFocusPolicy(Qt::StrongFocus);
    }
    frame->setProperty(kKindProperty, kindName);
    frame->setProperty(kQueryProperty, QString());
    frame->setAccessibleName(tr("%1 summary").arg(title));
    frame->installEventFilter(this);
    auto *heading = new QLabel(title, frame);
    QFont titleFont = heading->font();
    titleFont.setBold(true);
    heading->setFont(titleFont);
    auto *layout = new QVBoxLayout(frame);
    layout->addWidget(heading);
    m_frames.append(frame);
    placeCards();
    return frame;
}

void DashboardPage::placeCards()
{
    // Cards fill the grid in order, three to a row; a hidden one leaves no hole.
    for (QWidget *frame : std::as_const(m_frames))
        m_grid->removeWidget(frame);
    int index = 0;
    for (QWidget *frame : std::as_const(m_frames)) {
        // Hidden on purpose (a card not shown yet is "hidden" too, until the page is).
        if (frame->isHidden() && frame->testAttribute(Qt::WA_WState_ExplicitShowHide))
            continue;
        m_grid->addWidget(frame, index / 3, index % 3);
        ++index;
    }
}

void DashboardPage::setKindHidden(const QString &kindName, bool hidden)
{
    for (const Card &card : std::as_const(m_cards)) {
        if (card.kind->name == kindName)
            card.frame->setHidden(hidden);
    }
    placeCards();
}

void DashboardPage::setDeliveryWorkerHidden(bool hidden)
{
    m_workerHidden = hidden;
    if (m_workerCard && hidden)
        m_workerCard->hide();
    placeCards();
}

void DashboardPage::addKind(const ResourceKind &kind, QAbstractItemModel *model, bool openable)
{
    Card card;
    card.kind = &kind;
    card.model = model;
    card.openable = openable;
    QWidget *frame = newCard(QStringLiteral("card_") + kind.name, kind.title, openable ? kind.name : QString());
    if (openable)
        frame->setToolTip(tr("Open %1").arg(kind.title));
    card.total = new QLabel(QStringLiteral("0"), frame);
    card.total->setObjectName(QStringLiteral("total"));
    QFont totalFont = card.total->font();
    totalFont.setPointSizeF(totalFont.pointSizeF() * 2.2);
    card.total->setFont(totalFont);
    card.chips = new QWidget(frame);
    new QGridLayout(card.chips);
    card.chips->layout()->setContentsMargins(0, 0, 0, 0);
    auto *layout = static_cast<QVBoxLayout *>(frame->layout());
    layout->addWidget(card.total);
    layout->addWidget(card.chips);
    layout->addStretch(1);
    card.frame = frame;
    m_cards.append(card);

    watch(model);
}

void DashboardPage::watch(QAbstractItemModel *model)
{
    whenModelChanges(model, this, [this] { scheduleRefresh(); });
    scheduleRefresh();
}

void DashboardPage::setModel(const QString &kindName, QAbstractItemModel *model)
{
    for (Card &card : m_cards) {
        if (card.kind->name != kindName || card.model == model)
            continue;
        if (card.model)
            disconnect(card.model.data(), nullptr, this, nullptr);
        card.model = model;
        watch(model);
    }
}

void DashboardPage::setConnectionText(const QString &text)
{
    m_connection->setText(text);
}

void DashboardPage::setDeliveryWorker(const QJsonObject &worker, const QDateTime &asOf)
{
    if (worker.isEmpty()) {
        if (m_workerCard)
            m_workerCard->hide();
        placeCards();
        return;
    }
    // The worker's three figures, each split by budget: a small table under the state.
    static const char *const rows[] = {"attempts_in_flight", "attempts_waiting", "endpoints_known"};
    static const char *const columns[] = {"answering", "probing"};
    if (!m_workerCard) {
        m_workerCard = newCard(QStringLiteral("card_deliveryWorker"), tr("Callback delivery"), QStringLiteral("deliveries"));
        m_workerCard->setToolTip(tr("Open Callbacks"));
        m_workerBadge = new StateBadgeLabel(m_workerCard);
        m_workerBadge->setObjectName(QStringLiteral("deliveryWorkerState"));
        auto *table = new QWidget(m_workerCard);
        auto *grid = new QGridLayout(table);
        grid->setContentsMargins(0, 4, 0, 0);
        grid->setHorizontalSpacing(16);
        const auto quiet = [table](const QString &text) {
            auto *label = new QLabel(text, table);
            label->setForegroundRole(QPalette::PlaceholderText);
            return label;
        };
        // The columns' titles wrap: translated, they can be wider than the figures below them,
        // and would widen the card and so every page, which share the widest one's minimum.
        for (int c = 0; c < 2; ++c) {
            QLabel *title = quiet(c == 0 ? tr("answering well") : tr("new or failing"));
            title->setWordWrap(true);
            title->setAlignment(Qt::AlignRight | Qt::AlignBottom);
            grid->addWidget(title, 0, c + 1, Qt::AlignRight);
        }
        const QStringList titles{tr("Attempts in flight"), tr("Waiting for a slot"), tr("Endpoints in use")};
        for (int r = 0; r < 3; ++r) {
            grid->addWidget(new QLabel(titles.at(r), table), r + 1, 0);
            for (int c = 0; c < 2; ++c) {
                auto *figure = new QLabel(table);
                const QString key = QLatin1String(rows[r]) + QLatin1Char('.') + QLatin1String(columns[c]);
                figure->setObjectName(QStringLiteral("worker_") + key);
                figure->setAccessibleName(tr("%1, %2").arg(titles.at(r), c == 0 ? tr("answering well") : tr("new or failing")));
                grid->addWidget(figure, r + 1, c + 1, Qt::AlignRight);
                m_workerFigures.insert(key, figure);
            }
        }
        grid->setColumnStretch(3, 1);
        m_workerNote = new QLabel(m_workerCard);
        m_workerNote->setObjectName(QStringLiteral("deliveryWorkerNote"));
        m_workerNote->setWordWrap(true);
        m_workerNote->setTextFormat(Qt::PlainText);
        m_workerAsOf = quiet(QString());
        m_workerAsOf->setObjectName(QStringLiteral("deliveryWorkerAsOf"));
        m_workerAsOf->setParent(m_workerCard);
        auto *layout = static_cast<QVBoxLayout *>(m_workerCard->layout());
        layout->addWidget(m_workerBadge, 0, Qt::AlignLeft);
        layout->addWidget(table);
        layout->addWidget(m_workerNote);
        layout->addStretch(1);
        layout->addWidget(m_workerAsOf);
    }
    m_workerCard->setVisible(!m_workerHidden);
    placeCards();
    const QString status = worker.value(QStringLiteral("status")).toString();
    const bool failing = status == QLatin1String("failing");
    m_workerBadge->setState(status == QLatin1String("ok") ? QStringLiteral("RUNNING")
                            : failing                     ? QStringLiteral("FAILING")
                                                          : QStringLiteral("OFF"));
    const QLocale locale;
    for (const char *row : rows) {
        const QJsonObject split = worker.value(QLatin1String(row)).toObject();
        for (const char *column : columns) {
            QLabel *figure = m_workerFigures.value(QLatin1String(row) + QLatin1Char('.') + QLatin1String(column));
            const qint64 n = split.value(QLatin1String(column)).toInteger();
            figure->setText(locale.toString(n));
            figure->setForegroundRole(n == 0 ? QPalette::PlaceholderText : QPalette::WindowText);
        }
    }
    // The storage error: while failing, since when; after, the last one for the post-mortem.
    // Moments as the tables and the detail pane write them, whatever the language.
    const auto when = [](const QJsonValue &at) { return displayTimestamp(at.toString()); };
    const QString error = worker.value(QStringLiteral("last_error")).toString();
    m_workerNote->setText(failing ? tr("Failing since %1: %2").arg(when(worker.value(QStringLiteral("since"))), error)
                          : error.isEmpty()
                              ? QString()
                              : tr("Last storage error %1: %2").arg(when(worker.value(QStringLiteral("last_error_at"))), error));
    m_workerNote->setVisible(!m_workerNote->text().isEmpty());
    m_workerAsOfTime = asOf;
    m_workerAsOf->setText(tr("As of %1").arg(asOf.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
}

void DashboardPage::setDeliveryWorkerUnknown()
{
    if (!m_workerCard || m_workerCard->isHidden())
        return;
    m_workerBadge->setState(QStringLiteral("UNKNOWN"));
    for (QLabel *figure : std::as_const(m_workerFigures))
        figure->setForegroundRole(QPalette::PlaceholderText);
    m_workerNote->hide();
    m_workerAsOf->setText(tr("The server does not answer: last known as of %1")
                              .arg(m_workerAsOfTime.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
}

QHash<QString, int> DashboardPage::stateCounts(const QString &kindName) const
{
    for (const Card &c : m_cards) {
        if (c.kind->name == kindName)
            return c.counts;
    }
    return {};
}

void DashboardPage::scheduleRefresh()
{
    if (!m_refresh->isActive())
        m_refresh->start();
}

void DashboardPage::refresh()
{
    for (Card &card : m_cards) {
        if (!card.model)
            continue;
        const int rows = card.model->rowCount();
        card.total->setText(QLocale().toString(rows));
        QHash<QString, int> counts;
        const int column = card.kind->stateField.isEmpty() ? -1 : card.kind->fieldIndex(card.kind->stateField);
        if (column >= 0) {
            for (int r = 0; r < rows; ++r)
                ++counts[card.model->index(r, column).data().toString()];
        }
        if (counts != card.counts || card.chips->layout()->count() == 0) {
            card.counts = counts;
            rebuildChips(card);
        }
    }
}

void DashboardPage::rebuildChips(Card &card)
{
    auto *grid = static_cast<QGridLayout *>(card.chips->layout());
    while (QLayoutItem *item = grid->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    QStringList states = card.kind->states;
    for (auto it = card.counts.cbegin(); it != card.counts.cend(); ++it) {
        if (!states.contains(it.key()) && !it.key().isEmpty())
            states.append(it.key());
    }
    int row = 0;
    for (const QString &state : std::as_const(states)) {
        const int count = card.counts.value(state);
        auto *badge = new StateBadgeLabel(card.chips);
        badge->setState(state);
        auto *number = new QLabel(QLocale().toString(count), card.chips);
        number->setObjectName(QStringLiteral("count_") + state);
        number->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (count == 0)
            number->setForegroundRole(QPalette::PlaceholderText);
        for (QWidget *w : {static_cast<QWidget *>(badge), static_cast<QWidget *>(number)}) {
            if (!card.openable)
                continue;
            w->setProperty(kKindProperty, card.kind->name);
            w->setProperty(kQueryProperty, QStringLiteral("state:%1").arg(state.toLower()));
            w->setCursor(Qt::PointingHandCursor);
            w->setToolTip(tr("Show the %1 %2").arg(state.toLower(), card.kind->title.toLower()));
            w->installEventFilter(this);
        }
        grid->addWidget(badge, row, 0);
        grid->addWidget(number, row, 1);
        ++row;
    }
    grid->setColumnStretch(2, 1);
}

bool DashboardPage::eventFilter(QObject *watched, QEvent *event)
{
    if (auto *frame = qobject_cast<QFrame *>(watched);
        frame && (event->type() == QEvent::FocusIn || event->type() == QEvent::FocusOut)) {
        // The card with the keyboard is drawn with a heavier frame.
        const bool focused = event->type() == QEvent::FocusIn;
        frame->setFrameShape(focused ? QFrame::Box : QFrame::StyledPanel);
        frame->setLineWidth(focused ? 2 : 1);
    }
    const bool activated =
        event->type() == QEvent::KeyPress
        && QList<int>{Qt::Key_Return, Qt::Key_Enter, Qt::Key_Space}.contains(static_cast<QKeyEvent *>(event)->key());
    if (activated || (event->type() == QEvent::MouseButtonRelease
                      && static_cast<QMouseEvent *>(event)->button() == Qt::LeftButton)) {
        const QString kind = watched->property(kKindProperty).toString();
        if (!kind.isEmpty()) {
            emit openViewRequested(kind, watched->property(kQueryProperty).toString());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace OpsDeck
