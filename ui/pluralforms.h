// The console's English plural forms ("1 row", "2 rows"): its source strings say "%n row(s)", and
// every locale without a translation of its own falls back to these.
#pragma once

namespace OpsDeck::PluralForms {

// Installs the forms on the application once (later calls do nothing); a translator installed
// after them, such as the user's locale's, takes precedence. False when the compiled forms are
// not among the resources.
bool install();

} // namespace OpsDeck::PluralForms
