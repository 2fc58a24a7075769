// The list-page reader: one chain of page requests per full sync, decoded off the GUI thread.
#include "pagereader.h"

#include <QJsonArray>
#include <QUrl>

#include <limits>

namespace OpsDeck {

namespace {

// The `next` of a list page, read from the end of its body before the body is decoded: the
// server writes {"items": [...], "next": "<cursor>"|null} with next last. *known is false when
// the tail does not have that exact shape; the decoded page has the final word either way.
QString nextCursorInTail(const QByteArray &body, bool *known)
{
    *known = false;
    constexpr qsizetype kTail = 1024;
    const QByteArrayView tail = QByteArrayView(body).last(std::min(kTail, body.size()));
    const qsizetype key = tail.lastIndexOf(QByteArrayView("\"next\""));
    if (key < 0)
        return {};
    qsizetype i = key + 6;
    auto skipSpace = [&] {
        while (i < tail.size() && (tail[i] == ' ' || tail[i] == '\n' || tail[i] == '\r' || tail[i] == '\t'))
            ++i;
    };
    skipSpace();
    if (i >= tail.size() || tail[i] != ':')
        return {};
    ++i;
    skipSpace();
    QString cursor;
    if (tail.sliced(i).startsWith("null")) {
        i += 4;
    } else if (i < tail.size() && tail[i] == '"') {
        const qsizetype end = tail.indexOf('"', i + 1);
        if (end < 0)
            return {};
        const QByteArrayView text = tail.sliced(i + 1, end - i - 1);
        if (text.isEmpty() || text.contains('\\'))
            return {};
        cursor = QString::fromUtf8(text);
        i = end + 1;
    } else {
        return {};
    }
    skipSpace();
    if (i >= tail.size() || tail[i] != '}')
        return {};
    ++i;
    skipSpace();
    if (i != tail.size())
        return {};
    *known = true;
    return cursor;
}

// The text of each element of the body's "items" array, when the body starts the way the server
// writes it ({"items":[...); empty when it does not.
QList<QByteArray> itemTexts(const QByteArray &body)
{
    static constexpr QByteArrayView kStart("{\"items\":[");
    if (!body.startsWith(kStart))
        return {};
    QList<QByteArray> texts;
    const char *p = body.constData();
    int depth = 0;
    bool inString = false;
    qsizetype start = 0;
    for (qsizetype i = kStart.size(); i < body.size(); ++i) {
        const char c = p[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        switch (c) {
        case '"':
            inString = true;
            break;
        case '{':
        case '[':
            if (depth++ == 0)
                start = i;
            break;
        case '}':
        case ']':
            if (depth == 0)
                return texts; // the end of the items array
            if (--depth == 0)
                texts.append(body.sliced(start, i + 1 - start));
            break;
        default:
            break;
        }
    }
    return {};
}

} // namespace

PageReader::PageReader(QObject *parent)
    : QObject(parent)
    , m_client(new ApiClient(this))
{
    qRegisterMetaType<OpsDeck::ListPage>();
    // This thread is the worker: a page is decoded right here, after the next one was asked for.
    m_client->setOffThreadDecodeThreshold(std::numeric_limits<int>::max());
}

PageReader::~PageReader()
{
    cancel();
}

QString PageReader::listPath(const QString &kind, int pageSize, const QString &cursor)
{
    QString path = QStringLiteral("/%1?limit=%2").arg(kind).arg(pageSize);
    if (!cursor.isEmpty())
        path += QStringLiteral("&cursor=") + QString::fromLatin1(QUrl::toPercentEncoding(cursor));
    return path;
}

void PageReader::read(quint64 generation, const ApiClient::Settings &settings, const QStringList &kinds, int pageSize,
                      bool keepTexts)
{
    cancel();
    m_client->setSettings(settings);
    m_generation = generation;
    m_kinds = kinds;
    m_pageSize = pageSize;
    m_keepTexts = keepTexts;
    if (!m_kinds.isEmpty())
        m_current = send(m_kinds.first(), {});
}

void PageReader::pageApplied(quint64 generation)
{
    if (generation != m_generation)
        return;
    m_ahead = std::max(0, m_ahead - 1);
    if (m_held.kind.isEmpty() || m_current.reply || m_ahead + 1 > kPagesAhead)
        return;
    const Request held = std::exchange(m_held, {});
    m_current = send(held.kind, held.cursor);
}

void PageReader::cancel()
{
    for (Request *request : {&m_current, &m_next}) {
        if (request->reply)
            request->reply->abort();
        *request = {};
    }
    m_held = {};
    m_kinds.clear();
    m_ahead = 0;
}

PageReader::Request PageReader::send(const QString &kind, const QString &cursor)
{
    ApiReply *reply = m_client->get(listPath(kind, m_pageSize, cursor));
    connect(reply, &ApiReply::bodyReceived, this, [this, reply](const QByteArray &body) { onBody(reply, body); });
    connect(reply, &ApiReply::finished, this, [this, reply](const ApiResult &result) { onFinished(reply, result); });
    return {kind, cursor, reply};
}

// The page after m_current, by its kind and position: `next` of the same kind, or the first page
// of the kind after it; nullopt when m_current is the last page of the last kind.
std::optional<PageReader::Request> PageReader::successor(const QString &next) const
{
    if (!next.isEmpty())
        return Request{m_current.kind, next, {}};
    if (m_kinds.size() > 1)
        return Request{m_kinds.at(1), {}, {}};
    return std::nullopt;
}

void PageReader::onBody(ApiReply *reply, const QByteArray &body)
{
    if (reply != m_current.reply || m_next.reply)
        return;
    bool known = false;
    const QString next = nextCursorInTail(body, &known);
    if (!known)
        return; // asked for once the page is decoded
    // This page is about to be emitted; the one asked for now would be the one after it.
    if (m_ahead + 2 > kPagesAhead)
        return;
    if (const auto after = successor(next))
        m_next = send(after->kind, after->cursor);
}

void PageReader::onFinished(ApiReply *reply, const ApiResult &result)
{
    if (reply != m_current.reply)
        return;
    const QString kind = m_current.kind;
    if (!result.ok()) {
        m_current = {};
        if (m_next.reply)
            m_next.reply->abort();
        m_next = {};
        m_held = {};
        const bool notOffered = result.status == 403 || result.status == 404 || result.status == 405;
        emit pageFailed(m_generation, kind, result);
        if (!notOffered) {
            m_kinds.clear();
            return;
        }
        m_kinds.removeFirst();
        if (!m_kinds.isEmpty())
            m_current = send(m_kinds.first(), {});
        return;
    }

    ListPage page;
    page.kind = kind;
    page.cursor = m_current.cursor;
    const QJsonObject object = result.object();
    page.next = object.value(QLatin1String("next")).toString();
    const QJsonArray items = object.value(QLatin1String("items")).toArray();
    QList<QByteArray> texts = m_keepTexts ? itemTexts(result.body) : QList<QByteArray>();
    const bool withTexts = texts.size() == items.size() && !texts.isEmpty();
    page.rows.reserve(items.size());
    page.ids.reserve(items.size());
    if (withTexts)
        page.texts.reserve(items.size());
    for (qsizetype i = 0; i < items.size(); ++i) {
        QJsonObject row = items.at(i).toObject();
        const QJsonValue id = row.value(QLatin1String("id"));
        if (!id.isDouble())
            continue;
        page.ids.append(id.toInteger());
        page.rows.append(std::move(row));
        if (withTexts)
            page.texts.append(std::move(texts[i]));
    }

    // Who comes next: what the tail promised if that is right, else ask now or when there is room.
    const std::optional<Request> after = successor(page.next);
    if (page.next.isEmpty())
        m_kinds.removeFirst();
    m_current = {};
    if (m_next.reply && after && m_next.kind == after->kind && m_next.cursor == after->cursor) {
        m_current = std::exchange(m_next, {});
    } else {
        if (m_next.reply)
            m_next.reply->abort(); // the tail read a cursor the decoded page does not have
        m_next = {};
        if (after) {
            if (m_ahead + 2 <= kPagesAhead)
                m_current = send(after->kind, after->cursor);
            else
                m_held = *after;
        }
    }
    ++m_ahead;
    emit pageRead(m_generation, page);
}

} // namespace OpsDeck
