// The schema, as versioned forward-only migrations shared by SQLite and PostgreSQL.
#include "migrations.h"

namespace OpsDeck {

// Timestamps are RFC 3339 UTC text with milliseconds: they sort as text on both backends, and
// JSON-valued columns are TEXT for the same reason.
const QList<Migration> &migrations()
{
    static const QList<Migration> list = {
        {1,
         {
             QStringLiteral("CREATE TABLE organizations (id {{id}}, name TEXT NOT NULL, status TEXT NOT NULL,"
                            " version BIGINT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
                            " deleted_at TEXT)"),
             QStringLiteral("CREATE TABLE providers (id {{id}}, name TEXT NOT NULL,"
                            " organization_id BIGINT NOT NULL REFERENCES organizations(id),"
                            " applications TEXT NOT NULL, version BIGINT NOT NULL,"
                            " created_at TEXT NOT NULL, updated_at TEXT NOT NULL)"),
             QStringLiteral("CREATE INDEX providers_organization ON providers(organization_id)"),
             QStringLiteral("CREATE TABLE instances (id {{id}}, name TEXT NOT NULL,"
                            " organization_id BIGINT NOT NULL REFERENCES organizations(id),"
                            " provider_id BIGINT NOT NULL REFERENCES providers(id),"
                            " application TEXT NOT NULL, owner TEXT NOT NULL, status TEXT NOT NULL,"
                            " version BIGINT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
                            " status_changed_at TEXT NOT NULL, callback_url TEXT, callback_signing TEXT,"
                            " secret TEXT, awaiting_ack_reason TEXT, awaiting_ack_delivery BIGINT,"
                            " destroy_after TEXT)"),
             QStringLiteral("CREATE INDEX instances_organization ON instances(organization_id, id)"),
             QStringLiteral("CREATE INDEX instances_provider ON instances(provider_id, id)"),
             QStringLiteral("CREATE INDEX instances_owner ON instances(owner, id)"),
             QStringLiteral("CREATE INDEX instances_status ON instances(status, id)"),
             QStringLiteral("CREATE INDEX instances_updated ON instances(updated_at)"),
             QStringLiteral("CREATE TABLE tokens (id {{id}}, name TEXT NOT NULL, role TEXT NOT NULL,"
                            " subject TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,"
                            " created_at TEXT NOT NULL, revoked_at TEXT)"),
             QStringLiteral("CREATE TABLE audit (id {{id}}, at TEXT NOT NULL, actor_role TEXT NOT NULL,"
                            " actor_subject TEXT NOT NULL, action TEXT NOT NULL, kind TEXT NOT NULL,"
                            " object_id BIGINT NOT NULL, from_state TEXT, to_state TEXT, reason TEXT NOT NULL,"
                            " provider_id BIGINT, owner TEXT)"),
             QStringLiteral("CREATE INDEX audit_object ON audit(kind, object_id)"),
             QStringLiteral("CREATE TABLE events (seq {{id}}, kind TEXT NOT NULL, object_id BIGINT NOT NULL,"
                            " version BIGINT NOT NULL, op TEXT NOT NULL, object TEXT NOT NULL, at TEXT NOT NULL,"
                            " audience_provider BIGINT, audience_owner TEXT,"
                            " audience_private INTEGER NOT NULL DEFAULT 0)"),
             QStringLiteral("CREATE TABLE feed_state (id INTEGER PRIMARY KEY, purged_through BIGINT NOT NULL)"),
             QStringLiteral("INSERT INTO feed_state (id, purged_through) VALUES (1, 0)"),
             QStringLiteral("CREATE TABLE idempotency_keys (caller TEXT NOT NULL, key TEXT NOT NULL,"
                            " fingerprint TEXT NOT NULL, state TEXT NOT NULL, status INTEGER,"
                            " headers TEXT, body TEXT, created_at TEXT NOT NULL, PRIMARY KEY (caller, key))"),
             QStringLiteral("CREATE TABLE endpoints (id {{id}}, provider_id BIGINT NOT NULL REFERENCES providers(id),"
                            " url TEXT NOT NULL, state TEXT NOT NULL, consecutive_failures INTEGER NOT NULL DEFAULT 0,"
                            " success_count BIGINT NOT NULL DEFAULT 0, failure_count BIGINT NOT NULL DEFAULT 0,"
                            " last_success_at TEXT, last_failure_at TEXT, paused_at TEXT,"
                            " version BIGINT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,"
                            " UNIQUE (provider_id, url))"),
             QStringLiteral("CREATE TABLE deliveries (id {{id}}, webhook_id TEXT NOT NULL UNIQUE,"
                            " event_type TEXT NOT NULL, instance_id BIGINT NOT NULL REFERENCES instances(id),"
                            " provider_id BIGINT NOT NULL, endpoint_id BIGINT NOT NULL REFERENCES endpoints(id),"
                            " state TEXT NOT NULL, body TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,"
                            " next_attempt_at TEXT, give_up_at TEXT, last_status INTEGER, last_error TEXT,"
                            " lease_owner TEXT, lease_until TEXT, created_at TEXT NOT NULL,"
                            " updated_at TEXT NOT NULL, version BIGINT NOT NULL)"),
             QStringLiteral("CREATE INDEX deliveries_due ON deliveries(state, next_attempt_at)"),
             QStringLiteral("CREATE INDEX deliveries_instance ON deliveries(instance_id, event_type, state)"),
             QStringLiteral("CREATE TABLE delivery_attempts (id {{id}},"
                            " delivery_id BIGINT NOT NULL REFERENCES deliveries(id), attempt INTEGER NOT NULL,"
                            " at TEXT NOT NULL, request_headers TEXT, request_body TEXT, response_status INTEGER,"
                            " response_headers TEXT, response_body TEXT, latency_ms INTEGER,"
                            " error_class TEXT, error TEXT)"),
             QStringLiteral("CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id, attempt)"),
         }},
        // The outbox's rotation grace secrets, failure streaks and lease index. Servers before
        // version 2 created them on the fly, so a version 1 database may already have them: IF
        // NOT EXISTS keeps those (and their rows) and creates what is missing.
        {2,
         {
             QStringLiteral("CREATE TABLE IF NOT EXISTS outbox_secret_grace (instance_id BIGINT PRIMARY KEY,"
                            " previous_secret TEXT NOT NULL, valid_until TEXT NOT NULL)"),
             QStringLiteral("CREATE TABLE IF NOT EXISTS outbox_endpoint_streaks (endpoint_id BIGINT PRIMARY KEY,"
                            " failing_since TEXT NOT NULL)"),
             QStringLiteral("CREATE INDEX IF NOT EXISTS deliveries_lease ON deliveries(lease_owner)"),
         }},
        // Fewer index entries rewritten per claim and per settled delivery, the outbox's hot
        // writes. No query looks a lease owner up without the row's id, so the lease index only
        // cost every claim and settle an index rewrite. Claims want due PENDING rows only: a
        // partial index holds just those, so settling a row deletes its entry instead of moving
        // it, and the endpoint id in it lets a claim pass busy endpoints' rows without reading
        // them. The per-instance order check and supersede look rows up by instance and kind;
        // the state in that index changed with every settle and saved no read (both read the
        // row for its lease anyway).
        {3,
         {
             QStringLiteral("DROP INDEX IF EXISTS deliveries_lease"),
             QStringLiteral("DROP INDEX IF EXISTS deliveries_due"),
             QStringLiteral("CREATE INDEX deliveries_pending ON deliveries(next_attempt_at, id, endpoint_id)"
                            " WHERE state = 'PENDING'"),
             QStringLiteral("DROP INDEX IF EXISTS deliveries_instance"),
             QStringLiteral("CREATE INDEX deliveries_instance ON deliveries(instance_id, event_type, id)"),
         }},
        // The failing-callback inspector lists FAILED deliveries (and CANCELLED, SUPERSEDED) among
        // a table of mostly DELIVERED ones. A partial index holds only those rows: a row enters it
        // once, when it gives up or is cancelled or superseded, so claims and the settling of
        // delivered attempts (the hot writes) never touch it. Spelled with OR, which both planners
        // prove a query's `state = 'FAILED'` implies.
        {4,
         {
             QStringLiteral("CREATE INDEX deliveries_unsettled ON deliveries(id)"
                            " WHERE state = 'FAILED' OR state = 'CANCELLED' OR state = 'SUPERSEDED'"),
         }},
        // The poll's upkeep runs every second and must not read what only grows. Its supersede pass
        // looks for FAILED rows that a newer notification replaces: the index of version 4 holds
        // those among every CANCELLED and SUPERSEDED row ever, this one only the FAILED ones that
        // can still be replaced (never a test event), which the pass itself keeps few. A row
        // enters it when it gives up and leaves when retried or superseded, so claims and settles
        // never touch it. The destruction sweep wants the stopped instances whose retention ended,
        // oldest first: only those have a destroy_after, so that index holds them alone, in the
        // sweep's order, instead of every STOPPED instance read and sorted each time.
        {5,
         {
             QStringLiteral("CREATE INDEX deliveries_failed ON deliveries(id)"
                            " WHERE state = 'FAILED' AND event_type <> 'opsdeck.test'"),
             QStringLiteral("CREATE INDEX instances_destroy_due ON instances(status, destroy_after, id)"
                            " WHERE destroy_after IS NOT NULL"),
         }},
        // A claim holds a notification back while an older one of its instance is undelivered or
        // in flight. Through deliveries_instance that check read every older row of the instance,
        // delivered ones included: a cost per claim that grew with every start and stop the
        // instance ever had. These hold only what can block: the PENDING rows (a row enters at
        // enqueue and leaves when it settles) and the settled ones still leased, i.e. cancelled
        // or superseded while their attempt was in flight (they leave when that attempt is
        // recorded, which clears the lease). A claim
        // changes neither state nor event type, so it never writes the first; it changes the
        // lease, which the second's condition only tests. Test events wait for nothing and hold
        // nothing back, so neither index holds them.
        {6,
         {
             QStringLiteral("CREATE INDEX deliveries_waiting ON deliveries(instance_id, id)"
                            " WHERE state = 'PENDING' AND event_type <> 'opsdeck.test'"),
             QStringLiteral("CREATE INDEX deliveries_in_flight ON deliveries(instance_id, id)"
                            " WHERE state <> 'PENDING' AND lease_until IS NOT NULL AND event_type <> 'opsdeck.test'"),
         }},
        // An attempt's number in the log was MAX(attempt) + 1 of the delivery's logged attempts,
        // read at every insert. PostgreSQL plans that read once per connection: made while the
        // log was small (a fresh installation, or one that was just analyzed), the plan walks
        // the whole log, and keeps walking it as the log grows until the table is analyzed
        // again. The delivery row counts its logged attempts instead; `attempts` cannot, a
        // retry sets it back to 0. Each recording updates the row (locked, or under SQLite's
        // write lock) and has the new count returned.
        {7,
         {
             QStringLiteral("ALTER TABLE deliveries ADD COLUMN logged_attempts INTEGER NOT NULL DEFAULT 0"),
             QStringLiteral("UPDATE deliveries SET logged_attempts = (SELECT MAX(a.attempt) FROM delivery_attempts a"
                            " WHERE a.delivery_id = deliveries.id)"
                            " WHERE EXISTS (SELECT 1 FROM delivery_attempts a WHERE a.delivery_id = deliveries.id)"),
         }},
        // An endpoint that had answered well and then answered nothing while attempts were out is
        // taken for silent by the delivery worker well before those attempts time out (and are
        // logged as failures): how often that happened, and when last, show it to an operator
        // as it happens.
        {8,
         {
             QStringLiteral("ALTER TABLE endpoints ADD COLUMN silent_count BIGINT NOT NULL DEFAULT 0"),
             QStringLiteral("ALTER TABLE endpoints ADD COLUMN last_silent_at TEXT"),
         }},
        // What a stopped instance awaits says which notification it is: a queued destruction
        // callback means the provider may have deleted it, and it may not start again.
        {9,
         {
             QStringLiteral("ALTER TABLE instances ADD COLUMN awaiting_ack_event TEXT"),
             QStringLiteral("UPDATE instances SET awaiting_ack_event = (SELECT d.event_type FROM deliveries d"
                            " WHERE d.id = instances.awaiting_ack_delivery) WHERE awaiting_ack_delivery IS NOT NULL"),
         }},
        // A claim notes whose lease it took over: a holder that neither recorded nor released
        // its delivery (a server killed mid-attempt, or one that lost its storage) left an
        // attempt whose outcome nobody knows, and the new holder logs it as interrupted. The
        // claim writes the row anyway; no index holds the column.
        {10,
         {
             QStringLiteral("ALTER TABLE deliveries ADD COLUMN previous_lease_owner TEXT"),
         }},
        // Owners are named without the spaces around them since names are read with
        // JsonReader::name(): an owner stored padded before would match no new token, and a
        // padded owner token no instance created since.
        {11,
         {
             QStringLiteral("UPDATE instances SET owner = TRIM(owner) WHERE owner <> TRIM(owner)"),
             QStringLiteral("UPDATE tokens SET subject = TRIM(subject) WHERE role = 'owner' AND subject <> TRIM(subject)"),
         }},
        // A test event cancelled while its attempt was in flight, on a worker that then died, kept
        // its expired lease for good: the upkeep that lets go of settled rows' expired leases (and
        // logs their attempts as interrupted) read them through deliveries_in_flight, which left
        // test events out. Its successor holds them. The claim's check of an instance's older rows
        // in flight still spells its own test-event term: the index's two terms are among its
        // terms, so both backends still take it. Built before the old one is dropped: on
        // PostgreSQL a DROP INDEX locks the table against reads too, until the migration commits.
        {12,
         {
             QStringLiteral("CREATE INDEX deliveries_settled_in_flight ON deliveries(instance_id, id)"
                            " WHERE state <> 'PENDING' AND lease_until IS NOT NULL"),
             QStringLiteral("DROP INDEX deliveries_in_flight"),
         }},
    };
    return list;
}

} // namespace OpsDeck
