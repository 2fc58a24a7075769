// Helpers shared by the test binaries.
#include "testsupport.h"

#include <QTemporaryDir>

namespace OpsDeck::Test {

QString scratchDir()
{
    static QTemporaryDir dir;
    return dir.path();
}

} // namespace OpsDeck::Test
