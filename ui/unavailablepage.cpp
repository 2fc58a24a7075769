// Stands in for a view whose kind this server does not offer yet.
#include "unavailablepage.h"

#include <QLabel>
#include <QVBoxLayout>

namespace OpsDeck {

namespace {

// A line of about this many characters is read at a glance; one across a wide page is not.
constexpr int kLineLength = 72;
constexpr int kMinimumMargin = 60;

} // namespace

UnavailablePage::UnavailablePage(const QString &viewName, const QString &title, QWidget *parent)
    : QWidget(parent)
{
    setObjectName(viewName + QStringLiteral("View"));
    setAccessibleName(tr("%1 view").arg(title));
    m_title = new QLabel(tr("%1: not available on this server yet").arg(title), this);
    m_title->setObjectName(QStringLiteral("unavailableTitle"));
    m_title->setAlignment(Qt::AlignCenter);
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
    // Full-width labels: a word-wrapped label squeezed by an alignment gets clipped.
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(kMinimumMargin, 20, kMinimumMargin, 20);
    layout->addStretch(1);
    layout->addWidget(m_title);
    layout->addSpacing(8);
    layout->addWidget(m_reason);
    layout->addStretch(2);
}

void UnavailablePage::setReason(const QString &reason)
{
    m_reason->setText(reason);
}

void UnavailablePage::resizeEvent(QResizeEvent *event)
{
    // The text keeps a readable measure: the margins take what is wider than that.
    const int measure = fontMetrics().averageCharWidth() * kLineLength;
    const int side = qMax(kMinimumMargin, (width() - measure) / 2);
    layout()->setContentsMargins(side, 20, side, 20);
    QWidget::resizeEvent(event);
}

QString UnavailablePage::text() const
{
    return m_title->text() + QLatin1Char('\n') + m_reason->text();
}

} // namespace OpsDeck
