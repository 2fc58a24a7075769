// Encoding a relist's rows into a fresh store and id index, off the GUI thread when large.
#include "rowreplacement.h"

#include <vector>

namespace OpsDeck {

namespace {

// How often a worker looks whether a newer relist made its work useless.
constexpr qsizetype kCheckRows = 4096;

} // namespace

RowReplacement RowReplacement::encode(const ResourceKind &kind, const QList<QJsonObject> &objects, quint64 generation,
                                      const std::shared_ptr<const std::atomic<quint64>> &latest)
{
    RowReplacement result;
    result.generation = generation;
    auto store = std::make_shared<RowStore>(kind);
    store->reserveRows(objects.size());
    result.rowOfId.reserve(objects.size());
    std::vector<RowStore::Cell> cells(static_cast<size_t>(store->fieldCount()));
    for (qsizetype i = 0; i < objects.size(); ++i) {
        if (i % kCheckRows == 0 && latest && latest->load(std::memory_order_relaxed) != generation) {
            result.cancelled = true;
            result.rowOfId.clear();
            return result;
        }
        const QJsonObject &object = objects.at(i);
        const QJsonValue idValue = object.value(QLatin1String("id"));
        if (!idValue.isDouble())
            continue;
        const qint64 id = idValue.toInteger();
        const auto existing = result.rowOfId.constFind(id);
        if (existing != result.rowOfId.cend()) {
            store->encode(object, cells.data(), store->row(*existing));
            store->setRow(*existing, cells.data());
            continue;
        }
        store->encode(object, cells.data(), nullptr);
        result.rowOfId.insert(id, store->rowCount());
        store->appendRows(cells.data(), 1);
    }
    store->squeeze();
    result.store = std::move(store);
    return result;
}

RowReplacement RowReplacement::without(std::shared_ptr<const RowStore> store, const std::vector<int> &rows,
                                       quint64 generation, const std::shared_ptr<const std::atomic<quint64>> &latest)
{
    RowReplacement result;
    result.generation = generation;
    auto stale = [&] { return latest && latest->load(std::memory_order_relaxed) != generation; };
    if (stale()) {
        result.cancelled = true;
        return result;
    }
    auto copy = std::make_shared<RowStore>(*store);
    store.reset(); // the snapshot is let go as soon as it was read
    copy->eraseRows(rows);
    if (stale()) {
        result.cancelled = true;
        return result;
    }
    const int idField = copy->kind().fieldIndex(u"id");
    const int count = copy->rowCount();
    result.rowOfId.reserve(count);
    for (int r = 0; r < count; ++r)
        result.rowOfId.insert(qint64(copy->cell(r, idField)), r);
    result.removed = int(rows.size());
    result.store = std::move(copy);
    return result;
}

} // namespace OpsDeck
