// Following whatever a model's contents do.
#pragma once

#include <QAbstractItemModel>

namespace OpsDeck {

// Calls `changed` (no arguments) in `context`'s thread whenever rows of `model` come or go, its
// values change, or it starts over. The connections end with either object.
template <typename Changed>
void whenModelChanges(const QAbstractItemModel *model, const QObject *context, Changed changed)
{
    const auto call = [changed] { changed(); };
    QObject::connect(model, &QAbstractItemModel::rowsInserted, context, call);
    QObject::connect(model, &QAbstractItemModel::rowsRemoved, context, call);
    QObject::connect(model, &QAbstractItemModel::dataChanged, context, call);
    QObject::connect(model, &QAbstractItemModel::modelReset, context, call);
}

} // namespace OpsDeck
