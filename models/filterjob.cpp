// The filter worker's computation: accepted flags by the query, then the order by the sort column.
#include "filterjob.h"

namespace OpsDeck {

namespace {

// How often a worker looks whether a newer keystroke made its work useless.
constexpr int kCancelCheckRows = 8192;

} // namespace

FilterResult FilterJob::run(FilterJob job)
{
    FilterResult result;
    result.generation = job.generation;
    const std::shared_ptr<const RowStore> store = std::move(job.store);
    const int rows = store->rowCount();
    result.rows = rows;
    auto stale = [&] { return job.latest && job.latest->load(std::memory_order_relaxed) != job.generation; };
    if (job.filter) {
        result.filtered = true;
        const bool all = job.matcher.isEmpty(); // every row passes: nothing to test
        const bool narrowing = !job.base.empty();
        result.accepted.assign(size_t(rows), all ? 1 : 0);
        for (int r = 0; r < rows && !all; ++r) {
            if (r % kCancelCheckRows == 0 && stale()) {
                result.cancelled = true;
                return result;
            }
            if (narrowing && (size_t(r) >= job.base.size() || !job.base[size_t(r)]))
                continue;
            result.accepted[size_t(r)] = job.matcher.accepts(*store, r) ? 1 : 0;
            ++result.tested;
        }
        result.matcher = std::move(job.matcher);
    }
    if (job.sort) {
        result.order = RowOrder::build(*store, job.sortColumn, job.sortOrder, stale);
        if (stale()) {
            result.cancelled = true;
            return result;
        }
        result.sorted = true;
    }
    return result;
}

} // namespace OpsDeck
