// One client connection of the demo provider: keep-alive HTTP/1.1 parsing and in-order answers.
#include "httpconnection.h"

#include <QTcpSocket>

namespace OpsDeck::DemoProvider {

namespace {

QByteArray reasonPhrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 302: return "Found";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return "Status";
    }
}

bool isToken(const QByteArray &text)
{
    if (text.isEmpty())
        return false;
    for (const char c : text) {
        if (c <= 32 || c >= 127 || c == ':' || c == '(' || c == ')' || c == ',' || c == '"')
            return false;
    }
    return true;
}

} // namespace

HttpConnection::HttpConnection(QTcpSocket *socket, QObject *parent)
    : QObject(parent)
    , m_socket(socket)
{
    m_socket->setParent(this);
    m_socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    connect(m_socket, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_socket, &QTcpSocket::disconnected, this, &QObject::deleteLater);
    connect(m_socket, &QTcpSocket::errorOccurred, this, [this] {
        if (m_socket->state() == QAbstractSocket::UnconnectedState)
            deleteLater();
    });
}

void HttpConnection::respond(int status, const QByteArray &body, const Headers &headers)
{
    if (!m_awaitingAnswer || m_closing || m_socket->state() != QAbstractSocket::ConnectedState)
        return;
    m_awaitingAnswer = false;
    QByteArray out;
    out.reserve(160 + body.size());
    out.append("HTTP/1.1 ").append(QByteArray::number(status)).append(' ').append(reasonPhrase(status));
    out.append("\r\nContent-Length: ").append(QByteArray::number(body.size()));
    for (const auto &[name, value] : headers)
        out.append("\r\n").append(name).append(": ").append(value);
    if (!m_keepAlive)
        out.append("\r\nConnection: close");
    out.append("\r\n\r\n").append(body);
    m_socket->write(out);
    if (!m_keepAlive) {
        m_closing = true;
        m_socket->disconnectFromHost();
        return;
    }
    if (!m_processing)
        processBuffer();
}

void HttpConnection::onReadyRead()
{
    m_buffer.append(m_socket->readAll());
    processBuffer();
}

void HttpConnection::processBuffer()
{
    m_processing = true;
    while (!m_awaitingAnswer && !m_closing && !m_buffer.isEmpty()) {
        HttpRequest request;
        int errorStatus = 400;
        QString errorReason;
        const Parse result = parseOne(&request, &errorStatus, &errorReason);
        if (result == Parse::Incomplete)
            break;
        if (result == Parse::Malformed) {
            fail(errorStatus, errorReason);
            break;
        }
        m_awaitingAnswer = true;
        m_keepAlive = request.keepAlive;
        emit requestReceived(request);
    }
    m_processing = false;
}

HttpConnection::Parse HttpConnection::parseOne(HttpRequest *request, int *errorStatus, QString *errorReason)
{
    const qsizetype headerEnd = m_buffer.indexOf("\r\n\r\n");
    if (headerEnd < 0) {
        if (m_buffer.size() > MaxHeaderBytes) {
            *errorStatus = 431;
            *errorReason = QStringLiteral("header section larger than 64 KiB");
            return Parse::Malformed;
        }
        return Parse::Incomplete;
    }
    const QList<QByteArray> lines = m_buffer.left(headerEnd).split('\n');
    const QList<QByteArray> requestLine = lines.first().trimmed().split(' ');
    if (requestLine.size() != 3 || !isToken(requestLine.at(0)) || !requestLine.at(1).startsWith('/')
        || !requestLine.at(2).startsWith("HTTP/1.")) {
        *errorReason = QStringLiteral("malformed request line");
        return Parse::Malformed;
    }
    request->method = requestLine.at(0);
    request->target = requestLine.at(1);
    const qsizetype query = request->target.indexOf('?');
    request->path = query < 0 ? request->target : request->target.left(query);
    request->version = requestLine.at(2);

    qint64 contentLength = -1;
    bool chunked = false;
    QByteArray connection;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).endsWith('\r') ? lines.at(i).chopped(1) : lines.at(i);
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0 || !isToken(line.left(colon))) {
            *errorReason = QStringLiteral("malformed header line");
            return Parse::Malformed;
        }
        const QByteArray name = line.left(colon).toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            bool ok = false;
            const qint64 length = value.toLongLong(&ok);
            if (!ok || length < 0 || (contentLength >= 0 && contentLength != length)) {
                *errorReason = QStringLiteral("invalid Content-Length");
                return Parse::Malformed;
            }
            contentLength = length;
        } else if (name == "transfer-encoding") {
            if (value.toLower() != "chunked") {
                *errorStatus = 501;
                *errorReason = QStringLiteral("unsupported Transfer-Encoding");
                return Parse::Malformed;
            }
            chunked = true;
        } else if (name == "connection") {
            connection = value.toLower();
        }
        request->headers.append({name, value});
    }
    if (chunked && contentLength >= 0) {
        *errorReason = QStringLiteral("both Content-Length and chunked");
        return Parse::Malformed;
    }
    if (contentLength > MaxBodyBytes) {
        *errorStatus = 413;
        *errorReason = QStringLiteral("body larger than 16 MiB");
        return Parse::Malformed;
    }
    request->keepAlive = request->version == "HTTP/1.1" ? !connection.contains("close")
                                                        : connection.contains("keep-alive");

    const qsizetype bodyStart = headerEnd + 4;
    if (chunked) {
        qsizetype consumedTo = 0;
        const Parse parsed = parseChunked(bodyStart, &request->body, &consumedTo, errorStatus, errorReason);
        if (parsed == Parse::Complete)
            m_buffer.remove(0, consumedTo);
        return parsed;
    }
    const qint64 length = qMax<qint64>(contentLength, 0);
    if (m_buffer.size() - bodyStart < length)
        return Parse::Incomplete;
    request->body = m_buffer.mid(bodyStart, length);
    m_buffer.remove(0, bodyStart + length);
    return Parse::Complete;
}

HttpConnection::Parse HttpConnection::parseChunked(qsizetype from, QByteArray *body, qsizetype *consumedTo,
                                                   int *errorStatus, QString *errorReason) const
{
    qsizetype pos = from;
    for (;;) {
        const qsizetype lineEnd = m_buffer.indexOf("\r\n", pos);
        if (lineEnd < 0)
            return Parse::Incomplete;
        QByteArray sizeText = m_buffer.mid(pos, lineEnd - pos);
        const qsizetype extension = sizeText.indexOf(';');
        if (extension >= 0)
            sizeText.truncate(extension);
        bool ok = false;
        const qint64 size = sizeText.trimmed().toLongLong(&ok, 16);
        if (!ok || size < 0) {
            *errorReason = QStringLiteral("malformed chunk size");
            return Parse::Malformed;
        }
        if (body->size() + size > MaxBodyBytes) {
            *errorStatus = 413;
            *errorReason = QStringLiteral("body larger than 16 MiB");
            return Parse::Malformed;
        }
        pos = lineEnd + 2;
        if (size == 0) {
            // Trailer fields, if any, end with an empty line.
            const qsizetype trailerEnd = m_buffer.indexOf("\r\n", pos);
            if (trailerEnd < 0)
                return Parse::Incomplete;
            if (trailerEnd != pos) {
                const qsizetype end = m_buffer.indexOf("\r\n\r\n", pos);
                if (end < 0)
                    return Parse::Incomplete;
                *consumedTo = end + 4;
            } else {
                *consumedTo = pos + 2;
            }
            return Parse::Complete;
        }
        if (m_buffer.size() < pos + size + 2)
            return Parse::Incomplete;
        body->append(m_buffer.constData() + pos, size);
        if (m_buffer.mid(pos + size, 2) != "\r\n") {
            *errorReason = QStringLiteral("chunk not followed by CRLF");
            return Parse::Malformed;
        }
        pos += size + 2;
    }
}

void HttpConnection::fail(int status, const QString &reason)
{
    emit malformedRequest(status, reason);
    m_awaitingAnswer = true;
    m_keepAlive = false;
    m_buffer.clear();
    respond(status, QByteArray("{\"error\":") + '"' + reason.toUtf8() + "\"}",
            {{"Content-Type", "application/json"}});
}

} // namespace OpsDeck::DemoProvider
