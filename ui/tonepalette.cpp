// Badge colours for each state tone.
#include "tonepalette.h"

namespace OpsDeck {

bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}

QPalette darkPalette()
{
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x31));
    dark.setColor(QPalette::WindowText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
    dark.setColor(QPalette::AlternateBase, QColor(0x26, 0x28, 0x2b));
    dark.setColor(QPalette::Text, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Button, QColor(0x33, 0x35, 0x3a));
    dark.setColor(QPalette::ButtonText, QColor(0xe6, 0xe6, 0xe6));
    dark.setColor(QPalette::Highlight, QColor(0x3d, 0x7e, 0xd8));
    dark.setColor(QPalette::HighlightedText, Qt::white);
    dark.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9d, 0xa3));
    dark.setColor(QPalette::ToolTipBase, QColor(0x33, 0x35, 0x3a));
    dark.setColor(QPalette::ToolTipText, QColor(0xe6, 0xe6, 0xe6));
    for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText})
        dark.setColor(QPalette::Disabled, role, QColor(0x6c, 0x6f, 0x75));
    return dark;
}

ToneColors toneColors(StateTone tone, const QPalette &palette)
{
    // Hue and saturation per tone; lightness is chosen per palette so the text keeps a
    // contrast ratio above 4.5:1 against its badge on both light and dark bases.
    int hue = 0;
    int saturation = 0;
    switch (tone) {
    case StateTone::Good:
        hue = 135;
        saturation = 150;
        break;
    case StateTone::Busy:
        hue = 210;
        saturation = 170;
        break;
    case StateTone::Bad:
        hue = 2;
        saturation = 190;
        break;
    case StateTone::Neutral:
        hue = 40;
        saturation = 90;
        break;
    case StateTone::Gone:
        hue = 0;
        saturation = 0;
        break;
    }
    ToneColors colors;
    if (isDarkPalette(palette)) {
        colors.background = QColor::fromHsl(hue, saturation, 52);
        colors.foreground = QColor::fromHsl(hue, qMin(255, saturation + 40), 205);
        colors.border = QColor::fromHsl(hue, saturation, 110);
    } else {
        colors.background = QColor::fromHsl(hue, saturation, 228);
        colors.foreground = QColor::fromHsl(hue, qMin(255, saturation + 40), 62);
        colors.border = QColor::fromHsl(hue, saturation, 170);
    }
    if (tone == StateTone::Gone) {
        // Muted grey, yet above 4.5:1 on its badge: the palette's placeholder ink was 3.8:1.
        colors.foreground = QColor::fromHsl(0, 0, isDarkPalette(palette) ? 170 : 92);
    }
    return colors;
}

} // namespace OpsDeck
