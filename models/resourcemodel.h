// One generic table model for every resource kind, fed in batches and stored as compact rows.
#pragma once

#include "core/resourcekind.h"
#include "rowreplacement.h"
#include "rowstore.h"

#include <QAbstractTableModel>
#include <QFuture>
#include <QFutureWatcher>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QSet>

#include <atomic>
#include <functional>
#include <memory>

class QThreadPool;

namespace OpsDeck {

class ResourceModel final : public QAbstractTableModel
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ResourceModel)

public:
    enum Role {
        IdRole = Qt::UserRole + 1, // qint64, same for every column of a row
        SortRole,                  // raw value of the cell: qint64, double, bool or QString; never display text
        StateRole,                 // the row's state string (empty for kinds without one)
        ToneRole,                  // int(StateTone) of the row's state
        ObjectRole,                // the full QJsonObject, rebuilt from the compact row
        VersionRole,               // qint64, -1 for kinds without versions
        RawRole,                   // raw value as fieldRawValue() gives it (invalid for null)
        StateNoteRole,             // of the state column: the word setStateNoteLookup() adds beside the state
    };
    Q_ENUM(Role)

    // kind must outlive the model (resourceKinds() entries do).
    explicit ResourceModel(const ResourceKind &kind, QObject *parent = nullptr);
    ~ResourceModel() override;

    const ResourceKind &kind() const { return m_kind; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Queued and applied once per event-loop turn: one insert for all new rows, dataChanged per
    // changed range. An object older than the row it would replace (by "version") is ignored.
    void upsert(const QList<QJsonObject> &objects);
    // Queued likewise: one removal per contiguous range, or, when many ranges are spread over many
    // rows, one reset once a copy of the rows left is made on the worker (as isReplacing() says).
    void remove(const QList<qint64> &ids);
    // Replaces every row with one reset (a relist or a cache load); drops the changes queued before
    // it. Many objects are encoded on a worker: until then the previous rows stay (isReplacing()),
    // and changes queued meanwhile are applied to the new rows right after the reset. A newer
    // replaceAll() supersedes one still being encoded.
    void replaceAll(const QList<QJsonObject> &objects);
    bool isReplacing() const { return m_replacing; }
    // Fewer objects than this are encoded at once on this thread; 0 sends every replacement to the
    // worker (tests).
    void setAsyncThreshold(qsizetype objects) { m_asyncThreshold = objects; }
    static constexpr qsizetype kAsyncThreshold = 8192;
    // Applies every queued change now (the event loop applies at most kRowsPerTurn per turn),
    // after waiting for a replacement being encoded.
    void flush();
    static constexpr qsizetype kRowsPerTurn = 4000;
    bool hasPendingChanges() const { return !m_pendingOrder.isEmpty() || !m_pendingRemovals.isEmpty(); }

    int rowOfId(qint64 id) const { return m_rowOfId.value(id, -1); }
    qint64 idAt(int row) const;
    qint64 versionAt(int row) const;
    QJsonObject objectAt(int row) const;
    QJsonObject objectById(qint64 id) const;
    QVariant rawValue(int row, int field) const;
    // The cell as text without a QVariant: the string of Text/State/Json cells, the number of
    // Id/Integer cells; empty for null and for other types.
    QString cellText(int row, int field) const;
    // The number of a Text/State/Json cell's text, else -1. Equal texts share a number except in
    // fields whose texts are unique per row (names), where each row has its own. Numbers stay
    // valid until a reset (replaceAll()).
    int textIdAt(int row, int field) const;
    // The text of a number textIdAt() gave.
    QString textOfId(int textId) const;
    // Orders two rows by one field's raw value (texts case-insensitively, nulls last): what
    // sorting by SortRole means, without building QVariants.
    int compareRows(int rowA, int rowB, int field) const;
    // The row's human name (the kind's nameField), for reference lookups.
    QString nameOfId(qint64 id) const;
    QList<qint64> ids() const;

    // What a row's state alone does not say (a PENDING callback its endpoint holds): a word shown
    // beside the state (StateNoteRole), the sentence its tooltip gives, both also read out with
    // the state (Qt::AccessibleTextRole). Empty: nothing to add.
    struct StateNote
    {
        QString text;
        QString toolTip;
    };
    using StateNoteLookup = std::function<StateNote(int row)>;
    // The lookup reads what this model does not hold; stateNotesChanged() says when that changed.
    void setStateNoteLookup(StateNoteLookup lookup);
    void stateNotesChanged();
    StateNote stateNoteAt(int row) const { return m_stateNote ? m_stateNote(row) : StateNote(); }

    // Reference columns ("provider_id") show the referenced object's name when known.
    void setReferenceLookup(ReferenceLookup lookup);
    const ReferenceLookup &referenceLookup() const { return m_lookup; }

    // Bytes held for the rows (cells, text arena, id index): the per-row memory benchmark reads it.
    qsizetype memoryUsage() const;

    // The rows as they are now, read-only and never changed afterwards: safe to read from another
    // thread. Holding one makes the model's next change copy its rows first, so let it go soon.
    std::shared_ptr<const RowStore> snapshot() const;
    const RowStore &store() const { return *m_store; }

signals:
    // After a batch was applied (inserted, changed and removed row counts).
    void batchApplied(int inserted, int changed, int removed);

private:
    using Cell = RowStore::Cell;

    // The store to change: copied first while a snapshot of it is held elsewhere.
    RowStore &writableStore();
    void scheduleFlush();
    QVariant cellRaw(int row, int field) const;
    // An interned text as a QString, decoded once.
    QString decoded(quint32 textId) const;
    QString displayText(int row, int field) const;
    // The name of the object a reference cell points to, or empty (unknown, or no reference).
    QString referencedName(int row, int field, const QVariant &raw) const;
    void rebuildIndex(int fromRow);
    void applyRemovals();
    void applyUpserts(qsizetype limit);
    void flushSome();
    void onReplacementEncoded();
    // Waits for the replacement being encoded and installs it.
    void awaitReplacement();
    // Starts a replacement (at once below the async threshold, else on the worker).
    void replaceWith(std::function<RowReplacement(quint64 generation)> make, qsizetype cost);
    // Swaps a replacement's rows in with one reset; queued changes follow on the next turn.
    void install(RowReplacement replacement);

    const ResourceKind &m_kind;
    int m_fieldCount = 0;
    int m_idField = -1;
    int m_versionField = -1;
    int m_stateField = -1;
    int m_nameField = -1;

    std::shared_ptr<RowStore> m_store;
    QHash<qint64, int> m_rowOfId;
    static constexpr qsizetype kDecodedTexts = 4096;
    mutable QHash<quint32, QString> m_decoded; // a cache: emptied when full and on a reset

    QHash<qint64, QJsonObject> m_pendingUpserts;
    QList<qint64> m_pendingOrder;     // arrival order of m_pendingUpserts' keys
    QSet<qint64> m_pendingRemovals;
    bool m_flushScheduled = false;
    ReferenceLookup m_lookup;
    StateNoteLookup m_stateNote;
    QList<int> m_referencesFrom; // per field: the column of its referencesFrom field, or -1

    // The replacement being encoded: only the newest one's result is installed.
    QThreadPool *m_pool; // a child, one thread
    QFutureWatcher<RowReplacement> *m_replaceWatcher; // a child
    std::shared_ptr<std::atomic<quint64>> m_replaceLatest;
    quint64 m_replaceGeneration = 0;
    bool m_replacing = false;
    qsizetype m_asyncThreshold = kAsyncThreshold;
};

} // namespace OpsDeck
