// The console's line icons in the colours of the palette in use.
#pragma once

#include <QColor>
#include <QIcon>

class QPalette;

namespace OpsDeck {

// One drawing for a light desktop, a dark one and a selected row: the icons are drawn in one ink
// (ThemedIcon::Ink), which is replaced when drawn by the colour the palette of the moment asks
// for (iconInk()). Other colours of a drawing (an accent) stay as they are.
namespace ThemedIcon {

// The ink every line icon of resources/icons is drawn in.
inline constexpr QRgb Ink = 0xff5b6b7f;

// An icon from an SVG drawn in Ink.
QIcon fromSvg(const QString &path);

// The ink of an icon in `mode` on `palette`: the drawing's own on a light window, the text's
// (softened) on a dark one, the highlighted text's on a selection, the disabled text's when off.
QColor ink(const QPalette &palette, QIcon::Mode mode);

} // namespace ThemedIcon

} // namespace OpsDeck
