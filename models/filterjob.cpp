// The filter worker's computation: accepted flags by the query, in chunks any number of threads
// take, then the order by the sort column.
#include "filterjob.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace OpsDeck {

// The job's thread keeps the snapshot alive until every helper that took part has finished; a
// helper that comes after that finds the scan closed and touches nothing.
struct FilterScan
{
    const RowStore *store = nullptr; // not owned: the job's snapshot
    std::vector<quint8> base;        // when not empty: only rows accepted here are tested
    std::vector<quint8> accepted;    // each chunk written by the thread that took it
    int rows = 0;
    quint64 generation = 0;
    std::shared_ptr<const std::atomic<quint64>> latest;
    RowMatcher matcher;              // copied by each helper; never used itself
    std::atomic<int> nextChunk{0};
    std::atomic<bool> cancelled{false};

    // Standard ones: their pthread calls are what thread sanitizers follow.
    std::mutex mutex;
    std::condition_variable idle;
    bool closed = false;  // under mutex
    int active = 0;       // helpers taking chunks, under mutex
    qsizetype helped = 0; // rows tested by helpers, under mutex

    // Tests chunks until none is left or a newer job made the work useless; returns the rows tested.
    qsizetype take(RowMatcher &rowMatcher);
    void help();
};

namespace {

// Rows a thread takes at a time; also how often it looks whether a newer keystroke made the work
// useless.
constexpr int kChunkRows = 8192;

} // namespace

qsizetype FilterScan::take(RowMatcher &rowMatcher)
{
    qsizetype tested = 0;
    const bool narrowing = !base.empty();
    for (;;) {
        if (cancelled.load(std::memory_order_relaxed))
            return tested;
        const int first = nextChunk.fetch_add(1, std::memory_order_relaxed) * kChunkRows;
        if (first >= rows)
            return tested;
        if (latest && latest->load(std::memory_order_relaxed) != generation) {
            cancelled.store(true, std::memory_order_relaxed);
            return tested;
        }
        const int end = std::min(rows, first + kChunkRows);
        for (int r = first; r < end; ++r) {
            if (narrowing && (size_t(r) >= base.size() || !base[size_t(r)]))
                continue;
            accepted[size_t(r)] = rowMatcher.accepts(*store, r) ? 1 : 0;
            ++tested;
        }
    }
}

void FilterScan::help()
{
    {
        const std::lock_guard<std::mutex> lock(mutex);
        if (closed)
            return;
        ++active;
    }
    RowMatcher own = matcher;
    const qsizetype tested = take(own);
    const std::lock_guard<std::mutex> lock(mutex);
    helped += tested;
    --active;
    idle.notify_all();
}

namespace {

std::shared_ptr<FilterScan> makeScan(FilterJob &job)
{
    auto scan = std::make_shared<FilterScan>();
    scan->store = job.store.get();
    scan->rows = job.store->rowCount();
    scan->base = std::move(job.base);
    scan->accepted.assign(size_t(scan->rows), 0);
    scan->generation = job.generation;
    scan->latest = job.latest;
    return scan;
}

} // namespace

std::function<void()> FilterJob::share()
{
    Q_ASSERT(!scan && store);
    scan = makeScan(*this);
    scan->matcher = matcher;
    return [shared = scan] { shared->help(); };
}

FilterResult FilterJob::run(FilterJob job)
{
    FilterResult result;
    result.generation = job.generation;
    if (job.filter && !job.scan)
        job.scan = makeScan(job);
    const std::shared_ptr<const RowStore> store = std::move(job.store);
    const int rows = store->rowCount();
    result.rows = rows;
    auto stale = [&] { return job.latest && job.latest->load(std::memory_order_relaxed) != job.generation; };
    if (job.filter) {
        result.filtered = true;
        if (job.matcher.isEmpty()) {
            result.accepted.assign(size_t(rows), 1); // every row passes: nothing to test
        } else {
            FilterScan &scan = *job.scan;
            result.tested = scan.take(job.matcher);
            std::unique_lock<std::mutex> lock(scan.mutex);
            scan.closed = true;
            scan.idle.wait(lock, [&scan] { return scan.active == 0; });
            if (scan.cancelled.load(std::memory_order_relaxed)) {
                result.cancelled = true;
                return result;
            }
            result.tested += scan.helped;
            result.accepted = std::move(scan.accepted);
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
