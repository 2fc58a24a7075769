// Badge colours for each state tone, readable on light and dark palettes.
#pragma once

#include "core/resourcekind.h"

#include <QColor>
#include <QPalette>

namespace OpsDeck {

struct ToneColors
{
    QColor background;
    QColor foreground;
    QColor border;
};

bool isDarkPalette(const QPalette &palette);
// A dark palette for Fusion. The console follows the desktop's palette; this one is what the
// screenshots' dark view and the tests of what is drawn on a dark ground use.
QPalette darkPalette();
ToneColors toneColors(StateTone tone, const QPalette &palette);

} // namespace OpsDeck
