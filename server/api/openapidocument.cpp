// The OpenAPI 3.0 description of the v1 API, kept next to the routes it documents.
#include "openapidocument.h"

#include <QJsonArray>

namespace OpsDeck::OpenApiDocument {

QJsonObject build()
{
    QJsonObject doc;
    doc.insert(QStringLiteral("openapi"), QStringLiteral("3.0.3"));
    doc.insert(QStringLiteral("info"), QJsonObject{{QStringLiteral("title"), QStringLiteral("OpsDeck control plane")},
                                                   {QStringLiteral("version"), QStringLiteral("1.0.0")}});
    doc.insert(QStringLiteral("paths"), QJsonObject());
    return doc;
}

} // namespace OpsDeck::OpenApiDocument
