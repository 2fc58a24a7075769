// Reads the list pages of a full sync on a worker thread and hands them on decoded, row by row.
#pragma once

#include "apiclient.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <optional>

namespace OpsDeck {

// One list page, decoded: its objects in the server's order and the cursor after it.
struct ListPage
{
    QString kind;
    QString cursor;          // the cursor this page was asked for with; empty for a kind's first page
    QList<QJsonObject> rows; // the items that carry a numeric id
    QList<qint64> ids;       // their ids, in the same order
    QString next;            // empty on a kind's last page
    // The rows' JSON as the server wrote it, one per row, when the read was asked to keep it
    // (for the cache) and the body had the expected shape; else empty.
    QList<QByteArray> texts;
};

// Each page's URL needs the cursor at the end of the page before it, so the requests form one
// chain, and every moment between a body's arrival and the next request is a moment the server
// waits. The reader keeps that chain off the GUI thread (which is busy applying rows): it lives
// on a thread of its own with its own client, asks for the next page as soon as a body is in
// (its `next` read from the body's tail), decodes the body there and emits the page. The kinds
// are read one after the other without a pause between them; at most kPagesAhead pages wait to
// be applied (pageApplied() makes room), so a slow GUI thread holds the reader back instead of
// piling up pages.
//
// The owner calls read() / pageApplied() / cancel() in the reader's thread (queued).
class PageReader final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PageReader)

public:
    static constexpr int kPagesAhead = 3;

    explicit PageReader(QObject *parent = nullptr);
    ~PageReader() override;

    // The reader's own client (a child: it moves with the reader). Its sslErrors() and
    // unauthenticated() are meant to be forwarded to the client the user sees.
    ApiClient *client() const { return m_client; }

    // "/instances?limit=1000&cursor=..." (the client's path form).
    static QString listPath(const QString &kind, int pageSize, const QString &cursor);

    // Reads every page of kinds in order, tagged with generation; cancels a read in progress.
    // keepTexts: fill ListPage::texts.
    void read(quint64 generation, const ApiClient::Settings &settings, const QStringList &kinds, int pageSize,
              bool keepTexts = false);
    // The owner applied one page of this generation: one more may be read ahead.
    void pageApplied(quint64 generation);
    void cancel();

signals:
    void pageRead(quint64 generation, const OpsDeck::ListPage &page);
    // A page could not be read. 403, 404 and 405 (a kind this server or role does not offer)
    // go on with the next kind; anything else ends the read.
    void pageFailed(quint64 generation, const QString &kind, const OpsDeck::ApiResult &result);

private:
    struct Request
    {
        QString kind;
        QString cursor;
        QPointer<ApiReply> reply;
    };

    Request send(const QString &kind, const QString &cursor);
    std::optional<Request> successor(const QString &next) const;
    void onBody(ApiReply *reply, const QByteArray &body);
    void onFinished(ApiReply *reply, const ApiResult &result);

    ApiClient *m_client; // child
    quint64 m_generation = 0;
    QStringList m_kinds;  // the kind being read first, then the ones after it
    int m_pageSize = 1000;
    bool m_keepTexts = false;
    int m_ahead = 0;      // pages emitted and not yet applied
    Request m_current;    // the page being received or decoded
    Request m_next;       // the page after it, asked for from the current body's tail
    Request m_held;       // the page to ask for once there is room (no reply yet)
};

} // namespace OpsDeck

Q_DECLARE_METATYPE(OpsDeck::ListPage)
