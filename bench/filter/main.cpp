// opsdeck-bench-filter: GUI-thread time per keystroke of the console's query filter on synthetic rows.
#include "core/query.h"
#include "core/resourcekind.h"
#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDateTime>
#include <QElapsedTimer>
#include <QHeaderView>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTableView>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace OpsDeck;

namespace {

double percentile(std::vector<double> values, double p)
{
    std::sort(values.begin(), values.end());
    const size_t i = std::min(values.size() - 1, size_t(p * double(values.size() - 1) + 0.5));
    return values[i];
}

QList<QJsonObject> syntheticInstances(int count)
{
    // Names are unique (as in the demo data) so no per-text memo can help the free-text search.
    const QStringList teams{QStringLiteral("dataviz"), QStringLiteral("billing"), QStringLiteral("crm"),
                            QStringLiteral("search"), QStringLiteral("payroll"), QStringLiteral("wiki"),
                            QStringLiteral("ledger"), QStringLiteral("Analytics")};
    const QStringList customers{QStringLiteral("acme"), QStringLiteral("globex"), QStringLiteral("initech"),
                                QStringLiteral("umbrella"), QStringLiteral("hooli"), QStringLiteral("vandelay")};
    const QStringList states{QStringLiteral("RUNNING"), QStringLiteral("RUNNING"), QStringLiteral("RUNNING"),
                             QStringLiteral("STOPPED"), QStringLiteral("FAILED"), QStringLiteral("PENDING"),
                             QStringLiteral("PROVISIONING"), QStringLiteral("DESTROYED")};
    const QStringList owners{QStringLiteral("alice"), QStringLiteral("bob"), QStringLiteral("carol"),
                             QStringLiteral("dave")};
    QRandomGenerator random(42);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<QJsonObject> objects;
    objects.reserve(count);
    for (int i = 0; i < count; ++i) {
        const QString created = QDateTime::fromMSecsSinceEpoch(now - random.bounded(30 * 86400) * 1000LL, Qt::UTC)
                                    .toString(Qt::ISODateWithMs);
        objects << QJsonObject{
            {QStringLiteral("id"), i + 1},
            {QStringLiteral("name"), QStringLiteral("%1-%2-%3").arg(teams.at(random.bounded(int(teams.size()))),
                                                                   customers.at(random.bounded(int(customers.size()))))
                                         .arg(i, 6, 10, QLatin1Char('0'))},
            {QStringLiteral("organization_id"), 1 + random.bounded(20)},
            {QStringLiteral("provider_id"), 1 + random.bounded(10)},
            {QStringLiteral("application"), teams.at(random.bounded(int(teams.size())))},
            {QStringLiteral("owner"), owners.at(random.bounded(int(owners.size())))},
            {QStringLiteral("status"), states.at(random.bounded(int(states.size())))},
            {QStringLiteral("version"), 1 + random.bounded(5)},
            {QStringLiteral("created_at"), created},
            {QStringLiteral("updated_at"), created}};
    }
    return objects;
}

// What the previous proxy ran per row: the generic matcher over QVariant values and copied texts.
class GenericRow final : public QueryRow
{
public:
    GenericRow(const ResourceModel &model, int row)
        : m_model(model), m_row(row)
    {
    }
    QVariant value(int field) const override { return m_model.rawValue(m_row, field); }
    QString text(int field) const override { return m_model.cellText(m_row, field); }

private:
    const ResourceModel &m_model;
    int m_row;
};

struct Typing
{
    std::vector<double> ms;
    qsizetype tested = 0;
};

Typing typeAndErase(FilterProxyModel *proxy, QTableView *view, const QStringList &queries, bool verbose)
{
    Typing result;
    const auto key = [&](const QString &text) {
        QElapsedTimer clock;
        clock.start();
        proxy->setQuery(text);
        view->viewport()->repaint(); // the table reflects the query once this returns
        result.ms.push_back(clock.nsecsElapsed() / 1e6);
        if (verbose)
            std::printf("  '%s' %.2f ms, %lld rows tested, %d shown\n", qPrintable(text), result.ms.back(),
                        qlonglong(proxy->lastTestedRows()), proxy->rowCount());
        result.tested += proxy->lastTestedRows();
    };
    for (const QString &query : queries) {
        for (qsizetype n = 1; n <= query.size(); ++n)
            key(query.left(n));
        for (qsizetype n = query.size() - 1; n >= 0; --n)
            key(query.left(n));
    }
    return result;
}

void printTyping(const char *what, const Typing &t, int rows)
{
    std::printf("%s: %d keystrokes, GUI-thread time (filter + sort + repaint) p50 %.2f ms, p99 %.2f ms, max %.2f ms; "
                "%.0f rows tested per keystroke on average of %d\n",
                what, int(t.ms.size()), percentile(t.ms, 0.5), percentile(t.ms, 0.99),
                *std::max_element(t.ms.begin(), t.ms.end()), double(t.tested) / double(t.ms.size()), rows);
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Filter keystroke latency of the console's instances table."));
    parser.addHelpOption();
    parser.addOption({QStringLiteral("rows"), QStringLiteral("Synthetic instances (default 250000)."), QStringLiteral("N"),
                      QStringLiteral("250000")});
    parser.addOption({QStringLiteral("verbose"), QStringLiteral("Print every keystroke's time.")});
    parser.process(app);
    const bool verbose = parser.isSet(QStringLiteral("verbose"));
    const int rows = std::max(1, parser.value(QStringLiteral("rows")).toInt());

    const ResourceKind &kind = *resourceKindByName(u"instances");
    ResourceModel model(kind);
    model.replaceAll(syntheticInstances(rows));
    FilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QTableView view;
    view.setSortingEnabled(true);
    view.setModel(&proxy);
    view.resize(1200, 800);
    view.show();

    const int nameColumn = kind.fieldIndex(u"name");
    QElapsedTimer clock;
    clock.start();
    view.sortByColumn(nameColumn, Qt::AscendingOrder);
    view.viewport()->repaint();
    std::printf("rows %d, model memory %.0f bytes/row\n", model.rowCount(), double(model.memoryUsage()) / model.rowCount());
    std::printf("sort by name (once, on a header click): %.1f ms\n", clock.nsecsElapsed() / 1e6);

    // The per-row matcher the previous proxy ran for every row on every keystroke (no sort, no view).
    for (const QString &text : {QStringLiteral("state:running"), QStringLiteral("dataviz-ac")}) {
        const QueryParse parsed = parseQuery(text, kind);
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        QueryTextMemo memo;
        clock.restart();
        int accepted = 0;
        for (int r = 0; r < model.rowCount(); ++r)
            accepted += matches(parsed.query, GenericRow(model, r), now, &memo) ? 1 : 0;
        std::printf("previous per-row matcher, every row, '%s': %.1f ms (%d rows match)\n", qPrintable(text),
                    clock.nsecsElapsed() / 1e6, accepted);
    }

    const Typing stateAndWords = typeAndErase(&proxy, &view, {QStringLiteral("state:running dataviz-ac")}, verbose);
    printTyping("typing and erasing 'state:running dataviz-ac', sorted by name", stateAndWords, rows);
    const Typing wordsOnly = typeAndErase(&proxy, &view, {QStringLiteral("dataviz-ac"), QStringLiteral("-state:failed hooli")}, verbose);
    printTyping("typing and erasing 'dataviz-ac', '-state:failed hooli', sorted by name", wordsOnly, rows);
    view.sortByColumn(-1, Qt::AscendingOrder);
    const Typing unsorted = typeAndErase(&proxy, &view, {QStringLiteral("state:running dataviz-ac")}, verbose);
    printTyping("typing and erasing 'state:running dataviz-ac', unsorted", unsorted, rows);
    view.sortByColumn(nameColumn, Qt::AscendingOrder);

    // A flush of changed rows while a filter is active: what the proxy adds to a feed batch.
    proxy.setQuery(QStringLiteral("state:running"));
    QList<QJsonObject> changed;
    for (int r = 0; r < std::min(rows, int(ResourceModel::kRowsPerTurn)); ++r) {
        QJsonObject object = model.objectAt(r * std::max(1, rows / int(ResourceModel::kRowsPerTurn)));
        object.insert(QStringLiteral("version"), object.value(QStringLiteral("version")).toInteger() + 10);
        object.insert(QStringLiteral("status"), QStringLiteral("STOPPED"));
        changed << object;
    }
    model.upsert(changed);
    clock.restart();
    model.flush();
    view.viewport()->repaint();
    std::printf("one flush of %d changed rows with 'state:running' active, sorted by name: %.1f ms (model + proxy + repaint)\n",
                int(changed.size()), clock.nsecsElapsed() / 1e6);
    return 0;
}
