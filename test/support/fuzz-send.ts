import { Agent, request } from "node:http";
import type { FuzzRequest } from "./fuzz-cases.js";

export interface FuzzAnswer {
  status: number;
  contentType: string;
  retryAfter: string | undefined;
  /** The body as text (an event stream's is not read: the request is dropped once its head is in). */
  text: string;
  /** The body was longer than what was kept of it. */
  cut: boolean;
}

/** Most of an answer the checks need; larger ones are cut here. */
const KEEP_BYTES = 64 * 1024;

/**
 * Sends one request as a well-framed HTTP/1.1 message with the front's own `Host` and no
 * `Origin` (a local program, not a browser). Event streams are closed once their head arrives.
 */
export function send(base: URL, agent: Agent, req: FuzzRequest, timeoutMs: number): Promise<FuzzAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: base.host, ...req.headers };
    if (req.body) headers["content-length"] = String(req.body.byteLength);
    const out = request(
      { host: base.hostname, port: base.port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs },
      (res) => {
        const answer = { status: res.statusCode!, contentType: String(res.headers["content-type"] ?? ""), retryAfter: res.headers["retry-after"] as string | undefined };
        if (answer.contentType.startsWith("text/event-stream")) {
          res.destroy();
          out.destroy();
          return resolve({ ...answer, text: "", cut: true });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (size < KEEP_BYTES) chunks.push(chunk);
          size += chunk.byteLength;
        });
        res.on("end", () => resolve({ ...answer, text: Buffer.concat(chunks).toString("utf8"), cut: size > KEEP_BYTES }));
        res.on("error", reject);
      },
    );
    out.on("timeout", () => out.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    out.on("error", reject);
    out.end(req.body);
  });
}

/**
 * 503s the fuzz accepts: states of the host that a caller waits out, each with
 * `retry-after`. `host-load-unknown` may answer whatever is asked (the front has not
 * measured the machine yet); `draining` only while the fuzz itself has armed the drain.
 * Every other 5xx fails: malformed input is the caller's fault, never the server's.
 */
export const HOST_STATES = ["host-load-unknown"];
export const DRAINING_STATES = [...HOST_STATES, "draining"];

/** Why an answer breaks the rules, or null when it keeps them. */
export function problemWith(req: FuzzRequest, res: FuzzAnswer, waitOutCodes: readonly string[]): string | null {
  let body: unknown;
  const isJson = /^application\/json\b/.test(res.contentType);
  if (isJson && req.method !== "HEAD" && !res.cut) {
    try {
      body = JSON.parse(res.text);
    } catch {
      return `answered ${res.status} with content-type ${res.contentType} that is not JSON: ${res.text.slice(0, 200)}`;
    }
  }
  const code = (body as { code?: unknown } | undefined)?.code;
  if (res.status >= 500) {
    const waitOut = res.status === 503 && typeof code === "string" && waitOutCodes.includes(code) && res.retryAfter;
    // RFC 9110's answer to a method the server does not know, with the methods it does know.
    const unknownMethod = res.status === 501 && code === "method-not-implemented";
    if (!waitOut && !unknownMethod)
      return `answered ${res.status}: ${res.text.slice(0, 300)}`;
  }
  if (res.status < 300 || req.method === "HEAD") return null;
  if (!isJson) return `answered ${res.status} as ${res.contentType || "no content-type"}, not JSON: ${res.text.slice(0, 200)}`;
  const error = (body as { error?: unknown } | null)?.error;
  // The completions routes answer OpenAI's error shape, `{error: {message, type, code}}`, for OpenAI's SDKs.
  const openAi = req.path.startsWith("/v1/") && typeof (error as { message?: unknown } | null)?.message === "string";
  if (typeof error !== "string" && !openAi) return `answered ${res.status} without a string error: ${res.text.slice(0, 200)}`;
  // Every refusal carries a code a program can branch on, the simple input errors too (docs/api.md "Errors").
  const refusalCode = openAi ? (error as { code?: unknown }).code : code;
  if (!res.cut && (typeof refusalCode !== "string" || refusalCode === "")) return `answered ${res.status} without a code: ${res.text.slice(0, 200)}`;
  return null;
}
