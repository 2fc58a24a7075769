// Where each request on a connection ends, checked before QHttpServer parses it.
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>

#include <optional>

namespace OpsDeck {

// QHttpServer 6.4 frames requests leniently: a Content-Length of "abc", "-5" or two that disagree,
// a Transfer-Encoding it does not know, or a chunk size that is no number, each leave it reading
// an empty body, and the bytes meant as that body are taken for the next request. A proxy in
// front that frames them as the standard says would pass those bytes as a body: a request hidden
// there would reach the routes unseen (request smuggling). This follows the framing of RFC 9112
// over the bytes as they arrive and refuses, before they are parsed, any request whose end is
// not certain: the connection then ends with that answer. It also holds each request to what
// HTTP/1.1 asks of its head that QHttpServer does not check (exactly one Host, RFC 9112 3.2; no
// expectation but 100-continue, RFC 9110 10.1.1; no field that takes one value repeated, which
// QHttpServer would join into one "a, b"), and notes what the guard answers for QHttpServer:
// each request's version, and a request waiting for 100 Continue before it sends its body.
class RequestFraming final
{
public:
    struct Refusal
    {
        int status = 400;
        QString detail;
    };

    // Where a whole request ends (a position) and what the guard needs to know of it.
    struct End
    {
        qint64 position = 0;
        bool http10 = false; // an HTTP/1.0 request: its connection ends with the answer unless it asks to keep it
    };

    // A request that asked for 100 Continue (RFC 9110 10.1.1) and whose body has not all arrived.
    struct Continue
    {
        qint64 headStart = 0;                // where its head began
        std::optional<qint64> contentLength; // none when chunked
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
    void skip(qint64 n);

    // How many bytes of the connection were fed (or skipped) so far.
    qint64 position() const { return m_position; }
    // The first request that ends after `from` (a position), if it was fed; the ends up to `from`
    // are forgotten.
    std::optional<End> nextEnd(qint64 from);
    // The request being read, once its head is whole, if it waits for 100 Continue.
    const std::optional<Continue> &continueWanted() const { return m_continue; }
    // Whether no byte of a next request has arrived since the last one ended (empty lines aside).
    bool betweenRequests() const { return m_state == State::RequestLine && m_line.isEmpty(); }

private:
    enum class State { RequestLine, Headers, Body, ChunkSize, ChunkData, ChunkEnd, Trailers };

    // One complete line (without its CR LF) in the current state.
    std::optional<Refusal> line(QByteArrayView text);
    std::optional<Refusal> header(QByteArrayView text);
    std::optional<Refusal> endOfHead();
    std::optional<Refusal> refuse(int status, const QString &detail);
    // A request ends at the current position: the head of the next one begins.
    void requestEnds();

    qint64 m_maxHeadBytes;
    State m_state = State::RequestLine;
    QByteArray m_line;      // the line read so far
    qint64 m_headBytes = 0; // of the current head
    qint64 m_remaining = 0; // body or chunk bytes still to come
    std::optional<qint64> m_contentLength;
    bool m_chunked = false;
    bool m_http10 = false;
    quint32 m_singletons = 0;    // the fields of kSingletons the current head has had (bits)
    bool m_expectContinue = false;
    qint64 m_headStart = 0;      // where the current request began
    std::optional<Continue> m_continue;
    qint64 m_position = 0;  // of the byte being looked at
    QList<End> m_ends;      // where requests ended, in order
    std::optional<Refusal> m_refused;
};

} // namespace OpsDeck
