// One table of a resource kind: its widgets, its model, the query line with completion and the counts.
#include "resourceview.h"

#include "statebadgedelegate.h"
#include "tonepalette.h"

#include "core/query.h"
#include "models/filterproxymodel.h"

#include <QAbstractItemModel>
#include <QAbstractItemView>
#include <QAction>
#include <QCompleter>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QStringListModel>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

namespace OpsDeck {

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
    m_placeholder = kind.stateField.isEmpty()
                        ? tr("Filter: words, or field:value with %1…").arg(names.mid(0, 5).join(QStringLiteral(", ")))
                        : tr("Filter: state:%1 -state:%2 age>1h words…")
                              .arg(kind.states.value(0).toLower(), kind.states.value(1).toLower());
    m_query->setPlaceholderText(m_placeholder);
    const bool integers = std::any_of(kind.fields.cbegin(), kind.fields.cend(),
                                      [](const FieldSpec &f) { return f.type == FieldSpec::Type::Integer; });
    m_queryHelp = (integers ? tr("Fields: %1. Operators: field:value, field=value, -field:value, field>N, "
                                 "field:5xx (500 to 599), age>1h (s, m, h, d, w). Quote \"several words\".")
                            : tr("Fields: %1. Operators: field:value, field=value, -field:value, field>N, "
                                 "age>1h (s, m, h, d, w). Quote \"several words\"."))
                      .arg(names.join(QStringLiteral(", ")));
    m_query->setToolTip(m_queryHelp);

    m_counts = new QLabel(this);
    m_counts->setObjectName(QStringLiteral("rowCount"));
    m_counts->setForegroundRole(QPalette::PlaceholderText);
    // "240 rows (by the last valid filter)" is long, in French longer: in a narrow page it wraps
    // rather than take the room of the line being corrected.
    m_counts->setWordWrap(true);
    m_counts->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_query->setMinimumWidth(m_query->fontMetrics().averageCharWidth() * 28);

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
    // Tab goes on to the detail pane, as everywhere else: QTableView's own default walks the
    // cells (and moves the current row, so the pane shows another object) and never leaves.
    m_table->setTabKeyNavigation(false);
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

    // Over the empty table, where the eye is, rather than under it at the foot of the page; the
    // table's clicks (its context menu) go through it.
    m_emptyHint = new QLabel(m_table->viewport());
    m_emptyHint->setObjectName(QStringLiteral("emptyHint"));
    m_emptyHint->setAlignment(Qt::AlignCenter);
    m_emptyHint->setWordWrap(true);
    m_emptyHint->setForegroundRole(QPalette::PlaceholderText);
    m_emptyHint->setAttribute(Qt::WA_TransparentForMouseEvents);
    m_emptyHint->hide();
    m_table->viewport()->installEventFilter(this);

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

void ResourceView::setModel(QAbstractItemModel *model, int objectRole)
{
    m_model = model;
    m_objectRole = objectRole;
    m_table->setModel(model);
    restoreLayout();
    // The pane shows the row chosen: the current row once it is selected. Tab into a table with no
    // current row puts the cursor on its first row, unselected (QAbstractItemView::focusInEvent),
    // which chooses nothing; a click sets the current row before selecting it.
    QItemSelectionModel *selection = m_table->selectionModel();
    connect(selection, &QItemSelectionModel::currentRowChanged, this, [this, selection](const QModelIndex &current) {
        if (!current.isValid() || selection->isSelected(current))
            emit currentObjectChanged(currentObject());
    });
    connect(selection, &QItemSelectionModel::selectionChanged, this, [this](const QItemSelection &selected) {
        const QModelIndex current = m_table->currentIndex();
        if (current.isValid() && selected.contains(current))
            emit currentObjectChanged(currentObject());
    });
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

void ResourceView::onFilteringChanged(bool filtering)
{
    if (!filtering) {
        m_filteringDelay->stop();
        m_filtering->hide();
    } else if (m_filtering->isHidden() && !m_filteringDelay->isActive()) {
        m_filteringDelay->start();
    }
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

void ResourceView::setQueryShortcut(const QKeySequence &shortcut)
{
    m_query->setPlaceholderText(shortcut.isEmpty() ? m_placeholder
                                                   : tr("%1 (%2)").arg(m_placeholder,
                                                                       shortcut.toString(QKeySequence::NativeText)));
}

void ResourceView::setEmptyText(const QString &text)
{
    m_emptyText = text;
    updateCounts();
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
        m_queryBroken = true;
        updateCounts();
        return;
    }
    m_queryError->clear();
    m_queryError->hide();
    m_query->setToolTip(m_queryHelp);
    m_queryBroken = false;
    // Not an error (a composite or newer state must stay searchable), but worth saying when
    // nothing matches: "state:faild" names no state.
    m_unknownStates.clear();
    for (const QueryTerm &term : parse.query.terms) {
        if (term.type != FieldSpec::Type::State || term.negated)
            continue;
        for (const QString &value : term.values) {
            const bool known = std::any_of(m_kind.states.cbegin(), m_kind.states.cend(), [&](const QString &state) {
                return term.op == QueryTerm::Op::Equal ? state.compare(value, Qt::CaseInsensitive) == 0
                                                       : state.startsWith(value, Qt::CaseInsensitive);
            });
            if (!known)
                m_unknownStates.append(value);
        }
    }
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

bool ResourceView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_table->viewport() && event->type() == QEvent::Resize)
        placeEmptyHint();
    return QWidget::eventFilter(watched, event);
}

void ResourceView::placeEmptyHint()
{
    // The width of the table's visible part, less a margin; centred up and down in it.
    m_emptyHint->setGeometry(m_table->viewport()->rect().adjusted(24, 0, -24, 0));
}

void ResourceView::updateCounts()
{
    if (!m_model)
        return;
    const int shown = m_model->rowCount();
    // While the line does not read, the rows shown are those of the last filter that did.
    m_counts->setText(m_queryBroken ? tr("%1 (by the last valid filter)").arg(tr("%n row(s)", nullptr, shown))
                                    : tr("%n row(s)", nullptr, shown));
    if (shown == 0) {
        const QString empty = m_emptyText.isEmpty() ? tr("Nothing here yet.") : m_emptyText;
        QString noMatch = tr("No row matches the filter.");
        if (!m_unknownStates.isEmpty() && !m_kind.states.isEmpty())
            noMatch += QLatin1Char(' ')
                       + tr("No state begins with %1 (the states: %2).")
                             .arg(m_unknownStates.join(QStringLiteral(", ")), m_kind.states.join(QStringLiteral(", ")));
        m_emptyHint->setText(m_query->text().trimmed().isEmpty() ? empty : noMatch);
        placeEmptyHint();
        m_emptyHint->show();
    } else {
        m_emptyHint->hide();
    }
}

} // namespace OpsDeck
