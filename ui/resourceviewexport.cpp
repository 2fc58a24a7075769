// A resource view's rows leaving the console: the row menu, copying ids or JSON, and CSV export.
#include "resourceview.h"

#include "messagebox.h"

#include <QAbstractItemModel>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMenu>
#include <QSaveFile>
#include <QStandardPaths>
#include <QTableView>

namespace OpsDeck {

namespace {

QString csvField(const QString &text)
{
    if (text.contains(QLatin1Char(',')) || text.contains(QLatin1Char('"')) || text.contains(QLatin1Char('\n'))
        || text.contains(QLatin1Char('\r'))) {
        QString quoted = text;
        quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
        return QLatin1Char('"') + quoted + QLatin1Char('"');
    }
    return text;
}

} // namespace

void ResourceView::showTableMenu(const QPoint &pos)
{
    const QModelIndex index = m_table->indexAt(pos);
    QMenu menu(this);
    menu.setObjectName(QStringLiteral("rowMenu"));
    if (index.isValid()) {
        for (QAction *a : m_table->actions())
            menu.addAction(a);
        menu.addSeparator();
    }
    QAction *exportAction = menu.addAction(tr("Export view as CSV…"));
    connect(exportAction, &QAction::triggered, this, &ResourceView::chooseCsvFile);
    menu.exec(m_table->viewport()->mapToGlobal(pos));
}

void ResourceView::copyCurrentId() const
{
    QStringList ids;
    const QModelIndexList rows = m_table->selectionModel() ? m_table->selectionModel()->selectedRows() : QModelIndexList();
    for (const QModelIndex &row : rows)
        ids.append(QString::number(objectAt(row.row()).value(QStringLiteral("id")).toInteger()));
    if (ids.isEmpty() && !currentObject().isEmpty())
        ids.append(QString::number(currentObject().value(QStringLiteral("id")).toInteger()));
    if (!ids.isEmpty())
        QApplication::clipboard()->setText(ids.join(QLatin1Char('\n')));
}

void ResourceView::copyCurrentJson() const
{
    const QModelIndexList rows = m_table->selectionModel() ? m_table->selectionModel()->selectedRows() : QModelIndexList();
    if (rows.size() > 1) {
        QJsonArray array;
        for (const QModelIndex &row : rows)
            array.append(objectAt(row.row()));
        QApplication::clipboard()->setText(QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Indented)));
        return;
    }
    const QJsonObject object = currentObject();
    if (!object.isEmpty())
        QApplication::clipboard()->setText(QString::fromUtf8(QJsonDocument(object).toJson(QJsonDocument::Indented)));
}

QString ResourceView::csv() const
{
    if (!m_model)
        return {};
    const QHeaderView *header = m_table->horizontalHeader();
    QList<int> columns;
    for (int visual = 0; visual < header->count(); ++visual) {
        const int logical = header->logicalIndex(visual);
        if (!header->isSectionHidden(logical))
            columns.append(logical);
    }
    QString out;
    QStringList cells;
    for (int c : std::as_const(columns))
        cells.append(csvField(m_model->headerData(c, Qt::Horizontal).toString()));
    out += cells.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    for (int r = 0; r < m_model->rowCount(); ++r) {
        cells.clear();
        for (int c : std::as_const(columns))
            cells.append(csvField(m_model->index(r, c).data().toString()));
        out += cells.join(QLatin1Char(',')) + QStringLiteral("\r\n");
    }
    return out;
}

bool ResourceView::exportCsv(const QString &path, QString *error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(csv().toUtf8()) < 0 || !file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

void ResourceView::chooseCsvFile()
{
    const QString suggested = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation)
                              + QStringLiteral("/opsdeck-%1.csv").arg(m_kind.name);
    const QString path = QFileDialog::getSaveFileName(this, tr("Export %1 as CSV").arg(m_kind.title), suggested,
                                                      tr("CSV files (*.csv)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!exportCsv(path, &error))
        MessageBox::warning(this, tr("Export failed"), tr("Could not write %1: %2").arg(path, error));
}

} // namespace OpsDeck
