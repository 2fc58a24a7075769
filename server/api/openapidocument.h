// The OpenAPI 3.0 description of the v1 API, kept next to the routes it documents.
#pragma once

#include <QJsonObject>

namespace OpsDeck::OpenApiDocument {

QJsonObject build();

} // namespace OpsDeck::OpenApiDocument
