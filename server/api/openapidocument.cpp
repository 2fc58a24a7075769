// The OpenAPI 3.0 description of the v1 API, kept next to the routes it documents.
#include "openapidocument.h"

#include <QJsonArray>
#include <QStringList>

namespace OpsDeck::OpenApiDocument {

namespace {

QJsonObject ref(const QString &name)
{
    return {{QStringLiteral("$ref"), QStringLiteral("#/components/schemas/") + name}};
}

QJsonObject str(const QString &description = {})
{
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("string")}};
    if (!description.isEmpty())
        o.insert(QStringLiteral("description"), description);
    return o;
}

QJsonObject nullableStr()
{
    return {{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("nullable"), true}};
}

QJsonObject timestamp(bool nullable = false)
{
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("format"), QStringLiteral("date-time")}};
    if (nullable)
        o.insert(QStringLiteral("nullable"), true);
    return o;
}

QJsonObject integer()
{
    return {{QStringLiteral("type"), QStringLiteral("integer")}, {QStringLiteral("format"), QStringLiteral("int64")}};
}

QJsonObject enumOf(const QStringList &values)
{
    return {{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("enum"), QJsonArray::fromStringList(values)}};
}

QJsonObject object(const QJsonObject &properties, const QStringList &required, bool closed = false)
{
    QJsonObject o{{QStringLiteral("type"), QStringLiteral("object")}, {QStringLiteral("properties"), properties}};
    if (!required.isEmpty())
        o.insert(QStringLiteral("required"), QJsonArray::fromStringList(required));
    if (closed)
        o.insert(QStringLiteral("additionalProperties"), false);
    return o;
}

QJsonObject listOf(const QString &schema)
{
    return object({{QStringLiteral("items"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("items"), ref(schema)}}},
                   {QStringLiteral("next"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")},
                                                         {QStringLiteral("nullable"), true},
                                                         {QStringLiteral("description"), QStringLiteral("cursor of the next page; null on the last")}}}},
                  {QStringLiteral("items"), QStringLiteral("next")});
}

QJsonObject schemas()
{
    const QJsonObject reason{{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("maxLength"), 1000},
                             {QStringLiteral("description"), QStringLiteral("why; lands in the audit entry")}};
    QJsonObject s;
    s.insert(QStringLiteral("Problem"), object({{QStringLiteral("type"), str()}, {QStringLiteral("title"), str()},
                                                {QStringLiteral("status"), integer()}, {QStringLiteral("detail"), str()},
                                                {QStringLiteral("code"), str(QStringLiteral("stable machine code"))},
                                                {QStringLiteral("errors"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")},
                                                                                      {QStringLiteral("items"), object({{QStringLiteral("path"), str()}, {QStringLiteral("message"), str()}}, {QStringLiteral("path"), QStringLiteral("message")})}}},
                                                {QStringLiteral("allowed"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("items"), str()}}},
                                                {QStringLiteral("blocking_instances"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")},
                                                                                                  {QStringLiteral("items"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("name"), str()}, {QStringLiteral("status"), str()}}, {})}}}},
                                               {QStringLiteral("type"), QStringLiteral("title"), QStringLiteral("status"), QStringLiteral("code")}));
    s.insert(QStringLiteral("Organization"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("name"), str()},
                                                     {QStringLiteral("status"), enumOf({QStringLiteral("AVAILABLE"), QStringLiteral("DELETED")})},
                                                     {QStringLiteral("version"), integer()}, {QStringLiteral("created_at"), timestamp()},
                                                     {QStringLiteral("updated_at"), timestamp()}, {QStringLiteral("deleted_at"), timestamp(true)}},
                                                    {QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("status"), QStringLiteral("version")}));
    s.insert(QStringLiteral("OrganizationCreate"), object({{QStringLiteral("name"), str()}, {QStringLiteral("reason"), reason}}, {QStringLiteral("name")}, true));
    s.insert(QStringLiteral("ReasonOnly"), object({{QStringLiteral("reason"), reason}}, {}, true));
    s.insert(QStringLiteral("Provider"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("name"), str()},
                                                 {QStringLiteral("organization_id"), integer()},
                                                 {QStringLiteral("applications"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("items"), str()}}},
                                                 {QStringLiteral("version"), integer()}, {QStringLiteral("created_at"), timestamp()},
                                                 {QStringLiteral("updated_at"), timestamp()}},
                                                {QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("organization_id"), QStringLiteral("version")}));
    s.insert(QStringLiteral("ProviderCreate"), object({{QStringLiteral("name"), str()}, {QStringLiteral("organization_id"), integer()},
                                                       {QStringLiteral("applications"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("items"), str()}}},
                                                       {QStringLiteral("reason"), reason}},
                                                      {QStringLiteral("name"), QStringLiteral("organization_id")}, true));
    s.insert(QStringLiteral("Instance"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("name"), str()},
                                                 {QStringLiteral("organization_id"), integer()}, {QStringLiteral("provider_id"), integer()},
                                                 {QStringLiteral("application"), str()}, {QStringLiteral("owner"), str()},
                                                 {QStringLiteral("status"), enumOf({QStringLiteral("PENDING"), QStringLiteral("RUNNING"), QStringLiteral("STOPPED"), QStringLiteral("DESTROYED")})},
                                                 {QStringLiteral("version"), integer()}, {QStringLiteral("created_at"), timestamp()},
                                                 {QStringLiteral("updated_at"), timestamp()}, {QStringLiteral("status_changed_at"), timestamp()},
                                                 {QStringLiteral("callback"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}, {QStringLiteral("nullable"), true},
                                                                                          {QStringLiteral("properties"), QJsonObject{{QStringLiteral("url"), str()}, {QStringLiteral("signing"), enumOf({QStringLiteral("standard-webhooks"), QStringLiteral("x-hub-signature")})}}}}},
                                                 {QStringLiteral("awaiting_ack"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}, {QStringLiteral("nullable"), true},
                                                                                              {QStringLiteral("properties"), QJsonObject{{QStringLiteral("reason"), str()}, {QStringLiteral("delivery_id"), integer()},
                                                                                                                                         {QStringLiteral("event_type"), enumOf({QStringLiteral("instance.status_changed"), QStringLiteral("instance.destroyed")})}}}}},
                                                 {QStringLiteral("destroy_after"), timestamp(true)},
                                                 {QStringLiteral("secret"), str(QStringLiteral("whsec_…; only in the answer to register and rotate-secret"))},
                                                 {QStringLiteral("previous_secret_valid_until"), timestamp(true)}},
                                                {QStringLiteral("id"), QStringLiteral("name"), QStringLiteral("status"), QStringLiteral("version")}));
    s.insert(QStringLiteral("InstanceCreate"), object({{QStringLiteral("name"), str()}, {QStringLiteral("organization_id"), integer()},
                                                       {QStringLiteral("provider_id"), integer()}, {QStringLiteral("application"), str()},
                                                       {QStringLiteral("owner"), str()}, {QStringLiteral("reason"), reason}},
                                                      {QStringLiteral("name"), QStringLiteral("organization_id"), QStringLiteral("provider_id"),
                                                       QStringLiteral("application"), QStringLiteral("owner")}, true));
    s.insert(QStringLiteral("InstanceRegister"), object({{QStringLiteral("callback_url"), str()},
                                                         {QStringLiteral("signing"), enumOf({QStringLiteral("standard-webhooks"), QStringLiteral("x-hub-signature")})},
                                                         {QStringLiteral("status"), enumOf({QStringLiteral("RUNNING"), QStringLiteral("STOPPED")})},
                                                         {QStringLiteral("reason"), reason}},
                                                        {QStringLiteral("callback_url")}, true));
    s.insert(QStringLiteral("Token"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("name"), str()},
                                              {QStringLiteral("role"), enumOf({QStringLiteral("operator"), QStringLiteral("provider"), QStringLiteral("owner")})},
                                              {QStringLiteral("subject"), str()}, {QStringLiteral("created_at"), timestamp()},
                                              {QStringLiteral("revoked_at"), timestamp(true)},
                                              {QStringLiteral("version"), integer()},
                                              {QStringLiteral("token"), str(QStringLiteral("the bearer token; only in the answer to create"))}},
                                             {QStringLiteral("id"), QStringLiteral("role"), QStringLiteral("subject")}));
    s.insert(QStringLiteral("TokenCreate"), object({{QStringLiteral("role"), enumOf({QStringLiteral("operator"), QStringLiteral("provider"), QStringLiteral("owner")})},
                                                    {QStringLiteral("subject"), str()}, {QStringLiteral("name"), str()}, {QStringLiteral("reason"), reason}},
                                                   {QStringLiteral("role")}, true));
    s.insert(QStringLiteral("AuditEntry"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("at"), timestamp()},
                                                   {QStringLiteral("actor"), object({{QStringLiteral("role"), str()}, {QStringLiteral("subject"), str()}}, {})},
                                                   {QStringLiteral("action"), str()}, {QStringLiteral("kind"), str()}, {QStringLiteral("object_id"), integer()},
                                                   {QStringLiteral("from"), nullableStr()}, {QStringLiteral("to"), nullableStr()}, {QStringLiteral("reason"), str()}},
                                                  {QStringLiteral("id"), QStringLiteral("at"), QStringLiteral("actor"), QStringLiteral("action")}));
    s.insert(QStringLiteral("Event"), object({{QStringLiteral("seq"), integer()},
                                              {QStringLiteral("kind"), enumOf({QStringLiteral("organization"), QStringLiteral("instance"), QStringLiteral("provider"), QStringLiteral("delivery"),
                                                                               QStringLiteral("endpoint"), QStringLiteral("token"), QStringLiteral("alert")})},
                                              {QStringLiteral("id"), integer()}, {QStringLiteral("version"), integer()},
                                              {QStringLiteral("op"), enumOf({QStringLiteral("created"), QStringLiteral("updated"), QStringLiteral("deleted")})},
                                              {QStringLiteral("object"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}}},
                                              {QStringLiteral("at"), timestamp()}},
                                             {QStringLiteral("seq"), QStringLiteral("kind"), QStringLiteral("id"), QStringLiteral("version"), QStringLiteral("op"), QStringLiteral("object")}));
    s.insert(QStringLiteral("EventPage"), object({{QStringLiteral("events"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("items"), ref(QStringLiteral("Event"))}}},
                                                  {QStringLiteral("last_seq"), integer()}},
                                                 {QStringLiteral("events"), QStringLiteral("last_seq")}));
    s.insert(QStringLiteral("Delivery"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("webhook_id"), str()}, {QStringLiteral("event_type"), str()},
                                                 {QStringLiteral("instance_id"), integer()}, {QStringLiteral("provider_id"), integer()}, {QStringLiteral("endpoint_id"), integer()},
                                                 {QStringLiteral("state"), enumOf({QStringLiteral("PENDING"), QStringLiteral("DELIVERED"), QStringLiteral("FAILED"), QStringLiteral("SUPERSEDED"), QStringLiteral("CANCELLED")})},
                                                 {QStringLiteral("attempts"), integer()}, {QStringLiteral("next_attempt_at"), timestamp(true)},
                                                 {QStringLiteral("give_up_at"), timestamp(true)},
                                                 {QStringLiteral("last_status"), QJsonObject{{QStringLiteral("type"), QStringLiteral("integer")}, {QStringLiteral("nullable"), true}}},
                                                 {QStringLiteral("last_error"), nullableStr()}, {QStringLiteral("created_at"), timestamp()},
                                                 {QStringLiteral("updated_at"), timestamp()}, {QStringLiteral("version"), integer()},
                                                 {QStringLiteral("body"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}}},
                                                 {QStringLiteral("attempt_log"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")},
                                                                                             {QStringLiteral("description"), QStringLiteral("only in GET /deliveries/{id}")},
                                                                                             {QStringLiteral("items"), ref(QStringLiteral("Attempt"))}}}},
                                                {QStringLiteral("id"), QStringLiteral("state"), QStringLiteral("version")}));
    s.insert(QStringLiteral("Attempt"), object({{QStringLiteral("attempt"), integer()}, {QStringLiteral("at"), timestamp()},
                                                {QStringLiteral("request_headers"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("description"), QStringLiteral("[name, value] pairs; signatures redacted")}}},
                                                {QStringLiteral("request_body"), str()},
                                                {QStringLiteral("response_status"), QJsonObject{{QStringLiteral("type"), QStringLiteral("integer")}, {QStringLiteral("nullable"), true}}},
                                                {QStringLiteral("response_headers"), QJsonObject{{QStringLiteral("type"), QStringLiteral("array")}, {QStringLiteral("nullable"), true}}},
                                                {QStringLiteral("response_body"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("nullable"), true}, {QStringLiteral("description"), QStringLiteral("the first 4 KiB")}}},
                                                {QStringLiteral("latency_ms"), QJsonObject{{QStringLiteral("type"), QStringLiteral("integer")}, {QStringLiteral("nullable"), true}}},
                                                {QStringLiteral("error_class"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("nullable"), true},
                                                                                          {QStringLiteral("enum"), QJsonArray{QStringLiteral("dns"), QStringLiteral("connect"), QStringLiteral("tls"), QStringLiteral("timeout"), QStringLiteral("http"), QStringLiteral("invalid-url"), QStringLiteral("signing"), QStringLiteral("interrupted"), QJsonValue()}}}},
                                                {QStringLiteral("error"), nullableStr()}},
                                               {QStringLiteral("attempt"), QStringLiteral("at")}));
    s.insert(QStringLiteral("BulkRetry"), object({{QStringLiteral("state"), QJsonObject{{QStringLiteral("description"), QStringLiteral("a state or a list of states")}}},
                                                  {QStringLiteral("provider"), QJsonObject{{QStringLiteral("description"), QStringLiteral("an id or a name")}}},
                                                  {QStringLiteral("instance"), QJsonObject{{QStringLiteral("description"), QStringLiteral("an id")}}},
                                                  {QStringLiteral("endpoint"), QJsonObject{{QStringLiteral("description"), QStringLiteral("an id")}}},
                                                  {QStringLiteral("status"), QJsonObject{{QStringLiteral("description"), QStringLiteral("an HTTP status or class: 503, 5xx")}}},
                                                  {QStringLiteral("created_after"), timestamp()}, {QStringLiteral("created_before"), timestamp()},
                                                  {QStringLiteral("dry_run"), QJsonObject{{QStringLiteral("type"), QStringLiteral("boolean")}}},
                                                  {QStringLiteral("reason"), str()}},
                                                 {}));
    s.insert(QStringLiteral("BulkRetryResult"), object({{QStringLiteral("dry_run"), QJsonObject{{QStringLiteral("type"), QStringLiteral("boolean")}}},
                                                        {QStringLiteral("count"), integer()},
                                                        {QStringLiteral("states"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}, {QStringLiteral("additionalProperties"), integer()}}},
                                                        {QStringLiteral("held"), integer()},
                                                        {QStringLiteral("retried"), QJsonObject{{QStringLiteral("type"), QStringLiteral("integer")}, {QStringLiteral("description"), QStringLiteral("absent from a dry run")}}}},
                                                       {QStringLiteral("dry_run"), QStringLiteral("count"), QStringLiteral("states"), QStringLiteral("held")}));
    s.insert(QStringLiteral("Whoami"), object({{QStringLiteral("role"), enumOf({QStringLiteral("operator"), QStringLiteral("provider"), QStringLiteral("owner")})},
                                               {QStringLiteral("subject"), str()}},
                                              {QStringLiteral("role"), QStringLiteral("subject")}));
    s.insert(QStringLiteral("Endpoint"), object({{QStringLiteral("id"), integer()}, {QStringLiteral("url"), str()}, {QStringLiteral("provider_id"), integer()},
                                                 {QStringLiteral("state"), enumOf({QStringLiteral("ACTIVE"), QStringLiteral("PAUSED"), QStringLiteral("DISABLED")})},
                                                 {QStringLiteral("consecutive_failures"), integer()}, {QStringLiteral("last_success_at"), timestamp(true)},
                                                 {QStringLiteral("last_failure_at"), timestamp(true)}, {QStringLiteral("failing_since"), timestamp(true)},
                                                 {QStringLiteral("failure_rate"), QJsonObject{{QStringLiteral("type"), QStringLiteral("number")}}},
                                                 {QStringLiteral("success_count"), integer()}, {QStringLiteral("failure_count"), integer()},
                                                 {QStringLiteral("silent_count"), integer()}, {QStringLiteral("last_silent_at"), timestamp(true)},
                                                 {QStringLiteral("paused_at"), timestamp(true)}, {QStringLiteral("created_at"), timestamp()},
                                                 {QStringLiteral("updated_at"), timestamp()}, {QStringLiteral("version"), integer()}},
                                                {QStringLiteral("id"), QStringLiteral("url"), QStringLiteral("state"), QStringLiteral("version")}));
    s.insert(QStringLiteral("WorkerHealth"),
             object({{QStringLiteral("status"), enumOf({QStringLiteral("ok"), QStringLiteral("failing"), QStringLiteral("disabled")})},
                     {QStringLiteral("last_error"), nullableStr()},
                     {QStringLiteral("last_error_at"), timestamp(true)},
                     {QStringLiteral("since"), timestamp(true)},
                     {QStringLiteral("failures"), integer()}},
                    {QStringLiteral("status"), QStringLiteral("last_error"), QStringLiteral("since"), QStringLiteral("failures")}));
    s.insert(QStringLiteral("Health"), object({{QStringLiteral("status"), str()}, {QStringLiteral("database"), enumOf({QStringLiteral("sqlite"), QStringLiteral("postgresql")})},
                                               {QStringLiteral("delivery_worker"), ref(QStringLiteral("WorkerHealth"))}},
                                              {QStringLiteral("status"), QStringLiteral("database"), QStringLiteral("delivery_worker")}));
    for (const char *name : {"Organization", "Provider", "Instance", "Token", "AuditEntry", "Delivery", "Endpoint"})
        s.insert(QLatin1String(name) + QStringLiteral("List"), listOf(QLatin1String(name)));
    s.insert(QStringLiteral("AnyObject"), QJsonObject{{QStringLiteral("type"), QStringLiteral("object")}});
    return s;
}

QJsonObject problemResponse(const QString &description)
{
    return {{QStringLiteral("description"), description},
            {QStringLiteral("content"), QJsonObject{{QStringLiteral("application/problem+json"), QJsonObject{{QStringLiteral("schema"), ref(QStringLiteral("Problem"))}}}}}};
}

QJsonObject queryParam(const QString &name, const QJsonObject &schema, const QString &description)
{
    return {{QStringLiteral("name"), name}, {QStringLiteral("in"), QStringLiteral("query")}, {QStringLiteral("required"), false},
            {QStringLiteral("description"), description}, {QStringLiteral("schema"), schema}};
}

struct Operation
{
    const char *method;
    const char *path;
    const char *summary;
    const char *tag;
    int success;
    const char *response; // schema name; nullptr for none/text
    const char *request;  // schema name of the JSON body; nullptr for none
    QStringList query;    // query parameters besides limit/cursor
    bool paged = false;
    bool auth = true;
};

const QList<Operation> &operations()
{
    static const QList<Operation> ops = {
        {"get", "/healthz", "Liveness, database reachability and the delivery worker's storage health", "system", 200, "Health", nullptr, {}, false, false},
        {"get", "/metrics", "Prometheus metrics (text exposition format)", "system", 200, nullptr, nullptr, {}, false, false},
        {"get", "/api/v1/openapi.json", "This document", "system", 200, "AnyObject", nullptr, {}, false, false},
        {"get", "/api/v1/organizations", "List organizations", "organizations", 200, "OrganizationList", nullptr, {QStringLiteral("status")}, true},
        {"post", "/api/v1/organizations", "Create an organization (operator)", "organizations", 201, "Organization", "OrganizationCreate", {}},
        {"get", "/api/v1/organizations/{id}", "Get an organization", "organizations", 200, "Organization", nullptr, {}},
        {"delete", "/api/v1/organizations/{id}", "Delete an organization (soft; refused while instances run or it provides applications)", "organizations", 200, "Organization", "ReasonOnly", {}},
        {"post", "/api/v1/organizations/{id}/restore", "Restore a deleted organization", "organizations", 200, "Organization", "ReasonOnly", {}},
        {"get", "/api/v1/providers", "List providers", "providers", 200, "ProviderList", nullptr, {QStringLiteral("organization")}, true},
        {"post", "/api/v1/providers", "Create a provider (operator)", "providers", 201, "Provider", "ProviderCreate", {}},
        {"get", "/api/v1/providers/{id}", "Get a provider", "providers", 200, "Provider", nullptr, {}},
        {"get", "/api/v1/instances", "List instances visible to the caller", "instances", 200, "InstanceList", nullptr,
         {QStringLiteral("organization"), QStringLiteral("provider"), QStringLiteral("status"), QStringLiteral("owner"), QStringLiteral("updated_after")}, true},
        {"post", "/api/v1/instances", "Create an instance (PENDING)", "instances", 201, "Instance", "InstanceCreate", {}},
        {"get", "/api/v1/instances/{id}", "Get an instance", "instances", 200, "Instance", nullptr, {}},
        {"post", "/api/v1/instances/{id}/register", "Register the instance's callback (provider); the secret is shown once", "instances", 200, "Instance", "InstanceRegister", {}},
        {"post", "/api/v1/instances/{id}/stop", "Stop an instance", "instances", 200, "Instance", "ReasonOnly", {}},
        {"post", "/api/v1/instances/{id}/start", "Start a stopped instance", "instances", 200, "Instance", "ReasonOnly", {}},
        {"post", "/api/v1/instances/{id}/rotate-secret", "Rotate the instance's callback secret (the old one stays valid for a grace period)", "deliveries", 200, "Instance", "AnyObject", {}},
        {"get", "/api/v1/tokens", "List tokens (operator)", "tokens", 200, "TokenList", nullptr, {}, true},
        {"post", "/api/v1/tokens", "Create a token (operator); the bearer token is shown once", "tokens", 201, "Token", "TokenCreate", {}},
        {"get", "/api/v1/tokens/{id}", "Get a token (operator)", "tokens", 200, "Token", nullptr, {}},
        {"delete", "/api/v1/tokens/{id}", "Revoke a token (operator)", "tokens", 200, "Token", "ReasonOnly", {}},
        {"get", "/api/v1/whoami", "The caller's role and subject ({\"role\", \"subject\"})", "tokens", 200, "Whoami", nullptr, {}},
        {"get", "/api/v1/audit", "Audit entries of objects visible to the caller", "audit", 200, "AuditEntryList", nullptr, {QStringLiteral("kind"), QStringLiteral("object_id")}, true},
        {"get", "/api/v1/events", "Change feed long-poll", "feed", 200, "EventPage", nullptr, {QStringLiteral("after"), QStringLiteral("wait"), QStringLiteral("limit")}},
        {"get", "/api/v1/watch", "Change feed WebSocket (Upgrade: websocket); one event per text message; close 4410 = cursor gone", "feed", 101, nullptr, nullptr, {QStringLiteral("after")}},
        {"get", "/api/v1/deliveries", "List callback deliveries", "deliveries", 200, "DeliveryList", nullptr,
         {QStringLiteral("state"), QStringLiteral("provider"), QStringLiteral("instance"), QStringLiteral("endpoint"), QStringLiteral("status"),
          QStringLiteral("created_after"), QStringLiteral("created_before")}, true},
        {"post", "/api/v1/deliveries/retry", "Retry every delivery matching a filter (dry_run=true previews the count)", "deliveries", 200, "BulkRetryResult", "BulkRetry", {QStringLiteral("dry_run")}},
        {"get", "/api/v1/deliveries/{id}", "Get a delivery with its attempts", "deliveries", 200, "Delivery", nullptr, {}},
        {"post", "/api/v1/deliveries/{id}/retry", "Retry a delivery now", "deliveries", 200, "Delivery", "ReasonOnly", {}},
        {"post", "/api/v1/deliveries/{id}/cancel", "Cancel a pending delivery", "deliveries", 200, "Delivery", "ReasonOnly", {}},
        {"get", "/api/v1/endpoints", "List callback endpoints with their health", "deliveries", 200, "EndpointList", nullptr, {QStringLiteral("state"), QStringLiteral("provider")}, true},
        {"get", "/api/v1/endpoints/{id}", "Get an endpoint", "deliveries", 200, "Endpoint", nullptr, {}},
        {"post", "/api/v1/endpoints/{id}/pause", "Pause an endpoint (its deliveries wait)", "deliveries", 200, "Endpoint", "ReasonOnly", {}},
        {"post", "/api/v1/endpoints/{id}/resume", "Resume a paused endpoint", "deliveries", 200, "Endpoint", "ReasonOnly", {}},
        {"post", "/api/v1/endpoints/{id}/test", "Send a test event to an endpoint", "deliveries", 202, "Delivery", "ReasonOnly", {}},
    };
    return ops;
}

QJsonObject operation(const Operation &op)
{
    const QString method = QString::fromLatin1(op.method);
    const QString path = QString::fromLatin1(op.path);
    const bool mutation = method != QLatin1String("get");
    QJsonArray parameters;
    if (path.contains(QLatin1String("{id}")))
        parameters.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("id")}, {QStringLiteral("in"), QStringLiteral("path")},
                                      {QStringLiteral("required"), true}, {QStringLiteral("schema"), integer()}});
    for (const QString &q : op.query) {
        QJsonObject schema = str();
        if (q == QLatin1String("after") || q == QLatin1String("wait") || q == QLatin1String("limit") || q == QLatin1String("organization")
            || q == QLatin1String("provider") || q == QLatin1String("object_id") || q == QLatin1String("instance") || q == QLatin1String("endpoint"))
            schema = integer();
        if (q.endsWith(QLatin1String("_after")) || q.endsWith(QLatin1String("_before")))
            schema = timestamp();
        parameters.append(queryParam(q, schema, q == QLatin1String("wait") ? QStringLiteral("seconds to wait for an event (0..60)") : QStringLiteral("filter")));
    }
    if (op.paged) {
        parameters.append(queryParam(QStringLiteral("limit"), QJsonObject{{QStringLiteral("type"), QStringLiteral("integer")},
                                                                          {QStringLiteral("minimum"), 1}, {QStringLiteral("maximum"), 1000}},
                                     QStringLiteral("page size (default 100)")));
        parameters.append(queryParam(QStringLiteral("cursor"), str(), QStringLiteral("the next cursor of the previous page")));
    }
    if (mutation) {
        parameters.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("Idempotency-Key")}, {QStringLiteral("in"), QStringLiteral("header")},
                                      {QStringLiteral("required"), false}, {QStringLiteral("schema"), QJsonObject{{QStringLiteral("type"), QStringLiteral("string")}, {QStringLiteral("maxLength"), 255}}}});
        if (path.contains(QLatin1String("{id}")))
            parameters.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("If-Match")}, {QStringLiteral("in"), QStringLiteral("header")},
                                          {QStringLiteral("required"), false}, {QStringLiteral("schema"), str()},
                                          {QStringLiteral("description"), QStringLiteral("\"<version>\"; 412 when stale")}});
        parameters.append(QJsonObject{{QStringLiteral("name"), QStringLiteral("X-OpsDeck-Reason")}, {QStringLiteral("in"), QStringLiteral("header")},
                                      {QStringLiteral("required"), false}, {QStringLiteral("schema"), str()},
                                      {QStringLiteral("description"), QStringLiteral("percent-encoded reason for body-less mutations")}});
    }
    QJsonObject responses;
    QJsonObject ok{{QStringLiteral("description"), QStringLiteral("success")}};
    if (op.response)
        ok.insert(QStringLiteral("content"), QJsonObject{{QStringLiteral("application/json"), QJsonObject{{QStringLiteral("schema"), ref(QLatin1String(op.response))}}}});
    else if (path == QLatin1String("/metrics"))
        ok.insert(QStringLiteral("content"), QJsonObject{{QStringLiteral("text/plain"), QJsonObject{{QStringLiteral("schema"), str()}}}});
    responses.insert(QString::number(op.success), ok);
    if (op.auth) {
        responses.insert(QStringLiteral("400"), problemResponse(QStringLiteral("invalid request (field paths in errors)")));
        responses.insert(QStringLiteral("401"), problemResponse(QStringLiteral("no or invalid token")));
        responses.insert(QStringLiteral("403"), problemResponse(QStringLiteral("role not allowed")));
        if (path.contains(QLatin1String("{id}")))
            responses.insert(QStringLiteral("404"), problemResponse(QStringLiteral("not found or not visible")));
    }
    if (mutation) {
        responses.insert(QStringLiteral("409"), problemResponse(QStringLiteral("invalid transition or idempotency key in use")));
        responses.insert(QStringLiteral("412"), problemResponse(QStringLiteral("stale If-Match")));
        responses.insert(QStringLiteral("413"), problemResponse(QStringLiteral("body over 1 MiB")));
        responses.insert(QStringLiteral("415"), problemResponse(QStringLiteral("body sent as something other than JSON in UTF-8")));
        responses.insert(QStringLiteral("422"), problemResponse(QStringLiteral("idempotency key reused with another body")));
    }
    if (path == QLatin1String("/api/v1/deliveries/retry"))
        responses.insert(QStringLiteral("422"),
                         problemResponse(QStringLiteral("idempotency key reused with another body, no filter"
                                                        " (filter-required), or over 10000 matches (too-many-matches)")));
    if (path == QLatin1String("/api/v1/events"))
        responses.insert(QStringLiteral("410"), problemResponse(QStringLiteral("cursor older than the retained feed; list again")));
    if (path == QLatin1String("/api/v1/watch"))
        responses.insert(QStringLiteral("426"), problemResponse(QStringLiteral("plain GET without Upgrade")));
    QString opId = method;
    for (const QString &part : path.split(QLatin1Char('/'), Qt::SkipEmptyParts)) {
        if (part == QLatin1String("api") || part == QLatin1String("v1"))
            continue;
        QString p = part;
        p.remove(QLatin1Char('{')).remove(QLatin1Char('}')).remove(QLatin1Char('.')).remove(QLatin1Char('-'));
        opId += p.left(1).toUpper() + p.mid(1);
    }
    QJsonObject o{{QStringLiteral("summary"), QString::fromUtf8(op.summary)},
                  {QStringLiteral("operationId"), opId},
                  {QStringLiteral("tags"), QJsonArray{QString::fromLatin1(op.tag)}},
                  {QStringLiteral("responses"), responses}};
    if (!parameters.isEmpty())
        o.insert(QStringLiteral("parameters"), parameters);
    if (op.request)
        o.insert(QStringLiteral("requestBody"),
                 QJsonObject{{QStringLiteral("required"), QString::fromLatin1(op.request) != QLatin1String("ReasonOnly")
                                                              && QString::fromLatin1(op.request) != QLatin1String("BulkRetry")
                                                              && method == QLatin1String("post")},
                             {QStringLiteral("content"), QJsonObject{{QStringLiteral("application/json"), QJsonObject{{QStringLiteral("schema"), ref(QLatin1String(op.request))}}}}}});
    if (!op.auth)
        o.insert(QStringLiteral("security"), QJsonArray());
    return o;
}

} // namespace

QJsonObject build()
{
    QJsonObject paths;
    for (const Operation &op : operations()) {
        const QString path = QString::fromLatin1(op.path);
        QJsonObject item = paths.value(path).toObject();
        item.insert(QString::fromLatin1(op.method), operation(op));
        paths.insert(path, item);
    }
    QJsonArray tags;
    for (const char *t : {"system", "organizations", "providers", "instances", "tokens", "audit", "feed", "deliveries"})
        tags.append(QJsonObject{{QStringLiteral("name"), QLatin1String(t)}});
    return {{QStringLiteral("openapi"), QStringLiteral("3.0.3")},
            {QStringLiteral("info"), QJsonObject{{QStringLiteral("title"), QStringLiteral("OpsDeck control plane")},
                                                 {QStringLiteral("version"), QStringLiteral("1.0.0")},
                                                 {QStringLiteral("description"), QStringLiteral("Lifecycle control plane: organizations, app instances, callbacks, change feed. Errors are RFC 9457 problem+json.")},
                                                 {QStringLiteral("license"), QJsonObject{{QStringLiteral("name"), QStringLiteral("Proprietary")}}}}},
            {QStringLiteral("servers"), QJsonArray{QJsonObject{{QStringLiteral("url"), QStringLiteral("/")}}}},
            {QStringLiteral("tags"), tags},
            {QStringLiteral("security"), QJsonArray{QJsonObject{{QStringLiteral("bearer"), QJsonArray()}}}},
            {QStringLiteral("paths"), paths},
            {QStringLiteral("components"), QJsonObject{{QStringLiteral("schemas"), schemas()},
                                                       {QStringLiteral("securitySchemes"), QJsonObject{{QStringLiteral("bearer"), QJsonObject{{QStringLiteral("type"), QStringLiteral("http")}, {QStringLiteral("scheme"), QStringLiteral("bearer")}}}}}}}};
}

} // namespace OpsDeck::OpenApiDocument
