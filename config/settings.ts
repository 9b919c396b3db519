import Type, { type Static } from '#typebox';

/**
 * Every setting the platform reads, one TypeBox schema. Values come from the environment
 * (Heroku style); the defaults give the embedded mode: one process, in-process bus, SQLite.
 * docs/CONFIGURATION.md is the table a person reads; keep the two in step.
 */
export const SettingsSchema = Type.Object({
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('production'), Type.Literal('test')], {
    default: 'development',
    description: 'production refuses to start without CSMS_API_KEY',
  }),
  PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 3000,
    description:
      'HTTP and WebSocket port (0 = any free port); a worker serves /healthz, /readyz, /metrics and the API docs on it',
  }),
  HOST: Type.String({ default: '0.0.0.0', description: 'address the HTTP server binds to' }),
  PUBLIC_URL: Type.Optional(
    Type.String({
      pattern: '^https?://[^\\s]+$',
      description: 'external base URL used in OCPI links (default http://localhost:PORT)',
    }),
  ),
  DATABASE_URL: Type.String({
    pattern: '^(postgres(ql)?://[^\\s]+|sqlite:.+)$',
    default: 'sqlite:./data/platform.sqlite',
    description:
      'postgres:// URL (cluster) or sqlite:<file> (embedded); ?sslmode=disable | require | verify-ca | verify-full sets TLS (docs/CONFIGURATION.md)',
  }),
  DATABASE_SCHEMA: Type.String({
    pattern: '^[a-z_][a-z0-9_]{0,62}$',
    default: 'public',
    description: 'PostgreSQL schema',
  }),
  DATABASE_POOL_MAX: Type.Integer({
    minimum: 1,
    maximum: 200,
    default: 10,
    description: 'PostgreSQL connections per process',
  }),
  DATABASE_QUERY_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 600000,
    default: 30000,
    description:
      "PostgreSQL: a statement of the platform's own pool not done within this is cancelled by the server (statement_timeout), and one whose answer has not come a second later fails and its connection is dropped (a server or network that hangs rather than refuses); migrations are not bounded",
  }),
  SQLITE_LOCKING: Type.Union([Type.Literal('exclusive'), Type.Literal('normal')], {
    default: 'exclusive',
    description:
      "embedded SQLite: exclusive holds the file's lock for the process's life (no lock calls per transaction; no other process opens the file while it runs), normal lets other processes (the sqlite3 shell, a backup) read it while it runs; refused with a postgres:// DATABASE_URL",
  }),
  DATABASE_SSL_CA: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "CA certificate(s) PostgreSQL's certificate is checked against: PEM text, or the path of a PEM file; turns TLS on when DATABASE_URL has no sslmode (as verify-full)",
    }),
  ),
  DATABASE_SSL_REJECT_UNAUTHORIZED: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        "false: TLS to PostgreSQL without checking its certificate (Heroku Postgres); true: the certificate must chain to DATABASE_SSL_CA or a system CA; unset: as DATABASE_URL's sslmode says; either turns TLS on when DATABASE_URL has no sslmode",
    }),
  ),
  REDIS_URL: Type.Optional(
    Type.String({
      pattern: '^rediss?://[^\\s]+$',
      description: 'redis:// or rediss:// URL; unset = embedded in-process bus',
    }),
  ),
  REDIS_PREFIX: Type.String({
    pattern: '^[A-Za-z0-9:_-]{1,64}$',
    default: 'evp',
    description:
      'key prefix for every Redis key: keys and channels are `<prefix>:<name>` (a prefix ending in `:` gives `::`)',
  }),
  REDIS_TLS_CA: Type.Optional(
    Type.String({
      minLength: 1,
      description:
        "CA certificate(s) Redis's certificate is checked against (rediss:// only): PEM text, or the path of a PEM file",
    }),
  ),
  REDIS_TLS_REJECT_UNAUTHORIZED: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        "rediss:// only. false: TLS without checking Redis's certificate (Heroku Redis); unset or true: it must chain to REDIS_TLS_CA or a system CA and name the URL's host",
    }),
  ),
  PROCESS_ROLE: Type.Union([Type.Literal('all'), Type.Literal('web'), Type.Literal('worker')], {
    default: 'all',
    description:
      'all: everything in one process (embedded); web: HTTP, OCPP WebSockets and an actor host; worker: actor host, with /healthz, /readyz, /metrics and the API docs only; web and worker are cluster processes and need REDIS_URL',
  }),
  CSMS_API_KEY: Type.Optional(Type.String({ minLength: 16, description: 'Bearer key of the /v1 management surface' })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info', description: 'pino log level' },
  ),
  LOG_BUFFER_BYTES: Type.String({
    pattern: '^[0-9]+(b|kb|mb)$',
    default: '8mb',
    description:
      'log lines held while a stdout pipe is not read (at least 4kb); past it new lines are dropped and counted in a warning line',
  }),
  OCPI_COUNTRY_CODE: Type.String({
    pattern: '^[A-Z]{2}$',
    default: 'NL',
    description: "the platform's own OCPI country code",
  }),
  OCPI_PARTY_ID: Type.String({
    pattern: '^[A-Z0-9]{3}$',
    default: 'EVP',
    description: "the platform's own OCPI party id",
  }),
  OCPI_BUSINESS_NAME: Type.String({
    minLength: 1,
    default: 'EV Roaming Platform',
    description: "the platform's business name in OCPI credentials",
  }),
  OCPI_COMMAND_TIMEOUT_S: Type.Integer({
    minimum: 5,
    maximum: 3600,
    default: 60,
    description:
      "seconds a partner's command waits for our charger's answer before its result is TIMEOUT (the 2.2.1 CommandResponse timeout)",
  }),
  OCPI_CURRENCY: Type.String({
    pattern: '^[A-Z]{3}$',
    default: 'EUR',
    description:
      "ISO 4217 currency of our OCPI sessions and CDRs that no tariff prices (a priced one is in its tariff's currency)",
  }),
  ROAMING_SESSION_PUSH_MS: Type.Integer({
    minimum: 0,
    maximum: 3600000,
    default: 60000,
    description:
      'a running roamed session is sent to its eMSP with its energy at most this often (its start and end at once); 0 = at every meter value',
  }),
  ROAMING_SAMPLE_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 30,
    description:
      "meter readings of a roamed session that ended without a CDR (and whose CDR no outbox row can still build) are deleted this long after the session's last change; a stored CDR deletes its session's at once",
  }),
  ROAMING_AUTHORIZE_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 60000,
    default: 3000,
    description:
      "how long a charger's authorization waits for the real-time answer of the token's eMSP before its whitelist rule decides",
  }),
  PRICING_THREADS: Type.Integer({
    minimum: 0,
    maximum: 64,
    default: 0,
    description: 'worker threads that price CDRs (Piscina); 0 = one per CPU core',
  }),
  PRICING_IDLE_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 3600000,
    default: 30000,
    description: 'a pricing thread with nothing to do for this long exits (started again on demand)',
  }),
  PRICING_MAX_QUEUE: Type.Integer({
    minimum: 1,
    maximum: 10000,
    default: 4,
    description:
      'batches of CDRs (256 each, 16 while the process serves) waiting for a pricing thread; beyond this, callers wait (back-pressure)',
  }),
  PRICING_THREAD_POLICY: Type.Union([Type.Literal('nice'), Type.Literal('idle')], {
    default: 'nice',
    description:
      'Linux: nice = pricing threads at nice 10; idle = also the SCHED_IDLE policy (through chrt), which gives the core to the event loop at once but leaves pricing a tiny share of a host that is busy with other processes (docs/TARIFFS.md)',
  }),
  PRICING_BULK_SHARE_PERCENT: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 10,
    description:
      'while the process serves chargers or requests, a pricing job of several batches pauses between batches so that its work on the event loop stays within this share of the time, and takes batches of 16 CDRs instead of 256; 100 = never pauses, full batches (docs/TARIFFS.md)',
  }),
  HEAP_GROWING_PERCENT: Type.Integer({
    minimum: 0,
    maximum: 300,
    default: 100,
    description:
      "how far past what the last full garbage collection left alive V8 lets the heap grow before the next one: 100 = to twice as much; 0 = V8's own choice, often 1.1x, which brings a full collection (tens of ms of marking on the event loop) every few seconds while a bulk pricing job runs (docs/PERFORMANCE.md)",
  }),
  OCPP_UNKNOWN_ID_TAGS: Type.Union([Type.Literal('reject'), Type.Literal('accept')], {
    default: 'reject',
    description:
      'an id tag that is no OCPI token of ours or of a partner (and was not just sent in a remote start): reject = Invalid, accept = Accepted (a private site)',
  }),
  ACTOR_SHARDS: Type.Integer({
    minimum: 1,
    maximum: 4096,
    default: 256,
    description:
      "number of shards, the same on every process: a process started with another count than the running cluster's refuses to start (exit 78); a new count once every process has stopped",
  }),
  LEASE_TTL_MS: Type.Integer({
    minimum: 1000,
    maximum: 120000,
    default: 6000,
    description: 'shard lease time to live',
  }),
  ACTOR_IDLE_MS: Type.Integer({
    minimum: 1000,
    // a timer holds at most 2^31-1 ms: past it Node fires at once (every actor passivated at once)
    maximum: 86400000,
    default: 120000,
    description: 'an idle actor is passivated after this',
  }),
  COMMIT_WINDOW_MS: Type.Integer({
    minimum: 0,
    maximum: 50,
    default: 5,
    description:
      'group commit: while turns keep coming, those of this many ms commit in one transaction (as many waiting turns as the last batch took, or 32, end the window early); a turn after a quiet spell commits at the end of its event-loop tick (0 = always so); replies wait for the commit',
  }),
  ASK_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    // a timer holds at most 2^31-1 ms: past it Node fired at once, and every ask failed
    maximum: 600000,
    default: 10000,
    description: 'default time an ask waits for its reply',
  }),
  BODY_LIMIT: Type.String({
    pattern: '^[0-9]+(b|kb|mb)$',
    default: '1mb',
    description: 'largest accepted request body',
  }),
  HTTP_REQUEST_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 300000,
    default: 30000,
    description:
      "an HTTP request's headers and body must arrive within this, else 408 and the connection is closed (checked every quarter of it, at most every 30 s)",
  }),
  TRUST_PROXY: Type.Union([Type.Literal('false'), Type.Literal('true')], {
    default: 'false',
    description:
      "true: X-Forwarded-Proto/-Host/-For count (behind a load balancer such as Heroku's); false: they are ignored",
  }),
  HTTP_AUTH_FAILURES: Type.Integer({
    minimum: 0,
    maximum: 100000,
    default: 50,
    description:
      'failed authentications (the /v1 API key, an OCPI token, METRICS_TOKEN) from one address, per surface, less one per success, before its requests there are answered 429 with a back-off of 1 s doubling to 5 min (an OCPI token this process has seen name a partner is still checked); each process counts its own (0: never)',
  }),
  METRICS_TOKEN: Type.Optional(
    Type.String({
      minLength: 16,
      description:
        'Bearer token of /metrics; unset: /metrics is open except with NODE_ENV=production, where it answers 404',
    }),
  ),
  BODY_MAX_DEPTH: Type.Integer({
    minimum: 4,
    maximum: 1000,
    default: 64,
    description: 'deepest nesting of arrays and objects accepted in a JSON request body (422 beyond)',
  }),
  PARTNER_URL_POLICY: Type.Union([Type.Literal('public'), Type.Literal('loopback'), Type.Literal('any')], {
    default: 'public',
    description:
      'destinations our outbound OCPI calls may reach: public (no loopback, private or link-local addresses), loopback (public and loopback), any',
  }),
  PARTNER_TIMEOUT_MS: Type.Integer({
    minimum: 100,
    maximum: 120000,
    default: 5000,
    description: 'time limit of one outbound call to a partner, headers and body',
  }),
  PARTNER_RESPONSE_LIMIT: Type.String({
    pattern: '^[0-9]+(b|kb|mb)$',
    default: '4mb',
    description: 'largest reply read from a partner; the read is aborted past it',
  }),
  OUTBOX_MAX_ATTEMPTS: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 15,
    description:
      'attempts to send one outbox row to a partner before it becomes a dead letter (GET /v1/outbox?status=dead)',
  }),
  OUTBOX_RETRY_BASE_MS: Type.Integer({
    minimum: 10,
    maximum: 600000,
    default: 1000,
    description:
      'first back-off of a failed send to a partner; doubled at every attempt (with jitter) up to OUTBOX_RETRY_MAX_MS',
  }),
  OUTBOX_RETRY_MAX_MS: Type.Integer({
    minimum: 10,
    maximum: 86400000,
    default: 600000,
    description: 'longest back-off between two attempts of one outbox row, and longest breaker cool-down',
  }),
  OUTBOX_BREAKER_FAILURES: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 5,
    description:
      "consecutive failed sends (no connection, timeout, 5xx) that open a partner's breaker: nothing is sent to it for a cool-down",
  }),
  OUTBOX_BREAKER_COOLDOWN_MS: Type.Integer({
    minimum: 10,
    maximum: 3600000,
    default: 30000,
    description: 'first cool-down of an open breaker; doubled at every failed probe up to OUTBOX_RETRY_MAX_MS',
  }),
  OUTBOX_SWEEP_MS: Type.Integer({
    minimum: 10,
    maximum: 600000,
    default: 2000,
    description:
      "how often each web process looks for outbox rows due again (after a back-off) and wakes their partners' senders",
  }),
  ROAMING_OFFLINE_GRACE_MS: Type.Integer({
    minimum: 100,
    maximum: 86400000,
    default: 300000,
    description:
      'a charger with EVSEs linked to our OCPI locations that has had no connection this long has those EVSEs shown UNKNOWN to partners',
  }),
  OCPP_HANDSHAKE_TIMEOUT_MS: Type.Integer({
    minimum: 500,
    maximum: 120000,
    default: 10000,
    description: 'an OCPP upgrade (and its login) must complete within this, else the socket is destroyed',
  }),
  OCPP_MAX_MESSAGE_KB: Type.Integer({
    minimum: 64,
    maximum: 16384,
    default: 256,
    description:
      'the largest WebSocket message a charger may send, in KiB; a larger one closes its connection (1009). Raise it for chargers that send their device model (NotifyReport) in large parts',
  }),
  OCPP_BOOT_DEADLINE_MS: Type.Integer({
    minimum: 1000,
    maximum: 3600000,
    default: 300000,
    description: 'a charger that has not sent BootNotification this long after connecting is closed (1008)',
  }),
  OCPP_MAX_OPEN_TRANSACTIONS: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 64,
    description: 'open transactions one charger may hold; further starts are refused',
  }),
  CSMS_METER_SAMPLE_S: Type.Integer({
    minimum: 0,
    maximum: 3600,
    default: 60,
    description:
      "a session's energy chart keeps its first and last meter readings and one reading per this many seconds between them (0: every reading)",
  }),
  CSMS_METER_SAMPLE_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 90,
    description: "the readings of a session's energy chart are deleted this long after the session ended",
  }),
  OCPP_AUTH_CACHE_S: Type.Integer({
    minimum: 0,
    maximum: 30 * 86_400,
    default: 3600,
    description:
      "how long a charger may keep an accepted id tag in its authorization cache (1.6 expiryDate, 2.0.1 cacheExpiryDateTime); 0: the charger's own rule",
  }),
  OCPP_LOCAL_LIST_MAX: Type.Integer({
    minimum: 0,
    maximum: 100_000,
    default: 1000,
    description:
      "id tags a charger's local authorization list is given at most by sync-local-list (ours first, then each eMSP's in turns; 0: none)",
  }),
  OCPP_LOCAL_LIST_SYNC_S: Type.Integer({
    minimum: 0,
    maximum: 7 * 86_400,
    default: 3600,
    description:
      "every this many seconds each process brings the local lists of the chargers connected to it to the platform's tokens (differential updates; 0: only when the operator asks)",
  }),
  OCPP_LOGIN_FAILURES: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 5,
    description:
      'failed charger logins per identity from one address, or per address, before further attempts are refused with a back-off (429)',
  }),
  OCPP_BOOT_POLICY: Type.Union([Type.Literal('Accepted'), Type.Literal('Pending'), Type.Literal('Rejected')], {
    default: 'Accepted',
    description:
      'the BootNotification status of a charger whose own boot policy is unset (PUT /v1/charge-points/{id}/boot-policy): Accepted, Pending (the operator accepts it) or Rejected',
  }),
  OCPP_HEARTBEAT_INTERVAL_S: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 300,
    description: 'the Heartbeat interval (seconds) given to a charger whose BootNotification is Accepted',
  }),
  OCPP_BOOT_RETRY_INTERVAL_S: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 60,
    description:
      'the interval (seconds) given with a Pending or Rejected BootNotification: the least a charger waits before it boots again',
  }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 60000,
    default: 25000,
    description: 'SIGTERM: exit 1 if the graceful stop takes longer',
  }),
});

export type Settings = Static<typeof SettingsSchema>;
