// One table of a resource kind with its query line, column chooser, context menu and export.
#include "resourceview.h"

#include "messagebox.h"
#include "statebadgedelegate.h"
#include "tonepalette.h"

#include "core/query.h"
#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCompleter>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSaveFile>
#include <QSettings>
#include <QStandardPaths>
#include <QStringListModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

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

ResourceView::ResourceView(const ResourceKind &kind, QWidget *parent)
    : QWidget(parent)
    , m_kind(kind)
{
    setObjectName(kind.name + QStringLiteral("View"));
    setAccessibleName(tr("%1 view").arg(kind.title));

    m_query = new QLineEdit(this);
    m_query->setObjectName(QStringLiteral("queryEdit"));
    m_query->setAccessibleName(tr("Filter %1").arg(kind.title));
    m_query->setClearButtonEnabled(true);
    const QStringList names = queryFieldNames(kind);
    m_query->setPlaceholderText(
        kind.stateField.isEmpty()
            ? tr("Filter: words, or field:value (%1)").arg(names.mid(0, 5).join(QStringLiteral(", ")))
            : tr("Filter: state:%1 -state:%2 age>1h words… (Ctrl+F)")
                  .arg(kind.states.value(0).toLower(), kind.states.value(1).toLower()));
    m_query->setToolTip(tr("Fields: %1. Operators: field:value, field=value, -field:value, field>N, "
                           "age>1h (s, m, h, d, w). Quote \"several words\".")
                            .arg(names.join(QStringLiteral(", "))));

    m_counts = new QLabel(this);
    m_counts->setObjectName(QStringLiteral("rowCount"));
    m_counts->setForegroundRole(QPalette::PlaceholderText);

    m_filtering = new QLabel(tr("Filtering…"), this);
    m_filtering->setObjectName(QStringLiteral("filteringIndicator"));
    m_filtering->setAccessibleName(tr("Filtering in progress"));
    m_filtering->setForegroundRole(QPalette::PlaceholderText);
    // The row count beside it stays where it is when the note comes and goes.
    QSizePolicy filteringPolicy = m_filtering->sizePolicy();
    filteringPolicy.setRetainSizeWhenHidden(true);
    m_filtering->setSizePolicy(filteringPolicy);
    m_filtering->hide();
    m_filteringDelay = new QTimer(this);
    m_filteringDelay->setObjectName(QStringLiteral("filteringDelay"));
    m_filteringDelay->setSingleShot(true);
    m_filteringDelay->setInterval(kFilteringDelayMs);
    connect(m_filteringDelay, &QTimer::timeout, m_filtering, &QWidget::show);

    m_queryError = new QLabel(this);
    m_queryError->setObjectName(QStringLiteral("queryError"));
    m_queryError->setAccessibleName(tr("Query error"));
    m_queryError->setWordWrap(true);
    m_queryError->hide();
    updateErrorColour();

    m_table = new QTableView(this);
    m_table->setObjectName(QStringLiteral("table"));
    m_table->setAccessibleName(tr("%1 table").arg(kind.title));
    m_table->setSortingEnabled(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 10);
    m_table->horizontalHeader()->setSectionsMovable(true);
    m_table->horizontalHeader()->setHighlightSections(false);
    m_table->horizontalHeader()->setContextMenuPolicy(Qt::CustomContextMenu);
    m_table->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_table->horizontalHeader()->setStretchLastSection(true);
    if (!kind.stateField.isEmpty()) {
        const int stateColumn = kind.fieldIndex(kind.stateField);
        if (stateColumn >= 0)
            m_table->setItemDelegateForColumn(stateColumn, new StateBadgeDelegate(m_table));
    }

    m_emptyHint = new QLabel(this);
    m_emptyHint->setObjectName(QStringLiteral("emptyHint"));
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setForegroundRole(QPalette::PlaceholderText);
    m_emptyHint->hide();

    auto *top = new QHBoxLayout;
    top->addWidget(m_query, 1);
    top->addWidget(m_filtering);
    top->addWidget(m_counts);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);
    layout->setSpacing(4);
    layout->addLayout(top);
    layout->addWidget(m_queryError);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_emptyHint);

    m_completions = new QStringListModel(this);
    m_completer = new QCompleter(m_completions, this);
    m_completer->setObjectName(QStringLiteral("queryCompleter"));
    m_completer->setCaseSensitivity(Qt::CaseInsensitive);
    m_completer->setCompletionMode(QCompleter::PopupCompletion);
    // Attached with setWidget, not QLineEdit::setCompleter: a completion replaces only the token
    // under the cursor, never the whole line.
    m_completer->setWidget(m_query);

    m_queryTimer = new QTimer(this);
    m_queryTimer->setSingleShot(true);
    m_queryTimer->setInterval(120);
    m_layoutTimer = new QTimer(this);
    m_layoutTimer->setSingleShot(true);
    m_layoutTimer->setInterval(400);

    connect(m_query, &QLineEdit::textEdited, this, &ResourceView::onQueryEdited);
    connect(m_query, &QLineEdit::textChanged, this, [this] { m_queryTimer->start(); });
    connect(m_query, &QLineEdit::returnPressed, this, &ResourceView::applyQuery);
    connect(m_queryTimer, &QTimer::timeout, this, &ResourceView::applyQuery);
    connect(m_completer, qOverload<const QString &>(&QCompleter::activated), this,
            &ResourceView::insertCompletion);
    connect(m_layoutTimer, &QTimer::timeout, this, &ResourceView::saveLayout);
    connect(m_table->horizontalHeader(), &QHeaderView::customContextMenuRequested, this,
            &ResourceView::showHeaderMenu);
    connect(m_table, &QTableView::customContextMenuRequested, this, &ResourceView::showTableMenu);
    connect(m_table->horizontalHeader(), &QHeaderView::sectionResized, this, &ResourceView::scheduleLayoutSave);
    connect(m_table->horizontalHeader(), &QHeaderView::sectionMoved, this, &ResourceView::scheduleLayoutSave);
    connect(m_table->horizontalHeader(), &QHeaderView::sortIndicatorChanged, this,
            &ResourceView::scheduleLayoutSave);

    auto *copyId = new QAction(tr("Copy id"), this);
    copyId->setObjectName(QStringLiteral("copyIdAction"));
    copyId->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_C));
    copyId->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copyId, &QAction::triggered, this, &ResourceView::copyCurrentId);
    auto *copyJson = new QAction(tr("Copy as JSON"), this);
    copyJson->setObjectName(QStringLiteral("copyJsonAction"));
    copyJson->setShortcut(QKeySequence::Copy);
    copyJson->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(copyJson, &QAction::triggered, this, &ResourceView::copyCurrentJson);
    m_table->addAction(copyId);
    m_table->addAction(copyJson);

    QSettings settings;
    const QString saved = settings.value(settingsKey(QStringLiteral("query"))).toString();
    if (!saved.isEmpty())
        m_query->setText(saved);
}

ResourceView::~ResourceView()
{
    if (m_layoutTimer->isActive())
        saveLayout();
    // QWidget's destructor still hides and resizes the children; their signals must not reach
    // this half-destroyed view.
    disconnect(m_table->horizontalHeader(), nullptr, this, nullptr);
    if (m_table->selectionModel())
        disconnect(m_table->selectionModel(), nullptr, this, nullptr);
    if (m_model)
        disconnect(m_model.data(), nullptr, this, nullptr);
}

void ResourceView::updateErrorColour()
{
    // A red that keeps its contrast on the palette in use, light or dark.
    QPalette errorPalette = palette();
    errorPalette.setColor(QPalette::WindowText, isDarkPalette(palette()) ? QColor(0xff, 0x7b, 0x72)
                                                                         : QColor(0xc0, 0x1c, 0x28));
    m_queryError->setPalette(errorPalette);
}

void ResourceView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        updateErrorColour();
    QWidget::changeEvent(event);
}

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

void ResourceView::setModel(QAbstractItemModel *model, int objectRole)
{
    m_model = model;
    m_objectRole = objectRole;
    m_table->setModel(model);
    restoreLayout();
    connect(m_table->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this] { emit currentObjectChanged(currentObject()); });
    // Connected after the table's own handlers, which clear the selection on a reset.
    connect(model, &QAbstractItemModel::modelAboutToBeReset, this, &ResourceView::holdSelection);
    connect(model, &QAbstractItemModel::modelReset, this, &ResourceView::restoreSelection);
    connect(model, &QAbstractItemModel::layoutAboutToBeChanged, this, &ResourceView::onLayoutAboutToBeChanged);
    connect(model, &QAbstractItemModel::layoutChanged, this, &ResourceView::onLayoutChanged);
    connect(model, &QAbstractItemModel::rowsInserted, this, &ResourceView::updateCounts);
    connect(model, &QAbstractItemModel::rowsRemoved, this, &ResourceView::updateCounts);
    connect(model, &QAbstractItemModel::modelReset, this, &ResourceView::updateCounts);
    connect(model, &QAbstractItemModel::layoutChanged, this, &ResourceView::updateCounts);
    connect(model, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex &topLeft, const QModelIndex &bottomRight) {
                const QModelIndex current = m_table->currentIndex();
                if (current.isValid() && current.row() >= topLeft.row() && current.row() <= bottomRight.row())
                    emit currentObjectUpdated(currentObject());
            });
    disconnect(m_filteringConnection);
    const auto *proxy = qobject_cast<const FilterProxyModel *>(model);
    if (proxy)
        m_filteringConnection = connect(proxy, &FilterProxyModel::filteringChanged, this,
                                        &ResourceView::onFilteringChanged);
    onFilteringChanged(proxy && proxy->isFiltering());
    updateCounts();
    // Apply the remembered query to the new model.
    applyQuery();
}

qint64 ResourceView::idAt(int row) const
{
    const QVariant id = m_model->index(row, 0).data(ResourceModel::IdRole);
    return id.isValid() ? id.toLongLong() : objectAt(row).value(QStringLiteral("id")).toInteger(-1);
}

int ResourceView::rowOfId(qint64 id) const
{
    if (const auto *proxy = qobject_cast<const FilterProxyModel *>(m_model.data()); proxy && proxy->resourceModel()) {
        const ResourceModel *source = proxy->resourceModel();
        const int sourceRow = source->rowOfId(id);
        return sourceRow < 0 ? -1 : proxy->mapFromSource(source->index(sourceRow, 0)).row();
    }
    if (const auto *resources = qobject_cast<const ResourceModel *>(m_model.data()))
        return resources->rowOfId(id);
    for (int row = 0; row < m_model->rowCount(); ++row) {
        if (idAt(row) == id)
            return row;
    }
    return -1;
}

void ResourceView::holdSelection()
{
    m_heldSelection.clear();
    m_heldCurrent = -1;
    const QItemSelectionModel *selection = m_table->selectionModel();
    if (!m_model || !selection)
        return;
    // Read while the rows are still there; a range covers every column of its rows.
    std::vector<int> rows;
    for (const QItemSelectionRange &range : selection->selection()) {
        for (int row = range.top(); row <= range.bottom(); ++row)
            rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    m_heldSelection.reserve(qsizetype(rows.size()));
    for (int row : rows)
        m_heldSelection.append(idAt(row));
    const QModelIndex current = selection->currentIndex();
    if (current.isValid()) {
        m_heldCurrent = idAt(current.row());
        m_heldCurrentColumn = current.column();
    }
}

void ResourceView::restoreSelection()
{
    const QList<qint64> held = std::exchange(m_heldSelection, {});
    const qint64 heldCurrent = std::exchange(m_heldCurrent, -1);
    QItemSelectionModel *selection = m_table->selectionModel();
    if (!m_model || !selection || (held.isEmpty() && heldCurrent < 0))
        return;
    std::vector<int> rows;
    rows.reserve(size_t(held.size()));
    for (qint64 id : held) {
        const int row = rowOfId(id);
        if (row >= 0)
            rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    // One range per run of adjacent rows, so a large selection stays a few ranges.
    QItemSelection restored;
    const int lastColumn = std::max(0, m_model->columnCount() - 1);
    for (size_t i = 0; i < rows.size();) {
        size_t end = i + 1;
        while (end < rows.size() && rows[end] == rows[end - 1] + 1)
            ++end;
        restored.select(m_model->index(rows[i], 0), m_model->index(rows[end - 1], lastColumn));
        i = end;
    }
    selection->select(restored, QItemSelectionModel::Select);
    const int currentRow = heldCurrent < 0 ? -1 : rowOfId(heldCurrent);
    if (currentRow >= 0) {
        // NoUpdate: the selection was restored above; the view's focus is left where it is.
        const QModelIndex current = m_model->index(currentRow, std::clamp(m_heldCurrentColumn, 0, lastColumn));
        selection->setCurrentIndex(current, QItemSelectionModel::NoUpdate);
        m_table->scrollTo(current);
    } else if (heldCurrent >= 0) {
        // The reset cleared the current row without a signal: whoever shows it learns it is gone.
        emit currentObjectChanged({});
    }
}

void ResourceView::onLayoutAboutToBeChanged()
{
    const QModelIndex current = m_table->currentIndex();
    m_heldCurrent = current.isValid() ? idAt(current.row()) : -1;
    m_currentInSight = current.isValid() && m_table->viewport()->rect().intersects(m_table->visualRect(current));
}

void ResourceView::onLayoutChanged()
{
    // The current row's persistent index followed it, or went invalid with it (filtered out or
    // removed) without currentRowChanged.
    const qint64 heldCurrent = std::exchange(m_heldCurrent, -1);
    const bool wasInSight = std::exchange(m_currentInSight, false);
    const QModelIndex current = m_table->currentIndex();
    if (heldCurrent >= 0 && !current.isValid())
        emit currentObjectChanged({});
    // A row the operator was looking at stays in sight wherever the new order puts it (a relist
    // sorted on a worker arrives as a reset, then as a layout change).
    else if (current.isValid() && wasInSight)
        m_table->scrollTo(current);
}

void ResourceView::onFilteringChanged(bool filtering)
{
    if (!filtering) {
        m_filteringDelay->stop();
        m_filtering->hide();
    } else if (m_filtering->isHidden() && !m_filteringDelay->isActive()) {
        m_filteringDelay->start();
    }
}

void ResourceView::applyDefaultLayout()
{
    QHeaderView *header = m_table->horizontalHeader();
    for (int i = 0; i < m_kind.fields.size() && i < header->count(); ++i) {
        const FieldSpec &f = m_kind.fields.at(i);
        header->moveSection(header->visualIndex(i), i);
        header->setSectionHidden(i, !f.visibleByDefault);
        header->resizeSection(i, f.defaultWidth * m_table->fontMetrics().averageCharWidth() / 7);
    }
    // The state is what an operator scans for: right after the name, never scrolled off.
    const int stateColumn = m_kind.stateField.isEmpty() ? -1 : m_kind.fieldIndex(m_kind.stateField);
    const int nameColumn = m_kind.nameField.isEmpty() ? -1 : m_kind.fieldIndex(m_kind.nameField);
    if (stateColumn >= 0 && nameColumn >= 0 && stateColumn < header->count() && nameColumn < header->count()) {
        const int target = header->visualIndex(nameColumn) + 1;
        header->moveSection(header->visualIndex(stateColumn), qMin(target, header->count() - 1));
    }
    header->setSortIndicator(0, Qt::AscendingOrder);
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

QString ResourceView::queryText() const
{
    return m_query->text();
}

void ResourceView::setQueryText(const QString &text)
{
    m_query->setText(text);
    applyQuery();
}

QString ResourceView::queryError() const
{
    return m_queryError->isHidden() ? QString() : m_queryError->text();
}

void ResourceView::focusQuery()
{
    m_query->setFocus(Qt::ShortcutFocusReason);
    m_query->selectAll();
}

void ResourceView::applyQuery()
{
    m_queryTimer->stop();
    const QString text = m_query->text();
    QSettings settings;
    settings.setValue(settingsKey(QStringLiteral("query")), text);
    const QueryParse parse = parseQuery(text, m_kind);
    if (!parse.ok()) {
        m_queryError->setText(parse.error.toString());
        m_queryError->show();
        if (parse.error.position >= 0)
            m_query->setToolTip(parse.error.toString());
        return;
    }
    m_queryError->clear();
    m_queryError->hide();
    emit queryChanged(text);
    updateCounts();
}

QString ResourceView::tokenUnderCursor(int *start) const
{
    const QString text = m_query->text();
    const int cursor = m_query->cursorPosition();
    int begin = cursor;
    while (begin > 0 && !text.at(begin - 1).isSpace())
        --begin;
    if (start)
        *start = begin;
    return text.mid(begin, cursor - begin);
}

void ResourceView::onQueryEdited()
{
    updateCompletions();
}

void ResourceView::updateCompletions()
{
    const QString token = tokenUnderCursor();
    if (token.isEmpty() || token == QLatin1String("-")) {
        m_completer->popup()->hide();
        return;
    }
    QStringList completions = queryCompletions(token, m_kind);
    completions.removeAll(token);
    m_completions->setStringList(completions);
    if (completions.isEmpty()) {
        m_completer->popup()->hide();
        return;
    }
    m_completer->setCompletionPrefix(token);
    m_completer->complete();
}

void ResourceView::insertCompletion(const QString &completion)
{
    int start = 0;
    const QString token = tokenUnderCursor(&start);
    QString text = m_query->text();
    text.replace(start, token.size(), completion);
    m_query->setText(text);
    m_query->setCursorPosition(start + completion.size());
    // A field name ends in ':' and wants its value next: offer the values straight away.
    if (completion.endsWith(QLatin1Char(':')))
        QTimer::singleShot(0, this, &ResourceView::updateCompletions);
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

QJsonObject ResourceView::objectAt(int proxyRow) const
{
    if (!m_model || proxyRow < 0 || proxyRow >= m_model->rowCount())
        return {};
    return m_model->index(proxyRow, 0).data(m_objectRole).toJsonObject();
}

QJsonObject ResourceView::currentObject() const
{
    const QModelIndex current = m_table->currentIndex();
    return current.isValid() ? objectAt(current.row()) : QJsonObject();
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

void ResourceView::updateCounts()
{
    if (!m_model)
        return;
    const int shown = m_model->rowCount();
    m_counts->setText(tr("%n row(s)", nullptr, shown));
    if (shown == 0) {
        m_emptyHint->setText(m_query->text().trimmed().isEmpty() ? tr("Nothing here yet.")
                                                                 : tr("No row matches the filter."));
        m_emptyHint->show();
    } else {
        m_emptyHint->hide();
    }
}

} // namespace OpsDeck
