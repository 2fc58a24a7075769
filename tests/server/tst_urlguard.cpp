// The callback URL guard: schemes, URL shape and the address classes refused by default.
#include "server/delivery/urlguard.h"

#include <QtTest>

using namespace OpsDeck;

class tst_UrlGuard final : public QObject
{
    Q_OBJECT

private slots:
    void validate_data();
    void validate();
    void checkResolved_data();
    void checkResolved();
    void problemShape();
    void canonical_data();
    void canonical();
};

void tst_UrlGuard::validate_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("allowPrivate");
    QTest::addColumn<QString>("refusal"); // part of the detail; empty = accepted

    QTest::newRow("public https") << "https://hooks.example.com/opsdeck" << false << "";
    QTest::newRow("public http with port") << "http://hooks.example.com:8080/x?y=1" << false << "";
    QTest::newRow("public ipv4") << "http://93.184.216.34/cb" << false << "";
    QTest::newRow("public ipv6") << "http://[2606:2800:220:1:248:1893:25c8:1946]/cb" << false << "";
    QTest::newRow("uppercase scheme") << "HTTPS://hooks.example.com/" << false << "";
    QTest::newRow("ftp") << "ftp://hooks.example.com/x" << false << "scheme \"ftp\" is not allowed";
    QTest::newRow("file") << "file:///etc/passwd" << false << "scheme \"file\" is not allowed";
    QTest::newRow("gopher") << "gopher://hooks.example.com/" << false << "scheme \"gopher\"";
    QTest::newRow("javascript") << "javascript:alert(1)" << false << "scheme \"javascript\"";
    QTest::newRow("no scheme") << "hooks.example.com/x" << false << "no scheme";
    QTest::newRow("no host") << "http:///path" << false << "no host";
    QTest::newRow("userinfo") << "https://user:pw@hooks.example.com/" << false << "user name or password";
    QTest::newRow("user only") << "https://user@hooks.example.com/" << false << "user name or password";
    QTest::newRow("userinfo allowed private still refused") << "http://u:p@127.0.0.1/" << true
                                                            << "user name or password";
    QTest::newRow("bad scheme allowed private still refused") << "ftp://127.0.0.1/" << true << "scheme";
    QTest::newRow("empty") << "" << false << "empty";
    QTest::newRow("garbage") << "http://exa mple.com/" << false << "not valid";
    QTest::newRow("too long") << "https://hooks.example.com/" + QString(3000, QLatin1Char('a')) << false
                              << "longer than";
    QTest::newRow("port zero") << "http://hooks.example.com:0/" << false << "port 0";

    QTest::newRow("loopback") << "http://127.0.0.1:8080/cb" << false << "loopback";
    QTest::newRow("loopback other") << "http://127.10.0.5/cb" << false << "loopback";
    QTest::newRow("localhost") << "http://localhost:8080/cb" << false << "loopback name";
    QTest::newRow("localhost trailing dot") << "http://localhost./cb" << false << "loopback name";
    QTest::newRow("sub.localhost") << "http://api.localhost/cb" << false << "loopback name";
    QTest::newRow("ipv6 loopback") << "http://[::1]:8080/cb" << false << "loopback";
    QTest::newRow("metadata") << "http://169.254.169.254/latest/meta-data/" << false << "link-local";
    QTest::newRow("ipv6 link-local") << "http://[fe80::1]/cb" << false << "link-local";
    QTest::newRow("10/8") << "http://10.1.2.3/cb" << false << "private";
    QTest::newRow("172.16/12") << "http://172.31.255.255/cb" << false << "private";
    QTest::newRow("172.32 is public") << "http://172.32.0.1/cb" << false << "";
    QTest::newRow("192.168/16") << "http://192.168.1.1/cb" << false << "private";
    QTest::newRow("fc00::/7") << "http://[fd12:3456::1]/cb" << false << "private";
    QTest::newRow("unspecified v4") << "http://0.0.0.0:8080/" << false << "unspecified";
    QTest::newRow("unspecified v6") << "http://[::]:8080/" << false << "unspecified";
    QTest::newRow("mapped loopback") << "http://[::ffff:127.0.0.1]/" << false << "IPv4-mapped loopback";
    QTest::newRow("mapped private") << "http://[::ffff:10.0.0.1]/" << false << "IPv4-mapped private";
    QTest::newRow("mapped public") << "http://[::ffff:93.184.216.34]/" << false << "";
    QTest::newRow("nat64 metadata") << "http://[64:ff9b::a9fe:a9fe]/" << false << "NAT64 link-local";
    QTest::newRow("6to4 loopback") << "http://[2002:7f00:1::]/" << false << "6to4 loopback";
    QTest::newRow("cgnat") << "http://100.64.0.1/" << false << "shared";
    QTest::newRow("multicast") << "http://224.0.0.1/" << false << "multicast";
    QTest::newRow("broadcast") << "http://255.255.255.255/" << false << "reserved";
    QTest::newRow("decimal ip") << "http://2130706433/" << false << "127.0.0.1";
    QTest::newRow("hex ip") << "http://0x7f.1/" << false << "127.0.0.1";
    QTest::newRow("short ip") << "http://127.1/" << false << "127.0.0.1";
    QTest::newRow("domain with digits is fine") << "http://1.example.com/" << false << "";

    QTest::newRow("allowPrivate loopback") << "http://127.0.0.1:8080/cb" << true << "";
    QTest::newRow("allowPrivate localhost") << "http://localhost:8080/cb" << true << "";
    QTest::newRow("allowPrivate private") << "http://192.168.1.1/cb" << true << "";
    QTest::newRow("allowPrivate ipv6 loopback") << "http://[::1]/cb" << true << "";
}

void tst_UrlGuard::validate()
{
    QFETCH(QString, url);
    QFETCH(bool, allowPrivate);
    QFETCH(QString, refusal);
    const CallbackUrlGuard guard(allowPrivate);
    const Problem problem = guard.validate(url);
    if (refusal.isEmpty()) {
        QVERIFY2(problem.isNull(), qPrintable(problem.detail));
        QVERIFY(guard.validate(QUrl(url)).isNull());
        return;
    }
    QVERIFY(!problem.isNull());
    QCOMPARE(problem.code, QStringLiteral("invalid-callback-url"));
    // Numeric hosts may be normalised by QUrl (then refused as an address) or refused as
    // non-canonical; either way the detail names what was wrong.
    if (refusal == QLatin1String("127.0.0.1"))
        QVERIFY2(problem.detail.contains(refusal) || problem.detail.contains(QLatin1String("non-canonical")),
                 qPrintable(problem.detail));
    else
        QVERIFY2(problem.detail.contains(refusal), qPrintable(problem.detail));
}

void tst_UrlGuard::checkResolved_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("category"); // empty = public
    QTest::newRow("public v4") << "93.184.216.34" << "";
    QTest::newRow("public v6") << "2606:2800:220:1:248:1893:25c8:1946" << "";
    QTest::newRow("loopback") << "127.0.0.1" << "loopback";
    QTest::newRow("v6 loopback") << "::1" << "loopback";
    QTest::newRow("link-local scoped") << "fe80::1%eth0" << "link-local";
    QTest::newRow("private 10") << "10.255.255.255" << "private";
    QTest::newRow("private 172") << "172.16.0.0" << "private";
    QTest::newRow("edge below 172.16") << "172.15.255.255" << "";
    QTest::newRow("private 192.168") << "192.168.0.1" << "private";
    QTest::newRow("unique local") << "fc00::1" << "private (unique local)";
    QTest::newRow("unspecified") << "0.0.0.0" << "unspecified";
    QTest::newRow("this network") << "0.1.2.3" << "unspecified";
    QTest::newRow("v6 unspecified") << "::" << "unspecified";
    QTest::newRow("mapped link-local") << "::ffff:169.254.169.254" << "IPv4-mapped link-local";
    QTest::newRow("compatible") << "::7f00:1" << "IPv4-compatible loopback";
    QTest::newRow("v6 multicast") << "ff02::1" << "multicast";
}

void tst_UrlGuard::checkResolved()
{
    QFETCH(QString, address);
    QFETCH(QString, category);
    const QHostAddress parsed(address);
    QVERIFY(!parsed.isNull());
    QCOMPARE(CallbackUrlGuard::restrictedCategory(parsed), category);
    const Problem strict = CallbackUrlGuard().checkResolved(parsed);
    QCOMPARE(strict.isNull(), category.isEmpty());
    if (!category.isEmpty()) {
        QVERIFY2(strict.detail.contains(category), qPrintable(strict.detail));
        QVERIFY(!strict.detail.contains(QLatin1Char('%')));
    }
    QVERIFY(CallbackUrlGuard(true).checkResolved(parsed).isNull());
}

void tst_UrlGuard::problemShape()
{
    const Problem problem = CallbackUrlGuard().validate(QStringLiteral("http://127.0.0.1/"));
    QCOMPARE(problem.status, 400);
    QCOMPARE(problem.type(), QStringLiteral("urn:opsdeck:problem:invalid-callback-url"));
    QCOMPARE(problem.title, QStringLiteral("Invalid callback URL"));
    QVERIFY(CallbackUrlGuard().checkResolved(QHostAddress()).detail.contains(QLatin1String("did not resolve")));
    QVERIFY(!CallbackUrlGuard().allowsPrivate());
    QVERIFY(CallbackUrlGuard(true).allowsPrivate());
}

void tst_UrlGuard::canonical_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("expected");
    QTest::newRow("already canonical") << "https://hooks.example.com/opsdeck?x=1" << "https://hooks.example.com/opsdeck?x=1";
    QTest::newRow("scheme and host case") << "HTTPS://Hooks.Example.COM/Cb" << "https://hooks.example.com/Cb";
    QTest::newRow("default http port") << "http://h.example:80/cb" << "http://h.example/cb";
    QTest::newRow("default https port") << "https://h.example:443/cb" << "https://h.example/cb";
    QTest::newRow("other port kept") << "http://h.example:443/cb" << "http://h.example:443/cb";
    QTest::newRow("empty path") << "https://h.example" << "https://h.example/";
    QTest::newRow("dot segments") << "http://h.example/a/./b/../c" << "http://h.example/a/c";
    QTest::newRow("dot segment at the end") << "http://h.example/a/b/.." << "http://h.example/a/";
    QTest::newRow("above the root") << "http://h.example/../../cb" << "http://h.example/cb";
    QTest::newRow("encoded dots") << "http://h.example/a/%2E%2e/cb" << "http://h.example/cb";
    QTest::newRow("double slash kept") << "http://h.example/a//b" << "http://h.example/a//b";
    QTest::newRow("unreserved decoded") << "http://h.example/%7Euser/%41" << "http://h.example/~user/A";
    QTest::newRow("reserved kept encoded") << "http://h.example/a%2fb?q=%26" << "http://h.example/a%2Fb?q=%26";
    QTest::newRow("fragment dropped") << "https://h.example/cb#section" << "https://h.example/cb";
    QTest::newRow("short ipv4") << "http://127.1:8080/cb" << "http://127.0.0.1:8080/cb";
    QTest::newRow("hex ipv4") << "http://0x7f000001:8080/cb" << "http://127.0.0.1:8080/cb";
    QTest::newRow("decimal ipv4") << "http://2130706433/cb" << "http://127.0.0.1/cb";
    QTest::newRow("ipv6 case and zeros") << "http://[2001:DB8:0:0::1]:80/cb" << "http://[2001:db8::1]/cb";
    QTest::newRow("query order kept") << "http://h.example/cb?b=2&a=1" << "http://h.example/cb?b=2&a=1";
}

void tst_UrlGuard::canonical()
{
    QFETCH(QString, url);
    QFETCH(QString, expected);
    const QUrl parsed(url, QUrl::StrictMode);
    QVERIFY2(parsed.isValid(), qPrintable(parsed.errorString()));
    const QString once = CallbackUrlGuard::canonical(parsed);
    QCOMPARE(once, expected);
    // A canonical URL is its own canonical form, and still passes the guard.
    QCOMPARE(CallbackUrlGuard::canonical(QUrl(once, QUrl::StrictMode)), once);
    QVERIFY(CallbackUrlGuard(true).validate(once).isNull());
}

QTEST_GUILESS_MAIN(tst_UrlGuard)
#include "tst_urlguard.moc"
