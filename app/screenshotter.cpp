// Saves a PNG of each view once the window shows data, then quits.
#include "screenshotter.h"

#include "ui/detailpane.h"
#include "ui/mainwindow.h"
#include "ui/resourceview.h"

#include "models/resourcemodel.h"

#include <QAbstractItemModel>
#include <QApplication>
#include <QDir>
#include <QJsonObject>
#include <QPixmap>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>

#include <cstdio>

namespace OpsDeck {

Screenshotter::Screenshotter(MainWindow *window, const QString &directory, QObject *parent)
    : QObject(parent)
    , m_window(window)
    , m_directory(directory)
    , m_timer(new QTimer(this))
{
    m_timer->setSingleShot(true);
}

void Screenshotter::start()
{
    QDir().mkpath(m_directory);
    m_window->resize(1400, 860);
    connect(m_timer, &QTimer::timeout, this, &Screenshotter::waitForData);
    m_timer->start(500);
}

void Screenshotter::waitForData()
{
    // Wait for synced rows (at most a minute), then a little longer for the feed to bring changes.
    const ResourceView *instances = m_window->resourceView(QStringLiteral("instances"));
    const bool hasRows = instances && instances->table()->model() && instances->table()->model()->rowCount() > 0;
    m_waited += 500;
    if (!hasRows && m_waited < 60000) {
        m_timer->start(500);
        return;
    }
    disconnect(m_timer, &QTimer::timeout, this, &Screenshotter::waitForData);
    connect(m_timer, &QTimer::timeout, this, &Screenshotter::nextStep);
    m_timer->start(9000);
}

void Screenshotter::save(QWidget *widget, const QString &name)
{
    const QString path = m_directory + QLatin1Char('/') + name + QStringLiteral(".png");
    // Highest PNG compression: the documentation keeps these files in git.
    if (!widget->grab().save(path, "PNG", 0))
        std::fprintf(stderr, "opsdeck: could not write %s\n", qPrintable(path));
    else
        std::printf("%s\n", qPrintable(path));
}

void Screenshotter::showTab(const QString &content, QWidget *target, const QString &name)
{
    // Tabs are found by what they hold: which ones a kind shows differs.
    auto *tabs = m_window->detailPane()->findChild<QTabWidget *>(QStringLiteral("detailTabs"));
    auto *widget = m_window->detailPane()->findChild<QWidget *>(content);
    if (!tabs || !widget)
        return;
    int index = -1;
    for (QWidget *w = widget; w && index < 0; w = w->parentWidget())
        index = tabs->indexOf(w);
    if (index < 0)
        return;
    tabs->setCurrentIndex(index);
    save(target, name);
    tabs->setCurrentIndex(0);
}

void Screenshotter::nextStep()
{
    const QStringList views = m_window->viewNames();
    // Steps: each view (selecting the first row of tables so the detail pane shows something),
    // then the detail pane alone, then the instances view in a dark palette.
    if (m_step < views.size() * 2) {
        const QString view = views.at(m_step / 2);
        if (m_step % 2 == 0) {
            m_window->showView(view);
            if (ResourceView *rv = m_window->resourceView(view)) {
                // A row whose state has actions makes a livelier detail pane than row 0.
                const QStringList preferred{QStringLiteral("FAILED"), QStringLiteral("RUNNING"),
                                            QStringLiteral("AVAILABLE"), QStringLiteral("PENDING")};
                const QAbstractItemModel *model = rv->table()->model();
                // Among those, the most recently changed: it has a history to show.
                int pick = -1;
                int bestRank = int(preferred.size());
                QString bestUpdate;
                for (int r = 0; model && r < model->rowCount() && r < 1000; ++r) {
                    const int rank = int(preferred.indexOf(model->index(r, 0).data(ResourceModel::StateRole).toString()));
                    const QString updated = model->index(r, 0)
                                                .data(ResourceModel::ObjectRole)
                                                .toJsonObject()
                                                .value(QStringLiteral("updated_at"))
                                                .toString();
                    if (rank >= 0 && (rank < bestRank || (rank == bestRank && updated > bestUpdate))) {
                        bestRank = rank;
                        bestUpdate = updated;
                        pick = r;
                    }
                }
                if (pick < 0 && model && model->rowCount() > 0)
                    pick = 0;
                if (pick >= 0)
                    rv->table()->selectRow(pick);
            }
        } else {
            save(m_window, view == QLatin1String("deliveries") ? QStringLiteral("callbacks") : view);
            if (view == QLatin1String("instances")) {
                save(m_window->detailPane(), QStringLiteral("detail-pane"));
                showTab(QStringLiteral("historyList"), m_window->detailPane(), QStringLiteral("detail-history"));
            } else if (view == QLatin1String("deliveries")) {
                showTab(QStringLiteral("attemptLog"), m_window, QStringLiteral("callbacks-attempts"));
            }
        }
        ++m_step;
        m_timer->start(m_step % 2 == 1 ? 1200 : 100);
        return;
    }
    if (m_step == views.size() * 2) {
        QPalette dark;
        dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x31));
        dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
        dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
        dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
        dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
        dark.setColor(QPalette::Button, QColor(0x33, 0x35, 0x3a));
        dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
        dark.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd8));
        dark.setColor(QPalette::HighlightedText, Qt::white);
        dark.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9d, 0xa3));
        dark.setColor(QPalette::ToolTipBase, QColor(0x33, 0x35, 0x3a));
        dark.setColor(QPalette::ToolTipText, QColor(0xe6, 0xe6, 0xe6));
        for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
            dark.setColor(QPalette::Disabled, role, QColor(0x6c, 0x6f, 0x75));
        QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
        QApplication::setPalette(dark);
        m_window->showView(QStringLiteral("instances"));
        ++m_step;
        m_timer->start(800);
        return;
    }
    save(m_window, QStringLiteral("instances-dark"));
    QApplication::quit();
}

} // namespace OpsDeck
