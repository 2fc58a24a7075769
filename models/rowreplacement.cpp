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

} // namespace OpsDeck
