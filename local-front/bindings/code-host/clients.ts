import { Octokit } from "@octokit/rest";
import { GITHUB_API_URL, type CodeHostAccount } from "../../../src/api/accounts.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome, type Refusal } from "../../../src/api/outcome.js";

/** How long one call to the code host may take before the read fails. */
const CALL_TIMEOUT_MS = 20_000;

export interface HostClient {
  octokit: Octokit;
  /** The account's id, or `simulator`: named in refusals, never its token. */
  account: string;
  /** The login the token acts as (`GET /user`), asked once. */
  login(): Promise<Outcome<string>>;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/** Per-call options every request carries: a deadline, so a host that hangs fails the read. */
export const deadline = () => ({ request: { signal: AbortSignal.timeout(CALL_TIMEOUT_MS) } });

/**
 * The code host's clients, one per code-host account (docs/code-host.md): a repository's
 * owner picks the account that names it in `owners`, else the first that names no owner;
 * with no account, the code-host simulator when it runs. Tokens stay in these clients.
 */
export class HostClients {
  private readonly clients: { owners: Set<string>; client: HostClient }[];
  private readonly simulator: HostClient | null;

  constructor(accounts: CodeHostAccount[], simulator: { url: string; token: string } | null) {
    const make = (auth: string, baseUrl: string, account: string): HostClient => {
      const octokit = new Octokit({ auth, baseUrl, userAgent: "agent-runtime", log: quiet });
      let asked: Promise<Outcome<string>> | null = null;
      const client: HostClient = {
        octokit,
        account,
        login: () => {
          if (asked) return asked;
          const ask = onHost(client, "user", (o) => o.rest.users.getAuthenticated({ ...deadline() })).then((r) => (r.ok ? ok(r.value.data.login) : r));
          asked = ask;
          // A failed ask is asked again next time.
          void ask.then((r) => {
            if (!r.ok && asked === ask) asked = null;
          });
          return ask;
        },
      };
      return client;
    };
    this.clients = accounts.map((a) => ({ owners: new Set(a.owners.map((o) => o.toLowerCase())), client: make(a.token, (a.baseUrl ?? GITHUB_API_URL).replace(/\/$/, ""), a.id) }));
    this.simulator = simulator ? make(simulator.token, simulator.url, "simulator") : null;
  }

  /** Every client, the simulator last: what capabilities are asked of. */
  all(): HostClient[] {
    return [...this.clients.map((c) => c.client), ...(this.simulator ? [this.simulator] : [])];
  }

  forOwner(owner: string): Outcome<HostClient> {
    const o = owner.toLowerCase();
    const picked = this.clients.find((c) => c.owners.has(o))?.client ?? this.clients.find((c) => c.owners.size === 0)?.client ?? this.simulator;
    if (picked) return ok(picked);
    return refuse(
      503,
      this.clients.length === 0
        ? "no code host is configured: add a code-host account (provider github) to accounts.json, or run the code-host simulator (SERVICE_CODE_HOST_SIMULATOR)"
        : `no code-host account serves the owner ${owner}: add it to an account's owners in accounts.json`,
      CODES.codeHostUnavailable,
    );
  }
}

interface HttpFailure {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | undefined>; data?: unknown };
}

const isHttpFailure = (err: unknown): err is HttpFailure => typeof err === "object" && err !== null && typeof (err as { status?: unknown }).status === "number";

/**
 * The code host's refusal in the runtime's terms. A 401 is the runtime's token, not the
 * caller's, so it is a 503 that names the account; a rate limit keeps `Retry-After`.
 */
export function hostRefusal(err: unknown, client: HostClient, what: string): Refusal {
  // Octokit gives a failure without an answer (a timeout, a refused connection, TLS) status 500 too: the answer, not the status, says the host spoke.
  if (!isHttpFailure(err) || !err.response) {
    const cause = (err as { cause?: { name?: string; message?: string } })?.cause;
    const name = cause?.name ?? (err as Error)?.name;
    const timedOut = name === "TimeoutError" || name === "AbortError" || /aborted due to timeout/i.test(String((err as Error)?.message));
    // Octokit's message names the deepest cause (ECONNREFUSED, ENOTFOUND); its `cause` is only fetch's "fetch failed".
    return refuse(502, timedOut ? `the code host did not answer within ${CALL_TIMEOUT_MS / 1000} s` : `the code host could not be reached: ${brief((err as Error)?.message ?? String(err))}`, CODES.codeHostFailed);
  }
  const headers = err.response.headers ?? {};
  const data = err.response.data as { message?: unknown } | string | undefined;
  const said = brief(typeof data === "object" && data && typeof data.message === "string" ? data.message : err.message);
  // GitHub's primary limit says so in its headers; its secondary limits only in the message, sometimes without Retry-After.
  const limited = err.status === 429 || (err.status === 403 && (headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== undefined || /rate limit/i.test(said)));
  if (limited) {
    const reset = Number(headers["x-ratelimit-reset"]);
    const after = headers["retry-after"] ?? (headers["x-ratelimit-remaining"] === "0" && Number.isFinite(reset) && reset > 0 ? String(Math.max(1, Math.ceil(reset - Date.now() / 1000))) : "60");
    return refuse(429, `the code host's rate limit for account ${client.account} is spent: try again in ${after} s`, CODES.codeHostRateLimited, { retryAfterSeconds: Number(after) }, { "retry-after": after });
  }
  if (err.status === 404) return refuse(404, `the code host has no ${what}, or does not show it to account ${client.account}`, CODES.codeHostNotFound);
  if (err.status === 401) return refuse(503, `the code host refused account ${client.account} (401: ${said}): its token in accounts.json needs renewing`, CODES.codeHostCredentials);
  // The token is good but may not do this: GitHub names the permissions that would do for a fine-grained token or an app.
  if (err.status === 403) {
    const wanted = headers["x-accepted-github-permissions"];
    return refuse(
      503,
      `the code host does not let account ${client.account} do this on ${what} (403: ${said}${wanted ? `; it asks for ${brief(wanted)}` : ""}): its token in accounts.json needs more access`,
      CODES.codeHostForbidden,
    );
  }
  return refuse(502, `the code host answered ${err.status} for ${what}: ${said}`, CODES.codeHostFailed);
}

/** A host's words in a refusal: one line, and not a whole error page. */
function brief(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

/** One call to the code host, its failure a refusal. */
export async function onHost<T>(client: HostClient, what: string, call: (octokit: Octokit) => Promise<T>): Promise<Outcome<T>> {
  try {
    return ok(await call(client.octokit));
  } catch (err) {
    return hostRefusal(err, client, what);
  }
}
