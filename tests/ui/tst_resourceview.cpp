// A resource view over the real models: query errors inline, completion, remembered query and
// columns, sorting, selection (kept across resets), CSV export and the note shown while a slow
// filter runs.
#include "ui/pluralforms.h"
#include "ui/resourceview.h"

#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCompleter>
#include <QCoreApplication>
#include <QFile>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLineEdit>
#include <QLabel>
#include <QMenu>
#include <QScopeGuard>
#include <QSemaphore>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QStringListModel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

using namespace OpsDeck;

namespace {

QJsonObject instance(qint64 id, const QString &name, const QString &status, const QString &owner)
{
    return QJsonObject{{"id", id},
                       {"name", name},
                       {"organization_id", 1},
                       {"provider_id", 1},
                       {"application", "ledger"},
                       {"owner", owner},
                       {"status", status},
                       {"version", 1},
                       {"created_at", "2026-11-29T10:00:00.000Z"},
                       {"updated_at", "2026-11-29T10:00:00.000Z"},
                       {"status_changed_at", "2026-11-29T10:00:00.000Z"},
                       {"callback", QJsonValue::Null},
                       {"awaiting_ack", QJsonValue::Null},
                       {"destroy_after", QJsonValue::Null}};
}

// The proxy row showing id, or -1.
int proxyRowOf(const FilterProxyModel &proxy, qint64 id)
{
    const int sourceRow = proxy.resourceModel()->rowOfId(id);
    return sourceRow < 0 ? -1 : proxy.mapFromSource(proxy.resourceModel()->index(sourceRow, 0)).row();
}

QList<qint64> selectedIds(const ResourceView &view)
{
    QList<qint64> ids;
    for (const QModelIndex &row : view.table()->selectionModel()->selectedRows())
        ids.append(row.data(ResourceModel::IdRole).toLongLong());
    std::sort(ids.begin(), ids.end());
    return ids;
}

// An empty table of a kind, as a view shows it at first.
struct EmptyKindView
{
    explicit EmptyKindView(const QString &name)
        : kind(*resourceKindByName(name))
        , model(kind)
        , view(kind)
    {
        proxy.setSourceModel(&model);
        view.setModel(&proxy, ResourceModel::ObjectRole);
    }
    const ResourceKind &kind;
    ResourceModel model;
    FilterProxyModel proxy;
    ResourceView view;
};

} // namespace

class tst_ResourceView : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void queries_data();
    void queries();
    void queryRemembered();
    void completion();
    void columnsRemembered();
    void columnChooser();
    void columnTitlesFit_data();
    void columnTitlesFit();
    void whatMattersIsInSight_data();
    void whatMattersIsInSight();
    void sorting();
    void logsStartNewestFirst_data();
    void logsStartNewestFirst();
    void selectionAndCsv();
    void tabLeavesTheTable();
    void queryThatDoesNotReadSaysWhatIsShown();
    void unknownStateIsNamedWhenNothingMatches();
    void filteringNoteWaitsForASlowFilter();
    void filteringNoteSkipsAFastFilter();
    void selectionKeptAcrossAReset_data();
    void selectionKeptAcrossAReset();
    void vanishedRowLeavesNoSelection();

private:
    struct Fixture
    {
        Fixture()
            : model(*resourceKindByName(u"instances"))
        {
            proxy.setSourceModel(&model);
            model.replaceAll({instance(1, QStringLiteral("alpha"), QStringLiteral("RUNNING"), QStringLiteral("alice")),
                              instance(2, QStringLiteral("bravo, \"b\""), QStringLiteral("STOPPED"), QStringLiteral("bob")),
                              instance(3, QStringLiteral("charlie"), QStringLiteral("PENDING"), QStringLiteral("alice")),
                              instance(4, QStringLiteral("delta"), QStringLiteral("RUNNING"), QStringLiteral("carol"))});
        }
        ResourceModel model;
        FilterProxyModel proxy;
        QAbstractItemModelTester tester{&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal};
    };
    std::unique_ptr<ResourceView> makeView(Fixture &f);
};

void tst_ResourceView::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("OpsDeckTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_resourceview"));
    // The row count's "1 row" and "2 rows" come from the console's English plural forms.
    QVERIFY(PluralForms::install());
}

void tst_ResourceView::init()
{
    QSettings().clear();
}

std::unique_ptr<ResourceView> tst_ResourceView::makeView(Fixture &f)
{
    auto view = std::make_unique<ResourceView>(*resourceKindByName(u"instances"));
    connect(view.get(), &ResourceView::queryChanged, &f.proxy, &FilterProxyModel::setQuery);
    view->setModel(&f.proxy, ResourceModel::ObjectRole);
    view->resize(900, 400);
    return view;
}

void tst_ResourceView::queries_data()
{
    QTest::addColumn<QString>("query");
    QTest::addColumn<int>("rows");
    QTest::addColumn<QString>("error");

    QTest::newRow("empty") << "" << 4 << "";
    QTest::newRow("state") << "state:running" << 2 << "";
    QTest::newRow("negated state") << "-state:running" << 2 << "";
    QTest::newRow("owner and state") << "owner:alice state:pending" << 1 << "";
    QTest::newRow("free text") << "charl" << 1 << "";
    QTest::newRow("no match") << "owner:zed" << 0 << "";
    QTest::newRow("unknown field") << "colour:red" << 4 << "colour";
    QTest::newRow("bad duration") << "age>soon" << 4 << "age";
    QTest::newRow("unterminated quote") << "\"abc" << 4 << "quote";
}

void tst_ResourceView::queries()
{
    QFETCH(QString, query);
    QFETCH(int, rows);
    QFETCH(QString, error);

    Fixture f;
    auto view = makeView(f);
    view->show();
    QTest::keyClicks(view->queryEdit(), query);
    QTest::keyClick(view->queryEdit(), Qt::Key_Return);
    QTRY_COMPARE(f.proxy.rowCount(), rows);
    // The count reads as English: "1 row", "2 rows", never "row(s)".
    auto *count = view->findChild<QLabel *>(QStringLiteral("rowCount"));
    QVERIFY(count);
    // While the line does not read, the rows are the last good filter's, and the count says so.
    const QString expected = rows == 1 ? QStringLiteral("1 row") : QStringLiteral("%1 rows").arg(rows);
    QCOMPARE(count->text(), error.isEmpty() ? expected : expected + QStringLiteral(" (by the last valid filter)"));
    if (error.isEmpty()) {
        QCOMPARE(view->queryError(), QString());
    } else {
        // A readable message with the column, shown under the query line.
        QVERIFY2(view->queryError().contains(error, Qt::CaseInsensitive), qPrintable(view->queryError()));
        QVERIFY2(view->queryError().contains(QStringLiteral("column")), qPrintable(view->queryError()));
    }
}

void tst_ResourceView::queryRemembered()
{
    {
        Fixture f;
        auto view = makeView(f);
        view->setQueryText(QStringLiteral("owner:alice"));
        QCOMPARE(f.proxy.rowCount(), 2);
    }
    // A new view (as after a restart) starts with the same query in force.
    Fixture f;
    auto view = makeView(f);
    QCOMPARE(view->queryText(), QStringLiteral("owner:alice"));
    QCOMPARE(f.proxy.rowCount(), 2);
}

void tst_ResourceView::completion()
{
    Fixture f;
    auto view = makeView(f);
    view->show();
    QVERIFY(QTest::qWaitForWindowExposed(view.get()));
    view->queryEdit()->setFocus();
    QTest::keyClicks(view->queryEdit(), QStringLiteral("sta"));
    auto *completer = view->findChild<QCompleter *>(QStringLiteral("queryCompleter"));
    QVERIFY(completer);
    const QStringList offered = static_cast<QStringListModel *>(completer->model())->stringList();
    QVERIFY2(offered.contains(QStringLiteral("state:")) || offered.contains(QStringLiteral("status:")),
             qPrintable(offered.join(' ')));
    // Choosing a completion replaces only the token being typed.
    view->queryEdit()->setText(QStringLiteral("owner:alice sta"));
    view->queryEdit()->setCursorPosition(view->queryEdit()->text().size());
    emit completer->activated(QStringLiteral("state:"));
    QCOMPARE(view->queryText(), QStringLiteral("owner:alice state:"));
}

void tst_ResourceView::columnsRemembered()
{
    const int ownerColumn = resourceKindByName(u"instances")->fieldIndex(u"owner");
    const int versionColumn = resourceKindByName(u"instances")->fieldIndex(u"version");
    {
        Fixture f;
        auto view = makeView(f);
        QHeaderView *header = view->table()->horizontalHeader();
        // Defaults come from the kind's description.
        QVERIFY(!header->isSectionHidden(ownerColumn));
        QVERIFY(header->isSectionHidden(versionColumn));
        header->setSectionHidden(ownerColumn, true);
        header->setSectionHidden(versionColumn, false);
        header->resizeSection(0, 123);
        view->saveLayout();
    }
    Fixture f;
    auto view = makeView(f);
    QHeaderView *header = view->table()->horizontalHeader();
    QVERIFY(header->isSectionHidden(ownerColumn));
    QVERIFY(!header->isSectionHidden(versionColumn));
    QCOMPARE(header->sectionSize(0), 123);
}

void tst_ResourceView::columnChooser()
{
    Fixture f;
    auto view = makeView(f);
    const ResourceKind &kind = *resourceKindByName(u"instances");
    std::unique_ptr<QMenu> menu(view->createColumnMenu());
    const QList<QAction *> actions = menu->actions();
    // One entry per column, a separator, then reset.
    QCOMPARE(actions.size(), kind.fields.size() + 2);
    const int ownerColumn = kind.fieldIndex(u"owner");
    QAction *owner = actions.at(ownerColumn);
    QCOMPARE(owner->text(), kind.fields.at(ownerColumn).title);
    QVERIFY(owner->isChecked());
    owner->toggle();
    QVERIFY(view->table()->horizontalHeader()->isSectionHidden(ownerColumn));
    menu->findChild<QAction *>(QStringLiteral("resetColumns"))->trigger();
    QVERIFY(!view->table()->horizontalHeader()->isSectionHidden(ownerColumn));

    // With a single visible column left, its entry cannot be unchecked.
    QHeaderView *header = view->table()->horizontalHeader();
    for (int i = 1; i < header->count(); ++i)
        header->setSectionHidden(i, true);
    std::unique_ptr<QMenu> last(view->createColumnMenu());
    QVERIFY(!last->actions().at(0)->isEnabled());
    QVERIFY(last->actions().at(1)->isEnabled());
}

void tst_ResourceView::columnTitlesFit_data()
{
    QTest::addColumn<QString>("kind");
    for (const ResourceKind &kind : resourceKinds())
        QTest::newRow(qPrintable(kind.name)) << kind.name;
}

void tst_ResourceView::columnTitlesFit()
{
    // "Consecutive failures" cut to "Consecutive" hid what the endpoints' column counts.
    QFETCH(QString, kind);
    EmptyKindView e(kind);
    const ResourceKind &k = e.kind;
    ResourceView &view = e.view;
    QHeaderView *header = view.table()->horizontalHeader();
    for (int i = 0; i < header->count(); ++i) {
        if (header->isSectionHidden(i))
            continue;
        QVERIFY2(header->sectionSize(i) >= header->sectionSizeHint(i),
                 qPrintable(QStringLiteral("%1: %2 < %3").arg(k.fields.at(i).title).arg(header->sectionSize(i)).arg(header->sectionSizeHint(i))));
    }
}

void tst_ResourceView::whatMattersIsInSight_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QStringList>("whole");   // in sight from end to end
    QTest::addColumn<QStringList>("started"); // its first 100 px (or all of it) in sight
    // Callbacks showed Id, Event (the same on most rows), State, Last status and Last error: the
    // instance and the next attempt were scrolled to. The audit log hid the reason.
    QTest::newRow("deliveries") << QStringLiteral("deliveries")
                                << QStringList{"id", "state", "last_status", "last_error", "instance_id"}
                                << QStringList{};
    QTest::newRow("audit") << QStringLiteral("audit")
                           << QStringList{"at", "actor.subject", "action", "kind", "object_id"}
                           << QStringList{"reason"};
    QTest::newRow("instances") << QStringLiteral("instances") << QStringList{"id", "name", "status"}
                               << QStringList{"organization_id"};
}

void tst_ResourceView::whatMattersIsInSight()
{
    // The table's share of a 1400 px window, beside the sidebar and the detail pane.
    QFETCH(QString, kind);
    QFETCH(QStringList, whole);
    QFETCH(QStringList, started);
    EmptyKindView e(kind);
    const ResourceKind &k = e.kind;
    ResourceView &view = e.view;
    view.resize(700, 400);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QHeaderView *header = view.table()->horizontalHeader();
    const int width = view.table()->viewport()->width();
    QVERIFY(width > 600);
    for (const QString &key : whole) {
        const int column = k.fieldIndex(key);
        QVERIFY2(column >= 0 && !header->isSectionHidden(column), qPrintable(key));
        const int right = header->sectionViewportPosition(column) + header->sectionSize(column);
        QVERIFY2(right <= width, qPrintable(QStringLiteral("%1 ends at %2 of %3").arg(key).arg(right).arg(width)));
    }
    for (const QString &key : started) {
        const int column = k.fieldIndex(key);
        QVERIFY2(column >= 0 && !header->isSectionHidden(column), qPrintable(key));
        const int left = header->sectionViewportPosition(column);
        QVERIFY2(left + qMin(100, header->sectionSize(column)) <= width,
                 qPrintable(QStringLiteral("%1 starts at %2 of %3").arg(key).arg(left).arg(width)));
    }
}

void tst_ResourceView::sorting()
{
    Fixture f;
    auto view = makeView(f);
    view->show();
    const int nameColumn = resourceKindByName(u"instances")->fieldIndex(u"name");
    view->table()->sortByColumn(nameColumn, Qt::DescendingOrder);
    QCOMPARE(f.proxy.index(0, nameColumn).data().toString(), QStringLiteral("delta"));
    view->table()->sortByColumn(nameColumn, Qt::AscendingOrder);
    QCOMPARE(f.proxy.index(0, nameColumn).data().toString(), QStringLiteral("alpha"));
    // Ids sort as numbers, not text.
    f.model.upsert({instance(10, QStringLiteral("echo"), QStringLiteral("RUNNING"), QStringLiteral("dan"))});
    f.model.flush();
    view->table()->sortByColumn(0, Qt::DescendingOrder);
    QCOMPARE(f.proxy.index(0, 0).data(ResourceModel::IdRole).toLongLong(), 10);
}

void tst_ResourceView::logsStartNewestFirst_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("order");
    // What just happened is at the top of a log; a list of things is read from its first.
    QTest::newRow("audit") << "audit" << int(Qt::DescendingOrder);
    QTest::newRow("callbacks") << "deliveries" << int(Qt::DescendingOrder);
    QTest::newRow("instances") << "instances" << int(Qt::AscendingOrder);
    QTest::newRow("endpoints") << "endpoints" << int(Qt::AscendingOrder);
}

void tst_ResourceView::logsStartNewestFirst()
{
    QFETCH(QString, kind);
    QFETCH(int, order);
    const ResourceKind *k = resourceKindByName(kind);
    QVERIFY(k);
    ResourceModel model(*k);
    FilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::Fatal);
    model.replaceAll({QJsonObject{{"id", 1}}, QJsonObject{{"id", 3}}, QJsonObject{{"id", 2}}});
    ResourceView view(*k);
    view.setModel(&proxy, ResourceModel::ObjectRole);
    QCOMPARE(int(view.table()->horizontalHeader()->sortIndicatorOrder()), order);
    QCOMPARE(view.table()->horizontalHeader()->sortIndicatorSection(), 0);
    QTRY_COMPARE(proxy.index(0, 0).data(ResourceModel::IdRole).toLongLong(), order == Qt::DescendingOrder ? 3 : 1);
}

void tst_ResourceView::selectionAndCsv()
{
    Fixture f;
    auto view = makeView(f);
    view->show();
    QSignalSpy current(view.get(), &ResourceView::currentObjectChanged);
    view->table()->sortByColumn(0, Qt::AscendingOrder);
    view->table()->selectRow(1);
    QCOMPARE(current.count(), 1);
    QCOMPARE(current.at(0).at(0).toJsonObject().value("id").toInteger(), 2);
    QCOMPARE(view->currentObject().value("name").toString(), QStringLiteral("bravo, \"b\""));

    view->setQueryText(QStringLiteral("state:running,stopped"));
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("out.csv"));
    QString error;
    QVERIFY2(view->exportCsv(path, &error), qPrintable(error));
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(file.readAll()).split(QStringLiteral("\r\n"), Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 1 + 3); // header + the rows the filter shows
    QVERIFY2(lines.at(0).startsWith(QStringLiteral("ID,Name")), qPrintable(lines.at(0)));
    // Commas and quotes are quoted the RFC 4180 way.
    QVERIFY2(lines.at(2).contains(QStringLiteral("\"bravo, \"\"b\"\"\"")), qPrintable(lines.at(2)));
    // Hidden columns are not exported.
    QVERIFY(!lines.at(0).contains(QStringLiteral("Version")));
}

void tst_ResourceView::tabLeavesTheTable()
{
    // Tab goes on from the table to what follows it (the detail pane, in the window), without
    // walking the cells: that moved the current row, so the pane showed another object.
    Fixture f;
    QWidget window;
    auto *layout = new QVBoxLayout(&window);
    auto view = makeView(f);
    layout->addWidget(view.get());
    auto *after = new QLineEdit(&window);
    layout->addWidget(after);
    window.show();
    window.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&window));
    view->table()->selectRow(1);
    const QModelIndex current = view->table()->currentIndex();
    QVERIFY(current.isValid());
    view->table()->setFocus();
    QTRY_VERIFY(view->table()->hasFocus());
    QTest::keyClick(view->table(), Qt::Key_Tab);
    QVERIFY2(after->hasFocus(), QApplication::focusWidget() ? QApplication::focusWidget()->metaObject()->className() : "none");
    QCOMPARE(view->table()->currentIndex(), current);
    QTest::keyClick(after, Qt::Key_Backtab);
    QVERIFY(view->table()->hasFocus());
    QCOMPARE(view->table()->currentIndex(), current);
}

void tst_ResourceView::queryThatDoesNotReadSaysWhatIsShown()
{
    // A typo leaves the last good filter's rows: the count says so, the tooltip says what is
    // wrong, and once the line reads again the help comes back.
    Fixture f;
    auto view = makeView(f);
    view->show();
    const QString help = view->queryEdit()->toolTip();
    QVERIFY(help.startsWith(QStringLiteral("Fields:")));
    view->setQueryText(QStringLiteral("state:running"));
    QTRY_COMPARE(f.proxy.rowCount(), 2);
    auto *counts = view->findChild<QLabel *>(QStringLiteral("rowCount"));
    QVERIFY(counts);
    QTRY_COMPARE(counts->text(), QStringLiteral("2 rows"));
    view->setQueryText(QStringLiteral("stte:failed"));
    QTRY_COMPARE(counts->text(), QStringLiteral("2 rows (by the last valid filter)"));
    QVERIFY2(view->queryEdit()->toolTip().contains(QStringLiteral("unknown field")), qPrintable(view->queryEdit()->toolTip()));
    // In a narrow view the line being corrected keeps the room to read it; the count wraps.
    view->resize(420, 400);
    QTRY_COMPARE(view->width(), 420);
    QVERIFY2(view->queryEdit()->width() >= view->queryEdit()->fontMetrics().averageCharWidth() * 28,
             qPrintable(QString::number(view->queryEdit()->width())));
    QVERIFY(counts->geometry().right() <= view->width());
    QVERIFY(counts->height() >= counts->heightForWidth(counts->width()));
    view->setQueryText(QStringLiteral("state:stopped"));
    QTRY_COMPARE(counts->text(), QStringLiteral("1 row"));
    QCOMPARE(view->queryEdit()->toolTip(), help);
}

void tst_ResourceView::unknownStateIsNamedWhenNothingMatches()
{
    Fixture f;
    auto view = makeView(f);
    view->show();
    auto *hint = view->findChild<QLabel *>(QStringLiteral("emptyHint"));
    QVERIFY(hint);
    view->setQueryText(QStringLiteral("state:faild"));
    QTRY_COMPARE(f.proxy.rowCount(), 0);
    QTRY_VERIFY2(hint->text().contains(QStringLiteral("No state begins with faild")), qPrintable(hint->text()));
    QVERIFY2(hint->text().contains(QStringLiteral("RUNNING")), qPrintable(hint->text()));
    // Said over the empty table, where the eye is, not under it at the foot of the page.
    QCOMPARE(hint->parentWidget(), view->table()->viewport());
    QVERIFY(hint->isVisible());
    QVERIFY(view->table()->viewport()->rect().contains(hint->geometry().center()));
    // A known state that matches nothing here is no typo.
    view->setQueryText(QStringLiteral("state:destroyed"));
    QTRY_VERIFY(!hint->text().contains(QStringLiteral("No state begins")));
    QCOMPARE(hint->text(), QStringLiteral("No row matches the filter."));
}

void tst_ResourceView::filteringNoteWaitsForASlowFilter()
{
    Fixture f;
    f.proxy.setAsyncThreshold(0); // every filter goes to the worker
    auto view = makeView(f);
    view->show();
    QTRY_VERIFY(!f.proxy.isFiltering()); // the view applied its remembered (empty) query
    QLabel *note = view->filteringIndicator();
    QVERIFY(note);
    QVERIFY(!note->accessibleName().isEmpty());
    QVERIFY(note->isHidden());

    // The proxy's worker threads are kept busy, so the filter's answer waits until released.
    auto *pool = f.proxy.findChild<QThreadPool *>();
    QVERIFY(pool);
    const int threads = pool->maxThreadCount();
    QSemaphore busy;
    const auto release = qScopeGuard([&busy, threads] { busy.release(threads); });
    for (int i = 0; i < threads; ++i)
        pool->start([&busy] { busy.acquire(); });

    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    QTest::keyClicks(view->queryEdit(), QStringLiteral("state:running"));
    QTest::keyClick(view->queryEdit(), Qt::Key_Return);
    QVERIFY(f.proxy.isFiltering());
    QVERIFY2(note->isHidden(), "shown before the delay");
    QTRY_VERIFY(note->isVisible());
    QCOMPARE(f.proxy.rowCount(), 4); // the previous rows stay shown meanwhile

    busy.release(threads);
    QTRY_VERIFY(!published.isEmpty());
    QCOMPARE(f.proxy.rowCount(), 2);
    QVERIFY(!f.proxy.isFiltering());
    QVERIFY(note->isHidden());
}

void tst_ResourceView::filteringNoteSkipsAFastFilter()
{
    Fixture f;
    f.proxy.setAsyncThreshold(0);
    auto view = makeView(f);
    view->show();
    QTRY_VERIFY(!f.proxy.isFiltering()); // the view applied its remembered (empty) query
    QLabel *note = view->filteringIndicator();
    auto *delay = view->findChild<QTimer *>(QStringLiteral("filteringDelay"));
    QVERIFY(note && delay);

    // A worker's answer: the note is only scheduled, and dropped with the answer.
    QSignalSpy published(&f.proxy, &FilterProxyModel::filterPublished);
    QVERIFY(f.proxy.setQuery(QStringLiteral("owner:alice")));
    QVERIFY(f.proxy.isFiltering());
    QVERIFY(note->isHidden());
    QVERIFY(delay->isActive());
    QTRY_VERIFY(!published.isEmpty());
    QCOMPARE(f.proxy.rowCount(), 2);
    QVERIFY(note->isHidden());
    QVERIFY(!delay->isActive());

    // However often it starts and stops, a filter that ends before the delay never shows the note.
    for (int i = 0; i < 3; ++i) {
        emit f.proxy.filteringChanged(true);
        QVERIFY(delay->isActive());
        emit f.proxy.filteringChanged(false);
        QVERIFY(!delay->isActive());
        QVERIFY(note->isHidden());
    }
}

void tst_ResourceView::selectionKeptAcrossAReset_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("onWorkers"); // the relist encoded, filtered and sorted on worker threads

    QTest::newRow("relist: new order, new rows") << QStringLiteral("relist") << false;
    QTest::newRow("relist on the workers") << QStringLiteral("relist") << true;
    QTest::newRow("scattered removal of half the rows") << QStringLiteral("removal") << false;
}

void tst_ResourceView::selectionKeptAcrossAReset()
{
    QFETCH(QString, change);
    QFETCH(bool, onWorkers);
    Fixture f;
    if (onWorkers) {
        f.model.setAsyncThreshold(0);
        f.proxy.setAsyncThreshold(0);
    }
    // Enough rows that the removal of every other one is cheaper as one reset than as ranges.
    const int rowCount = change == QLatin1String("removal") ? 2000 : 40;
    QList<QJsonObject> rows;
    for (int id = 1; id <= rowCount; ++id)
        rows.append(instance(id, QStringLiteral("row-%1").arg(id, 4, 10, QLatin1Char('0')), QStringLiteral("RUNNING"),
                             QStringLiteral("alice")));
    f.model.replaceAll(rows);
    f.model.flush();
    auto view = makeView(f);
    view->show();
    const int nameColumn = resourceKindByName(u"instances")->fieldIndex(QStringLiteral("name"));
    view->table()->sortByColumn(nameColumn, Qt::AscendingOrder);
    QTRY_VERIFY(!f.proxy.isFiltering());

    const qint64 other = rowCount / 2 - 1;
    const qint64 selected = rowCount / 2 + 1;
    view->table()->selectRow(proxyRowOf(f.proxy, other));
    view->table()->selectionModel()->select(f.proxy.index(proxyRowOf(f.proxy, selected), 0),
                                            QItemSelectionModel::Select | QItemSelectionModel::Rows);
    view->table()->selectionModel()->setCurrentIndex(f.proxy.index(proxyRowOf(f.proxy, selected), nameColumn),
                                                     QItemSelectionModel::NoUpdate);
    QCOMPARE(view->currentObject().value("id").toInteger(), selected);
    const int rowBefore = view->table()->currentIndex().row();
    QSignalSpy current(view.get(), &ResourceView::currentObjectChanged);
    QSignalSpy reset(&f.proxy, &QAbstractItemModel::modelReset);

    if (change == QLatin1String("relist")) {
        // The same rows backwards, and new ones whose names sort before them all.
        QList<QJsonObject> relisted(rows.crbegin(), rows.crend());
        for (int i = 1; i <= 10; ++i)
            relisted.append(instance(1000 + i, QStringLiteral("new-%1").arg(i), QStringLiteral("PENDING"),
                                     QStringLiteral("bob")));
        f.model.replaceAll(relisted);
    } else {
        QList<qint64> even;
        for (qint64 id = 2; id <= rowCount; id += 2)
            even.append(id);
        f.model.remove(even);
    }
    f.model.flush();
    QTRY_COMPARE(reset.count(), 1);
    QTRY_VERIFY(!f.proxy.isFiltering());
    QVERIFY2(view->table()->currentIndex().row() != rowBefore, "the current row kept its place: rows and ids would look alike");

    // The same objects selected, the same one current, under the rows that moved.
    const qint64 otherKept = change == QLatin1String("removal") && other % 2 == 0 ? -1 : other;
    const QList<qint64> expected = otherKept < 0 ? QList<qint64>{selected} : QList<qint64>{otherKept, selected};
    QCOMPARE(selectedIds(*view), expected);
    QCOMPARE(view->currentObject().value("id").toInteger(), selected);
    QCOMPARE(view->table()->currentIndex().column(), nameColumn);
    QVERIFY(!current.isEmpty());
    QCOMPARE(current.last().at(0).toJsonObject().value("id").toInteger(), selected);
    // ... and in sight.
    const QRect shown = view->table()->visualRect(view->table()->currentIndex());
    QVERIFY(view->table()->viewport()->rect().intersects(shown));
}

void tst_ResourceView::vanishedRowLeavesNoSelection()
{
    Fixture f;
    auto view = makeView(f);
    view->show();
    view->table()->selectRow(proxyRowOf(f.proxy, 3));
    QCOMPARE(view->currentObject().value("id").toInteger(), 3);
    QSignalSpy current(view.get(), &ResourceView::currentObjectChanged);

    // A relist without it.
    f.model.replaceAll({instance(1, QStringLiteral("alpha"), QStringLiteral("RUNNING"), QStringLiteral("alice")),
                        instance(2, QStringLiteral("bravo"), QStringLiteral("STOPPED"), QStringLiteral("bob")),
                        instance(5, QStringLiteral("echo"), QStringLiteral("PENDING"), QStringLiteral("carol"))});
    f.model.flush();
    QCOMPARE(f.proxy.rowCount(), 3);
    QVERIFY(selectedIds(*view).isEmpty());
    QVERIFY(!view->table()->currentIndex().isValid());
    // Whoever shows the current object hears it is gone.
    QCOMPARE(current.count(), 1);
    QVERIFY(current.at(0).at(0).toJsonObject().isEmpty());

    // A filter that hides the current row (a layout change) says so too.
    view->table()->selectRow(proxyRowOf(f.proxy, 2));
    current.clear();
    view->setQueryText(QStringLiteral("state:running"));
    QTRY_COMPARE(f.proxy.rowCount(), 1);
    QVERIFY(!view->table()->currentIndex().isValid());
    QCOMPARE(current.count(), 1);
    QVERIFY(current.at(0).at(0).toJsonObject().isEmpty());
}

QTEST_MAIN(tst_ResourceView)
#include "tst_resourceview.moc"
