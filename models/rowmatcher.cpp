// The row matcher: query terms answered once per distinct text or referenced object, words searched
// in the UTF-8 texts without decoding them.
#include "rowmatcher.h"

#include <algorithm>

namespace OpsDeck {

namespace {

// One row of a store as core/query reads it.
class StoreRow final : public QueryRow
{
public:
    StoreRow(const RowStore &store, int row, const ReferenceLookup &lookup)
        : m_store(store), m_row(row), m_lookup(lookup)
    {
    }
    QVariant value(int field) const override { return m_store.raw(m_row, field); }
    int textId(int field) const override { return m_store.textId(m_row, field); }
    QString referenceName(const QString &kindName, qint64 id) const override
    {
        return m_lookup ? m_lookup(kindName, id) : QString();
    }

private:
    const RowStore &m_store;
    int m_row;
    const ReferenceLookup &m_lookup;
};

// A row that only names one referenced object: what a reference term reads.
class IdRow final : public QueryRow
{
public:
    IdRow(int field, qint64 id, const ReferenceLookup &lookup)
        : m_field(field), m_id(id), m_lookup(lookup)
    {
    }
    QVariant value(int field) const override { return field == m_field ? QVariant::fromValue(m_id) : QVariant(); }
    QString referenceName(const QString &kindName, qint64 id) const override
    {
        return m_lookup ? m_lookup(kindName, id) : QString();
    }

private:
    int m_field;
    qint64 m_id;
    const ReferenceLookup &m_lookup;
};

// A word can only be found in a number's decimal text when it is made of digits and '-'.
bool numericWord(QStringView word)
{
    return std::all_of(word.begin(), word.end(), [](QChar c) { return (c >= u'0' && c <= u'9') || c == u'-'; });
}

bool isReferenceTerm(const QueryTerm &term)
{
    return term.type == FieldSpec::Type::Id && term.integers.isEmpty() && !term.references.isEmpty();
}

} // namespace

RowMatcher::RowMatcher(Query query, qint64 nowMs, ReferenceLookup lookup)
    : m_query(std::move(query))
    , m_now(nowMs)
    , m_lookup(std::move(lookup))
{
    m_termMemo.resize(size_t(m_query.terms.size()));
    m_referenceMemo.resize(size_t(m_query.terms.size()));
    m_wordMemo.resize(size_t(m_query.words.size()));
    m_nameMemo.resize(size_t(m_query.words.size()) * size_t(m_query.referenceFields.size()));
    // Without a lookup no name is known until resolveReferences() says otherwise.
    m_someNameHas.assign(m_nameMemo.size(), qint8(m_lookup ? -1 : 0));
    m_textFields.assign(m_query.textFields.cbegin(), m_query.textFields.cend());
    for (const QueryWord &queryWord : std::as_const(m_query.words)) {
        Word word;
        word.text = queryWord.text;
        word.folded = queryWord.text.toCaseFolded();
        const bool ascii = std::all_of(word.folded.cbegin(), word.folded.cend(), [](QChar c) { return c.unicode() < 0x80; });
        if (ascii && !word.folded.isEmpty())
            word.ascii = word.folded.toLatin1();
        word.numeric = numericWord(word.text);
        m_words.push_back(std::move(word));
    }
}

bool RowMatcher::readsReferenceNames(const Query &query)
{
    return (!query.words.isEmpty() && !query.referenceFields.isEmpty())
           || std::any_of(query.terms.cbegin(), query.terms.cend(), isReferenceTerm);
}

bool RowMatcher::isTimed() const
{
    return std::any_of(m_query.terms.cbegin(), m_query.terms.cend(), [](const QueryTerm &t) { return t.ageMs.has_value(); });
}

bool RowMatcher::accepts(const RowStore &store, int row)
{
    const RowStore::Cell *cells = store.row(row);
    for (int t = 0; t < int(m_query.terms.size()); ++t) {
        if (termFound(store, t, row, cells) == m_query.terms.at(t).negated)
            return false;
    }
    for (int w = 0; w < int(m_words.size()); ++w) {
        if (wordFound(store, w, cells) == m_query.words.at(w).negated)
            return false;
    }
    return true;
}

bool RowMatcher::termFound(const RowStore &store, int t, int row, const RowStore::Cell *cells)
{
    const QueryTerm &term = m_query.terms.at(t);
    const int field = term.fieldIndex;
    const RowStore::Cell cell = cells[field];
    if (cell != RowStore::kNull && store.isTextField(field) && store.isInterned(field)) {
        std::vector<qint8> &memo = m_termMemo[size_t(t)];
        const size_t textId = size_t(cell);
        if (textId >= memo.size())
            memo.resize(std::max(size_t(store.texts().size()), textId + 1 + memo.size() / 2), qint8(-1));
        if (memo[textId] < 0)
            memo[textId] = termMatches(term, StoreRow(store, row, m_lookup), m_now) ? 1 : 0;
        return memo[textId] == 1;
    }
    if (isReferenceTerm(term)) {
        // provider:acme: one name lookup per referenced object, not per row.
        if (cell == RowStore::kNull)
            return false;
        QHash<qint64, bool> &memo = m_referenceMemo[size_t(t)];
        auto it = memo.constFind(qint64(cell));
        if (it == memo.cend()) {
            if (!m_lookup)
                return false;
            it = memo.insert(qint64(cell), termMatches(term, StoreRow(store, row, m_lookup), m_now));
        }
        return *it;
    }
    return termMatches(term, StoreRow(store, row, m_lookup), m_now);
}

bool RowMatcher::textContains(const TextArena &texts, quint32 id, const Word &word) const
{
    if (!word.ascii.isEmpty()) {
        if (const std::optional<bool> found = texts.containsAscii(id, word.ascii))
            return *found;
    }
    return containsIgnoringCase(texts.utf8(id), word.text, word.folded);
}

bool RowMatcher::wordFound(const RowStore &store, int w, const RowStore::Cell *cells)
{
    const Word &word = m_words[size_t(w)];
    const TextArena &texts = store.texts();
    std::vector<qint8> &memo = m_wordMemo[size_t(w)];
    for (const int field : m_textFields) {
        const RowStore::Cell cell = cells[field];
        if (cell == RowStore::kNull)
            continue;
        if (store.isTextField(field)) {
            const quint32 id = quint32(cell);
            if (!store.isInterned(field)) {
                // Unique per row: a memo would only grow.
                if (textContains(texts, id, word))
                    return true;
                continue;
            }
            if (id >= memo.size())
                memo.resize(std::max(size_t(texts.size()), size_t(id) + 1 + memo.size() / 2), qint8(-1));
            qint8 &known = memo[id];
            if (known < 0)
                known = textContains(texts, id, word) ? 1 : 0;
            if (known == 1)
                return true;
        } else if (word.numeric && QString::number(qint64(cell)).contains(word.text)) {
            return true;
        }
    }
    for (size_t ref = 0; ref < size_t(m_query.referenceFields.size()); ++ref) {
        const RowStore::Cell cell = cells[m_query.referenceFields.at(qsizetype(ref))];
        if (cell != RowStore::kNull && referenceNamed(w, ref, qint64(cell)))
            return true;
    }
    return false;
}

bool RowMatcher::referenceNamed(int w, size_t ref, qint64 id)
{
    const size_t at = size_t(w) * size_t(m_query.referenceFields.size()) + ref;
    if (m_someNameHas[at] == 0)
        return false;
    QHash<qint64, bool> &memo = m_nameMemo[at];
    auto it = memo.constFind(id);
    if (it == memo.cend()) {
        if (!m_lookup)
            return false;
        const Word &word = m_words[size_t(w)];
        const QString name = m_lookup(m_query.referenceKinds.at(qsizetype(ref)), id);
        it = memo.insert(id, containsIgnoringCase(name, word.text, word.folded));
    }
    return *it;
}

void RowMatcher::resolveReferences(const std::function<QSet<qint64>(int field)> &idsOf)
{
    for (int t = 0; t < int(m_query.terms.size()); ++t) {
        const QueryTerm &term = m_query.terms.at(t);
        if (!isReferenceTerm(term) || !m_lookup)
            continue;
        QHash<qint64, bool> &memo = m_referenceMemo[size_t(t)];
        const QSet<qint64> ids = idsOf(term.fieldIndex);
        for (const qint64 id : ids) {
            if (!memo.contains(id))
                memo.insert(id, termMatches(term, IdRow(term.fieldIndex, id, m_lookup), m_now));
        }
    }
    if (!m_lookup || m_words.empty())
        return;
    const size_t refs = size_t(m_query.referenceFields.size());
    for (size_t ref = 0; ref < refs; ++ref) {
        const QSet<qint64> ids = idsOf(m_query.referenceFields.at(qsizetype(ref)));
        for (int w = 0; w < int(m_words.size()); ++w) {
            bool some = false;
            for (const qint64 id : ids)
                some = referenceNamed(w, ref, id) || some;
            // Every id is known now: a field where no name has the word is not read per row.
            m_someNameHas[size_t(w) * refs + ref] = some ? 1 : 0;
        }
    }
}

} // namespace OpsDeck
