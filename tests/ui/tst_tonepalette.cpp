// State badges: every tone's text readable on its badge, on a light and on a dark palette.
#include "ui/tonepalette.h"

#include "contrast.h"

#include <QApplication>
#include <QStyle>
#include <QTest>

using namespace OpsDeck;
using OpsDeck::Test::contrast;

class tst_TonePalette : public QObject
{
    Q_OBJECT

private slots:
    void textIsReadableOnItsBadge_data();
    void textIsReadableOnItsBadge();
};

namespace {

// A translucent ink as it shows on its ground.
QColor over(const QColor &ink, const QColor &ground)
{
    const double a = ink.alphaF();
    return QColor::fromRgbF(float(ink.redF() * a + ground.redF() * (1 - a)),
                            float(ink.greenF() * a + ground.greenF() * (1 - a)),
                            float(ink.blueF() * a + ground.blueF() * (1 - a)));
}

} // namespace

void tst_TonePalette::textIsReadableOnItsBadge_data()
{
    QTest::addColumn<int>("tone");
    QTest::addColumn<bool>("dark");
    const QList<QPair<const char *, StateTone>> tones = {{"neutral", StateTone::Neutral}, {"good", StateTone::Good},
                                                         {"busy", StateTone::Busy},       {"bad", StateTone::Bad},
                                                         {"gone", StateTone::Gone}};
    for (const auto &[name, tone] : tones) {
        QTest::addRow("%s light", name) << int(tone) << false;
        QTest::addRow("%s dark", name) << int(tone) << true;
    }
}

void tst_TonePalette::textIsReadableOnItsBadge()
{
    // 4.5:1 (WCAG, text). A gone state's text was the palette's placeholder ink: 3.8:1 on its
    // light badge (DESTROYED, CANCELLED).
    QFETCH(int, tone);
    QFETCH(bool, dark);
    const QPalette palette = dark ? darkPalette() : QApplication::style()->standardPalette();
    QCOMPARE(isDarkPalette(palette), dark);
    const ToneColors colors = toneColors(StateTone(tone), palette);
    const QColor text = over(colors.foreground, colors.background);
    const double ratio = contrast(text, colors.background);
    QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 on %2: %3:1")
                                          .arg(text.name(), colors.background.name())
                                          .arg(ratio, 0, 'f', 2)));
}

QTEST_MAIN(tst_TonePalette)
#include "tst_tonepalette.moc"
