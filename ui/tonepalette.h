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
ToneColors toneColors(StateTone tone, const QPalette &palette);

} // namespace OpsDeck
