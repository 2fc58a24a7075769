// Where each request on a connection ends, checked before QHttpServer parses it.
#include "requestframing.h"

#include <algorithm>
#include <iterator>

namespace OpsDeck {

namespace {

// A chunk-size line or a trailer field longer than this is no client's.
constexpr qsizetype kMaxBodyLine = 4096;

// Header fields that take one value: a request with two is refused, not read as their join. Host
// first (its bit is checked at the end of the head).
constexpr const char *kSingletons[] = {"Host", "Authorization", "Content-Type", "Idempotency-Key", "X-OpsDeck-Reason"};
constexpr quint32 kHostBit = 1;

bool isTokenChar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || QByteArrayView("!#$%&'*+-.^_`|~").contains(c);
}

bool isToken(QByteArrayView text)
{
    return !text.isEmpty() && std::all_of(text.begin(), text.end(), isTokenChar);
}

int hexDigit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

QString shown(QByteArrayView text)
{
    return QString::fromLatin1(text.first(std::min<qsizetype>(80, text.size())));
}

} // namespace

void RequestFraming::skip(qint64 n)
{
    m_remaining -= n;
    m_position += n;
    if (m_remaining == 0)
        requestEnds();
}

std::optional<RequestFraming::End> RequestFraming::nextEnd(qint64 from)
{
    while (!m_ends.isEmpty() && m_ends.first().position <= from)
        m_ends.removeFirst();
    if (m_ends.isEmpty())
        return std::nullopt;
    return m_ends.first();
}

void RequestFraming::requestEnds()
{
    m_state = State::RequestLine;
    m_headBytes = 0;
    m_ends.append(End{m_position, m_http10});
    m_headStart = m_position;
    m_continue.reset();
}

std::optional<RequestFraming::Refusal> RequestFraming::feed(QByteArrayView bytes)
{
    const qint64 start = m_position;
    qsizetype i = 0;
    while (!m_refused && i < bytes.size()) {
        if (m_state == State::Body || m_state == State::ChunkData) {
            const qint64 take = std::min<qint64>(m_remaining, bytes.size() - i);
            m_remaining -= take;
            i += qsizetype(take);
            m_position = start + i;
            if (m_remaining == 0) {
                if (m_state == State::Body)
                    requestEnds();
                else
                    m_state = State::ChunkEnd;
            }
            continue;
        }
        const qsizetype newline = bytes.indexOf('\n', i);
        const qsizetype end = newline < 0 ? bytes.size() : newline;
        const bool inHead = m_state == State::RequestLine || m_state == State::Headers;
        if (inHead)
            m_headBytes += end - i + (newline < 0 ? 0 : 1);
        if (inHead && m_headBytes > m_maxHeadBytes)
            return refuse(431, QStringLiteral("the request line and header fields take more than %1 bytes").arg(m_maxHeadBytes));
        if (!inHead && m_line.size() + end - i > kMaxBodyLine)
            return refuse(400, QStringLiteral("a chunk-size line or trailer field longer than %1 bytes").arg(kMaxBodyLine));
        if (newline < 0) {
            m_line += bytes.sliced(i);
            m_position = start + bytes.size();
            // QHttpServer 6.4 ends the request at the first byte of a trailer field, before its
            // line is whole: refused at that byte (only the CR of the last line may come alone).
            if (m_state == State::Trailers && std::any_of(m_line.cbegin(), m_line.cend(), [](char c) { return c != '\r'; }))
                return refuse(400, QStringLiteral("a trailer field after the chunked body: none is accepted"));
            break;
        }
        // A line within these bytes is read where it is; one begun in earlier bytes, from m_line.
        QByteArrayView text = bytes.sliced(i, end - i);
        if (!m_line.isEmpty()) {
            m_line += text;
            text = m_line;
        }
        i = newline + 1;
        m_position = start + i;
        // A bare LF ends a line of the head (RFC 9112, 2.2); in a chunked body QHttpServer's
        // parser reads it otherwise, so there only CR LF does.
        if (!text.endsWith('\r') && !inHead)
            return refuse(400, QStringLiteral("a line of a chunked body ends with a bare LF: CR LF only"));
        if (text.endsWith('\r'))
            text.chop(1);
        if (text.contains('\r'))
            return refuse(400, QStringLiteral("a bare CR inside a line: lines end with CR LF"));
        const auto refusal = line(text);
        m_line.clear();
        if (refusal)
            return refusal;
    }
    return m_refused;
}

std::optional<RequestFraming::Refusal> RequestFraming::line(QByteArrayView text)
{
    switch (m_state) {
    case State::RequestLine: {
        if (text.isEmpty())
            return {}; // an empty line before a request line is ignored (RFC 9112, 2.2)
        const qsizetype first = text.indexOf(' ');
        const qsizetype last = text.lastIndexOf(' ');
        if (first <= 0 || last <= first + 1 || text.sliced(first + 1, last - first - 1).contains(' ')
            || !isToken(text.first(first)))
            return refuse(400, QStringLiteral("not a request line: \"%1\"").arg(shown(text)));
        const QByteArrayView version = text.sliced(last + 1);
        if (version != "HTTP/1.1" && version != "HTTP/1.0")
            return refuse(version.startsWith("HTTP/") ? 505 : 400,
                          QStringLiteral("%1 is not spoken here: HTTP/1.1 or HTTP/1.0").arg(shown(version)));
        m_http10 = version == "HTTP/1.0";
        m_state = State::Headers;
        return {};
    }
    case State::Headers:
        return text.isEmpty() ? endOfHead() : header(text);
    case State::ChunkSize: {
        qint64 size = 0;
        qsizetype digits = 0;
        for (; digits < text.size() && hexDigit(text.at(digits)) >= 0; ++digits) {
            if (digits == 15)
                return refuse(400, QStringLiteral("a chunk size of more than 15 hex digits"));
            size = size * 16 + hexDigit(text.at(digits));
        }
        // What may follow the size is a chunk extension, after optional white space.
        const QByteArrayView rest = text.sliced(digits).trimmed();
        if (digits == 0 || !(rest.isEmpty() || rest.startsWith(';')))
            return refuse(400, QStringLiteral("not a chunk size: \"%1\"").arg(shown(text)));
        m_remaining = size;
        m_state = size == 0 ? State::Trailers : State::ChunkData;
        return {};
    }
    case State::ChunkEnd:
        if (!text.isEmpty())
            return refuse(400, QStringLiteral("a chunk longer than its size said"));
        m_state = State::ChunkSize;
        return {};
    case State::Trailers: {
        if (text.isEmpty()) {
            requestEnds();
            return {};
        }
        // QHttpServer 6.4 ends such a request inside its trailer section and reads the rest as
        // the next request: no trailer field is taken (nothing here reads one). Named, not
        // echoed: a trailer may carry a credential.
        const qsizetype colon = text.indexOf(':');
        if (colon <= 0 || !isToken(text.first(colon)))
            return refuse(400, QStringLiteral("not a trailer field after the chunked body"));
        return refuse(400, QStringLiteral("a trailer field (%1) after the chunked body: none is accepted").arg(shown(text.first(colon))));
    }
    case State::Body:
    case State::ChunkData:
        break;
    }
    return {};
}

std::optional<RequestFraming::Refusal> RequestFraming::header(QByteArrayView text)
{
    if (text.startsWith(' ') || text.startsWith('\t'))
        return refuse(400, QStringLiteral("a header field folded over lines"));
    const qsizetype colon = text.indexOf(':');
    // No white space between the name and the colon (RFC 9112, 5.1).
    if (colon <= 0 || !isToken(text.first(colon)))
        return refuse(400, QStringLiteral("not a header field: \"%1\"").arg(shown(text)));
    const QByteArrayView name = text.first(colon);
    const QByteArrayView value = text.sliced(colon + 1).trimmed();
    if (name.compare("Content-Length", Qt::CaseInsensitive) == 0) {
        if (m_contentLength)
            return refuse(400, QStringLiteral("more than one Content-Length"));
        const bool digits = !value.isEmpty() && value.size() <= 18
                            && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (!digits)
            return refuse(400, QStringLiteral("Content-Length is not a number of bytes: \"%1\"").arg(shown(value)));
        m_contentLength = value.toLongLong();
    } else if (name.compare("Transfer-Encoding", Qt::CaseInsensitive) == 0) {
        if (m_chunked)
            return refuse(400, QStringLiteral("more than one Transfer-Encoding"));
        if (value.compare("chunked", Qt::CaseInsensitive) != 0)
            return refuse(501, QStringLiteral("Transfer-Encoding \"%1\": only chunked is understood").arg(shown(value)));
        m_chunked = true;
    } else if (name.compare("Expect", Qt::CaseInsensitive) == 0) {
        // An HTTP/1.0 client cannot have meant it (RFC 9110 10.1.1): ignored there.
        if (value.compare("100-continue", Qt::CaseInsensitive) != 0 && !m_http10)
            return refuse(417, QStringLiteral("Expect \"%1\": only 100-continue is met").arg(shown(value)));
        m_expectContinue = !m_http10;
    }
    for (quint32 i = 0; i < std::size(kSingletons); ++i) {
        if (name.compare(kSingletons[i], Qt::CaseInsensitive) != 0)
            continue;
        if (m_singletons & (1u << i))
            return refuse(400, QStringLiteral("more than one %1").arg(QLatin1String(kSingletons[i])));
        m_singletons |= 1u << i;
    }
    return {};
}

std::optional<RequestFraming::Refusal> RequestFraming::endOfHead()
{
    if (m_chunked && m_contentLength)
        return refuse(400, QStringLiteral("both Content-Length and Transfer-Encoding"));
    // An HTTP/1.0 hop in between would not have taken the chunks apart (RFC 9112, 6.1).
    if (m_chunked && m_http10)
        return refuse(400, QStringLiteral("Transfer-Encoding in an HTTP/1.0 request"));
    if (!(m_singletons & kHostBit) && !m_http10)
        return refuse(400, QStringLiteral("an HTTP/1.1 request without Host"));
    m_remaining = m_contentLength.value_or(0);
    if (m_expectContinue && (m_chunked || m_remaining > 0))
        m_continue = Continue{m_headStart, m_chunked ? std::nullopt : m_contentLength};
    if (m_chunked)
        m_state = State::ChunkSize;
    else if (m_remaining > 0)
        m_state = State::Body;
    else
        requestEnds();
    m_contentLength.reset();
    m_chunked = false;
    m_singletons = 0;
    m_expectContinue = false;
    m_headBytes = 0;
    return {};
}

std::optional<RequestFraming::Refusal> RequestFraming::refuse(int status, const QString &detail)
{
    m_refused = Refusal{status, detail};
    return m_refused;
}

} // namespace OpsDeck
