// What one callback attempt sends: URL, body, webhook id, signing scheme, secrets and timeout.
#pragma once

#include <QByteArray>
#include <QList>
#include <QUrl>

#include <chrono>

namespace OpsDeck {

enum class SigningScheme {
    StandardWebhooks, // webhook-id / webhook-timestamp / webhook-signature (v1, HMAC-SHA256)
    HubSignature,     // X-Hub-Signature: sha1=<hex HMAC-SHA1 of the body>, for older providers
};

struct CallbackRequest
{
    QUrl url;
    QByteArray body;        // JSON
    QByteArray webhookId;   // the same on every retry of one notification
    SigningScheme scheme = SigningScheme::StandardWebhooks;
    // The secrets as shown to the provider ("whsec_…"), newest first. During a rotation both
    // are listed and StandardWebhooks sends one signature per secret, signed with the decoded
    // key. HubSignature has room for one: the newest secret's text itself keys HMAC-SHA1.
    QList<QByteArray> secrets;
    // Whole attempt, DNS to last byte; 2xx must arrive within it (spec §3: 15 s).
    std::chrono::milliseconds timeout{15000};
    // Attempts with different keys never share a connection pool (the delivery worker passes
    // the endpoint id), so endpoints hanging on one host cannot take the connections that
    // other endpoints on the same host need. Empty: the shared pool.
    QString isolationKey;
};

} // namespace OpsDeck
