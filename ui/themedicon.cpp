// Line icons re-inked for the palette in use: a QIconEngine that draws the SVG with its ink replaced.
#include "themedicon.h"

#include <QFile>
#include <QGuiApplication>
#include <QHash>
#include <QIconEngine>
#include <QImage>
#include <QPainter>
#include <QPalette>
#include <QPixmap>
#include <QSvgRenderer>

#include <cmath>
#include <memory>
#include <unordered_map>

// The icons are a static library's resources: registered before the first is read.
static void registerIcons()
{
    static const bool registered = [] {
        Q_INIT_RESOURCE(icons);
        return true;
    }();
    Q_UNUSED(registered);
}

namespace OpsDeck::ThemedIcon {

namespace {

QByteArray inkName(QRgb rgb)
{
    return QColor(rgb).name(QColor::HexRgb).toLatin1();
}

class Engine final : public QIconEngine
{
public:
    explicit Engine(QByteArray svg)
        : m_svg(std::move(svg))
    {
    }

    void paint(QPainter *painter, const QRect &rect, QIcon::Mode mode, QIcon::State state) override
    {
        const qreal scale = painter->device() ? painter->device()->devicePixelRatioF() : 1.0;
        const QSize pixels(qRound(rect.width() * scale), qRound(rect.height() * scale));
        painter->drawPixmap(rect, scaledPixmap(pixels, mode, state, scale));
    }

    QPixmap pixmap(const QSize &size, QIcon::Mode mode, QIcon::State state) override
    {
        return scaledPixmap(size, mode, state, 1.0);
    }

    // Qt 6.4 asks for `pixels` already multiplied by `scale` (QIcon::pixmap(size, ratio)).
    QPixmap scaledPixmap(const QSize &pixels, QIcon::Mode mode, QIcon::State, qreal scale) override
    {
        const QColor color = ink(QGuiApplication::palette(), mode);
        if (pixels.isEmpty())
            return {};
        const QString key = QStringLiteral("%1x%2@%3:%4").arg(pixels.width()).arg(pixels.height()).arg(scale).arg(color.rgba());
        if (const auto cached = m_pixmaps.constFind(key); cached != m_pixmaps.cend())
            return *cached;
        QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
        image.fill(Qt::transparent);
        {
            QPainter p(&image);
            // A translucent ink (some themes' disabled text) is drawn as translucent.
            p.setOpacity(color.alphaF());
            // Square drawings, centred in what is asked.
            const int side = std::min(pixels.width(), pixels.height());
            renderer(color.rgb()).render(&p, QRectF((pixels.width() - side) / 2.0, (pixels.height() - side) / 2.0, side, side));
        }
        QPixmap pixmap = QPixmap::fromImage(std::move(image));
        pixmap.setDevicePixelRatio(scale);
        // A handful of sizes, modes and palettes while the console runs: kept, within reason.
        if (m_pixmaps.size() > 64)
            m_pixmaps.clear();
        m_pixmaps.insert(key, pixmap);
        return pixmap;
    }

    QIconEngine *clone() const override { return new Engine(m_svg); }
    QString key() const override { return QStringLiteral("opsdeck-themed-svg"); }
    bool isNull() override { return m_svg.isEmpty(); }

private:
    QSvgRenderer &renderer(QRgb color)
    {
        std::unique_ptr<QSvgRenderer> &r = m_renderers[color];
        if (!r) {
            QByteArray svg = m_svg;
            if (color != Ink)
                svg.replace(inkName(Ink), inkName(color));
            r = std::make_unique<QSvgRenderer>(svg);
        }
        return *r;
    }

    QByteArray m_svg;
    std::unordered_map<QRgb, std::unique_ptr<QSvgRenderer>> m_renderers;
    QHash<QString, QPixmap> m_pixmaps;
};

} // namespace

QIcon fromSvg(const QString &path)
{
    registerIcons();
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QIcon(new Engine(file.readAll())) : QIcon();
}

QColor ink(const QPalette &palette, QIcon::Mode mode)
{
    if (mode == QIcon::Selected)
        return palette.color(QPalette::Active, QPalette::HighlightedText);
    if (mode == QIcon::Disabled)
        return palette.color(QPalette::Disabled, QPalette::WindowText);
    const QColor window = palette.color(QPalette::Active, QPalette::Window);
    if (window.lightness() >= 128)
        return QColor(Ink);
    // On a dark window the drawing's slate would all but vanish: the text's colour, a fifth of
    // the way towards the window's, as quiet beside the labels as the slate is on a light one.
    const QColor text = palette.color(QPalette::Active, QPalette::WindowText);
    const auto mix = [](int a, int b) { return int(std::lround(a * 0.8 + b * 0.2)); };
    return QColor(mix(text.red(), window.red()), mix(text.green(), window.green()), mix(text.blue(), window.blue()));
}

} // namespace OpsDeck::ThemedIcon
