// A resource view's columns: the default and remembered layout, and the header's column chooser.
#include "resourceview.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QHeaderView>
#include <QMenu>
#include <QSettings>
#include <QTableView>
#include <QTimer>

#include <memory>

namespace OpsDeck {

QStringList ResourceView::columnKeys() const
{
    QStringList keys;
    for (const FieldSpec &f : m_kind.fields)
        keys.append(f.key);
    return keys;
}

QString ResourceView::settingsKey(const QString &what) const
{
    return QStringLiteral("views/%1/%2").arg(m_kind.name, what);
}

void ResourceView::applyDefaultLayout()
{
    QHeaderView *header = m_table->horizontalHeader();
    for (int i = 0; i < m_kind.fields.size() && i < header->count(); ++i) {
        const FieldSpec &f = m_kind.fields.at(i);
        header->moveSection(header->visualIndex(i), i);
        header->setSectionHidden(i, !f.visibleByDefault);
        // Never narrower than its title with the sort arrow: a cut-off title hides what a column is.
        header->resizeSection(i, qMax(f.defaultWidth * m_table->fontMetrics().averageCharWidth() / 7,
                                      header->sectionSizeHint(i)));
    }
    // The state is what an operator scans for: right after the name, never scrolled off. A kind
    // that lists its state before its name (deliveries: the event type is much the same on
    // every row) has it there already.
    const int stateColumn = m_kind.stateField.isEmpty() ? -1 : m_kind.fieldIndex(m_kind.stateField);
    const int nameColumn = m_kind.nameField.isEmpty() ? -1 : m_kind.fieldIndex(m_kind.nameField);
    if (stateColumn > nameColumn && nameColumn >= 0 && stateColumn < header->count() && nameColumn < header->count()) {
        const int target = header->visualIndex(nameColumn) + 1;
        header->moveSection(header->visualIndex(stateColumn), qMin(target, header->count() - 1));
    }
    header->setSortIndicator(0, m_kind.newestFirst ? Qt::DescendingOrder : Qt::AscendingOrder);
}

void ResourceView::restoreLayout()
{
    m_restoringLayout = true;
    QSettings settings;
    const QByteArray state = settings.value(settingsKey(QStringLiteral("header"))).toByteArray();
    // A layout saved for another set of columns (the kind gained a field) is not reused.
    const bool sameColumns = settings.value(settingsKey(QStringLiteral("columns"))).toStringList() == columnKeys();
    if (state.isEmpty() || !sameColumns || !m_table->horizontalHeader()->restoreState(state))
        applyDefaultLayout();
    m_restoringLayout = false;
    m_table->sortByColumn(m_table->horizontalHeader()->sortIndicatorSection(),
                          m_table->horizontalHeader()->sortIndicatorOrder());
}

void ResourceView::scheduleLayoutSave()
{
    if (!m_restoringLayout)
        m_layoutTimer->start();
}

void ResourceView::saveLayout() const
{
    m_layoutTimer->stop();
    if (!m_model)
        return;
    QSettings settings;
    settings.setValue(settingsKey(QStringLiteral("header")), m_table->horizontalHeader()->saveState());
    settings.setValue(settingsKey(QStringLiteral("columns")), columnKeys());
}

QMenu *ResourceView::createColumnMenu()
{
    auto *menu = new QMenu(this);
    menu->setObjectName(QStringLiteral("columnChooser"));
    QHeaderView *header = m_table->horizontalHeader();
    int visible = 0;
    for (int i = 0; i < header->count(); ++i)
        visible += header->isSectionHidden(i) ? 0 : 1;
    for (int i = 0; i < header->count(); ++i) {
        const QString title = m_model->headerData(i, Qt::Horizontal).toString();
        QAction *action = menu->addAction(title);
        action->setCheckable(true);
        action->setChecked(!header->isSectionHidden(i));
        // The last visible column cannot be hidden, or the table could not be brought back.
        action->setEnabled(header->isSectionHidden(i) || visible > 1);
        connect(action, &QAction::toggled, this, [this, i](bool on) {
            m_table->horizontalHeader()->setSectionHidden(i, !on);
            if (on && m_table->horizontalHeader()->sectionSize(i) < 30)
                m_table->horizontalHeader()->resizeSection(i, 100);
            scheduleLayoutSave();
        });
    }
    menu->addSeparator();
    QAction *reset = menu->addAction(tr("Reset columns"));
    reset->setObjectName(QStringLiteral("resetColumns"));
    connect(reset, &QAction::triggered, this, [this] {
        applyDefaultLayout();
        scheduleLayoutSave();
    });
    return menu;
}

void ResourceView::showHeaderMenu(const QPoint &pos)
{
    std::unique_ptr<QMenu> menu(createColumnMenu());
    menu->exec(m_table->horizontalHeader()->mapToGlobal(pos));
}

} // namespace OpsDeck
