// RFC 9457 problem details: the one error value shared by server, client and console.
#pragma once

#include <QJsonObject>
#include <QString>

namespace OpsDeck {

struct Problem
{
    int status = 0;          // HTTP status
    QString code;            // stable machine code, e.g. "instance-not-stopped"
    QString title;           // short, human, stable per code
    QString detail;          // human, specific to this occurrence
    QJsonObject extensions;  // extra members (e.g. "errors", "blocking_instances", "allowed")

    bool isNull() const { return status == 0; }

    // "urn:opsdeck:problem:<code>"
    QString type() const;
    QJsonObject toJson() const;
    QByteArray toBytes() const;

    // Decodes a problem+json body. A body that is not a problem yields a problem with the given
    // status, code "unexpected-response" and the (truncated) body as detail.
    static Problem fromJson(int httpStatus, const QByteArray &body);

    static Problem make(int status, const QString &code, const QString &title, const QString &detail = {});
    Problem &with(const QString &key, const QJsonValue &value);
};

// A field-level validation error: path is a JSON Pointer ("/callback/url").
struct FieldError
{
    QString path;
    QString message;

    QString toString() const { return path + QStringLiteral(": ") + message; }
};

} // namespace OpsDeck
