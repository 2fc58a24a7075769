// The compact row store: encoding objects into cells, reading and ordering them back.
#include "rowstore.h"

#include <QJsonObject>

#include <algorithm>
#include <cstring>

namespace OpsDeck {

namespace {

// After this many texts of a field, a field whose texts almost never repeat stops being interned.
constexpr quint32 kInternProbe = 1024;
constexpr quint32 kRepeatShare = 8; // interned while at least one text in 8 was seen before

bool isTextType(FieldSpec::Type type)
{
    return type == FieldSpec::Type::Text || type == FieldSpec::Type::State || type == FieldSpec::Type::Json;
}

} // namespace

RowStore::RowStore(const ResourceKind &kind)
    : m_kind(&kind)
    , m_fieldCount(int(kind.fields.size()))
{
    for (const FieldSpec &spec : kind.fields) {
        m_textField.push_back(isTextType(spec.type) ? 1 : 0);
        m_interned.push_back(isTextType(spec.type) ? 1 : 0);
    }
    m_internStats.assign(size_t(m_fieldCount), {0, 0});
}

int RowStore::textId(int row, int field) const
{
    if (row < 0 || field < 0 || field >= m_fieldCount || row >= rowCount() || !isTextField(field))
        return -1;
    const Cell c = cell(row, field);
    return c == kNull ? -1 : int(c);
}

QVariant RowStore::raw(int row, int field) const
{
    const Cell c = cell(row, field);
    if (c == kNull)
        return {};
    switch (m_kind->fields.at(field).type) {
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
    case FieldSpec::Type::Timestamp:
        return QVariant::fromValue<qint64>(qint64(c));
    case FieldSpec::Type::Number:
    case FieldSpec::Type::Ratio: {
        double d = 0;
        std::memcpy(&d, &c, sizeof d);
        return d;
    }
    case FieldSpec::Type::Boolean:
        return c != 0;
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return m_texts.text(quint32(c));
    }
    return {};
}

int RowStore::compare(int rowA, int rowB, int field) const
{
    const Cell a = cell(rowA, field);
    const Cell b = cell(rowB, field);
    if (a == b)
        return 0;
    if (a == kNull)
        return 1;
    if (b == kNull)
        return -1;
    switch (m_kind->fields.at(field).type) {
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
    case FieldSpec::Type::Timestamp:
        return qint64(a) < qint64(b) ? -1 : 1;
    case FieldSpec::Type::Boolean:
        return a < b ? -1 : 1;
    case FieldSpec::Type::Number:
    case FieldSpec::Type::Ratio: {
        double x = 0;
        double y = 0;
        std::memcpy(&x, &a, sizeof x);
        std::memcpy(&y, &b, sizeof y);
        return x < y ? -1 : (y < x ? 1 : 0);
    }
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return m_texts.compareIgnoringCase(quint32(a), quint32(b));
    }
    return 0;
}

quint32 RowStore::storeText(int field, const QString &text, const Cell *previous)
{
    auto &[stored, repeated] = m_internStats[size_t(field)];
    if (m_interned[size_t(field)]) {
        const quint32 before = m_texts.size();
        const quint32 id = m_texts.intern(text);
        ++stored;
        if (id < before)
            ++repeated;
        if (stored >= kInternProbe && repeated * kRepeatShare < stored)
            m_interned[size_t(field)] = 0; // names and the like: an index entry each would find nothing
        return id;
    }
    if (previous && previous[field] != kNull) {
        // An update that keeps the name must not add the name again.
        const quint32 old = quint32(previous[field]);
        const QByteArray utf8 = text.toUtf8();
        if (m_texts.equals(old, QUtf8StringView(utf8.constData(), utf8.size())))
            return old;
    }
    return m_texts.add(text);
}

void RowStore::encode(const QJsonObject &object, Cell *cells, const Cell *previous)
{
    for (int f = 0; f < m_fieldCount; ++f) {
        const FieldSpec &spec = m_kind->fields.at(f);
        const QVariant raw = fieldRawValue(spec.type, jsonValueAt(object, spec.key));
        if (!raw.isValid()) {
            cells[f] = kNull;
            continue;
        }
        switch (spec.type) {
        case FieldSpec::Type::Id:
        case FieldSpec::Type::Integer:
        case FieldSpec::Type::Timestamp:
            if (raw.userType() == QMetaType::QString) // an id the server sent as text: keep it readable
                cells[f] = kNull;
            else
                cells[f] = Cell(raw.toLongLong());
            break;
        case FieldSpec::Type::Number:
    case FieldSpec::Type::Ratio: {
            const double d = raw.toDouble();
            std::memcpy(&cells[f], &d, sizeof d);
            break;
        }
        case FieldSpec::Type::Boolean:
            cells[f] = raw.toBool() ? 1 : 0;
            break;
        case FieldSpec::Type::Text:
        case FieldSpec::Type::State:
        case FieldSpec::Type::Json:
            cells[f] = storeText(f, raw.toString(), previous);
            break;
        }
    }
}

void RowStore::appendRows(const Cell *cells, int count)
{
    m_cells.insert(m_cells.end(), cells, cells + size_t(count) * size_t(m_fieldCount));
}

void RowStore::setRow(int row, const Cell *cells)
{
    std::copy(cells, cells + m_fieldCount, m_cells.begin() + qsizetype(row) * m_fieldCount);
}

void RowStore::eraseRows(int first, int last)
{
    m_cells.erase(m_cells.begin() + qsizetype(first) * m_fieldCount, m_cells.begin() + qsizetype(last + 1) * m_fieldCount);
}

void RowStore::eraseRows(const std::vector<int> &rows)
{
    // Each kept row moves once, however many gaps there are (eraseRows(first, last) per gap moves
    // the rest of the table each time).
    const size_t width = size_t(m_fieldCount);
    const int count = rowCount();
    size_t to = 0;
    size_t next = 0;
    for (int r = 0; r < count; ++r) {
        if (next < rows.size() && rows[next] == r) {
            ++next;
            continue;
        }
        if (to != size_t(r) * width)
            std::copy_n(m_cells.begin() + qsizetype(size_t(r) * width), width, m_cells.begin() + qsizetype(to));
        to += width;
    }
    m_cells.resize(to);
}

void RowStore::clear()
{
    m_cells = {};
    m_texts.clear();
    for (int f = 0; f < m_fieldCount; ++f)
        m_interned[size_t(f)] = m_textField[size_t(f)];
    m_internStats.assign(size_t(m_fieldCount), {0, 0});
}

void RowStore::reserveRows(qsizetype rows)
{
    m_cells.reserve(size_t(rows) * size_t(m_fieldCount));
}

void RowStore::squeeze()
{
    m_cells.shrink_to_fit();
    m_texts.squeeze();
}

qsizetype RowStore::memoryUsage() const
{
    return qsizetype(m_cells.capacity() * sizeof(Cell)) + m_texts.memoryUsage();
}

} // namespace OpsDeck
