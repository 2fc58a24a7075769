// A whole new set of rows for a ResourceModel, encoded on whichever thread runs it (a relist).
#pragma once

#include "rowstore.h"

#include <QHash>
#include <QJsonObject>
#include <QList>

#include <atomic>
#include <memory>

namespace OpsDeck {

// A value handed back by the worker: the encoded rows and their id index, ready to be swapped in.
struct RowReplacement
{
    quint64 generation = 0;
    bool cancelled = false; // a newer replacement was asked for; nothing else is set
    std::shared_ptr<RowStore> store;
    QHash<qint64, int> rowOfId;
    int removed = 0; // rows left out by without()

    // Encodes objects in order (an id seen twice keeps its first row, with the later object's
    // values; objects without a numeric id are skipped). Gives up between chunks of rows once
    // `latest` (may be null) no longer holds `generation`. kind must outlive the call.
    static RowReplacement encode(const ResourceKind &kind, const QList<QJsonObject> &objects, quint64 generation,
                                 const std::shared_ptr<const std::atomic<quint64>> &latest);
    // A copy of store without `rows` (sorted ascending, unique), texts kept as they are: many rows
    // scattered over a large table (those a relist no longer found) go in one pass.
    static RowReplacement without(std::shared_ptr<const RowStore> store, const std::vector<int> &rows,
                                  quint64 generation, const std::shared_ptr<const std::atomic<quint64>> &latest);
};

} // namespace OpsDeck
