// The filter proxy tests' fixture: generated instance rows, a model behind a proxy, and the brute-force reference.
#pragma once

#include "models/filterproxymodel.h"
#include "models/resourcemodel.h"

#include <QAbstractItemModel>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace OpsDeck::Test {

// The proxy's clock: ages are measured from here.
extern const qint64 kNow;
// Names (mixed case, non-ASCII, a Kelvin sign) and states the generated rows cycle through.
extern const QStringList kNames;
extern const QStringList kStates;

QJsonObject instance(qint64 id, const QString &name, const QString &status, qint64 provider, const QString &created,
                     qint64 version = 1);
// Four instances of providers 7 ("Acme") and 8 ("Globex"), ids 1, 2, 10 and 3.
QList<QJsonObject> fixture();
// Row `id` of a generation; another salt changes its name, state and version.
QJsonObject generated(qint64 id, int salt);
QList<QJsonObject> generatedRows(qint64 count, int salt);

// The proxy's ids in its order.
QList<qint64> proxyIds(const QAbstractItemModel &proxy);
QList<qint64> sortedIds(const QAbstractItemModel &proxy);

// The rows a query must show, in source-id order, by the generic matcher on each row's object.
QList<qint64> bruteForce(const ResourceModel &model, const QString &text);

// One batch over rows 1..rows, applied at once: every changeStep-th row from `round` changed (new
// states and names), ten new rows, and with removeStep > 0 every removeStep-th row from removeFrom
// removed.
void applyBatch(ResourceModel &model, int round, qint64 rows, qint64 changeStep, qint64 removeFrom, qint64 removeStep);

// Whether the proxy's rows are in name order (column 1), case-insensitively; `why` names a pair out of order.
bool inNameOrder(const QAbstractItemModel &proxy, Qt::SortOrder order, QString *why);

// The fixture's instances behind a proxy on a fixed clock that names providers.
struct Fixture
{
    Fixture();
    ResourceModel model;
    FilterProxyModel proxy;
};

} // namespace OpsDeck::Test
