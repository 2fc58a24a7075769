// The generic table model: compact cells per row, text built lazily, changes flushed in batches.
#include "resourcemodel.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaObject>

#include <algorithm>
#include <cstring>

namespace OpsDeck {

namespace {

// No id, version or timestamp comes near this, and as a double it is a NaN no arithmetic makes.
constexpr quint64 kNull = 0x7FF4000000000001ULL;
// Above this share of rows, one dataChanged over the whole table is cheaper than many.
constexpr double kFullRangeShare = 0.5;

QString timestampText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
}

QString isoText(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs);
}

} // namespace

ResourceModel::ResourceModel(const ResourceKind &kind, QObject *parent)
    : QAbstractTableModel(parent)
    , m_kind(kind)
    , m_fieldCount(int(kind.fields.size()))
    , m_idField(kind.fieldIndex(u"id"))
    , m_versionField(kind.fieldIndex(u"version"))
    , m_stateField(kind.stateField.isEmpty() ? -1 : kind.fieldIndex(kind.stateField))
    , m_nameField(kind.fieldIndex(kind.nameField))
{
    Q_ASSERT(m_idField >= 0);
}

ResourceModel::~ResourceModel() = default;

int ResourceModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() || m_fieldCount == 0)
        return 0;
    return int(m_cells.size() / size_t(m_fieldCount));
}

int ResourceModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_fieldCount;
}

QVariant ResourceModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const int row = index.row();
    const int field = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return displayText(row, field);
    case Qt::ToolTipRole: {
        const FieldSpec &spec = m_kind.fields.at(field);
        const QVariant raw = cellRaw(row, field);
        if (!raw.isValid())
            return {};
        if (spec.type == FieldSpec::Type::Timestamp)
            return isoText(raw.toLongLong());
        if (spec.type == FieldSpec::Type::Id && !spec.references.isEmpty())
            return QStringLiteral("%1 #%2").arg(displayText(row, field)).arg(raw.toLongLong());
        return displayText(row, field);
    }
    case Qt::TextAlignmentRole: {
        const FieldSpec::Type type = m_kind.fields.at(field).type;
        const bool numeric = type == FieldSpec::Type::Integer || type == FieldSpec::Type::Number
            || (type == FieldSpec::Type::Id && m_kind.fields.at(field).references.isEmpty());
        return numeric ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    }
    case SortRole:
    case RawRole:
        return cellRaw(row, field);
    case IdRole:
        return idAt(row);
    case StateRole:
        return m_stateField < 0 ? QString() : cellRaw(row, m_stateField).toString();
    case ToneRole:
        return int(stateTone(m_stateField < 0 ? QString() : cellRaw(row, m_stateField).toString()));
    case ObjectRole:
        return objectAt(row);
    case VersionRole:
        return versionAt(row);
    default:
        return {};
    }
}

QVariant ResourceModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return QAbstractTableModel::headerData(section, orientation, role);
    if (section < 0 || section >= m_fieldCount)
        return {};
    switch (role) {
    case Qt::DisplayRole:
        return m_kind.fields.at(section).title;
    case Qt::ToolTipRole:
        return m_kind.fields.at(section).key;
    default:
        return {};
    }
}

QHash<int, QByteArray> ResourceModel::roleNames() const
{
    QHash<int, QByteArray> names = QAbstractTableModel::roleNames();
    names.insert(IdRole, "id");
    names.insert(SortRole, "sortValue");
    names.insert(StateRole, "state");
    names.insert(ToneRole, "tone");
    names.insert(ObjectRole, "object");
    names.insert(VersionRole, "version");
    names.insert(RawRole, "raw");
    return names;
}

void ResourceModel::upsert(const QList<QJsonObject> &objects)
{
    for (const QJsonObject &object : objects) {
        const QJsonValue idValue = object.value(QLatin1String("id"));
        if (!idValue.isDouble())
            continue; // not an object of this API; nothing to key it by
        const qint64 id = idValue.toInteger();
        m_pendingRemovals.remove(id);
        if (!m_pendingUpserts.contains(id))
            m_pendingOrder.append(id);
        m_pendingUpserts.insert(id, object);
    }
    scheduleFlush();
}

void ResourceModel::remove(const QList<qint64> &ids)
{
    for (qint64 id : ids) {
        if (m_pendingUpserts.remove(id))
            m_pendingOrder.removeOne(id);
        m_pendingRemovals.insert(id);
    }
    scheduleFlush();
}

void ResourceModel::replaceAll(const QList<QJsonObject> &objects)
{
    beginResetModel();
    m_pendingUpserts.clear();
    m_pendingOrder.clear();
    m_pendingRemovals.clear();
    m_cells.clear();
    m_rowOfId.clear();
    m_strings.clear();
    m_stringIndex.clear();
    m_cells.reserve(size_t(objects.size()) * size_t(m_fieldCount));
    std::vector<Cell> cells(static_cast<size_t>(m_fieldCount));
    for (const QJsonObject &object : objects) {
        const QJsonValue idValue = object.value(QLatin1String("id"));
        if (!idValue.isDouble())
            continue;
        const qint64 id = idValue.toInteger();
        encodeRow(object, cells.data());
        const auto existing = m_rowOfId.constFind(id);
        if (existing != m_rowOfId.cend()) {
            std::copy(cells.cbegin(), cells.cend(), m_cells.begin() + qsizetype(*existing) * m_fieldCount);
            continue;
        }
        m_rowOfId.insert(id, rowCount());
        m_cells.insert(m_cells.end(), cells.cbegin(), cells.cend());
    }
    endResetModel();
    emit batchApplied(rowCount(), 0, 0);
}

void ResourceModel::scheduleFlush()
{
    if (m_flushScheduled)
        return;
    m_flushScheduled = true;
    QMetaObject::invokeMethod(this, &ResourceModel::flushSome, Qt::QueuedConnection);
}

void ResourceModel::flush()
{
    m_flushScheduled = false;
    if (!hasPendingChanges())
        return;
    applyRemovals();
    applyUpserts(m_pendingOrder.size());
}

void ResourceModel::flushSome()
{
    // A burst (a relist, 10k feed events) is spread over several turns so that no single turn
    // keeps the GUI thread longer than encoding kRowsPerTurn rows takes.
    m_flushScheduled = false;
    if (!hasPendingChanges())
        return;
    applyRemovals();
    applyUpserts(kRowsPerTurn);
    if (hasPendingChanges())
        scheduleFlush();
}

void ResourceModel::applyRemovals()
{
    if (m_pendingRemovals.isEmpty())
        return;
    QList<int> rows;
    rows.reserve(m_pendingRemovals.size());
    for (qint64 id : std::as_const(m_pendingRemovals)) {
        const int row = rowOfId(id);
        if (row >= 0)
            rows.append(row);
    }
    m_pendingRemovals.clear();
    if (rows.isEmpty())
        return;
    std::sort(rows.begin(), rows.end());
    // Contiguous ranges from the bottom up, so earlier row numbers stay valid.
    int end = int(rows.size()) - 1;
    while (end >= 0) {
        int start = end;
        while (start > 0 && rows.at(start - 1) == rows.at(start) - 1)
            --start;
        const int first = rows.at(start);
        const int last = rows.at(end);
        beginRemoveRows({}, first, last);
        for (int r = first; r <= last; ++r)
            m_rowOfId.remove(idAt(r));
        m_cells.erase(m_cells.begin() + qsizetype(first) * m_fieldCount,
                      m_cells.begin() + qsizetype(last + 1) * m_fieldCount);
        rebuildIndex(first);
        endRemoveRows();
        end = start - 1;
    }
    emit batchApplied(0, 0, int(rows.size()));
}

void ResourceModel::applyUpserts(qsizetype limit)
{
    if (m_pendingOrder.isEmpty())
        return;
    const int oldCount = rowCount();
    QList<int> changedRows;
    std::vector<Cell> appended;
    QList<qint64> appendedIds;
    std::vector<Cell> cells(static_cast<size_t>(m_fieldCount));
    const qsizetype taken = std::min(limit, m_pendingOrder.size());
    for (qsizetype i = 0; i < taken; ++i) {
        const qint64 id = m_pendingOrder.at(i);
        const QJsonObject object = m_pendingUpserts.take(id);
        const int row = rowOfId(id);
        if (row >= 0) {
            if (m_versionField >= 0) {
                const QJsonValue v = object.value(QLatin1String("version"));
                if (v.isDouble() && v.toInteger() <= versionAt(row))
                    continue; // stale or the same: a replayed event after a resume
            }
            encodeRow(object, cells.data());
            Cell *target = m_cells.data() + qsizetype(row) * m_fieldCount;
            if (std::equal(cells.cbegin(), cells.cend(), target))
                continue;
            std::copy(cells.cbegin(), cells.cend(), target);
            changedRows.append(row);
        } else {
            encodeRow(object, cells.data());
            appended.insert(appended.end(), cells.cbegin(), cells.cend());
            appendedIds.append(id);
        }
    }
    m_pendingOrder.remove(0, taken);

    if (!appendedIds.isEmpty()) {
        beginInsertRows({}, oldCount, oldCount + int(appendedIds.size()) - 1);
        m_cells.insert(m_cells.end(), appended.cbegin(), appended.cend());
        for (int i = 0; i < appendedIds.size(); ++i)
            m_rowOfId.insert(appendedIds.at(i), oldCount + i);
        endInsertRows();
    }

    if (!changedRows.isEmpty()) {
        static const QList<int> roles = {Qt::DisplayRole, Qt::ToolTipRole, SortRole, RawRole,
                                         StateRole, ToneRole, ObjectRole, VersionRole};
        const int lastColumn = m_fieldCount - 1;
        if (changedRows.size() > kFullRangeShare * oldCount) {
            emit dataChanged(index(0, 0), index(oldCount - 1, lastColumn), roles);
        } else {
            std::sort(changedRows.begin(), changedRows.end());
            int start = 0;
            while (start < changedRows.size()) {
                int end = start;
                while (end + 1 < changedRows.size() && changedRows.at(end + 1) == changedRows.at(end) + 1)
                    ++end;
                emit dataChanged(index(changedRows.at(start), 0), index(changedRows.at(end), lastColumn), roles);
                start = end + 1;
            }
        }
    }
    if (!appendedIds.isEmpty() || !changedRows.isEmpty())
        emit batchApplied(int(appendedIds.size()), int(changedRows.size()), 0);
}

void ResourceModel::rebuildIndex(int fromRow)
{
    const int rows = rowCount();
    for (int r = fromRow; r < rows; ++r)
        m_rowOfId.insert(idAt(r), r);
}

quint32 ResourceModel::intern(const QString &text)
{
    const auto it = m_stringIndex.constFind(text);
    if (it != m_stringIndex.cend())
        return *it;
    const quint32 index = quint32(m_strings.size());
    m_strings.append(text);
    m_stringIndex.insert(m_strings.constLast(), index);
    return index;
}

void ResourceModel::encodeRow(const QJsonObject &object, Cell *cells)
{
    for (int f = 0; f < m_fieldCount; ++f) {
        const FieldSpec &spec = m_kind.fields.at(f);
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
        case FieldSpec::Type::Number: {
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
            cells[f] = intern(raw.toString());
            break;
        }
    }
}

QVariant ResourceModel::cellRaw(int row, int field) const
{
    const Cell cell = m_cells[size_t(row) * size_t(m_fieldCount) + size_t(field)];
    if (cell == kNull)
        return {};
    switch (m_kind.fields.at(field).type) {
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
    case FieldSpec::Type::Timestamp:
        return QVariant::fromValue<qint64>(qint64(cell));
    case FieldSpec::Type::Number: {
        double d = 0;
        std::memcpy(&d, &cell, sizeof d);
        return d;
    }
    case FieldSpec::Type::Boolean:
        return cell != 0;
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return m_strings.value(qsizetype(cell));
    }
    return {};
}

QString ResourceModel::displayText(int row, int field) const
{
    const QVariant raw = cellRaw(row, field);
    if (!raw.isValid())
        return {};
    const FieldSpec &spec = m_kind.fields.at(field);
    switch (spec.type) {
    case FieldSpec::Type::Id:
        if (!spec.references.isEmpty() && m_lookup) {
            const QString name = m_lookup(spec.references, raw.toLongLong());
            if (!name.isEmpty())
                return name;
        }
        return QString::number(raw.toLongLong());
    case FieldSpec::Type::Integer:
        return QString::number(raw.toLongLong());
    case FieldSpec::Type::Timestamp:
        return timestampText(raw.toLongLong());
    case FieldSpec::Type::Number:
        return QString::number(raw.toDouble(), 'g', 4);
    case FieldSpec::Type::Boolean:
        return raw.toBool() ? tr("yes") : tr("no");
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return raw.toString();
    }
    return {};
}

qint64 ResourceModel::idAt(int row) const
{
    if (row < 0 || row >= rowCount())
        return 0;
    return qint64(m_cells[size_t(row) * size_t(m_fieldCount) + size_t(m_idField)]);
}

qint64 ResourceModel::versionAt(int row) const
{
    if (m_versionField < 0 || row < 0 || row >= rowCount())
        return -1;
    const Cell cell = m_cells[size_t(row) * size_t(m_fieldCount) + size_t(m_versionField)];
    return cell == kNull ? -1 : qint64(cell);
}

QVariant ResourceModel::rawValue(int row, int field) const
{
    if (row < 0 || row >= rowCount() || field < 0 || field >= m_fieldCount)
        return {};
    return cellRaw(row, field);
}

QString ResourceModel::cellText(int row, int field) const
{
    if (row < 0 || row >= rowCount() || field < 0 || field >= m_fieldCount)
        return {};
    const Cell cell = m_cells[size_t(row) * size_t(m_fieldCount) + size_t(field)];
    if (cell == kNull)
        return {};
    switch (m_kind.fields.at(field).type) {
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return m_strings.value(qsizetype(cell));
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
        return QString::number(qint64(cell));
    default:
        return {};
    }
}

int ResourceModel::textIdAt(int row, int field) const
{
    // The filter calls this for every row on a keystroke: no division by the row width here.
    const size_t at = size_t(row) * size_t(m_fieldCount) + size_t(field);
    if (row < 0 || field < 0 || field >= m_fieldCount || at >= m_cells.size())
        return -1;
    const FieldSpec::Type type = m_kind.fields.at(field).type;
    if (type != FieldSpec::Type::Text && type != FieldSpec::Type::State && type != FieldSpec::Type::Json)
        return -1;
    const Cell cell = m_cells[at];
    return cell == kNull ? -1 : int(cell);
}

QStringView ResourceModel::textOfId(int textId) const
{
    if (textId < 0 || textId >= m_strings.size())
        return {};
    return m_strings.at(textId);
}

int ResourceModel::compareRows(int rowA, int rowB, int field) const
{
    const int rows = rowCount();
    if (rowA < 0 || rowB < 0 || rowA >= rows || rowB >= rows || field < 0 || field >= m_fieldCount)
        return 0;
    const Cell a = m_cells[size_t(rowA) * size_t(m_fieldCount) + size_t(field)];
    const Cell b = m_cells[size_t(rowB) * size_t(m_fieldCount) + size_t(field)];
    if (a == b)
        return 0;
    if (a == kNull)
        return 1;
    if (b == kNull)
        return -1;
    switch (m_kind.fields.at(field).type) {
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
    case FieldSpec::Type::Timestamp:
        return qint64(a) < qint64(b) ? -1 : 1;
    case FieldSpec::Type::Boolean:
        return a < b ? -1 : 1;
    case FieldSpec::Type::Number: {
        double x = 0;
        double y = 0;
        std::memcpy(&x, &a, sizeof x);
        std::memcpy(&y, &b, sizeof y);
        return x < y ? -1 : (y < x ? 1 : 0);
    }
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return QString::compare(m_strings.at(qsizetype(a)), m_strings.at(qsizetype(b)), Qt::CaseInsensitive);
    }
    return 0;
}

QJsonObject ResourceModel::objectAt(int row) const
{
    QJsonObject object;
    if (row < 0 || row >= rowCount())
        return object;
    // Nested objects ("callback.url") are gathered first; one whose members are all null was null.
    QHash<QString, QJsonObject> nested;
    QStringList nestedOrder;
    for (int f = 0; f < m_fieldCount; ++f) {
        const FieldSpec &spec = m_kind.fields.at(f);
        const QVariant raw = cellRaw(row, f);
        QJsonValue value;
        if (raw.isValid()) {
            switch (spec.type) {
            case FieldSpec::Type::Timestamp:
                value = isoText(raw.toLongLong());
                break;
            case FieldSpec::Type::Json: {
                const QJsonDocument doc = QJsonDocument::fromJson(raw.toString().toUtf8());
                value = doc.isArray() ? QJsonValue(doc.array()) : doc.isObject() ? QJsonValue(doc.object())
                                                                                  : QJsonValue(raw.toString());
                break;
            }
            default:
                value = QJsonValue::fromVariant(raw);
                break;
            }
        }
        const qsizetype dot = spec.key.indexOf(u'.');
        if (dot < 0) {
            object.insert(spec.key, value);
            continue;
        }
        const QString head = spec.key.left(dot);
        if (!nested.contains(head))
            nestedOrder.append(head);
        nested[head].insert(spec.key.mid(dot + 1), value);
    }
    for (const QString &head : std::as_const(nestedOrder)) {
        const QJsonObject child = nested.value(head);
        const bool allNull = std::all_of(child.begin(), child.end(), [](const auto &v) { return v.isNull(); });
        object.insert(head, allNull ? QJsonValue(QJsonValue::Null) : QJsonValue(child));
    }
    return object;
}

QJsonObject ResourceModel::objectById(qint64 id) const
{
    return objectAt(rowOfId(id));
}

QString ResourceModel::nameOfId(qint64 id) const
{
    const int row = rowOfId(id);
    if (row < 0 || m_nameField < 0)
        return {};
    return cellRaw(row, m_nameField).toString();
}

QList<qint64> ResourceModel::ids() const
{
    QList<qint64> out;
    const int rows = rowCount();
    out.reserve(rows);
    for (int r = 0; r < rows; ++r)
        out.append(idAt(r));
    return out;
}

void ResourceModel::setReferenceLookup(ReferenceLookup lookup)
{
    m_lookup = std::move(lookup);
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, m_fieldCount - 1), {Qt::DisplayRole, Qt::ToolTipRole});
}

qsizetype ResourceModel::memoryUsage() const
{
    qsizetype bytes = qsizetype(m_cells.capacity() * sizeof(Cell));
    // QHash spans: a node plus about two bytes of span metadata per entry, at the load factor.
    bytes += m_rowOfId.capacity() * qsizetype(sizeof(qint64) + sizeof(int) + 2);
    bytes += m_strings.capacity() * qsizetype(sizeof(QString));
    bytes += m_stringIndex.capacity() * qsizetype(sizeof(QString) + sizeof(quint32) + 2 + 4);
    for (const QString &s : m_strings)
        bytes += qsizetype(sizeof(QArrayData)) + (s.capacity() + 1) * qsizetype(sizeof(QChar));
    return bytes;
}

} // namespace OpsDeck
