// The SSRF guard for callback URLs: which URLs and addresses the control plane may call back.
#include "urlguard.h"

#include <QRegularExpression>

#include <algorithm>

namespace OpsDeck {

namespace {

struct Range
{
    const char *network;
    int prefix;
    const char *category;
};

// RFC 6890 special-purpose ranges that a callback has no business reaching.
constexpr Range Ipv4Ranges[] = {
    {"0.0.0.0", 8, "unspecified"},
    {"10.0.0.0", 8, "private"},
    {"100.64.0.0", 10, "shared (carrier-grade NAT)"},
    {"127.0.0.0", 8, "loopback"},
    {"169.254.0.0", 16, "link-local"},
    {"172.16.0.0", 12, "private"},
    {"192.0.0.0", 24, "IETF protocol assignment"},
    {"192.168.0.0", 16, "private"},
    {"198.18.0.0", 15, "benchmarking"},
    {"224.0.0.0", 4, "multicast"},
    {"240.0.0.0", 4, "reserved"},
};

constexpr Range Ipv6Ranges[] = {
    {"::", 128, "unspecified"},
    {"::1", 128, "loopback"},
    {"fe80::", 10, "link-local"},
    {"fec0::", 10, "site-local"},
    {"fc00::", 7, "private (unique local)"},
    {"ff00::", 8, "multicast"},
    {"100::", 64, "discard-only"},
};

QString ipv4Category(quint32 ipv4)
{
    const QHostAddress address(ipv4);
    for (const Range &range : Ipv4Ranges) {
        if (address.isInSubnet(QHostAddress(QString::fromLatin1(range.network)), range.prefix))
            return QString::fromLatin1(range.category);
    }
    return {};
}

quint32 embeddedIpv4(const Q_IPV6ADDR &bytes, int offset)
{
    return (quint32(bytes[offset]) << 24) | (quint32(bytes[offset + 1]) << 16) | (quint32(bytes[offset + 2]) << 8)
           | quint32(bytes[offset + 3]);
}

// RFC 3986 §5.2.4: "/a/./b/../c" is "/a/c". (QUrl::NormalizePathSegments in Qt 6.4 leaves "/a//c".)
QString withoutDotSegments(QString input)
{
    QString output;
    const auto dropLastSegment = [&output] { output.truncate(std::max<qsizetype>(0, output.lastIndexOf(QLatin1Char('/')))); };
    while (!input.isEmpty()) {
        if (input.startsWith(QLatin1String("../"))) {
            input.remove(0, 3);
        } else if (input.startsWith(QLatin1String("./"))) {
            input.remove(0, 2);
        } else if (input.startsWith(QLatin1String("/./"))) {
            input.remove(0, 2);
        } else if (input == QLatin1String("/.")) {
            input = QStringLiteral("/");
        } else if (input.startsWith(QLatin1String("/../"))) {
            input.remove(0, 3);
            dropLastSegment();
        } else if (input == QLatin1String("/..")) {
            input = QStringLiteral("/");
            dropLastSegment();
        } else if (input == QLatin1String(".") || input == QLatin1String("..")) {
            input.clear();
        } else {
            const qsizetype end = input.indexOf(QLatin1Char('/'), 1);
            const qsizetype length = end < 0 ? input.size() : end;
            output += input.left(length);
            input.remove(0, length);
        }
    }
    return output;
}

} // namespace

QString CallbackUrlGuard::canonical(const QUrl &url)
{
    QUrl out = url.adjusted(QUrl::RemoveFragment);
    const QString scheme = url.scheme().toLower();
    out.setScheme(scheme);
    out.setHost(url.host().toLower());
    if ((scheme == QLatin1String("http") && url.port() == 80) || (scheme == QLatin1String("https") && url.port() == 443))
        out.setPort(-1);
    const QString path = withoutDotSegments(url.path(QUrl::FullyEncoded));
    out.setPath(path.isEmpty() ? QStringLiteral("/") : path, QUrl::TolerantMode);
    return out.toString(QUrl::FullyEncoded);
}

CallbackUrlGuard::CallbackUrlGuard(bool allowPrivate)
    : m_allowPrivate(allowPrivate)
{
}

Problem CallbackUrlGuard::refuse(const QString &detail)
{
    return Problem::make(400, QStringLiteral("invalid-callback-url"), QStringLiteral("Invalid callback URL"), detail);
}

Problem CallbackUrlGuard::validate(const QString &url) const
{
    if (url.trimmed().isEmpty())
        return refuse(QStringLiteral("the URL is empty"));
    if (url.size() > MaxUrlLength)
        return refuse(QStringLiteral("the URL is longer than %1 characters").arg(MaxUrlLength));
    const QUrl parsed(url, QUrl::StrictMode);
    if (!parsed.isValid())
        return refuse(QStringLiteral("the URL is not valid: %1").arg(parsed.errorString()));
    return validate(parsed);
}

Problem CallbackUrlGuard::validate(const QUrl &url) const
{
    if (url.isEmpty())
        return refuse(QStringLiteral("the URL is empty"));
    if (!url.isValid())
        return refuse(QStringLiteral("the URL is not valid: %1").arg(url.errorString()));
    if (url.toEncoded().size() > MaxUrlLength)
        return refuse(QStringLiteral("the URL is longer than %1 characters").arg(MaxUrlLength));
    const QString scheme = url.scheme().toLower();
    if (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
        return refuse(scheme.isEmpty() ? QStringLiteral("the URL has no scheme; use http or https")
                                       : QStringLiteral("the scheme \"%1\" is not allowed; use http or https").arg(scheme));
    if (!url.userInfo().isEmpty())
        return refuse(QStringLiteral("the URL must not carry a user name or password"));
    const QString host = url.host().toLower();
    if (host.isEmpty())
        return refuse(QStringLiteral("the URL has no host"));
    if (url.port() == 0)
        return refuse(QStringLiteral("port 0 is not a valid port"));

    if (m_allowPrivate)
        return {};

    QHostAddress literal;
    if (literal.setAddress(host))
        return checkResolved(literal);

    // QUrl writes most numeric IPv4 forms dotted ("127.1" and "0x7f.1" are 127.0.0.1), but leaves
    // some that resolvers may still accept ("0x7f.1.", "127.0.0.1.", "08.1"): a host made only
    // of numeric parts is refused rather than guessed at.
    static const QRegularExpression numericHost(QStringLiteral("^(0x[0-9a-f]*|[0-9]+)(\\.(0x[0-9a-f]*|[0-9]+))*\\.?$"));
    if (numericHost.match(host).hasMatch())
        return refuse(QStringLiteral("the host \"%1\" is a non-canonical numeric address").arg(host));
    const QString bare = host.endsWith(QLatin1Char('.')) ? host.chopped(1) : host;
    if (bare == QLatin1String("localhost") || bare.endsWith(QLatin1String(".localhost")))
        return refuse(QStringLiteral("the host \"%1\" is a loopback name").arg(host));
    return {};
}

Problem CallbackUrlGuard::checkResolved(const QHostAddress &address) const
{
    if (m_allowPrivate)
        return {};
    if (address.isNull())
        return refuse(QStringLiteral("the host did not resolve to an address"));
    const QString category = restrictedCategory(address);
    if (category.isEmpty())
        return {};
    QHostAddress plain = address;
    plain.setScopeId(QString());
    return refuse(QStringLiteral("%1 is not a public address (%2); callbacks may only go to public addresses")
                      .arg(plain.toString(), category));
}

QString CallbackUrlGuard::restrictedCategory(const QHostAddress &address)
{
    if (address.protocol() == QAbstractSocket::IPv4Protocol)
        return ipv4Category(address.toIPv4Address());
    if (address.protocol() != QAbstractSocket::IPv6Protocol)
        return QStringLiteral("unknown-protocol");

    const Q_IPV6ADDR bytes = address.toIPv6Address();
    QHostAddress plain(bytes);
    // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d) forms reach
    // the embedded IPv4 address.
    if (plain.isInSubnet(QHostAddress(QStringLiteral("::ffff:0:0")), 96)) {
        const QString category = ipv4Category(embeddedIpv4(bytes, 12));
        return category.isEmpty() ? QString() : QStringLiteral("IPv4-mapped ") + category;
    }
    for (const Range &range : Ipv6Ranges) {
        if (plain.isInSubnet(QHostAddress(QString::fromLatin1(range.network)), range.prefix))
            return QString::fromLatin1(range.category);
    }
    if (plain.isInSubnet(QHostAddress(QStringLiteral("::")), 96)) {
        const QString category = ipv4Category(embeddedIpv4(bytes, 12));
        return category.isEmpty() ? QStringLiteral("IPv4-compatible") : QStringLiteral("IPv4-compatible ") + category;
    }
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address a gateway will reach.
    if (plain.isInSubnet(QHostAddress(QStringLiteral("64:ff9b::")), 96)) {
        const QString category = ipv4Category(embeddedIpv4(bytes, 12));
        return category.isEmpty() ? QString() : QStringLiteral("NAT64 ") + category;
    }
    if (plain.isInSubnet(QHostAddress(QStringLiteral("2002::")), 16)) {
        const QString category = ipv4Category(embeddedIpv4(bytes, 2));
        return category.isEmpty() ? QString() : QStringLiteral("6to4 ") + category;
    }
    return {};
}

} // namespace OpsDeck
