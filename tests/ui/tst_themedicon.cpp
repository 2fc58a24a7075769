// The console's line icons in a light palette, a dark one and on a selection: drawn in the ink the palette asks for.
#include "ui/themedicon.h"
#include "ui/tonepalette.h"

#include "contrast.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QPalette>
#include <QTest>


using namespace OpsDeck;
using OpsDeck::Test::contrast;

namespace {

QPalette lightPalette()
{
    QPalette p;
    p.setColor(QPalette::Window, QColor(0xef, 0xef, 0xef));
    p.setColor(QPalette::WindowText, Qt::black);
    p.setColor(QPalette::Highlight, QColor(0x30, 0x8c, 0xc6));
    p.setColor(QPalette::HighlightedText, Qt::white);
    return p;
}


// The colours of the fully opaque pixels of an icon drawn at 48 px, with how often each is met.
QHash<QRgb, int> opaqueColours(const QIcon &icon, QIcon::Mode mode)
{
    const QImage image = icon.pixmap(QSize(48, 48), mode).toImage().convertToFormat(QImage::Format_ARGB32);
    QHash<QRgb, int> colours;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            const QRgb px = image.pixel(x, y);
            if (qAlpha(px) == 255)
                ++colours[px | 0xff000000];
        }
    }
    return colours;
}

QRgb mostFrequent(const QHash<QRgb, int> &colours)
{
    QRgb best = 0;
    int count = -1;
    for (auto it = colours.cbegin(); it != colours.cend(); ++it) {
        if (it.value() > count) {
            best = it.key();
            count = it.value();
        }
    }
    return best;
}

} // namespace

class tst_ThemedIcon : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void everyLineIconIsDrawnInTheInk();
    void inkStandsOutOnEveryPalette_data();
    void inkStandsOutOnEveryPalette();
    void iconsFollowThePalette();
    void accentsKeepTheirColour();
    void sharpOnAHighDensityScreen();
};

void tst_ThemedIcon::initTestCase()
{
    // The first icon asked for registers them all; the listing below comes before any.
    QVERIFY(!ThemedIcon::fromSvg(QStringLiteral(":/icons/refresh.svg")).isNull());
}

void tst_ThemedIcon::everyLineIconIsDrawnInTheInk()
{
    // An icon drawn in another colour would never be re-inked, and vanish on a dark desktop. The
    // application's own icon is a picture, not a line icon.
    const QStringList icons = QDir(QStringLiteral(":/icons")).entryList({QStringLiteral("*.svg")});
    QVERIFY(icons.size() >= 10);
    for (const QString &name : icons) {
        if (name == QLatin1String("opsdeck.svg"))
            continue;
        QFile file(QStringLiteral(":/icons/") + name);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY2(file.readAll().contains(QColor(ThemedIcon::Ink).name().toLatin1()), qPrintable(name));
        QVERIFY2(!ThemedIcon::fromSvg(QStringLiteral(":/icons/") + name).isNull(), qPrintable(name));
    }
    QVERIFY(ThemedIcon::fromSvg(QStringLiteral(":/icons/no-such-icon.svg")).isNull());
}

void tst_ThemedIcon::inkStandsOutOnEveryPalette_data()
{
    QTest::addColumn<QPalette>("palette");
    QTest::addColumn<int>("mode");
    QTest::addColumn<int>("role"); // what the icon is drawn on
    QTest::newRow("light") << lightPalette() << int(QIcon::Normal) << int(QPalette::Window);
    QTest::newRow("light, selected") << lightPalette() << int(QIcon::Selected) << int(QPalette::Highlight);
    QTest::newRow("dark") << darkPalette() << int(QIcon::Normal) << int(QPalette::Window);
    QTest::newRow("dark, selected") << darkPalette() << int(QIcon::Selected) << int(QPalette::Highlight);
}

void tst_ThemedIcon::inkStandsOutOnEveryPalette()
{
    // WCAG's 3:1 for the parts of a graphic that carry its meaning.
    QFETCH(QPalette, palette);
    QFETCH(int, mode);
    QFETCH(int, role);
    const QColor ink = ThemedIcon::ink(palette, QIcon::Mode(mode));
    const QColor ground = palette.color(QPalette::Active, QPalette::ColorRole(role));
    QVERIFY2(contrast(ink, ground) >= 3.0,
             qPrintable(QStringLiteral("%1 on %2: %3:1").arg(ink.name(), ground.name()).arg(contrast(ink, ground), 0, 'f', 2)));
}

void tst_ThemedIcon::iconsFollowThePalette()
{
    // The same icon, drawn again as the application's palette changes: the drawing's own slate on
    // a light window, the ink the dark palette asks for, white on a selection.
    const QIcon icon = ThemedIcon::fromSvg(QStringLiteral(":/icons/refresh.svg"));
    const QPalette before = QApplication::palette();
    QApplication::setPalette(lightPalette());
    QCOMPARE(mostFrequent(opaqueColours(icon, QIcon::Normal)), ThemedIcon::Ink);
    QCOMPARE(mostFrequent(opaqueColours(icon, QIcon::Selected)), QColor(Qt::white).rgb());
    QApplication::setPalette(darkPalette());
    const QRgb dark = mostFrequent(opaqueColours(icon, QIcon::Normal));
    QCOMPARE(dark, ThemedIcon::ink(darkPalette(), QIcon::Normal).rgb());
    QVERIFY(QColor(dark).lightness() > 150);
    QApplication::setPalette(before);
}

void tst_ThemedIcon::accentsKeepTheirColour()
{
    // The instances icon's green dots say "running" whatever the palette.
    const QIcon icon = ThemedIcon::fromSvg(QStringLiteral(":/icons/instances.svg"));
    const QPalette before = QApplication::palette();
    QApplication::setPalette(darkPalette());
    const QHash<QRgb, int> colours = opaqueColours(icon, QIcon::Normal);
    QApplication::setPalette(before);
    QVERIFY(colours.contains(QColor(0x2e, 0x9d, 0x52).rgb()));
    QVERIFY(!colours.contains(ThemedIcon::Ink));
}

void tst_ThemedIcon::sharpOnAHighDensityScreen()
{
    // Twice the pixels at twice the density, drawn once: not four times, shrunk again.
    const QIcon icon = ThemedIcon::fromSvg(QStringLiteral(":/icons/refresh.svg"));
    for (const qreal ratio : {1.0, 1.5, 2.0}) {
        const QPixmap pixmap = icon.pixmap(QSize(16, 16), ratio);
        QCOMPARE(pixmap.size(), QSize(qRound(16 * ratio), qRound(16 * ratio)));
        QCOMPARE(pixmap.devicePixelRatio(), ratio);
    }
}

QTEST_MAIN(tst_ThemedIcon)
#include "tst_themedicon.moc"
