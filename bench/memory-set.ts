/**
 * A synthetic workspace memory for the memory quality test (test/e2e/memory-quality.test.ts):
 * what a team of coding agents learns about one codebase over a few weeks — ports, owners,
 * deploy rules, databases, dashboards, config values, environment variables, commands,
 * flaky tests, cron jobs, feature flags, pinned dependencies, where secrets live, on-call
 * hand-offs and house rules — and the questions a person or an agent would later ask.
 *
 * Every fact has a key. A question asks for one key's fact in other words (a question's
 * form, synonyms), and has a `kind`: what it asks about (port, owner, deploy, ...). Most
 * name what a person asking would name: the service, the variable, the test, the job. A
 * `..., described` question names none of it: it calls a service by what it does ("the
 * payments frontend" for checkout-web), a feature flag by its feature, and only a
 * service's `about` fact ("checkout-web is the payments frontend") ties the two. A
 * correction is a later fact for the same key with a different value: it replaces the
 * earlier one, and it is the answer to that key's question. A duplicate is a current text
 * again, exactly or with its case or spacing changed.
 *
 * Deterministic: a seeded PRNG, never Math.random, so the committed set is regenerated
 * byte for byte:
 *
 *   node --import tsx bench/memory-set.ts > test/fixtures/memory-set.json
 */
import { pathToFileURL } from "node:url";

export interface MemorySet {
  facts: { key: string; text: string; tags: string[] }[];
  questions: { question: string; answerKey: string; kind: string }[];
  corrections: { key: string; text: string }[];
  duplicates: string[];
}

export const DEFAULT_SIZE = 320;
export const DEFAULT_SEED = 20260517;

type Rng = () => number;

/** mulberry32: small, fast, and the same on every machine. */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
function shuffle<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
/** A value from `xs` other than `not`. */
function other<T>(rng: Rng, xs: readonly T[], not: T): T {
  for (;;) {
    const x = pick(rng, xs);
    if (x !== not) return x;
  }
}
const fill = (template: string, v: Record<string, string | number>) => template.replace(/\{(\w+)\}/g, (_, k: string) => String(v[k] ?? `{${k}}`));

/* ---------------------------------------------------------------- vocabularies */

const SERVICES = [
  "billing-api", "ledger", "notifier", "auth-gateway", "search-indexer", "payments-worker", "inventory-sync", "scheduler",
  "webhook-relay", "thumbnailer", "mailer", "audit-log", "geo-lookup", "flagd", "session-store", "rate-limiter",
  "report-builder", "checkout-web", "catalog-api", "pricing-engine", "export-worker", "identity", "media-proxy", "invoice-renderer",
  "tenant-admin", "event-bus", "metrics-gateway", "shipping-quotes", "fraud-scorer", "recommendations", "sms-sender", "ingest-pipeline",
] as const;

/**
 * What each service does, in words that share none of its name's: a `described` question
 * calls the service this, and the service's `about` fact is the one memory that says so.
 */
const ABOUT: Record<(typeof SERVICES)[number], string> = {
  "billing-api": "the subscription charging backend",
  ledger: "the double-entry bookkeeping service",
  notifier: "the push notification fan-out",
  "auth-gateway": "the sign-in proxy",
  "search-indexer": "the full-text feeder",
  "payments-worker": "the card charge processor",
  "inventory-sync": "the stock level updater",
  scheduler: "the timed-job runner",
  "webhook-relay": "the outbound callback forwarder",
  thumbnailer: "the image resizer",
  mailer: "the outgoing email sender",
  "audit-log": "the compliance trail recorder",
  "geo-lookup": "the IP-to-country resolver",
  flagd: "the feature toggle server",
  "session-store": "the login state cache",
  "rate-limiter": "the request throttler",
  "report-builder": "the tenant analytics exporter",
  "checkout-web": "the payments frontend",
  "catalog-api": "the product listing backend",
  "pricing-engine": "the discount and tax calculator",
  "export-worker": "the bulk CSV download job",
  identity: "the user accounts service",
  "media-proxy": "the video and image CDN origin",
  "invoice-renderer": "the PDF bill generator",
  "tenant-admin": "the customer back office",
  "event-bus": "the message broker wrapper",
  "metrics-gateway": "the telemetry collector",
  "shipping-quotes": "the carrier rate calculator",
  "fraud-scorer": "the risk model service",
  recommendations: "the you-might-also-like engine",
  "sms-sender": "the text message dispatcher",
  "ingest-pipeline": "the raw event loader",
};

const PEOPLE = [
  "Priya Raman", "Marco Bellini", "Ayumi Sato", "Tomasz Nowak", "Fatima Haddad", "Lucas Oliveira", "Ingrid Solberg", "Kwame Mensah",
  "Elena Petrova", "Diego Ramirez", "Hannah Weiss", "Sanjay Iyer", "Chloe Martin", "Olu Adeyemi", "Mei Lin", "Jonas Becker",
  "Aisha Khan", "Rafael Costa", "Nora Lindqvist", "Bilal Aziz",
] as const;

const TEAMS = ["payments", "platform", "growth", "identity", "data", "search", "messaging", "storefront", "infra", "risk"] as const;

const WINDOWS = [
  "on weekdays between 09:00 and 15:00 UTC",
  "Tuesday to Thursday before 14:00 CET",
  "any day except during the Friday freeze",
  "after the nightly batch finishes at 02:00 UTC",
  "during the Wednesday release train",
  "Monday to Thursday, mornings only",
  "outside the month-end close (last three days of the month)",
  "only when someone from the owning team is online",
] as const;

const DB_ENGINES = ["Postgres", "MySQL", "DynamoDB", "MongoDB", "ClickHouse", "CockroachDB"] as const;
const CLUSTERS = ["pg-main-eu", "pg-shared-us", "db-analytics", "core-east-1", "core-west-2", "ops-small"] as const;
const INCIDENTS = ["March outage", "Black Friday", "INC-2291", "queue backlog", "INC-2417", "memory leak"] as const;
const MONTHS = ["January", "February", "March", "April", "May", "June"] as const;

interface Setting {
  name: string;
  values: string[];
  questions: string[];
}
const SETTINGS: Setting[] = [
  {
    name: "request timeout",
    values: ["30 seconds", "5 seconds", "12 seconds", "90 seconds", "2 seconds"],
    questions: ["How long does {svc} wait on a request before giving up?", "What is the timeout on requests to {svc}?", "After how many seconds do {svc} requests time out?"],
  },
  {
    name: "database connection pool size",
    values: ["20 connections", "50 connections", "8 connections", "120 connections"],
    questions: ["How many database connections can {svc} hold open?", "How big is {svc}'s connection pool?", "What's the max DB pool for {svc}?"],
  },
  {
    name: "retry limit",
    values: ["3 attempts with exponential backoff", "5 attempts", "no retries", "7 attempts, capped at 60 seconds"],
    questions: ["How many times does {svc} retry a failed call?", "Does {svc} retry, and how often?", "What's the max number of retries in {svc}?"],
  },
  {
    name: "cache TTL",
    values: ["5 minutes", "1 hour", "30 seconds", "24 hours"],
    questions: ["How long does {svc} cache entries for?", "What TTL does {svc} use for its cache?", "When do cached values in {svc} expire?"],
  },
  {
    name: "batch size",
    values: ["500 records", "100 records", "2000 records", "50 records"],
    questions: ["How many records does {svc} process per batch?", "What batch size is {svc} configured with?", "How large are the batches {svc} works through?"],
  },
  {
    name: "rate limit",
    values: ["600 requests per minute per tenant", "100 requests per second", "30 requests per minute per user", "2000 requests per minute"],
    questions: ["How many requests per minute will {svc} accept before throttling?", "What's the rate limit on {svc}?", "At what request rate does {svc} start answering 429?"],
  },
  {
    name: "maximum upload size",
    values: ["25 MB", "100 MB", "10 MB", "2 GB"],
    questions: ["What's the largest file {svc} accepts for upload?", "Is there a size cap on uploads to {svc}?", "How big can an uploaded file be in {svc}?"],
  },
  {
    name: "worker concurrency",
    values: ["4 workers", "16 workers", "1 worker (jobs must run in order)", "32 workers"],
    questions: ["How many workers does {svc} run concurrently?", "How many jobs does {svc} handle in parallel?", "What concurrency is {svc} set to?"],
  },
  {
    name: "production log level",
    values: ["info", "warn", "debug (temporarily, for INC-2417)", "error"],
    questions: ["How verbose is {svc}'s logging in production?", "What log level does {svc} use in prod?", "Why am I not seeing debug logs from {svc} in production?"],
  },
];

/** Env var suffixes: what they hold, a value generator, and how a missing one shows. */
const ENV_SUFFIXES: { suffix: string; values: (db: string) => string[]; failure: string }[] = [
  { suffix: "DATABASE_URL", values: (db) => [`postgres://localhost:5432/${db}`, `postgres://dev:dev@127.0.0.1:6432/${db}`], failure: "crashes on boot with ECONNREFUSED" },
  { suffix: "REDIS_URL", values: () => ["redis://localhost:6379/2", "redis://localhost:6380/0", "redis://cache.internal:6379/5"], failure: "falls back to an in-memory cache and tests get flaky" },
  { suffix: "LOG_LEVEL", values: () => ["debug", "info", "warn"], failure: "logs every SQL statement" },
  { suffix: "WORKER_CONCURRENCY", values: () => ["2", "4", "8"], failure: "starts one worker per CPU and exhausts the pool" },
  { suffix: "HTTP_TIMEOUT_MS", values: () => ["5000", "15000", "30000"], failure: "hangs forever on a slow upstream" },
  { suffix: "S3_BUCKET", values: (db) => [`${db}-dev-uploads`, `${db}-staging-artifacts`, `acme-${db}-local`], failure: "fails every upload with AccessDenied" },
  { suffix: "KAFKA_BROKERS", values: () => ["localhost:9092", "kafka-1.internal:9092,kafka-2.internal:9092", "localhost:29092"], failure: "retries the broker connection in a loop" },
  { suffix: "OTEL_EXPORTER_ENDPOINT", values: () => ["http://localhost:4318", "http://otel-collector:4317", "https://otel.staging.internal"], failure: "drops all traces silently" },
  { suffix: "SMTP_HOST", values: () => ["localhost:1025 (mailpit)", "smtp.eu.mailgun.org", "smtp.sendgrid.net"], failure: "queues mail that never leaves" },
  { suffix: "JWT_AUDIENCE", values: () => ["api.acme.dev", "acme-internal", "https://auth.acme.test"], failure: "rejects every token with 401" },
  { suffix: "FEATURE_FLAGS_URL", values: () => ["http://localhost:8013", "http://flagd:8013", "https://flags.staging.internal"], failure: "treats every flag as off" },
];

interface Command {
  key: string;
  task: string;
  cmds: [string, string];
  facts: string[];
  questions: string[];
}
/** {cmd} is the command; corrections say the task is now done with the second one. */
const COMMANDS: Command[] = [
  { key: "graphql-codegen", task: "regenerate the GraphQL types", cmds: ["npm run codegen", "pnpm gql:generate"], facts: ["Regenerate the GraphQL types with `{cmd}` after editing any .graphql schema file."], questions: ["How do I rebuild the generated GraphQL typings?", "What command updates the GraphQL types after a schema change?"] },
  { key: "db-migrate-local", task: "apply database migrations locally", cmds: ["make migrate", "npm run db:migrate -- --env local"], facts: ["Apply the database migrations on a local checkout with `{cmd}`."], questions: ["How do I run the DB migrations on my machine?", "What's the command to migrate my local database?"] },
  { key: "seed-data", task: "load the demo seed data", cmds: ["npm run seed -- --tenant demo", "make seed-demo"], facts: ["`{cmd}` loads the demo seed data (two tenants, fifty orders) into a fresh local database."], questions: ["How do I get some sample data into an empty local database?", "Which command seeds the demo tenant data?"] },
  { key: "e2e-suite", task: "run the end-to-end suite", cmds: ["npm run test:e2e -- --shard=1/1", "make e2e"], facts: ["Run the end-to-end suite with `{cmd}`; it needs docker compose up first."], questions: ["How do I kick off the e2e tests locally?", "What's the command for the end to end test suite?"] },
  { key: "lint-fix", task: "auto-fix lint errors", cmds: ["npm run lint -- --fix", "npx biome check --write ."], facts: ["Fix most lint errors automatically with `{cmd}` before pushing."], questions: ["Is there a way to automatically fix the linter complaints?", "What command auto-fixes lint problems?"] },
  { key: "openapi-client", task: "regenerate the OpenAPI client", cmds: ["npm run gen:openapi", "make openapi-client"], facts: ["The typed OpenAPI client in packages/api-client is regenerated with `{cmd}`."], questions: ["How do I refresh the generated OpenAPI client after changing the spec?", "Which command rebuilds packages/api-client from the OpenAPI spec?"] },
  { key: "storybook", task: "start Storybook", cmds: ["npm run storybook", "pnpm --filter ui storybook"], facts: ["Start Storybook for the design system with `{cmd}`; it serves on port 6006."], questions: ["How do I launch storybook for the UI components?", "What's the command to open the component storybook?"] },
  { key: "proto-build", task: "compile the protobuf definitions", cmds: ["buf generate", "make protos"], facts: ["Compile the protobuf definitions under proto/ with `{cmd}`."], questions: ["How do I regenerate code from the .proto files?", "What builds the protobuf stubs?"] },
  { key: "local-stack", task: "bring up the local stack", cmds: ["docker compose up -d postgres redis kafka", "make up"], facts: ["`{cmd}` brings up the local stack (Postgres, Redis, Kafka) for development."], questions: ["How do I start the dependencies like postgres and redis locally?", "What command starts the whole local dev stack?"] },
  { key: "snapshot-update", task: "update Jest snapshots", cmds: ["npm test -- -u", "npx vitest run -u"], facts: ["Update outdated Jest snapshots with `{cmd}` and review the diff before committing."], questions: ["How do I refresh the snapshot files when they're out of date?", "What's the command to rewrite failing jest snapshots?"] },
  { key: "typecheck", task: "typecheck the monorepo", cmds: ["npm run typecheck", "npx tsc -b --noEmit"], facts: ["Typecheck the whole monorepo with `{cmd}`; CI runs the same thing."], questions: ["How do I run the TypeScript type checker across all packages?", "What command does the typecheck for the monorepo?"] },
  { key: "release-notes", task: "draft release notes", cmds: ["npm run changelog", "npx changeset version"], facts: ["Draft release notes from merged PRs with `{cmd}`."], questions: ["How do I generate the changelog for a release?", "Is there a command that writes the release notes?"] },
  { key: "load-test", task: "run the checkout load test", cmds: ["k6 run load/checkout.js", "make load-checkout"], facts: ["The checkout load test is run with `{cmd}` against staging, never production."], questions: ["How do I load test checkout?", "What's the command for the checkout performance test?"] },
  { key: "db-console", task: "open a psql console on staging", cmds: ["make psql-staging", "./scripts/db-shell staging"], facts: ["Open a psql console on the staging database with `{cmd}` (needs the VPN)."], questions: ["How can I get a SQL shell on staging?", "What's the way to connect psql to the staging DB?"] },
  { key: "i18n-extract", task: "extract translation strings", cmds: ["npm run i18n:extract", "npx lingui extract"], facts: ["After adding UI copy, extract the translation strings with `{cmd}`."], questions: ["How do new UI strings get into the translation files?", "What command pulls out i18n strings for translators?"] },
  { key: "bundle-analyze", task: "analyze the web bundle size", cmds: ["npm run analyze", "npx vite-bundle-visualizer"], facts: ["Inspect what makes the web bundle large with `{cmd}`."], questions: ["How can I see what's bloating the frontend bundle?", "Which command shows a breakdown of the JS bundle size?"] },
  { key: "cert-local", task: "create local HTTPS certificates", cmds: ["mkcert -install && mkcert localhost", "make certs"], facts: ["Create trusted local HTTPS certificates with `{cmd}`."], questions: ["How do I get https working on localhost?", "What makes the local TLS certs?"] },
  { key: "fixtures-record", task: "re-record the HTTP fixtures", cmds: ["RECORD=1 npm test -- integrations", "npm run fixtures:record"], facts: ["Re-record the HTTP fixtures for the integration tests with `{cmd}`."], questions: ["How do I refresh the recorded HTTP responses the integration tests replay?", "What command re-records the integration test fixtures?"] },
  { key: "prisma-studio", task: "browse the local database in a GUI", cmds: ["npx prisma studio", "npm run db:studio"], facts: ["Browse the local database in a GUI with `{cmd}`."], questions: ["Is there a visual tool to look at the rows in my local database?", "How do I open a database browser GUI locally?"] },
  { key: "dep-audit", task: "check dependencies for vulnerabilities", cmds: ["npm audit --omit=dev", "osv-scanner -r ."], facts: ["Check the production dependencies for known vulnerabilities with `{cmd}`."], questions: ["How do I scan our dependencies for CVEs?", "What command audits packages for security vulnerabilities?"] },
  { key: "feature-branch-env", task: "deploy a preview environment", cmds: ["./scripts/preview up", "gh workflow run preview.yml"], facts: ["Deploy a preview environment for your branch with `{cmd}`; it is torn down after 48 hours."], questions: ["How do I spin up a preview deployment of my branch?", "What's the command for a per-branch preview environment?"] },
  { key: "queue-drain", task: "drain the dead-letter queue", cmds: ["./bin/dlq replay --all", "make dlq-replay"], facts: ["Replay messages from the dead-letter queue with `{cmd}` once the consumer bug is fixed."], questions: ["How do I reprocess what ended up in the DLQ?", "What command replays dead-letter messages?"] },
  { key: "search-reindex-manual", task: "rebuild the search index by hand", cmds: ["./bin/search reindex --tenant all", "make reindex"], facts: ["Rebuild the search index by hand with `{cmd}`; it takes about 20 minutes."], questions: ["How do I manually trigger a full search reindex?", "What's the command to rebuild the search index?"] },
  { key: "cache-flush", task: "flush the staging CDN cache", cmds: ["./scripts/cdn purge staging", "make purge-cdn ENV=staging"], facts: ["Flush the staging CDN cache with `{cmd}` when assets look stale."], questions: ["Staging is serving old assets, how do I purge the CDN?", "What command clears the CDN cache on staging?"] },
  { key: "mobile-build", task: "build the iOS app locally", cmds: ["cd apps/mobile && npx expo run:ios", "make ios"], facts: ["Build and run the iOS app locally with `{cmd}`; Xcode 15 is required."], questions: ["How do I run the mobile app in the iOS simulator?", "What's the command to build the iOS app on my Mac?"] },
  { key: "terraform-plan", task: "plan infrastructure changes", cmds: ["terraform -chdir=infra/envs/staging plan", "make tf-plan ENV=staging"], facts: ["Plan infrastructure changes for staging with `{cmd}`; applies only happen from CI."], questions: ["How do I preview what terraform would change in staging?", "What's the terraform plan command for our infra?"] },
  { key: "coverage-report", task: "produce a coverage report", cmds: ["npm test -- --coverage", "npx c8 npm test"], facts: ["Produce an HTML test coverage report with `{cmd}`; it lands in coverage/."], questions: ["How do I see code coverage from the unit tests?", "What command generates the coverage report?"] },
  { key: "git-hooks", task: "install the git hooks", cmds: ["npx husky install", "npx lefthook install"], facts: ["Install the pre-commit git hooks with `{cmd}` right after cloning."], questions: ["How do I set up the pre-commit hooks on a fresh clone?", "Which command installs our git hooks?"] },
  { key: "api-docs", task: "preview the API docs", cmds: ["npm run docs:api", "npx redocly preview-docs openapi.yaml"], facts: ["Preview the public API docs rendered from openapi.yaml with `{cmd}`."], questions: ["How can I look at the rendered API documentation locally?", "What command serves the API docs preview?"] },
];

const FLAKY: { file: string; case: string }[] = [
  { file: "checkout/token-refresh.test.ts", case: "refreshes an expired token mid-checkout" },
  { file: "auth/sso-callback.test.ts", case: "accepts a SAML response with clock skew" },
  { file: "search/pagination.test.ts", case: "returns stable cursors across pages" },
  { file: "billing/proration.test.ts", case: "prorates an upgrade on the last day of the month" },
  { file: "invoices/pdf-render.test.ts", case: "renders a multi-page invoice" },
  { file: "uploads/resumable.test.ts", case: "resumes an interrupted upload" },
  { file: "webhooks/signature.test.ts", case: "rejects a replayed signature" },
  { file: "sessions/expiry.test.ts", case: "expires idle sessions after 30 minutes" },
  { file: "cart/concurrency.test.ts", case: "merges two carts edited at once" },
  { file: "notifications/digest.test.ts", case: "batches notifications into a daily digest" },
  { file: "exports/csv-export.test.ts", case: "streams a large CSV export" },
  { file: "reports/timezones.test.ts", case: "groups orders by local day across DST" },
  { file: "i18n/locale-fallback.test.ts", case: "falls back from pt-BR to pt" },
  { file: "ledger/idempotency.test.ts", case: "ignores a duplicate posting" },
  { file: "pricing/currency-rounding.test.ts", case: "rounds JPY totals without decimals" },
  { file: "inventory/reservation.test.ts", case: "releases a reservation when payment fails" },
  { file: "media/thumbnail-cache.test.ts", case: "serves a cached thumbnail after resize" },
  { file: "fraud/score-threshold.test.ts", case: "blocks an order above the risk threshold" },
  { file: "shipping/rate-quotes.test.ts", case: "quotes rates from two carriers" },
  { file: "admin/bulk-edit.test.ts", case: "bulk edits a thousand products" },
  { file: "events/ordering.test.ts", case: "delivers events in partition order" },
  { file: "mailer/bounce-handling.test.ts", case: "suppresses an address after a hard bounce" },
  { file: "geo/ip-lookup.test.ts", case: "resolves an IPv6 address to a country" },
  { file: "web/checkout-flow.spec.ts", case: "completes checkout with a saved card" },
  { file: "web/login.spec.ts", case: "shows the MFA prompt" },
  { file: "sms/delivery-receipts.test.ts", case: "marks a message delivered from a receipt" },
];
const FLAKY_REASONS = [
  "it depends on the wall clock instead of a frozen fake timer",
  "two tests share the same Redis database and race",
  "the test container for Postgres sometimes starts slower than the 10 second wait",
  "it asserts on the order of a Promise.all result",
  "the mocked S3 server drops the connection under load",
  "it leaks a listening port into the next test file",
  "the headless browser animation is not disabled",
  "a fixture uses a random UUID that occasionally sorts first",
  "DNS lookups for localhost resolve to IPv6 on some CI runners",
  "it reads a file that the previous test deletes asynchronously",
] as const;

const CRON_JOBS: { job: string; svc: string }[] = [
  { job: "nightly-invoice-run", svc: "billing-api" },
  { job: "search-reindex", svc: "search-indexer" },
  { job: "stale-session-sweep", svc: "session-store" },
  { job: "usage-rollup", svc: "metrics-gateway" },
  { job: "backup-verify", svc: "scheduler" },
  { job: "tls-cert-renewal", svc: "auth-gateway" },
  { job: "sitemap-build", svc: "checkout-web" },
  { job: "currency-rates-refresh", svc: "pricing-engine" },
  { job: "orphaned-upload-cleanup", svc: "media-proxy" },
  { job: "weekly-digest-email", svc: "mailer" },
  { job: "ledger-reconciliation", svc: "ledger" },
  { job: "inventory-snapshot", svc: "inventory-sync" },
  { job: "fraud-model-retrain", svc: "fraud-scorer" },
  { job: "gdpr-erasure-batch", svc: "identity" },
  { job: "carrier-rates-sync", svc: "shipping-quotes" },
  { job: "recommendations-refresh", svc: "recommendations" },
  { job: "dunning-reminders", svc: "billing-api" },
  { job: "audit-log-archive", svc: "audit-log" },
  { job: "tenant-usage-report", svc: "report-builder" },
  { job: "webhook-retry-sweep", svc: "webhook-relay" },
];
const CRON_TIMES = ["01:30", "02:00", "03:15", "04:45", "05:00", "06:30", "22:00", "23:40"] as const;

const FLAGS: { flag: string; feature: string }[] = [
  { flag: "new-checkout-flow", feature: "the one-page checkout" },
  { flag: "async-invoice-pdf", feature: "rendering invoice PDFs in the background" },
  { flag: "search-typo-tolerance", feature: "fuzzy matching in product search" },
  { flag: "sso-enforcement", feature: "mandatory SSO for enterprise tenants" },
  { flag: "bulk-edit-v2", feature: "the rewritten bulk product editor" },
  { flag: "smart-retries", feature: "card payment retries timed by the issuer's hints" },
  { flag: "multi-currency-cart", feature: "carts priced in the shopper's currency" },
  { flag: "passkey-login", feature: "passwordless sign-in with passkeys" },
  { flag: "usage-based-billing", feature: "metered billing for API calls" },
  { flag: "dark-mode", feature: "the dark theme in the admin console" },
  { flag: "sms-2fa-fallback", feature: "SMS codes when the authenticator app is lost" },
  { flag: "realtime-inventory", feature: "stock levels pushed over websockets" },
  { flag: "ai-product-descriptions", feature: "generated product descriptions" },
  { flag: "split-shipments", feature: "shipping one order in several parcels" },
  { flag: "webhooks-v2", feature: "signed webhooks with retries" },
  { flag: "tenant-data-export", feature: "self-service export of a tenant's data" },
  { flag: "fraud-3ds-challenge", feature: "3-D Secure challenges for risky orders" },
  { flag: "saved-carts", feature: "carts that survive logout" },
];

const PINS: { pkg: string; reasons: string[] }[] = [
  { pkg: "typescript", reasons: ["a newer version breaks our decorators in the ORM models", "the build emits different declaration files"] },
  { pkg: "prisma", reasons: ["the next major changes how the connection pool is sized", "the migration engine regressed on MySQL 5.7"] },
  { pkg: "react-query", reasons: ["v5 renamed cacheTime and we have not migrated", "its devtools crash our Storybook build"] },
  { pkg: "node-fetch", reasons: ["v3 is ESM only and the worker bundle is still CommonJS"] },
  { pkg: "aws-sdk", reasons: ["v3 needs a rewrite of the upload presigner", "the S3 multipart defaults changed"] },
  { pkg: "eslint", reasons: ["the flat config migration is not done", "our custom rules use the removed context API"] },
  { pkg: "sharp", reasons: ["newer libvips builds change the thumbnail colour profile", "the prebuilt binary does not load on the old CI image"] },
  { pkg: "pg", reasons: ["a newer version changes how BIGINT is parsed", "it breaks PgBouncer transaction mode"] },
  { pkg: "ioredis", reasons: ["cluster mode reconnects in a loop on newer versions"] },
  { pkg: "date-fns", reasons: ["v3 changed the format tokens used across reports"] },
  { pkg: "webpack", reasons: ["the module federation plugin is not compatible yet"] },
  { pkg: "openapi-generator-cli", reasons: ["newer templates rename the enum types in the client"] },
  { pkg: "kafkajs", reasons: ["a newer release changes the consumer rebalance timing"] },
  { pkg: "puppeteer", reasons: ["the bundled Chrome version renders invoice fonts differently"] },
];

const SECRETS: { thing: string; slug: string }[] = [
  { thing: "Stripe test-mode API key", slug: "stripe-test" },
  { thing: "SendGrid API key", slug: "sendgrid" },
  { thing: "Twilio auth token", slug: "twilio" },
  { thing: "Mapbox access token", slug: "mapbox" },
  { thing: "GitHub App private key", slug: "github-app" },
  { thing: "Datadog API key", slug: "datadog" },
  { thing: "PagerDuty integration key", slug: "pagerduty" },
  { thing: "Algolia admin key", slug: "algolia" },
  { thing: "Snowflake service account password", slug: "snowflake" },
  { thing: "Sentry auth token", slug: "sentry" },
  { thing: "Slack bot token", slug: "slack-bot" },
  { thing: "Apple push notification certificate", slug: "apns" },
  { thing: "EasyPost shipping API key", slug: "easypost" },
  { thing: "OpenSearch admin password", slug: "opensearch" },
];

const ONCALL = ["payments", "platform", "identity", "search", "messaging", "storefront", "data", "infra"] as const;
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"] as const;
const HOURS = ["09:00", "10:00", "11:00", "14:00", "16:00", "17:30"] as const;

/** House rules: no value to correct, asked about in other words. */
const RULES: { key: string; text: string; question: string }[] = [
  { key: "migrations-compat", text: "Database migrations must be backwards compatible: add a column in one deploy and drop the old one in a later deploy.", question: "Is it okay to drop a column in the same deploy that stops reading it?" },
  { key: "pr-size", text: "Pull requests over 600 changed lines need a second reviewer from the owning team.", question: "How many reviewers does a big pull request need?" },
  { key: "no-friday-migrations", text: "Never run schema migrations on a Friday; the DBA team is not on call at weekends.", question: "Can I run a schema migration on Friday afternoon?" },
  { key: "commit-style", text: "Commit messages follow Conventional Commits (feat:, fix:, chore:) because the changelog is generated from them.", question: "What format should my commit messages be in?" },
  { key: "feature-flag-cleanup", text: "A feature flag that has been at 100% for two weeks must be removed along with its dead code path.", question: "When should an old feature flag be cleaned up?" },
  { key: "secrets-in-logs", text: "Never log request bodies from the payments services; they can contain card numbers.", question: "Am I allowed to log the request body in a payments handler?" },
  { key: "hotfix-branches", text: "Hotfixes branch from the latest release tag, not from main, and are merged back into main afterwards.", question: "Which branch should a hotfix start from?" },
  { key: "api-versioning", text: "Breaking changes to the public API need a new version prefix (/v3/) and a six month deprecation of the old one.", question: "How do we handle a breaking change in the public API?" },
  { key: "test-data-pii", text: "Test fixtures must not contain real customer emails or names; use the faker-based factories instead.", question: "Can I copy real customer data into a test fixture?" },
  { key: "incident-postmortem", text: "Every SEV1 or SEV2 incident gets a written postmortem within five working days.", question: "How soon is a postmortem due after a SEV2?" },
  { key: "dependency-updates", text: "Renovate opens dependency update PRs on Mondays; merge the green ones by Wednesday.", question: "When do the automated dependency bump PRs arrive?" },
  { key: "node-version", text: "All services run on Node 20 LTS; the version is pinned in .nvmrc at the repo root.", question: "Which Node version should I use for the services?" },
  { key: "code-freeze", text: "There is a code freeze from 20 December to 3 January; only hotfixes approved by the incident commander ship.", question: "Can we ship features over the Christmas holidays?" },
  { key: "staging-data-reset", text: "The staging database is restored from an anonymised production snapshot every Sunday night.", question: "How often is the staging DB refreshed from prod?" },
];

/* ---------------------------------------------------------------- generators */

interface Entry {
  key: string;
  tags: string[];
  text: string;
  /** The later, different value; null when nothing about it is corrected. */
  correction: string | null;
  question: string;
  /** What the question asks about. */
  kind: string;
  /** What names the fact's subject (a service, a variable, a job...): a described question holds none of it. */
  names: string[];
  /** The same question naming none of `names`, asked as kind `${kind}, described`. */
  described?: string;
}

function upperSnake(svc: string): string {
  return svc.toUpperCase().replace(/-/g, "_");
}

function serviceEntries(rng: Rng): Entry[] {
  const out: Entry[] = [];
  const ports = shuffle(rng, Array.from({ length: 60 }, (_, i) => 3000 + i * 7 + int(rng, 0, 5)));
  SERVICES.forEach((svc, i) => {
    const v = (extra: Record<string, string | number>) => ({ svc, ...extra });
    const tag = `svc:${svc}`;
    const what = ABOUT[svc];
    const described = (templates: string[], extra: Record<string, string | number> = {}) => fill(pick(rng, templates), { what, ...extra });
    // Port.
    {
      const p = ports[i]!;
      const p2 = ports[i + SERVICES.length]!;
      out.push({
        key: `port:${svc}`,
        tags: ["ports", tag],
        text: fill(pick(rng, ["{svc} listens on port {p} when you run it locally with docker compose.", "Local dev: the {svc} container exposes port {p} on localhost.", "When started with `make dev`, {svc} serves HTTP on port {p}."]), v({ p })),
        correction: fill(pick(rng, ["{svc} now listens on port {p} locally; the old port clashed with the {other} container.", "Update: the local port for {svc} changed to {p}."]), v({ p: p2, other: other(rng, SERVICES, svc) })),
        question: fill(pick(rng, ["Which port does {svc} use on my machine?", "What localhost port do I hit to reach {svc} in dev?", "{svc} is running locally but what port is it on?", "What's the port number for a local {svc}?"]), v({})),
        kind: "port",
        names: [svc],
        described: described(["Which port does {what} listen on locally?", "I started {what} on my laptop; where do I point the browser?", "What local port is {what} served on?"]),
      });
    }
    // Owner.
    {
      const person = pick(rng, PEOPLE);
      const team = pick(rng, TEAMS);
      out.push({
        key: `owner:${svc}`,
        tags: ["ownership", tag],
        text: fill(pick(rng, ["{svc} is owned by {person} on the {team} team.", "{person} ({team}) is the maintainer of {svc}; ask in #{team}-eng before changing its API.", "Questions about {svc} go to {person}, who leads the {team} team that runs it."]), v({ person, team })),
        correction: fill(pick(rng, ["{svc} has a new owner: {person} from the {team} team took it over.", "Ownership of {svc} moved to {person} ({team})."]), v({ person: other(rng, PEOPLE, person), team: other(rng, TEAMS, team) })),
        question: fill(pick(rng, ["Who owns {svc}?", "Who is the right person to ask about {svc}?", "Which team is responsible for {svc}?", "Who maintains {svc} these days?"]), v({})),
        kind: "owner",
        names: [svc],
        described: described(["Who is in charge of {what}?", "Which team looks after {what}?", "Who should review a change to {what}?"]),
      });
    }
    // Deploy rule.
    {
      const window = pick(rng, WINDOWS);
      out.push({
        key: `deploy:${svc}`,
        tags: ["deploy", tag],
        text: fill(pick(rng, ["{svc} may only be deployed to production {window}; anything else needs sign-off from {person}.", "Production deploys of {svc} are allowed {window}.", "Ship {svc} to prod {window} — it shares a database with {other}."]), v({ window, person: pick(rng, PEOPLE), other: other(rng, SERVICES, svc) })),
        correction: fill(pick(rng, ["New deploy window for {svc}: {window}.", "{svc} production releases are now restricted to {window}."]), v({ window: other(rng, WINDOWS, window) })),
        question: fill(pick(rng, ["When am I allowed to deploy {svc} to production?", "Can I ship {svc} to prod on a Friday afternoon?", "What is the release window for {svc}?", "What are the rules for pushing {svc} to production?"]), v({})),
        kind: "deploy",
        names: [svc],
        described: described(["When can I release {what} to prod?", "Is there a window for shipping {what} to production?", "Can I roll out {what} today?"]),
      });
    }
    // Database.
    {
      const engine = pick(rng, DB_ENGINES);
      const cluster = pick(rng, CLUSTERS);
      const dbname = svc.replace(/-/g, "_");
      out.push({
        key: `db:${svc}`,
        tags: ["database", tag],
        text: fill(pick(rng, ["{svc} stores its data in the {engine} database `{dbname}` on the {cluster} cluster.", "The {svc} tables live in {engine} on {cluster}, schema `{dbname}`.", "{svc} persists everything to {engine} ({cluster}); there is no separate read replica."]), v({ engine, cluster, dbname })),
        correction: fill("{svc} was migrated to {engine} on the {cluster} cluster; the old database is read-only.", v({ engine: other(rng, DB_ENGINES, engine), cluster: other(rng, CLUSTERS, cluster) })),
        question: fill(pick(rng, ["Which database does {svc} write to?", "Where does {svc} keep its data?", "What DB and cluster is {svc} backed by?", "Where are the {svc} tables stored?"]), v({})),
        kind: "database",
        names: [svc],
        described: described(["Which database is behind {what}?", "Where does {what} persist its records?", "What cluster holds the data of {what}?"]),
      });
    }
    // Dashboard.
    {
      const slug = `${svc}-${int(rng, 100, 999)}`;
      out.push({
        key: `dash:${svc}`,
        tags: ["observability", tag],
        text: fill(pick(rng, ["The Grafana dashboard for {svc} is grafana.internal/d/{slug}.", "{svc} metrics (latency, error rate, queue depth) are on the Grafana board grafana.internal/d/{slug}.", "To watch {svc} in production, open the Datadog dashboard '{svc} overview'."]), v({ slug })),
        correction: fill("The {svc} dashboard moved to grafana.internal/d/{slug}; the old one is no longer updated.", v({ slug: `${svc}-v2-${int(rng, 100, 999)}` })),
        question: fill(pick(rng, ["Where can I see {svc}'s metrics?", "Is there a dashboard for monitoring {svc}?", "Where do I look at {svc} latency and error graphs?", "Which Grafana board shows {svc}?"]), v({})),
        kind: "dashboard",
        names: [svc],
        described: described(["Where are the graphs for {what}?", "How do I watch {what} in production?", "Which board shows the error rate of {what}?"]),
      });
    }
    // One or two config values.
    for (const s of shuffle(rng, SETTINGS).slice(0, 1 + (rng() < 0.5 ? 1 : 0))) {
      const value = pick(rng, s.values);
      out.push({
        key: `config:${svc}:${s.name.replace(/ /g, "-").toLowerCase()}`,
        tags: ["config", tag],
        text: fill(pick(rng, ["{svc}'s {setting} is {value}, set in config/{svc}.yaml.", "In production, {svc} runs with a {setting} of {value}.", "We set the {setting} of {svc} to {value} after the {incident} incident."]), v({ setting: s.name, value, incident: pick(rng, INCIDENTS) })),
        correction: fill(pick(rng, ["{svc}'s {setting} was changed to {value}.", "As of the {month} release, {svc} uses a {setting} of {value}."]), v({ setting: s.name, value: other(rng, s.values, value), month: pick(rng, MONTHS) })),
        question: fill(pick(rng, s.questions), v({})),
        kind: "config",
        names: [svc],
        described: fill(pick(rng, s.questions), { svc: what }),
      });
    }
    // One or two environment variables.
    for (const e of shuffle(rng, ENV_SUFFIXES).slice(0, 1 + (rng() < 0.3 ? 1 : 0))) {
      const VAR = `${upperSnake(svc)}_${e.suffix}`;
      const values = e.values(svc.replace(/-/g, "_"));
      const value = pick(rng, values);
      out.push({
        key: `env:${VAR}`,
        tags: ["env", tag],
        text: fill(pick(rng, ["{VAR} must be set to {value} for {svc} to start locally.", "Set {VAR}={value} in .env.local, otherwise {svc} {failure}.", "{svc} reads {VAR}; in staging it is {value}."]), v({ VAR, value, failure: e.failure })),
        correction: fill(pick(rng, ["{VAR} changed: use {value} now.", "{VAR} is now {value}; the old value stopped working after the infra migration."]), v({ VAR, value: values.length > 1 ? other(rng, values, value) : `${value}-v2` })),
        question: fill(pick(rng, ["What should I put in {VAR}?", "What value does {VAR} need for local development?", "{svc} won't boot — what's {VAR} supposed to be?", "Which value is {VAR} set to in staging?"]), v({ VAR })),
        kind: "env",
        names: [VAR, svc],
        described: described(["What {setting} does {what} need in its environment?", "Which environment variable sets the {setting} of {what}, and to what?", "{what} will not start locally: what is its {setting} supposed to be?"], { setting: e.suffix.toLowerCase().replace(/_/g, " ") }),
      });
    }
  });
  return out;
}

/** What each service is: kept whatever the size, as the described questions rest on them. */
function aboutEntries(rng: Rng): Entry[] {
  return SERVICES.map((svc) => ({
    key: `about:${svc}`,
    tags: ["services", `svc:${svc}`],
    text: fill(pick(rng, ["{svc} is {what}.", "In the codebase, {what} is called {svc}.", "{svc}: {what}, in services/{svc}."]), { svc, what: ABOUT[svc] }),
    correction: null,
    question: fill(pick(rng, ["What does {svc} do?", "What is {svc} for?"]), { svc }),
    kind: "service",
    names: [svc],
  }));
}

function otherEntries(rng: Rng): Entry[] {
  const out: Entry[] = [];
  for (const c of COMMANDS)
    out.push({
      key: `cmd:${c.key}`,
      tags: ["commands"],
      text: fill(pick(rng, c.facts), { cmd: c.cmds[0] }),
      correction: `To ${c.task}, run \`${c.cmds[1]}\` now; \`${c.cmds[0]}\` was removed.`,
      question: pick(rng, c.questions),
      kind: "command",
      names: [c.cmds[0], c.cmds[1]],
    });
  for (const f of FLAKY) {
    const reason = pick(rng, FLAKY_REASONS);
    const v = { file: f.file, case: f.case, reason, n: int(rng, 5, 40) };
    out.push({
      key: `flaky:${f.file}`,
      tags: ["flaky", "ci"],
      text: fill(pick(rng, ["`{file}` ('{case}') is flaky on CI: it fails about 1 in {n} runs because {reason}.", "Known flake: the '{case}' test in {file} fails intermittently because {reason}; rerun it rather than debugging.", "'{case}' in {file} is quarantined as flaky — {reason}."]), v),
      correction: fill("The real cause of the flaky '{case}' test in {file}: {reason}, not what we thought before.", { ...v, reason: other(rng, FLAKY_REASONS, reason) }),
      question: fill(pick(rng, ["Why does the '{case}' test keep failing randomly in CI?", "Is {file} a known flaky test?", "The test '{case}' failed on my PR but passes locally — is that expected?", "What makes {file} fail now and then?"]), v),
      kind: "flaky test",
      names: [f.file, f.case],
    });
  }
  for (const j of CRON_JOBS) {
    const time = pick(rng, CRON_TIMES);
    const v = { job: j.job, svc: j.svc, time, n: int(rng, 2, 90) };
    out.push({
      key: `cron:${j.job}`,
      tags: ["cron", `svc:${j.svc}`],
      text: fill(pick(rng, ["The {job} cron runs at {time} UTC and usually takes {n} minutes.", "{job} is scheduled daily at {time} UTC by the {svc} scheduler.", "{job} starts every night at {time} UTC; it is skipped if a deploy is in progress."]), v),
      correction: fill("{job} was rescheduled to {time} UTC so it no longer overlaps the backups.", { ...v, time: other(rng, CRON_TIMES, time) }),
      question: fill(pick(rng, ["What time does the {job} job kick off?", "When is {job} scheduled to run?", "How often does {job} run, and at what hour?", "At what time of day does {job} start?"]), v),
      kind: "cron",
      names: [j.job],
      described: fill(pick(rng, ["At what hour does the scheduled task of {what} fire?", "When does the nightly batch of {what} happen?", "What time does {what} run its cron?"]), { what: ABOUT[j.svc as keyof typeof ABOUT] }),
    });
  }
  for (const f of FLAGS) {
    const pct = pick(rng, [0, 5, 10, 25, 50, 100]);
    const v = { flag: f.flag, feature: f.feature, pct, person: pick(rng, PEOPLE) };
    out.push({
      key: `flag:${f.flag}`,
      tags: ["flags"],
      text: fill(pick(rng, ["The feature flag `{flag}` gates {feature}; it is enabled for {pct}% of tenants.", "`{flag}` ({feature}) is rolled out to {pct}% of production; {person} decides when it goes further.", "{feature} is behind the {flag} flag, currently at {pct}% in production."]), v),
      correction: fill("`{flag}` is now at {pct}% in production.", { ...v, pct: other(rng, [0, 5, 10, 25, 50, 100], pct) }),
      question: fill(pick(rng, ["How far along is the rollout of {flag}?", "Is {flag} turned on in production?", "What percentage of customers have {flag} enabled?", "Who gets {flag} right now?"]), v),
      kind: "flag",
      names: [f.flag],
      described: fill(pick(rng, ["How many tenants get {feature} so far?", "Is {feature} live for everyone yet?", "How widely is {feature} rolled out?"]), v),
    });
  }
  for (const p of PINS) {
    const major = int(rng, 2, 9);
    const ver = `${major}.${int(rng, 0, 20)}.${int(rng, 0, 9)}`;
    const v = { pkg: p.pkg, ver, reason: pick(rng, p.reasons), svc: pick(rng, SERVICES) };
    out.push({
      key: `pin:${p.pkg}`,
      tags: ["dependencies"],
      text: fill(pick(rng, ["{pkg} is pinned to {ver} in the monorepo: {reason}.", "Do not upgrade {pkg} past {ver}; {reason}.", "We hold {pkg} at {ver} because {reason}."]), v),
      correction: fill("The {pkg} pin was raised to {ver}; the old problem is fixed upstream.", { ...v, ver: `${major + 1}.${int(rng, 0, 5)}.0` }),
      question: fill(pick(rng, ["Why can't we bump {pkg}?", "Which version of {pkg} are we stuck on?", "Is it safe to upgrade {pkg} to the latest release?", "What's holding {pkg} back at an old version?"]), v),
      kind: "pinned dependency",
      names: [p.pkg],
    });
  }
  for (const s of SECRETS) {
    const v = { thing: s.thing, slug: s.slug, vault: pick(rng, ["Engineering", "Platform", "Shared-CI"]) };
    out.push({
      key: `secret:${s.slug}`,
      tags: ["secrets"],
      text: fill(pick(rng, ["The {thing} lives in Vault under secret/dev/{slug}.", "Get the {thing} from the 1Password vault '{vault}'; never commit it.", "{thing}: stored in Vault at secret/shared/{slug}, rotated quarterly."]), v),
      correction: fill("The {thing} was moved to Vault path secret/teams/{slug}; the old location is empty.", v),
      question: fill(pick(rng, ["Where do I find the {thing}?", "Where is the {thing} kept?", "I need the {thing} for local testing — where do I get it?"]), v),
      kind: "secret",
      names: [s.slug],
    });
  }
  for (const team of ONCALL) {
    const day = pick(rng, DAYS);
    const hour = pick(rng, HOURS);
    const v = { team, day, hour };
    out.push({
      key: `oncall:${team}`,
      tags: ["oncall"],
      text: fill(pick(rng, ["The {team} on-call rotation hands over every {day} at {hour} in PagerDuty.", "{team} on-call shifts change on {day} at {hour}; the outgoing person writes a handover note."]), v),
      correction: fill("The {team} on-call handover moved to {day} at {hour}.", { ...v, day: other(rng, DAYS, day), hour: other(rng, HOURS, hour) }),
      question: fill(pick(rng, ["When does the {team} on-call shift change?", "What day is the {team} on-call handoff?", "When does {team} on-call rotate?"]), v),
      kind: "on-call",
      names: [team],
    });
  }
  for (const r of RULES) out.push({ key: `rule:${r.key}`, tags: ["rules"], text: r.text, correction: null, question: r.question, kind: "house rule", names: [] });
  return out;
}

/** A text again, as an agent might write it a second time: the same, or in another case or spacing. */
function varied(rng: Rng, text: string): string {
  switch (int(rng, 0, 5)) {
    case 0:
      return text;
    case 1:
      return text.toLowerCase();
    case 2:
      return text.toUpperCase();
    case 3:
      return `  ${text.replace(/ /g, "  ")}`;
    case 4:
      return `${text.replace(/ (\S+) /, " $1\n")}\t`;
    default:
      return text.charAt(0).toLowerCase() + text.slice(1) + " ";
  }
}

const norm = (s: string) => s.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
const words = (s: string) => ` ${s.toLowerCase().match(/[\p{L}\p{N}]+/gu)?.join(" ") ?? ""} `;

/**
 * The set for `size` facts (at most the number of entries there are) and every service's
 * `about` fact, about a fifth corrected and an eighth retained again as duplicates; each
 * fact asked once as named, and once as described where it can be.
 */
export function memorySet(size = DEFAULT_SIZE, seed = DEFAULT_SEED): MemorySet {
  const rng = mulberry32(seed);
  const pool = [...serviceEntries(rng), ...otherEntries(rng)];
  if (size > pool.length) throw new Error(`at most ${pool.length} facts`);
  const chosen = shuffle(rng, [...aboutEntries(rng), ...shuffle(rng, pool).slice(0, size)]);
  const correctable = chosen.filter((e) => e.correction !== null);
  const corrected = new Set(shuffle(rng, correctable).slice(0, Math.round(size * 0.19)).map((e) => e.key));
  const facts = chosen.map((e) => ({ key: e.key, text: e.text, tags: e.tags }));
  const corrections = shuffle(rng, chosen.filter((e) => corrected.has(e.key))).map((e) => ({ key: e.key, text: e.correction! }));
  const asked = chosen.flatMap((e) => [
    { question: e.question, answerKey: e.key, kind: e.kind },
    ...(e.described === undefined ? [] : [{ question: e.described, answerKey: e.key, kind: `${e.kind}, described` }]),
  ]);
  for (const q of asked.filter((q) => q.kind.endsWith(", described"))) {
    const named = chosen.find((e) => e.key === q.answerKey)!.names.find((n) => words(q.question).includes(words(n)));
    if (named) throw new Error(`a described question names ${named}: ${q.question}`);
  }
  const questions = shuffle(rng, asked);
  // Duplicates of what is current: a retired text retained again would be a new fact, not a duplicate.
  const current = [...chosen.filter((e) => !corrected.has(e.key)).map((e) => e.text), ...corrections.map((c) => c.text)];
  const duplicates = shuffle(rng, current).slice(0, Math.round(size * 0.125)).map((t) => varied(rng, t));
  const seen = new Set<string>();
  for (const t of [...facts.map((f) => f.text), ...corrections.map((c) => c.text)]) {
    if (seen.has(norm(t))) throw new Error(`two memories with the same text: ${t}`);
    seen.add(norm(t));
  }
  if (new Set(facts.map((f) => f.key)).size !== facts.length) throw new Error("two facts with the same key");
  return { facts, questions, corrections, duplicates };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const size = Number(process.argv[2] ?? DEFAULT_SIZE);
  process.stdout.write(`${JSON.stringify(memorySet(size), null, 2)}\n`);
}
