// Tests for the list-page reader against a real control plane: order, read-ahead, back-pressure, failures.
#include "models/pagereader.h"

#include "server/controlplane.h"
#include "testserver.h"
#include "testsupport.h"

#include <QJsonDocument>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QSignalSpy>
#include <QTest>

using namespace OpsDeck;

namespace {

// An organization, a provider and `count` instances.
void seed(Test::TestServer &server, int count)
{
    const qint64 organization = server.createOrganization(QStringLiteral("acme"));
    const qint64 provider = server.createProvider(QStringLiteral("acme-apps"), organization, {QStringLiteral("wiki")});
    for (int i = 1; i <= count; ++i)
        server.createInstance(QStringLiteral("wiki-%1").arg(i), organization, provider, QStringLiteral("wiki"),
                              QStringLiteral("alice"));
}

ApiClient::Settings settingsFor(Test::TestServer &server, const QString &token)
{
    ApiClient::Settings settings;
    settings.baseUrl = server.baseUrl();
    settings.token = token;
    settings.timeoutMs = 5000;
    settings.maxRetries = 0;
    return settings;
}

// Collects every page the reader hands on into *pages and applies it at once.
void applyEachPage(PageReader &reader, QList<ListPage> *pages)
{
    QObject::connect(&reader, &PageReader::pageRead, &reader, [pages, &reader](quint64 generation, const ListPage &page) {
        pages->append(page);
        reader.pageApplied(generation);
    });
}

// List requests the reader has sent and not yet had answered.
int listRequestsOnTheWire(const PageReader &reader)
{
    int count = 0;
    const auto replies = reader.client()->networkAccessManager()->findChildren<QNetworkReply *>();
    for (const QNetworkReply *reply : replies) {
        const QString path = reply->url().path();
        if (!reply->isFinished() && (path.endsWith(u"/instances") || path.endsWith(u"/organizations")))
            ++count;
    }
    return count;
}

} // namespace

class tst_PageReader final : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void readsEveryKindInOrder();
    void rowTextsKeptWhenAsked_data();
    void rowTextsKeptWhenAsked();
    void nextPageAskedBeforeThisOneIsHandedOn();
    void waitsForRoomWhenPagesAreNotApplied();
    void kindNotOfferedIsSkipped_data();
    void kindNotOfferedIsSkipped();
    void otherFailureEndsTheRead();
    void olderGenerationsAcknowledgementIgnored();
};

void tst_PageReader::initTestCase()
{
    OPSDECK_REQUIRE_BACKEND();
}

void tst_PageReader::readsEveryKindInOrder()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 25);
    PageReader reader;
    QList<ListPage> pages;
    applyEachPage(reader, &pages);
    reader.read(7, settingsFor(server, server.operatorToken()),
                {QStringLiteral("organizations"), QStringLiteral("instances")}, 10);
    QTRY_COMPARE(pages.size(), 4);
    QCOMPARE(pages.at(0).kind, QStringLiteral("organizations"));
    QCOMPARE(pages.at(0).rows.size(), 1);
    QVERIFY(pages.at(0).next.isEmpty());
    QList<qint64> ids;
    for (int i = 1; i < 4; ++i) {
        QCOMPARE(pages.at(i).kind, QStringLiteral("instances"));
        QCOMPARE(pages.at(i).ids.size(), pages.at(i).rows.size());
        if (i > 1)
            QCOMPARE(pages.at(i).cursor, pages.at(i - 1).next); // each page asked for with its predecessor's cursor
        for (int r = 0; r < pages.at(i).rows.size(); ++r)
            QCOMPARE(pages.at(i).rows.at(r).value(QStringLiteral("id")).toInteger(), pages.at(i).ids.at(r));
        ids << pages.at(i).ids;
    }
    QVERIFY(pages.at(1).cursor.isEmpty());
    QCOMPARE(pages.at(1).rows.size(), 10);
    QCOMPARE(pages.at(3).rows.size(), 5);
    QVERIFY(pages.at(3).next.isEmpty());
    QCOMPARE(ids.size(), 25);
    QVERIFY(std::is_sorted(ids.cbegin(), ids.cend()));
    QCOMPARE(listRequestsOnTheWire(reader), 0);
}

void tst_PageReader::rowTextsKeptWhenAsked_data()
{
    QTest::addColumn<bool>("keep");
    QTest::newRow("kept") << true;
    QTest::newRow("not asked for") << false;
}

void tst_PageReader::rowTextsKeptWhenAsked()
{
    QFETCH(bool, keep);
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 15);
    PageReader reader;
    QList<ListPage> pages;
    applyEachPage(reader, &pages);
    reader.read(1, settingsFor(server, server.operatorToken()), {QStringLiteral("instances")}, 10, keep);
    QTRY_COMPARE(pages.size(), 2);
    for (const ListPage &page : std::as_const(pages)) {
        if (!keep) {
            QVERIFY(page.texts.isEmpty());
            continue;
        }
        // Each text is its row as the server wrote it: it decodes to the very same object.
        QCOMPARE(page.texts.size(), page.rows.size());
        for (qsizetype i = 0; i < page.rows.size(); ++i) {
            QVERIFY(page.texts.at(i).startsWith('{'));
            QCOMPARE(QJsonDocument::fromJson(page.texts.at(i)).object(), page.rows.at(i));
        }
    }
}

void tst_PageReader::nextPageAskedBeforeThisOneIsHandedOn()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 25);
    PageReader reader;
    // When each page is handed on: how many list requests are already on their way. The first
    // page of the next kind is asked for as soon as the last page of the kind before it is in.
    QList<QPair<QString, int>> seen;
    connect(&reader, &PageReader::pageRead, &reader, [&seen, &reader](quint64 generation, const ListPage &page) {
        seen.append({page.kind, listRequestsOnTheWire(reader)});
        reader.pageApplied(generation);
    });
    reader.read(1, settingsFor(server, server.operatorToken()),
                {QStringLiteral("instances"), QStringLiteral("organizations")}, 10);
    QTRY_COMPARE(seen.size(), 4);
    const QList<QPair<QString, int>> expected{{QStringLiteral("instances"), 1},
                                              {QStringLiteral("instances"), 1},
                                              {QStringLiteral("instances"), 1},
                                              {QStringLiteral("organizations"), 0}};
    QCOMPARE(seen, expected);
}

void tst_PageReader::waitsForRoomWhenPagesAreNotApplied()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 45); // five pages of 10
    PageReader reader;
    QSignalSpy read(&reader, &PageReader::pageRead);
    reader.read(3, settingsFor(server, server.operatorToken()), {QStringLiteral("instances")}, 10);
    QTRY_COMPARE(read.count(), PageReader::kPagesAhead);
    // Nothing applied: nothing more is asked for, so nothing more can come.
    QCOMPARE(listRequestsOnTheWire(reader), 0);
    reader.pageApplied(3);
    QTRY_COMPARE(read.count(), PageReader::kPagesAhead + 1);
    QCOMPARE(listRequestsOnTheWire(reader), 0);
    reader.pageApplied(3);
    QTRY_COMPARE(read.count(), 5);
    QVERIFY(read.last().at(1).value<ListPage>().next.isEmpty());
    QCOMPARE(read.last().at(1).value<ListPage>().rows.size(), 5);
}

void tst_PageReader::kindNotOfferedIsSkipped_data()
{
    QTest::addColumn<QString>("kind");
    QTest::addColumn<QString>("role");
    QTest::addColumn<int>("status");
    QTest::newRow("no such list: 404") << QStringLiteral("no-such-kind") << QStringLiteral("operator") << 404;
    QTest::newRow("not for this role: 403") << QStringLiteral("tokens") << QStringLiteral("owner") << 403;
}

void tst_PageReader::kindNotOfferedIsSkipped()
{
    QFETCH(QString, kind);
    QFETCH(QString, role);
    QFETCH(int, status);
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 5);
    PageReader reader;
    QSignalSpy failed(&reader, &PageReader::pageFailed);
    QSignalSpy read(&reader, &PageReader::pageRead);
    const QString token = role == QLatin1String("owner") ? server.token(role, QStringLiteral("alice")) : server.token(role);
    reader.read(2, settingsFor(server, token), {kind, QStringLiteral("instances")}, 10);
    QTRY_COMPARE(read.count(), 1);
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().at(1).toString(), kind);
    QCOMPARE(failed.first().at(2).value<ApiResult>().status, status);
    QCOMPARE(read.first().at(1).value<ListPage>().kind, QStringLiteral("instances"));
}

void tst_PageReader::otherFailureEndsTheRead()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 5);
    PageReader reader;
    QSignalSpy failed(&reader, &PageReader::pageFailed);
    QSignalSpy unauthenticated(reader.client(), &ApiClient::unauthenticated);
    QSignalSpy read(&reader, &PageReader::pageRead);
    reader.read(4, settingsFor(server, QStringLiteral("not-a-token")),
                {QStringLiteral("instances"), QStringLiteral("organizations")}, 10);
    QTRY_COMPARE(failed.count(), 1);
    QCOMPARE(failed.first().at(0).toULongLong(), quint64(4));
    QCOMPARE(failed.first().at(2).value<ApiResult>().status, 401);
    QCOMPARE(unauthenticated.count(), 1);
    QCOMPARE(listRequestsOnTheWire(reader), 0); // the next kind is not tried
    QCOMPARE(read.count(), 0);
}

void tst_PageReader::olderGenerationsAcknowledgementIgnored()
{
    Test::TestServer server;
    QVERIFY2(server.isRunning(), qPrintable(server.error()));
    seed(server, 45);
    PageReader reader;
    QSignalSpy read(&reader, &PageReader::pageRead);
    reader.read(5, settingsFor(server, server.operatorToken()), {QStringLiteral("instances")}, 10);
    QTRY_COMPARE(read.count(), PageReader::kPagesAhead);
    // A new read replaces the old one; a late acknowledgement of the old one makes no room.
    reader.read(6, settingsFor(server, server.operatorToken()), {QStringLiteral("instances")}, 10);
    QTRY_COMPARE(read.count(), 2 * PageReader::kPagesAhead);
    QCOMPARE(read.last().at(0).toULongLong(), quint64(6));
    reader.pageApplied(5);
    QCOMPARE(listRequestsOnTheWire(reader), 0);
    reader.pageApplied(6);
    QTRY_COMPARE(read.count(), 2 * PageReader::kPagesAhead + 1);
}

QTEST_GUILESS_MAIN(tst_PageReader)
#include "tst_pagereader.moc"
