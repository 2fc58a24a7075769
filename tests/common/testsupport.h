// Helpers shared by the test binaries.
#pragma once

#include <QString>

namespace OpsDeck::Test {

// A fresh, empty directory for one test, removed when the process ends.
QString scratchDir();

} // namespace OpsDeck::Test
