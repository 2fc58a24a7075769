// Tests rows of a RowStore against one parsed query, remembering answers per distinct text.
#pragma once

#include "core/query.h"
#include "rowstore.h"

#include <QHash>
#include <QSet>

#include <algorithm>
#include <functional>

#include <vector>

namespace OpsDeck {

// A value type, so a filter worker can take a copy. The store is passed per call (the model may
// replace its store between calls; text numbers stay the same across such copies). Without a
// lookup (on a worker) reference terms and words in referenced names are answered only from
// resolveReferences().
class RowMatcher final
{
public:
    RowMatcher() = default;
    RowMatcher(Query query, qint64 nowMs, ReferenceLookup lookup);

    const Query &query() const { return m_query; }
    qint64 now() const { return m_now; }
    bool isEmpty() const { return m_query.isEmpty(); }
    // Whether the answers depend on the clock (age>1h).
    bool isTimed() const;
    // With a lookup, names not yet remembered are looked up again (resolveReferences() knew only
    // the ids of its moment).
    void setReferenceLookup(ReferenceLookup lookup)
    {
        m_lookup = std::move(lookup);
        if (m_lookup)
            std::fill(m_someNameHas.begin(), m_someNameHas.end(), qint8(-1));
    }

    bool accepts(const RowStore &store, int row);
    // Whether a query's answers read other objects' names (provider:acme, or words beside
    // reference columns): they change when those names arrive.
    static bool readsReferenceNames(const Query &query);
    // Looks up now every referenced object the query's reference terms (provider:acme) and free
    // words may meet, so a copy without a lookup can answer them. idsOf(field) gives the ids the
    // rows name in field (a superset is fine).
    void resolveReferences(const std::function<QSet<qint64>(int field)> &idsOf);

private:
    struct Word
    {
        QString text;
        QString folded;      // text.toCaseFolded()
        QByteArray ascii;    // folded as bytes when it is ASCII, else empty (Qt's rules then)
        bool numeric = false; // only digits and '-': may be found in an id's decimal text
    };

    // cells: the row's (store.row(row)), read once per row.
    bool termFound(const RowStore &store, int term, int row, const RowStore::Cell *cells);
    bool wordFound(const RowStore &store, int word, const RowStore::Cell *cells);
    bool textContains(const TextArena &texts, quint32 id, const Word &word) const;
    // Whether the object `id` that reference field `ref` (of the query's referenceFields) names has
    // word `w` in its name: remembered, looked up while there is a lookup, else false.
    bool referenceNamed(int w, size_t ref, qint64 id);

    Query m_query;
    qint64 m_now = 0;
    ReferenceLookup m_lookup;
    std::vector<Word> m_words;
    std::vector<int> m_textFields;                    // the query's, as a plain vector
    std::vector<std::vector<qint8>> m_termMemo;       // per term, by text number: -1 unknown, 0, 1
    std::vector<QHash<qint64, bool>> m_referenceMemo; // per term, by referenced id
    std::vector<std::vector<qint8>> m_wordMemo;       // per word, by text number: -1 unknown, 0, 1
    // Per word and reference field (word * referenceFields + field): by referenced id, whether its
    // name has the word; and whether some name has it (-1 unknown, 0 none: the field is skipped).
    std::vector<QHash<qint64, bool>> m_nameMemo;
    std::vector<qint8> m_someNameHas;
};

} // namespace OpsDeck
