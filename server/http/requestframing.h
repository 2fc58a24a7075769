// Where each request on a connection ends, checked before QHttpServer parses it.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

#include <optional>

namespace OpsDeck {

// QHttpServer 6.4 frames requests leniently: a Content-Length of "abc", "-5" or two that disagree,
// a Transfer-Encoding it does not know, or a chunk size that is no number, each leave it reading
// an empty body, and the bytes meant as that body are taken for the next request. A proxy in
// front that frames them as the standard says would pass those bytes as a body: a request hidden
// there would reach the routes unseen (request smuggling). This follows the framing of RFC 9112
// over the bytes as they arrive and refuses, before they are parsed, any request whose end is
// not certain: the connection then ends with that answer.
class RequestFraming final
{
public:
    struct Refusal
    {
        int status = 400;
        QString detail;
    };

    // The head of one request (request line and header fields) may take at most this many bytes.
    explicit RequestFraming(qint64 maxHeadBytes)
        : m_maxHeadBytes(maxHeadBytes)
    {
    }

    // The next bytes of the connection; a refusal once they show a request that cannot be framed
    // for certain (and for every call after it).
    std::optional<Refusal> feed(QByteArrayView bytes);
    // Whether feed() would only count the next `n` bytes (inside a body of known length): the
    // caller need not copy them.
    bool skips(qint64 n) const { return m_state == State::Body && n <= m_remaining; }
    void skip(qint64 n) { m_remaining -= n; }

private:
    enum class State { RequestLine, Headers, Body, ChunkSize, ChunkData, ChunkEnd, Trailers };

    // One complete line (without its CR LF) in the current state.
    std::optional<Refusal> line(QByteArrayView text);
    std::optional<Refusal> header(QByteArrayView text);
    std::optional<Refusal> endOfHead();
    std::optional<Refusal> refuse(int status, const QString &detail);

    qint64 m_maxHeadBytes;
    State m_state = State::RequestLine;
    QByteArray m_line;      // the line read so far
    qint64 m_headBytes = 0; // of the current head
    qint64 m_remaining = 0; // body or chunk bytes still to come
    std::optional<qint64> m_contentLength;
    bool m_chunked = false;
    std::optional<Refusal> m_refused;
};

} // namespace OpsDeck
