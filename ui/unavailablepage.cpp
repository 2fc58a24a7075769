// Stands in for a view whose kind this server does not offer yet.
#include "unavailablepage.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

namespace OpsDeck {

namespace {

// A line of about this many characters is read at a glance; one across a wide page is not.
constexpr int kLineLength = 72;
constexpr int kMargin = 60;

} // namespace

UnavailablePage::UnavailablePage(const QString &viewName, const QString &title, QWidget *parent)
    : QWidget(parent)
{
    setObjectName(viewName + QStringLiteral("View"));
    setAccessibleName(tr("%1 view").arg(title));
    m_title = new QLabel(tr("%1: not available on this server yet").arg(title), this);
    m_title->setObjectName(QStringLiteral("unavailableTitle"));
    m_title->setAlignment(Qt::AlignCenter);
    m_title->setWordWrap(true); // a longer language, a narrow window
    QFont font = m_title->font();
    font.setPointSizeF(font.pointSizeF() * 1.4);
    font.setBold(true);
    m_title->setFont(font);
    m_reason = new QLabel(tr("This server does not offer the %1 view yet. It appears here as soon as a server "
                             "version that offers it is connected; nothing needs to be configured in the console.")
                              .arg(title.toLower()),
                          this);
    m_reason->setObjectName(QStringLiteral("unavailableReason"));
    m_reason->setAlignment(Qt::AlignCenter);
    m_reason->setWordWrap(true);
    m_reason->setForegroundRole(QPalette::PlaceholderText);
    // A readable measure, centred between two stretches: the row asks the label its height for the
    // width it gets (an alignment would squeeze a word-wrapped label and clip it). Not through the
    // page's margins either: they count in its minimum width, and margins that grew with the
    // window kept it from ever getting narrower again.
    updateMeasure();
    auto *reasonRow = new QHBoxLayout;
    reasonRow->addStretch(1);
    // All the room up to its maximum width, before the stretches get what is left.
    reasonRow->addWidget(m_reason, 100);
    reasonRow->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(kMargin, 20, kMargin, 20);
    layout->addStretch(1);
    layout->addWidget(m_title);
    layout->addSpacing(8);
    layout->addLayout(reasonRow);
    layout->addStretch(2);
}

void UnavailablePage::updateMeasure()
{
    m_reason->setMaximumWidth(m_reason->fontMetrics().averageCharWidth() * kLineLength);
}

void UnavailablePage::changeEvent(QEvent *event)
{
    // Measured in the font it is drawn in: the application's may change after the page is made.
    if (event->type() == QEvent::FontChange)
        updateMeasure();
    QWidget::changeEvent(event);
}

void UnavailablePage::setReason(const QString &reason)
{
    m_reason->setText(reason);
}

QString UnavailablePage::text() const
{
    return m_title->text() + QLatin1Char('\n') + m_reason->text();
}

} // namespace OpsDeck
