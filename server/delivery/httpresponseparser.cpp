// Incremental HTTP/1.1 response parser for callback attempts, with header and body limits.
#include "httpresponseparser.h"

namespace OpsDeck {

namespace {

constexpr qsizetype MaxChunkLineBytes = 1024;

bool hasToken(const QByteArray &value, const char *token)
{
    for (const QByteArray &part : value.split(',')) {
        if (part.trimmed().compare(token, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

bool isDigits(const QByteArray &text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text) {
        if (c < '0' || c > '9')
            return false;
    }
    return true;
}

} // namespace

QByteArray HttpResponse::header(const QByteArray &name) const
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

HttpResponseParser::HttpResponseParser(qsizetype keepBodyBytes)
    : m_keepBodyBytes(keepBodyBytes)
{
}

HttpResponseParser::State HttpResponseParser::feed(const char *data, qsizetype size)
{
    if (m_state != State::Incomplete) {
        if (size > 0 && m_state == State::Complete)
            m_excess = true;
        return m_state;
    }
    if (size <= 0)
        return m_state;
    m_sawBytes = true;
    m_buffer.append(data, size);
    qsizetype pos = 0;
    while (m_state == State::Incomplete && pos < m_buffer.size()) {
        const qsizetype available = m_buffer.size() - pos;
        if (m_stage == Stage::Body || m_stage == Stage::ChunkData) {
            const qsizetype take = qsizetype(qMin<qint64>(available, m_remaining));
            appendBody(m_buffer.constData() + pos, take);
            pos += take;
            m_remaining -= take;
            if (m_remaining == 0) {
                if (m_stage == Stage::Body) {
                    complete();
                    break;
                }
                m_stage = Stage::ChunkDataEnd;
            }
            if (m_bodyRead >= MaxBodyReadBytes) {
                // Enough: the status is known and the rest is not worth reading.
                m_response.bodyTruncated = true;
                m_response.keepAlive = false;
                complete();
            }
            continue;
        }
        if (m_stage == Stage::UntilClose) {
            appendBody(m_buffer.constData() + pos, available);
            pos += available;
            if (m_bodyRead >= MaxBodyReadBytes) {
                m_response.bodyTruncated = true;
                complete();
            }
            continue;
        }

        const bool inHead = m_stage == Stage::StatusLine || m_stage == Stage::Headers || m_stage == Stage::Trailers;
        const qsizetype eol = m_buffer.indexOf('\n', pos);
        if (eol < 0) {
            if (inHead && m_headBytes + available > MaxHeaderBytes)
                fail(QStringLiteral("response head larger than %1 bytes").arg(MaxHeaderBytes));
            else if (!inHead && available > MaxChunkLineBytes)
                fail(QStringLiteral("chunk size line too long"));
            break;
        }
        // Limits count the bytes a line takes with its end, as they do above for a line still
        // coming: the verdict is the same however the bytes were split.
        const qsizetype lineBytes = eol - pos + 1;
        QByteArray line = m_buffer.mid(pos, eol - pos);
        pos = eol + 1;
        if (line.endsWith('\r'))
            line.chop(1);
        if (inHead) {
            m_headBytes += lineBytes;
            if (m_headBytes > MaxHeaderBytes) {
                fail(QStringLiteral("response head larger than %1 bytes").arg(MaxHeaderBytes));
                break;
            }
        } else if (lineBytes > MaxChunkLineBytes) {
            fail(QStringLiteral("chunk size line too long"));
            break;
        }
        switch (m_stage) {
        case Stage::StatusLine:
            if (parseStatusLine(line))
                m_stage = Stage::Headers;
            break;
        case Stage::Headers:
            if (line.isEmpty())
                headersDone();
            else
                parseHeader(line);
            break;
        case Stage::ChunkSize: {
            const qsizetype semicolon = line.indexOf(';');
            const QByteArray digits = (semicolon < 0 ? line : line.left(semicolon)).trimmed();
            bool ok = !digits.isEmpty() && digits.size() <= 15;
            const qint64 chunk = ok ? digits.toLongLong(&ok, 16) : 0;
            if (!ok || chunk < 0) {
                fail(QStringLiteral("invalid chunk size"));
                break;
            }
            m_remaining = chunk;
            m_stage = chunk == 0 ? Stage::Trailers : Stage::ChunkData;
            break;
        }
        case Stage::ChunkDataEnd:
            if (!line.isEmpty())
                fail(QStringLiteral("chunk not followed by CRLF"));
            else
                m_stage = Stage::ChunkSize;
            break;
        case Stage::Trailers:
            // Trailers are read past, not recorded.
            if (line.isEmpty())
                complete();
            break;
        case Stage::Body:
        case Stage::ChunkData:
        case Stage::UntilClose:
        case Stage::Done:
            break;
        }
    }
    if (m_state == State::Complete && pos < m_buffer.size())
        m_excess = true;
    if (m_state != State::Incomplete || pos >= m_buffer.size())
        m_buffer.clear();
    else
        m_buffer.remove(0, pos);
    return m_state;
}

HttpResponseParser::State HttpResponseParser::finish()
{
    if (m_state != State::Incomplete)
        return m_state;
    if (m_stage == Stage::UntilClose)
        return complete();
    if (!m_sawBytes)
        return fail(QStringLiteral("connection closed without a response"));
    return fail(QStringLiteral("connection closed before the response was complete"));
}

bool HttpResponseParser::parseStatusLine(const QByteArray &line)
{
    // HTTP/1.x SP 3DIGIT [SP reason]
    if (line.size() < 12 || !line.startsWith("HTTP/1.") || line.at(8) != ' '
        || (line.size() > 12 && line.at(12) != ' ') || !isDigits(line.mid(9, 3))) {
        fail(QStringLiteral("malformed status line"));
        return false;
    }
    m_http11 = line.at(7) != '0';
    m_response.status = line.mid(9, 3).toInt();
    m_response.reason = line.mid(13).trimmed();
    if (m_response.status < 100) {
        fail(QStringLiteral("malformed status line"));
        return false;
    }
    return true;
}

bool HttpResponseParser::parseHeader(const QByteArray &line)
{
    const qsizetype colon = line.indexOf(':');
    if (line.startsWith(' ') || line.startsWith('\t') || colon <= 0) {
        fail(QStringLiteral("malformed header line"));
        return false;
    }
    const QByteArray name = line.left(colon);
    if (name.contains(' ') || name.contains('\t')) {
        fail(QStringLiteral("malformed header name"));
        return false;
    }
    if (m_response.headers.size() >= MaxHeaderCount) {
        fail(QStringLiteral("more than %1 response headers").arg(MaxHeaderCount));
        return false;
    }
    m_response.headers.append({name, line.mid(colon + 1).trimmed()});
    return true;
}

bool HttpResponseParser::headersDone()
{
    const int status = m_response.status;
    if (status < 200) {
        if (status == 101) {
            fail(QStringLiteral("unexpected protocol switch"));
            return false;
        }
        // An interim response (100 Continue, 103 Early Hints): the final one follows.
        m_response = HttpResponse();
        m_headBytes = 0;
        m_stage = Stage::StatusLine;
        return true;
    }

    bool close = false;
    bool keepAliveToken = false;
    QByteArray transferEncoding;
    QByteArray contentLength;
    bool lengthConflict = false;
    for (const auto &[name, value] : std::as_const(m_response.headers)) {
        if (name.compare("Connection", Qt::CaseInsensitive) == 0) {
            close = close || hasToken(value, "close");
            keepAliveToken = keepAliveToken || hasToken(value, "keep-alive");
        } else if (name.compare("Transfer-Encoding", Qt::CaseInsensitive) == 0) {
            transferEncoding += (transferEncoding.isEmpty() ? "" : ",") + value;
        } else if (name.compare("Content-Length", Qt::CaseInsensitive) == 0) {
            if (!contentLength.isNull() && contentLength != value)
                lengthConflict = true;
            contentLength = value;
        }
    }
    m_response.keepAlive = !close && (m_http11 || keepAliveToken);

    if (status == 204 || status == 304) {
        complete();
        return true;
    }
    if (!transferEncoding.isEmpty()) {
        const QList<QByteArray> codings = transferEncoding.split(',');
        if (codings.last().trimmed().compare("chunked", Qt::CaseInsensitive) == 0) {
            m_stage = Stage::ChunkSize;
        } else {
            m_stage = Stage::UntilClose;
            m_response.keepAlive = false;
        }
        // Both framings at once is how request smuggling starts: answer it, then hang up.
        if (!contentLength.isNull())
            m_response.keepAlive = false;
        return true;
    }
    if (!contentLength.isNull()) {
        bool ok = isDigits(contentLength) && contentLength.size() <= 15 && !lengthConflict;
        const qint64 length = ok ? contentLength.toLongLong(&ok) : 0;
        if (!ok) {
            fail(QStringLiteral("invalid Content-Length"));
            return false;
        }
        if (length == 0) {
            complete();
            return true;
        }
        m_remaining = length;
        m_stage = Stage::Body;
        return true;
    }
    m_stage = Stage::UntilClose;
    m_response.keepAlive = false;
    return true;
}

void HttpResponseParser::appendBody(const char *data, qsizetype size)
{
    m_bodyRead += size;
    const qsizetype room = m_keepBodyBytes - m_response.body.size();
    if (size > room)
        m_response.bodyTruncated = true;
    if (room > 0)
        m_response.body.append(data, qMin(size, room));
}

HttpResponseParser::State HttpResponseParser::fail(const QString &message)
{
    m_error = message;
    m_state = State::Failed;
    m_stage = Stage::Done;
    m_response.keepAlive = false;
    return m_state;
}

HttpResponseParser::State HttpResponseParser::complete()
{
    m_state = State::Complete;
    m_stage = Stage::Done;
    return m_state;
}

} // namespace OpsDeck
