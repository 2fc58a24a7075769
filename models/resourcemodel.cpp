// The generic table model: compact cells per row, text built lazily, changes flushed in batches.
#include "resourcemodel.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMetaObject>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <utility>

namespace OpsDeck {

namespace {

constexpr RowStore::Cell kNull = RowStore::kNull;
// Above this share of rows, one dataChanged over the whole table is cheaper than many.
constexpr double kFullRangeShare = 0.5;
// Removing a range moves every row after it, once in the store and once in each proxy: above this
// many ranges times rows, the rows left are copied once (on the worker) and shown with one reset.
constexpr qint64 kCompactionCost = 1000000;

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
    , m_store(std::make_shared<RowStore>(kind))
    , m_pool(new QThreadPool(this))
    , m_replaceWatcher(new QFutureWatcher<RowReplacement>(this))
    , m_replaceLatest(std::make_shared<std::atomic<quint64>>(0))
{
    Q_ASSERT(m_idField >= 0);
    for (const FieldSpec &f : kind.fields)
        m_referencesFrom.append(f.referencesFrom.isEmpty() ? -1 : kind.fieldIndex(f.referencesFrom));
    m_pool->setMaxThreadCount(1);
    connect(m_replaceWatcher, &QFutureWatcherBase::finished, this, &ResourceModel::onReplacementEncoded);
}

ResourceModel::~ResourceModel()
{
    // A worker still encoding reads only its own copies; it stops at its next check, and the pool
    // (a child) waits for that.
    m_replaceLatest->store(++m_replaceGeneration, std::memory_order_relaxed);
}

int ResourceModel::rowCount(const QModelIndex &parent) const
{
    if (parent.isValid() || m_fieldCount == 0)
        return 0;
    return m_store->rowCount();
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
        if (field == m_stateField && m_stateNote) {
            if (StateNote note = m_stateNote(row); !note.toolTip.isEmpty())
                return note.toolTip;
        }
        const FieldSpec &spec = m_kind.fields.at(field);
        const QVariant raw = cellRaw(row, field);
        if (!raw.isValid())
            return {};
        if (spec.type == FieldSpec::Type::Timestamp)
            return isoText(raw.toLongLong());
        if (spec.type == FieldSpec::Type::Id && !spec.references.isEmpty())
            return QStringLiteral("%1 #%2").arg(displayText(row, field)).arg(raw.toLongLong());
        if (const QString name = referencedName(row, field, raw); !name.isEmpty())
            return QStringLiteral("%1 #%2").arg(name, raw.toString());
        return displayText(row, field);
    }
    case Qt::AccessibleTextRole:
        // A state is read as words ("running"), not spelled as its code.
        if (m_kind.fields.at(field).type == FieldSpec::Type::State) {
            const QString name = stateName(cellRaw(row, field).toString());
            const StateNote note = field == m_stateField ? stateNoteAt(row) : StateNote();
            return note.text.isEmpty() ? name : tr("%1, %2", "a state read out with its note: pending, held").arg(name, note.text);
        }
        return {};
    case StateNoteRole:
        if (field == m_stateField && m_stateNote) {
            if (StateNote note = m_stateNote(row); !note.text.isEmpty())
                return note.text;
        }
        return {};
    case Qt::TextAlignmentRole: {
        const FieldSpec::Type type = m_kind.fields.at(field).type;
        const bool numeric = type == FieldSpec::Type::Integer || type == FieldSpec::Type::Number
            || type == FieldSpec::Type::Ratio
            || (type == FieldSpec::Type::Id && !m_kind.fields.at(field).isReference());
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
    names.insert(StateNoteRole, "stateNote");
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
    m_pendingUpserts.clear();
    m_pendingOrder.clear();
    m_pendingRemovals.clear();
    const std::shared_ptr<const std::atomic<quint64>> latest = m_replaceLatest;
    replaceWith(
        [&kind = m_kind, objects, latest](quint64 generation) {
            return RowReplacement::encode(kind, objects, generation, latest);
        },
        objects.size());
}

void ResourceModel::replaceWith(std::function<RowReplacement(quint64 generation)> make, qsizetype cost)
{
    const quint64 generation = ++m_replaceGeneration;
    m_replaceLatest->store(generation, std::memory_order_relaxed);
    if (cost < m_asyncThreshold) {
        m_replacing = false;
        install(make(generation));
        return;
    }
    // Encoding a relist of 250k rows takes longer than many frames: the rows shown stay until the
    // new ones are complete.
    m_replacing = true;
    m_replaceWatcher->setFuture(QtConcurrent::run(m_pool, std::move(make), generation));
}

void ResourceModel::awaitReplacement()
{
    if (!m_replacing)
        return;
    m_replaceWatcher->waitForFinished();
    onReplacementEncoded();
}

void ResourceModel::onReplacementEncoded()
{
    QFuture<RowReplacement> future = m_replaceWatcher->future();
    if (!m_replacing || !future.isValid() || future.resultCount() == 0)
        return;
    // Moved out, not copied: the rows and the index are megabytes.
    RowReplacement replacement = future.takeResult();
    if (replacement.cancelled || replacement.generation != m_replaceGeneration)
        return; // a newer replacement is on its way
    install(std::move(replacement));
}

void ResourceModel::install(RowReplacement replacement)
{
    Q_ASSERT(!replacement.cancelled && replacement.store);
    m_replacing = false;
    beginResetModel();
    // A new store rather than a cleared one: a snapshot may still be reading the old rows.
    std::shared_ptr<RowStore> oldStore = std::exchange(m_store, std::move(replacement.store));
    QHash<qint64, int> oldIndex = std::exchange(m_rowOfId, std::move(replacement.rowOfId));
    m_decoded.clear();
    endResetModel();
    // Freeing 250k rows and their index takes milliseconds this thread need not spend.
    m_pool->start([oldStore = std::move(oldStore), oldIndex = std::move(oldIndex)]() mutable {
        oldStore.reset();
        oldIndex = {};
    });
    if (replacement.removed > 0)
        emit batchApplied(0, 0, replacement.removed);
    else
        emit batchApplied(rowCount(), 0, 0);
    if (hasPendingChanges())
        scheduleFlush(); // they came after the relist was asked for: newer than its rows
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
    awaitReplacement();
    m_flushScheduled = false;
    if (!hasPendingChanges())
        return;
    applyRemovals();
    awaitReplacement();
    applyUpserts(m_pendingOrder.size());
}

void ResourceModel::flushSome()
{
    // A burst (a relist, 10k feed events) is spread over several turns so that no single turn
    // keeps the GUI thread longer than encoding kRowsPerTurn rows takes.
    m_flushScheduled = false;
    if (m_replacing || !hasPendingChanges())
        return; // the replacement's install schedules the changes that wait for it
    applyRemovals();
    if (m_replacing)
        return; // many scattered rows went: the upserts follow the compacted rows
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
    qint64 ranges = 1;
    for (qsizetype i = 1; i < rows.size(); ++i)
        ranges += rows.at(i) == rows.at(i - 1) + 1 ? 0 : 1;
    if (ranges > 1 && ranges * rowCount() > kCompactionCost) {
        const std::shared_ptr<const std::atomic<quint64>> latest = m_replaceLatest;
        replaceWith(
            [store = snapshot(), drop = std::vector<int>(rows.cbegin(), rows.cend()), latest](quint64 generation) {
                return RowReplacement::without(store, drop, generation, latest);
            },
            rowCount());
        return;
    }
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
        writableStore().eraseRows(first, last);
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
    RowStore &store = writableStore();
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
            store.encode(object, cells.data(), store.row(row));
            if (std::equal(cells.cbegin(), cells.cend(), store.row(row)))
                continue;
            store.setRow(row, cells.data());
            changedRows.append(row);
        } else {
            store.encode(object, cells.data(), nullptr);
            appended.insert(appended.end(), cells.cbegin(), cells.cend());
            appendedIds.append(id);
        }
    }
    m_pendingOrder.remove(0, taken);

    if (!appendedIds.isEmpty()) {
        beginInsertRows({}, oldCount, oldCount + int(appendedIds.size()) - 1);
        store.appendRows(appended.data(), int(appendedIds.size()));
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

RowStore &ResourceModel::writableStore()
{
    if (m_store->hasReaders())
        m_store = std::make_shared<RowStore>(*m_store);
    return *m_store;
}

std::shared_ptr<const RowStore> ResourceModel::snapshot() const
{
    // The returned pointer keeps the store alive and counts as a reader until it is dropped,
    // whichever thread drops it.
    m_store->addReader();
    return std::shared_ptr<const RowStore>(m_store.get(), [store = m_store](const RowStore *) { store->releaseReader(); });
}

QVariant ResourceModel::cellRaw(int row, int field) const
{
    if (m_store->isInterned(field)) {
        const int id = m_store->textId(row, field);
        return id < 0 ? QVariant() : QVariant(decoded(quint32(id)));
    }
    return m_store->raw(row, field);
}

QString ResourceModel::decoded(quint32 textId) const
{
    // States, applications, owners: a few texts read over and over (views, the dashboard's counts).
    auto it = m_decoded.constFind(textId);
    if (it != m_decoded.cend())
        return *it;
    if (m_decoded.size() >= kDecodedTexts)
        m_decoded.clear();
    return *m_decoded.insert(textId, m_store->texts().text(textId));
}

QString ResourceModel::displayText(int row, int field) const
{
    const QVariant raw = cellRaw(row, field);
    if (!raw.isValid())
        return {};
    const FieldSpec &spec = m_kind.fields.at(field);
    switch (spec.type) {
    case FieldSpec::Type::Id:
        if (const QString name = referencedName(row, field, raw); !name.isEmpty())
            return name;
        return QString::number(raw.toLongLong());
    case FieldSpec::Type::Integer:
        return QString::number(raw.toLongLong());
    case FieldSpec::Type::Timestamp:
        return timestampText(raw.toLongLong());
    case FieldSpec::Type::Number:
        return QString::number(raw.toDouble(), 'g', 4);
    case FieldSpec::Type::Ratio:
        return percentText(raw.toDouble());
    case FieldSpec::Type::Boolean:
        return raw.toBool() ? tr("yes") : tr("no");
    case FieldSpec::Type::Text:
        if (m_referencesFrom.at(field) >= 0) {
            if (const QString name = referencedName(row, field, raw); !name.isEmpty())
                return name;
        }
        return raw.toString();
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return raw.toString();
    }
    return {};
}

QString ResourceModel::referencedName(int row, int field, const QVariant &raw) const
{
    const FieldSpec &spec = m_kind.fields.at(field);
    if (!m_lookup || !spec.isReference())
        return {};
    const int from = m_referencesFrom.at(field);
    const QString kind = referencedKindName(spec, from >= 0 ? cellText(row, from) : QString());
    if (kind.isEmpty())
        return {};
    const std::optional<qint64> id = referenceId(spec.type == FieldSpec::Type::Id ? QJsonValue(raw.toLongLong())
                                                                                  : QJsonValue(raw.toString()));
    return id ? m_lookup(kind, *id) : QString();
}

qint64 ResourceModel::idAt(int row) const
{
    if (row < 0 || row >= rowCount())
        return 0;
    return qint64(m_store->cell(row, m_idField));
}

qint64 ResourceModel::versionAt(int row) const
{
    if (m_versionField < 0 || row < 0 || row >= rowCount())
        return -1;
    const Cell cell = m_store->cell(row, m_versionField);
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
    const Cell cell = m_store->cell(row, field);
    if (cell == kNull)
        return {};
    switch (m_kind.fields.at(field).type) {
    case FieldSpec::Type::Text:
    case FieldSpec::Type::State:
    case FieldSpec::Type::Json:
        return m_store->isInterned(field) ? decoded(quint32(cell)) : m_store->texts().text(quint32(cell));
    case FieldSpec::Type::Id:
    case FieldSpec::Type::Integer:
        return QString::number(qint64(cell));
    default:
        return {};
    }
}

int ResourceModel::textIdAt(int row, int field) const
{
    return m_store->textId(row, field);
}

QString ResourceModel::textOfId(int textId) const
{
    if (textId < 0 || quint32(textId) >= m_store->texts().size())
        return {};
    return m_store->texts().text(quint32(textId));
}

int ResourceModel::compareRows(int rowA, int rowB, int field) const
{
    const int rows = rowCount();
    if (rowA < 0 || rowB < 0 || rowA >= rows || rowB >= rows || field < 0 || field >= m_fieldCount)
        return 0;
    return m_store->compare(rowA, rowB, field);
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

void ResourceModel::setStateNoteLookup(StateNoteLookup lookup)
{
    m_stateNote = std::move(lookup);
    stateNotesChanged();
}

void ResourceModel::stateNotesChanged()
{
    // Neither the order nor the filter reads a note: the proxies pass this on without re-testing.
    if (m_stateField >= 0 && rowCount() > 0)
        emit dataChanged(index(0, m_stateField), index(rowCount() - 1, m_stateField),
                         {StateNoteRole, Qt::ToolTipRole, Qt::AccessibleTextRole});
}

qsizetype ResourceModel::memoryUsage() const
{
    qsizetype bytes = m_store->memoryUsage();
    // QHash spans: a node plus about two bytes of span metadata per entry, at the load factor.
    bytes += m_rowOfId.capacity() * qsizetype(sizeof(qint64) + sizeof(int) + 2);
    return bytes;
}

} // namespace OpsDeck
