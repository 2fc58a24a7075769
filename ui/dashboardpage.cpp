// The dashboard: per-kind state counts and the connection at a glance.
#include "dashboardpage.h"

#include "statebadgelabel.h"

#include <QAbstractItemModel>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QMouseEvent>
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

    auto *heading = new QLabel(tr("Dashboard"), this);
    QFont headingFont = heading->font();
    headingFont.setPointSizeF(headingFont.pointSizeF() * 1.5);
    headingFont.setBold(true);
    heading->setFont(headingFont);
    m_connection = new QLabel(this);
    m_connection->setObjectName(QStringLiteral("dashboardConnection"));
    m_connection->setForegroundRole(QPalette::PlaceholderText);
    m_connection->setWordWrap(true);

    m_grid = new QGridLayout;
    m_grid->setSpacing(12);
    auto *layout = new QVBoxLayout(this);
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

void DashboardPage::addKind(const ResourceKind &kind, QAbstractItemModel *model)
{
    Card card;
    card.kind = &kind;
    card.model = model;
    auto *frame = new QFrame(this);
    frame->setObjectName(QStringLiteral("card_") + kind.name);
    frame->setFrameShape(QFrame::StyledPanel);
    frame->setAutoFillBackground(true);
    frame->setBackgroundRole(QPalette::Base);
    frame->setCursor(Qt::PointingHandCursor);
    frame->setProperty(kKindProperty, kind.name);
    frame->setProperty(kQueryProperty, QString());
    frame->setToolTip(tr("Open %1").arg(kind.title));
    frame->setAccessibleName(tr("%1 summary").arg(kind.title));
    frame->installEventFilter(this);
    auto *title = new QLabel(kind.title, frame);
    QFont titleFont = title->font();
    titleFont.setBold(true);
    title->setFont(titleFont);
    card.total = new QLabel(QStringLiteral("0"), frame);
    card.total->setObjectName(QStringLiteral("total"));
    QFont totalFont = card.total->font();
    totalFont.setPointSizeF(totalFont.pointSizeF() * 2.2);
    card.total->setFont(totalFont);
    card.chips = new QWidget(frame);
    new QGridLayout(card.chips);
    card.chips->layout()->setContentsMargins(0, 0, 0, 0);
    auto *layout = new QVBoxLayout(frame);
    layout->addWidget(title);
    layout->addWidget(card.total);
    layout->addWidget(card.chips);
    layout->addStretch(1);
    card.frame = frame;

    const int index = int(m_cards.size());
    m_grid->addWidget(frame, index / 3, index % 3);
    m_cards.append(card);

    watch(model);
}

void DashboardPage::watch(QAbstractItemModel *model)
{
    connect(model, &QAbstractItemModel::rowsInserted, this, &DashboardPage::scheduleRefresh);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &DashboardPage::scheduleRefresh);
    connect(model, &QAbstractItemModel::modelReset, this, &DashboardPage::scheduleRefresh);
    connect(model, &QAbstractItemModel::dataChanged, this, &DashboardPage::scheduleRefresh);
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
    if (event->type() == QEvent::MouseButtonRelease
        && static_cast<QMouseEvent *>(event)->button() == Qt::LeftButton) {
        const QString kind = watched->property(kKindProperty).toString();
        if (!kind.isEmpty()) {
            emit openViewRequested(kind, watched->property(kQueryProperty).toString());
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace OpsDeck
