// One filter and/or sort computation over a snapshot of a model's rows, run on a worker thread.
#pragma once

#include "roworder.h"
#include "rowmatcher.h"
#include "rowstore.h"

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace OpsDeck {

// The rows of one job's filter, handed out in chunks to every thread that tests them (filterjob.cpp).
struct FilterScan;

struct FilterResult
{
    quint64 generation = 0;
    int rows = 0;             // the snapshot's row count: later rows were not seen
    bool cancelled = false;   // a newer job was submitted; nothing else is set
    bool filtered = false;
    std::vector<quint8> accepted; // per source row, when filtered
    RowMatcher matcher;           // the query with the answers it remembered, when filtered
    qsizetype tested = 0;
    bool sorted = false;
    RowOrder order;               // when sorted
};

// A value handed to the worker: everything it reads is its own or immutable.
struct FilterJob
{
    quint64 generation = 0;
    std::shared_ptr<const RowStore> store;
    std::shared_ptr<const std::atomic<quint64>> latest; // the newest generation submitted
    bool filter = false;
    RowMatcher matcher;        // without a lookup; references resolved beforehand
    std::vector<quint8> base;  // when not empty: only rows accepted here can match (a narrowing)
    bool sort = false;
    int sortColumn = -1;
    Qt::SortOrder sortOrder = Qt::AscendingOrder;
    std::shared_ptr<FilterScan> scan; // made by share(), else by run()

    // Lets other threads test rows of this job's filter: call once the job is complete, before run()
    // starts elsewhere. The function returned, run on any thread (once), tests chunks of rows no
    // other thread has taken yet and returns when none is left, at once when the job is over. run()
    // waits only for chunks a helper has taken, never for a helper to start.
    std::function<void()> share();
    // Runs on any thread; gives the snapshot up before returning.
    static FilterResult run(FilterJob job);
};

} // namespace OpsDeck
