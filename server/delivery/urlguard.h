// The SSRF guard for callback URLs: which URLs and addresses the control plane may call back.
#pragma once

#include "core/problem.h"

#include <QHostAddress>
#include <QUrl>

namespace OpsDeck {

// Callback URLs are user input, and the server sits inside someone's network: by default it
// refuses to call loopback, link-local (cloud metadata lives at 169.254.169.254), private,
// shared, multicast and reserved addresses, in IPv4, IPv6 and IPv4-in-IPv6 forms.
// validate() runs when a URL is registered; checkResolved() runs on every address DNS returns
// at send time, so a name that later resolves inward (DNS rebinding) is still refused.
// Tests and the demo switch the address rules off with allowPrivate; the scheme and shape rules
// always apply.
class CallbackUrlGuard final
{
public:
    static constexpr int MaxUrlLength = 2048;

    explicit CallbackUrlGuard(bool allowPrivate = false);

    bool allowsPrivate() const { return m_allowPrivate; }

    // A null Problem when the URL may be used; otherwise 400 "invalid-callback-url" whose
    // detail says what is wrong.
    Problem validate(const QUrl &url) const;
    Problem validate(const QString &url) const;
    // The same address rules for an address a host name resolved to.
    Problem checkResolved(const QHostAddress &address) const;

    // Why an address is not public ("loopback", "private", …), or empty when it is.
    static QString restrictedCategory(const QHostAddress &address);

    // The one spelling of a valid callback URL, which keys its endpoint: scheme and host in lower
    // case, an IPv4 host in dotted form (QUrl reads "127.1" and "0x7f000001" as 127.0.0.1), no
    // default port, no dot segments, "/" for an empty path, percent-encoding as QUrl normalizes
    // it (unreserved characters decoded, hex digits in upper case), and no fragment, which is
    // never sent. Two spellings of one receiver are then one endpoint: pausing it holds both.
    static QString canonical(const QUrl &url);

private:
    static Problem refuse(const QString &detail);

    bool m_allowPrivate = false;
};

} // namespace OpsDeck
