import { answerSchemaOf, routeRequest, type RouteAnswer, type RouteInput, type RouteKey } from "./routes.js";
import type { ErrorBody } from "../src/api/errors.js";

interface Issue {
  path: PropertyKey[];
  message: string;
  errors?: Issue[][];
}

/** The issue that says most: an answer of one of several shapes (a page either way) names the field that failed in the nearest one. */
function deepest(issues: readonly Issue[]): { path: PropertyKey[]; message: string } {
  let best: { path: PropertyKey[]; message: string } = issues[0]!;
  for (const issue of issues) {
    const inner = issue.errors?.map((branch) => deepest(branch.map((i) => ({ ...i, path: [...issue.path, ...i.path] })))) ?? [issue];
    for (const candidate of inner) if (candidate.path.length > best.path.length) best = candidate;
  }
  return best;
}

/** A refusal that is not an error, answered with a success status: `{error, code}`. */
function isRefusal(body: unknown): boolean {
  return typeof body === "object" && body !== null && typeof (body as ErrorBody).error === "string" && typeof (body as ErrorBody).code === "string";
}

/** The client library's three failure kinds (SPEC "Errors"). */
export class RuntimeError extends Error {
  constructor(
    readonly kind: "transport" | "rejected" | "decode",
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly details?: ErrorBody,
  ) {
    super(message);
  }
}

export interface ClientOptions {
  /** Runtime origin, optionally with a path prefix. Default: SERVICE_AGENTS_URL or http://127.0.0.1:4741. */
  baseUrl?: string;
  /** Polling interval and first reconnect delay. Default: SERVICE_AGENTS_POLL_MS or 2000. */
  pollMs?: number;
  /** Page size when catching up by tail. Default: SERVICE_AGENTS_TAIL_LIMIT or 200. */
  tailLimit?: number;
}

export type StreamStatus = "live" | "lost" | "unsupported" | "gone";

/** The configuration variables where the runtime has an environment (Node, Deno, Bun); none in a browser. */
const env = (name: string): string | undefined => (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });
}

/** The runtime's answers as the client reads them, and any route by its declaration (`route`). */
export class Transport {
  readonly baseUrl: string;
  readonly pollMs: number;
  readonly tailLimit: number;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? env("SERVICE_AGENTS_URL") ?? "http://127.0.0.1:4741").replace(/\/+$/, "");
    this.pollMs = options.pollMs ?? Number(env("SERVICE_AGENTS_POLL_MS") ?? 2000);
    this.tailLimit = options.tailLimit ?? Number(env("SERVICE_AGENTS_TAIL_LIMIT") ?? 200);
  }

  /** The runtime's answer, whatever its status; no answer at all is a `transport` failure. */
  protected async request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    try {
      return await fetch(this.baseUrl + path, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw new RuntimeError("transport", `${method} ${path}: ${(err as Error).message}`);
    }
  }

  /** The answer as JSON: a refusal is a `rejected` failure, anything but a JSON object a `decode` one. */
  protected async decode(method: string, path: string, res: Response): Promise<unknown> {
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new RuntimeError("decode", `${method} ${path}: answer is not JSON (${res.status})`, res.status);
    }
    if (!res.ok) {
      const err = parsed as ErrorBody;
      throw new RuntimeError("rejected", err.error ?? `${method} ${path}: ${res.status}`, res.status, err.code, err);
    }
    // Every route answers a JSON object.
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new RuntimeError("decode", `${method} ${path}: the answer is not a JSON object (${res.status})`, res.status);
    return parsed;
  }

  /**
   * Any route of the contract, by its declaration (`METHOD /path`): the path's parameters,
   * query and body typed by its schemas, and the answer checked against its declared schema,
   * so one of the wrong shape is a `decode` failure. A refusal that is not an error (an
   * approval already closed) comes back as its body.
   */
  async route<K extends RouteKey>(key: K, input: RouteInput<K>): Promise<RouteAnswer<K>> {
    const { method, path, body } = routeRequest(key, input);
    const res = await this.request(method, path, body, input.headers);
    const parsed = await this.decode(method, path, res);
    const schema = answerSchemaOf(key, res.status);
    const result = schema?.safeParse(parsed);
    if (result && !result.success && !isRefusal(parsed)) {
      const issue = deepest(result.error.issues);
      throw new RuntimeError("decode", `${method} ${path}: the answer does not match its schema (${issue.path.join(".") || "the answer"}: ${issue.message})`);
    }
    return parsed as RouteAnswer<K>;
  }
}
