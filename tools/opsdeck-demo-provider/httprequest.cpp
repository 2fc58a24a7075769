// One HTTP/1.1 request as the demo provider's connections parse it.
#include "httprequest.h"

namespace OpsDeck::DemoProvider {

QByteArray HttpRequest::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers) {
        if (key == name)
            return value;
    }
    return {};
}

} // namespace OpsDeck::DemoProvider
