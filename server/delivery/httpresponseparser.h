// Incremental HTTP/1.1 response parser for callback attempts, with header and body limits.
#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>

namespace OpsDeck {

struct HttpResponse
{
    using Headers = QList<QPair<QByteArray, QByteArray>>;

    int status = 0;
    QByteArray reason;
    Headers headers;
    QByteArray body;            // the first `keepBodyBytes` bytes only
    bool bodyTruncated = false; // more body arrived (or was announced) than was kept
    // The connection may carry another request: HTTP/1.1 without "Connection: close" (or 1.0
    // with keep-alive), a body delimited by length or chunking, read to its end.
    bool keepAlive = false;

    // The first header of that name (case-insensitive), or empty.
    QByteArray header(const QByteArray &name) const;
};

// Feed it the bytes of one connection as they come; it reads exactly one final response
// (1xx interim responses are skipped). Only the head and the kept part of the body are stored:
// a receiver sending a huge body costs time up to MaxBodyReadBytes, never memory, and the
// response then ends there with the connection marked not reusable.
class HttpResponseParser final
{
public:
    enum class State { Incomplete, Complete, Failed };

    static constexpr qsizetype MaxHeaderBytes = 64 * 1024; // status line + headers (+ trailers)
    static constexpr int MaxHeaderCount = 128;
    static constexpr qint64 MaxBodyReadBytes = 1024 * 1024;

    explicit HttpResponseParser(qsizetype keepBodyBytes);

    // Consumes bytes; after Complete or Failed further bytes are ignored.
    State feed(const char *data, qsizetype size);
    State feed(const QByteArray &data) { return feed(data.constData(), data.size()); }
    // The peer closed the connection: completes a body delimited by the close, fails otherwise.
    State finish();

    State state() const { return m_state; }
    // Any byte of a response arrived (a request on a reused connection that got none may be retried).
    bool sawBytes() const { return m_sawBytes; }
    // Bytes that arrived after the complete response; the connection is then not reusable.
    bool hasExcess() const { return m_excess; }
    const HttpResponse &response() const { return m_response; }
    const QString &error() const { return m_error; }

private:
    enum class Stage { StatusLine, Headers, Body, ChunkSize, ChunkData, ChunkDataEnd, Trailers, UntilClose, Done };

    // Removes one CRLF- (or LF-) terminated line from the buffer; false when none is complete.
    bool takeLine(QByteArray *line);
    bool parseStatusLine(const QByteArray &line);
    bool parseHeader(const QByteArray &line);
    bool headersDone();
    void appendBody(const char *data, qsizetype size);
    State fail(const QString &message);
    State complete();

    qsizetype m_keepBodyBytes;
    State m_state = State::Incomplete;
    Stage m_stage = Stage::StatusLine;
    QByteArray m_buffer; // unparsed head or chunk-size bytes
    qsizetype m_headBytes = 0;
    bool m_sawBytes = false;
    bool m_excess = false;
    bool m_http11 = false;
    qint64 m_remaining = 0; // of the Content-Length body or the current chunk
    qint64 m_bodyRead = 0;
    HttpResponse m_response;
    QString m_error;
};

} // namespace OpsDeck
