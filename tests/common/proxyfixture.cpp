// The filter proxy tests' fixture: generated instance rows, a model behind a proxy, and the brute-force reference.
#include "proxyfixture.h"

#include "core/query.h"
#include "core/resourcekind.h"

#include <algorithm>

namespace OpsDeck::Test {

const qint64 kNow = *parseTimestamp(u"2026-11-29T12:00:00.000Z");

const QStringList kNames{QStringLiteral("dataviz-acme"), QStringLiteral("Dataviz-Globex"), QStringLiteral("crm-acme"),
                         QStringLiteral("wiki-ÄRGER"), QStringLiteral("billing"), QStringLiteral("KELVIN-\u212A")};
const QStringList kStates{QStringLiteral("RUNNING"), QStringLiteral("STOPPED"), QStringLiteral("FAILED"),
                          QStringLiteral("PENDING")};

namespace {

QString providerName(const QString &kind, qint64 id)
{
    if (kind != QLatin1String("providers"))
        return QString();
    return id == 7 ? QStringLiteral("Acme") : QStringLiteral("Globex");
}

// A row read from its object, naming providers as the fixture's lookup does.
class NamedRow final : public QueryRow
{
public:
    NamedRow(const ResourceKind &kind, const QJsonObject &object)
        : m_row(kind, object)
    {
    }
    QVariant value(int field) const override { return m_row.value(field); }
    QString referenceName(const QString &kind, qint64 id) const override { return providerName(kind, id); }

private:
    JsonQueryRow m_row;
};

} // namespace

QJsonObject instance(qint64 id, const QString &name, const QString &status, qint64 provider, const QString &created,
                     qint64 version)
{
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("name"), name},
                       {QStringLiteral("organization_id"), 1},
                       {QStringLiteral("provider_id"), provider},
                       {QStringLiteral("application"), QStringLiteral("wiki")},
                       {QStringLiteral("owner"), QStringLiteral("alice")},
                       {QStringLiteral("status"), status},
                       {QStringLiteral("version"), version},
                       {QStringLiteral("created_at"), created},
                       {QStringLiteral("updated_at"), created}};
}

QList<QJsonObject> fixture()
{
    return {instance(1, QStringLiteral("billing"), QStringLiteral("RUNNING"), 7, QStringLiteral("2026-11-29T11:50:00Z")),
            instance(2, QStringLiteral("Alpha wiki"), QStringLiteral("STOPPED"), 7, QStringLiteral("2026-11-28T09:00:00Z")),
            instance(10, QStringLiteral("crm"), QStringLiteral("PENDING"), 8, QStringLiteral("2026-11-29T08:00:00Z")),
            instance(3, QStringLiteral("payroll"), QStringLiteral("RUNNING"), 8, QStringLiteral("2026-11-20T00:00:00Z"))};
}

QJsonObject generated(qint64 id, int salt)
{
    return instance(id, kNames.at((id + salt) % kNames.size()) + QString::number(id % 7),
                    kStates.at((id * 3 + salt) % kStates.size()), 7 + (id % 2),
                    QStringLiteral("2026-11-2%1T10:00:00Z").arg(id % 9 + 1), 1 + salt);
}

QList<QJsonObject> generatedRows(qint64 count, int salt)
{
    QList<QJsonObject> rows;
    for (qint64 id = 1; id <= count; ++id)
        rows << generated(id, salt);
    return rows;
}

QList<qint64> proxyIds(const QAbstractItemModel &proxy)
{
    QList<qint64> ids;
    for (int row = 0; row < proxy.rowCount(); ++row)
        ids << proxy.index(row, 0).data(ResourceModel::IdRole).toLongLong();
    return ids;
}

QList<qint64> sortedIds(const QAbstractItemModel &proxy)
{
    QList<qint64> ids = proxyIds(proxy);
    std::sort(ids.begin(), ids.end());
    return ids;
}

QList<qint64> bruteForce(const ResourceModel &model, const QString &text)
{
    const QueryParse parsed = parseQuery(text, model.kind());
    QList<qint64> ids;
    for (int r = 0; r < model.rowCount(); ++r) {
        const QJsonObject object = model.objectAt(r);
        if (matches(parsed.query, NamedRow(model.kind(), object), kNow))
            ids << model.idAt(r);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

void applyBatch(ResourceModel &model, int round, qint64 rows, qint64 changeStep, qint64 removeFrom, qint64 removeStep)
{
    QList<QJsonObject> batch;
    for (qint64 id = round; id <= rows; id += changeStep)
        batch << generated(id, round);
    for (qint64 id = rows + round * 10; id < rows + round * 10 + 10; ++id)
        batch << generated(id, round);
    model.upsert(batch);
    QList<qint64> removed;
    for (qint64 id = removeFrom; removeStep > 0 && id <= rows; id += removeStep)
        removed << id;
    model.remove(removed);
    model.flush();
}

bool inNameOrder(const QAbstractItemModel &proxy, Qt::SortOrder order, QString *why)
{
    for (int r = 1; r < proxy.rowCount(); ++r) {
        const QString a = proxy.index(r - 1, 1).data(ResourceModel::SortRole).toString();
        const QString b = proxy.index(r, 1).data(ResourceModel::SortRole).toString();
        const int c = a.compare(b, Qt::CaseInsensitive);
        if (order == Qt::AscendingOrder ? c > 0 : c < 0) {
            *why = a + QLatin1String(" before ") + b;
            return false;
        }
    }
    return true;
}

Fixture::Fixture()
    : model(*resourceKindByName(u"instances"))
{
    proxy.setSourceModel(&model);
    proxy.setClock([] { return kNow; });
    proxy.setReferenceLookup(&providerName);
    model.replaceAll(fixture());
}

} // namespace OpsDeck::Test
