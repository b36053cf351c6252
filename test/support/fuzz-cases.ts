import { PATH_PARAM } from "../../src/api/contract.js";
import { ODD_TEXT, randomText, type Rng } from "./fuzz-random.js";

/** One route of the router, as `app.routes` lists it. */
export interface Route {
  method: string;
  path: string;
}

/** What the fuzzer may aim at: real ids, so malformed requests reach the objects and not only the router. */
export interface FuzzTargets {
  /** Threads whose logs must survive the fuzz (messages to them are held). */
  kept: string[];
  /** A thread that takes real turns (permissions default, the simulator answers). */
  live: string;
  /** A record-only thread: sends and loops are refused, so their valid bodies cost no turn. */
  recordOnly: string;
  /** Approval ids open now. */
  approvals: string[];
  /** Configured workspaces. */
  workspaces: string[];
  maxSeq: number;
  maxBody: number;
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** What the case tried, for the failure message. */
  label: string;
}

/** Routes whose valid bodies start model turns: aimed at real threads only within a budget. */
const TURN_ROUTES = new Set([
  "POST /threads/:id/messages",
  "POST /threads/:id/send",
  "POST /threads/:id/loop",
  "POST /threads/:id/loop/continue",
  "PATCH /threads/:id/messages/:seq",
]);

type Template = (t: FuzzTargets, rng: Rng) => Record<string, unknown>;

/** A valid body for each route that reads one; the fuzzer mutates it. Routes missing here get generic JSON. */
const TEMPLATES: Record<string, Template> = {
  "POST /drain": (_, rng) => ({ owner: rng.pick(["fuzz", "fuzz-2"]), reason: "fuzz" }),
  "POST /spawn": (t, rng) => ({
    title: "fuzz",
    ...(rng.chance(0.5) ? { workspace: rng.pick(t.workspaces) } : {}),
    ...(rng.chance(0.3) ? { model: rng.pick(["sim-1", "gpt-5", "claude-sonnet-4-5"]) } : {}),
    ...(rng.chance(0.3) ? { permissions: rng.pick(["ask", "allow", "deny"]) } : {}),
    ...(rng.chance(0.2) ? { fallback: ["sim-2", { engine: "pi", model: "sim-3" }] } : {}),
    ...(rng.chance(0.2) ? { proxyEnv: { HTTPS_PROXY: "http://127.0.0.1:9" } } : {}),
  }),
  "PUT /threads/:id/seat-lease": (_, rng) => ({ seatLease: rng.chance(0.5) ? "seat-1" : null }),
  "POST /threads/:id/messages": (_, rng) => ({
    text: "fuzz",
    hold: true,
    from: "fuzz",
    ...(rng.chance(0.3) ? { attachments: [rng.chance(0.5) ? { name: "f.txt", mediaType: "text/plain", text: "fuzz" } : { name: "f.png", mediaType: "image/png", base64: "iVBORw0KGgo=" }] } : {}),
  }),
  "PATCH /threads/:id/messages/:seq": (_, rng) => (rng.chance(0.8) ? { text: "edited" } : { hold: false }),
  "POST /threads/:id/send": (_, rng) => ({ text: "fuzz", ...(rng.chance(0.5) ? { async: true } : {}) }),
  "POST /threads/:id/approvals/:approvalId": (_, rng) => ({ decision: rng.pick(["allow", "deny"]) }),
  "POST /threads/:id/questions/:requestId/answer": () => ({ answer: "yes" }),
  "POST /threads/:id/role": () => ({ role: "chat" }),
  "POST /threads/:id/recover": () => ({ acknowledgeHistoryGap: true, reason: "fuzz" }),
  "POST /threads/:id/fork": (t, rng) => ({ atSeq: rng.int(1, t.maxSeq + 2), title: "fork" }),
  "POST /threads/:id/loop": () => ({ prompt: "fuzz", maxTurns: 1 }),
  "POST /threads/:id/loop/continue": () => ({ turns: 1 }),
  "POST /threads/:id/seats": (_, rng) => ({
    name: rng.pick(["fuzz-seat", `fuzz-${rng.int(0, 5)}`, "main"]),
    ...(rng.chance(0.5) ? { model: rng.pick(["sim-1", "sim-2", "claude-sim"]) } : {}),
    ...(rng.chance(0.3) ? { placement: rng.pick(["host", "peer:fuzz-1", "peer:nobody"]) } : {}),
    ...(rng.chance(0.3) ? { role: "reviewer" } : {}),
  }),
  "POST /threads/:id/seats/replace": (_, rng) => ({ name: rng.pick(["main", "fuzz-seat"]), ...(rng.chance(0.7) ? { model: rng.pick(["sim-1", "sim-2"]) } : { placement: "host" }) }),
  "POST /threads/:id/operations": (_, rng) =>
    rng.chance(0.9) ? { kind: rng.pick(["action", "subscription"]), title: "fuzz", ...(rng.chance(0.3) ? { detail: { n: 1 } } : {}) } : { kind: "delegation", title: "fuzz", prompt: "fuzz", spec: { model: "sim-1" } },
  "POST /threads/:id/operations/:operation": (_, rng) =>
    rng.chance(0.5) ? { milestone: { text: "fuzz", ...(rng.chance(0.3) ? { data: [1, "x"] } : {}) } } : { outcome: { status: rng.pick(["completed", "failed", "cancelled"]), result: "fuzz" } },
  "POST /threads/:id/subscriptions": (t, rng) => ({
    watch: rng.chance(0.5) ? { thread: rng.pick(t.kept) } : { workspace: rng.pick([...t.workspaces, "nowhere"]) },
    ...(rng.chance(0.5) ? { filter: { kinds: [rng.pick(["reply", "message", "turn-ended"])], ...(rng.chance(0.3) ? { text: "fuzz" } : {}) } } : {}),
    ...(rng.chance(0.3) ? { note: "fuzz" } : {}),
  }),
  "POST /threads/:id/events": (_, rng) => ({ kind: rng.pick(["check", "note", "verdict"]), ...(rng.chance(0.5) ? { step: "fuzz", status: "passed" } : {}), ...(rng.chance(0.3) ? { data: { n: 1 } } : {}) }),
  "POST /threads/:id/gate": (_, rng) => ({ mode: "auto", ...(rng.chance(0.5) ? { checks: [{ name: "fuzz", ok: rng.chance(0.5) }] } : {}), ...(rng.chance(0.2) ? { operations: ["op_x"] } : {}) }),
  "POST /threads/:id/merge": (t, rng) => ({ child: rng.pick([...t.kept, "thr_nope"]) }),
  "POST /threads/:id/handoff": (_, rng) => ({ to: rng.pick(["main", "fuzz-seat", "nobody"]), ...(rng.chance(0.5) ? { note: "fuzz" } : {}), ...(rng.chance(0.3) ? { context: rng.pick(["full", "summary"]) } : {}) }),
  "PUT /workspaces/:name/policy": () => ({ defaults: { model: "sim-1", permissions: "ask" } }),
  "POST /internal/host-report": () => ({
    report: { at: new Date(0).toISOString(), disk: { path: "/", freeBytes: 1, totalBytes: 2 }, load: [0, 0, 0], cpus: 1, memory: { freeBytes: 1, totalBytes: 2 }, deviceSimulators: [] },
    thresholds: { pauseBelowBytes: 0, resumeAboveBytes: 0, retryAfterS: 1 },
  }),
  "POST /v1/chat/completions": (_, rng) => ({
    model: "sim-1",
    messages: [{ role: "user", content: rng.chance(0.5) ? "hi" : [{ type: "text", text: "hi" }] }],
    ...(rng.chance(0.3) ? { stream: true } : {}),
  }),
  "POST /keeper/spawn-pause/clear": () => ({ reason: "fuzz" }),
  "POST /peers/external": (_, rng) => ({ name: `fuzz-${rng.int(0, 20)}`, url: "http://127.0.0.1:9/", description: "fuzz" }),
  "POST /previews": (t, rng) => ({ threadId: rng.pick(t.kept), port: rng.int(1, 65535), command: "fuzz" }),
};

/** Strings a field's type accepts that its meaning may not: unicode edges, paths, directives the simulator reads. */
const ODD_VALUES = [
  ...ODD_TEXT,
  "/",
  "/..",
  "/tmp/../etc",
  "x".repeat(201),
  "x".repeat(1001),
  '@sim {"fail":"server"}',
  '@sim {"reply":"x","chunks":1000}',
  "@sim {not json",
  "@sim []",
];

/** Any JSON value, for fields swapped to the wrong type and for bodies of routes without a template. */
function junkValue(rng: Rng, depth = 0): unknown {
  switch (rng.int(0, depth > 2 ? 5 : 7)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 4294967296]);
    case 3:
      return rng.pick(ODD_TEXT);
    case 4:
      return randomText(rng, rng.int(1, 300));
    case 5:
      return rng.pick(["allow", "deny", "chat", "head", "pi", "engine_b", "sim-1", "/", "thr_"]);
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => junkValue(rng, depth + 1));
    default:
      return Object.fromEntries(Array.from({ length: rng.int(0, 4) }, () => [rng.pick([...ODD_TEXT, "text", "hold", "model"]), junkValue(rng, depth + 1)]));
  }
}

/** `[[[...]]]` or `{"a":{"a":...}}` nested `depth` deep, as text (JSON.stringify would overflow first). */
function nested(depth: number, objects: boolean): string {
  return objects ? '{"a":'.repeat(depth) + "1" + "}".repeat(depth) : "[".repeat(depth) + "]".repeat(depth);
}

/** A body: the route's valid one, or one of many ways to break it. Returns the text and what was done. */
function body(route: string, t: FuzzTargets, rng: Rng): { text: string | Buffer; label: string } | null {
  const template = TEMPLATES[route];
  const base: Record<string, unknown> = template ? template(t, rng) : {};
  const keys = Object.keys(base);
  const within = t.maxBody - 64;
  const over = rng.pick([t.maxBody + 1, t.maxBody * 2, t.maxBody * 4]);
  const mutation = rng.int(0, 17);
  switch (mutation) {
    case 0:
      return { text: JSON.stringify(base), label: "valid body" };
    case 1: {
      const whole = JSON.stringify(base);
      return { text: whole.slice(0, rng.int(0, Math.max(0, whole.length - 1))), label: "truncated JSON" };
    }
    case 2:
      return {
        text: rng.pick(["{'a':1}", '{"a":1,}', "[", "{", "}", "NaN", "undefined", '"\\ud800"', "\ufeff{}", '{"a":1}{"b":2}', "01", '{"__proto__":{"x":1}}', "\u0000"]),
        label: "malformed JSON",
      };
    case 3:
      return { text: JSON.stringify(rng.pick([[], null, 1, "text", true, [base]])), label: "wrong root type" };
    case 4: {
      if (keys.length === 0) return { text: JSON.stringify({ [rng.pick(ODD_TEXT)]: junkValue(rng) }), label: "extra field" };
      const k = rng.pick(keys);
      return { text: JSON.stringify({ ...base, [k]: junkValue(rng) }), label: `wrong type for ${k}` };
    }
    case 5: {
      if (keys.length === 0) return { text: "{}", label: "empty object" };
      const k = rng.pick(keys);
      const { [k]: _dropped, ...rest } = base;
      return { text: JSON.stringify(rest), label: `missing ${k}` };
    }
    case 6:
      return { text: JSON.stringify({ ...base, [rng.pick(["extra", "__proto__", "constructor", "", "x".repeat(300)])]: junkValue(rng) }), label: "extra field" };
    case 7: {
      const k = keys.length > 0 ? rng.pick(keys) : "text";
      const size = rng.chance(0.6) ? rng.int(1000, within - JSON.stringify(base).length - 200) : over;
      return { text: JSON.stringify({ ...base, [k]: randomText(rng, size) }), label: `huge ${k} (${size})` };
    }
    case 8: {
      const depth = rng.chance(0.7) ? rng.int(100, Math.floor(within / 6)) : Math.ceil(over / 2);
      const objects = rng.chance(0.5);
      const k = keys.length > 0 ? rng.pick(keys) : "text";
      const rest = JSON.stringify({ ...base, [k]: 0 });
      const text = rng.chance(0.5) ? nested(depth, objects) : rest.replace(`"${k}":0`, `"${k}":${nested(depth, objects)}`);
      return { text, label: `nested ${depth} deep` };
    }
    case 9:
      return { text: "", label: "empty body" };
    case 10:
      return null;
    case 11:
      return { text: Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x22, 0x7d]), label: "invalid UTF-8" };
    case 12:
      return { text: `text=${encodeURIComponent("fuzz")}&hold=true&text=2`, label: "form fields" };
    case 13:
      return { text: JSON.stringify(junkValue(rng)), label: "junk JSON" };
    case 14: {
      const many = Object.fromEntries(Array.from({ length: rng.int(1000, 5000) }, (_, i) => [`k${i}`, i]));
      return { text: JSON.stringify({ ...base, ...many }), label: "thousands of fields" };
    }
    case 15:
      return { text: JSON.stringify(base).replace(/"([^"]*)"/, '"$1\\u0000\\ud800"'), label: "control characters in a key or value" };
    case 16: {
      // Valid but for its depth: fields a schema lets through (completions passes unknown ones on) carry it furthest.
      const depth = rng.pick([129, 5000, Math.floor(within / 6)]);
      const whole = JSON.stringify({ ...base, extra: 0 });
      return { text: whole.replace('"extra":0', `"${rng.pick(["extra", "metadata", "response_format"])}":${nested(depth, rng.chance(0.5))}`), label: `valid with a field nested ${depth} deep` };
    }
    default: {
      const strings = keys.filter((k) => typeof base[k] === "string");
      if (strings.length === 0) return { text: JSON.stringify(base), label: "valid body" };
      const k = rng.pick(strings);
      return { text: JSON.stringify({ ...base, [k]: rng.pick(ODD_VALUES) }), label: `odd ${k}` };
    }
  }
}

const CONTENT_TYPES = [
  "application/json",
  "application/json",
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "text/plain;charset=UTF-8",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=fuzz",
  "application/octet-stream",
  "application/json; charset=utf-16",
  "*/*",
  "",
];

/** A path segment as it goes on the wire: odd text percent-encoded, deliberate escapes kept. */
function segment(raw: string): string {
  if (/^[\x21-\x7e]*$/.test(raw) && (raw.includes("%") || raw === "." || raw === "..")) return raw;
  try {
    return encodeURIComponent(raw);
  } catch {
    return "%ED%A0%80";
  }
}

const BAD_IDS = [
  ...ODD_TEXT,
  "%",
  "%ff",
  "%c0%af",
  "%2F",
  "a%2Fb",
  ".",
  "thr_" + "0".repeat(26),
  "thr_" + "i".repeat(26),
  "THR_" + "0".repeat(26),
  "thr_" + "0".repeat(27),
  "thr_",
  "x".repeat(5000),
  "ü".repeat(300),
];

function param(name: string, route: string, t: FuzzTargets, rng: Rng, budget: { turns: number }): string {
  const bad = rng.chance(0.25);
  if (bad) return rng.pick(BAD_IDS);
  switch (name) {
    case "id":
      if (!route.includes("/threads/")) return rng.pick(["prv_x", "fuzz", "env-openai", "spawn-pause", "approval:x", randomText(rng, rng.int(1, 80))]);
      if (TURN_ROUTES.has(route)) {
        if (budget.turns > 0 && rng.chance(0.3)) return (budget.turns--, rng.pick([t.live, ...t.kept]));
        return t.recordOnly;
      }
      return rng.pick([...t.kept, t.live, t.recordOnly]);
    case "seq":
    case "fromSeq":
      return String(rng.int(0, t.maxSeq + 3));
    case "approvalId":
      return t.approvals.length > 0 && rng.chance(0.5) ? rng.pick(t.approvals) : `ap_${rng.int(0, 99)}`;
    case "operation":
      return rng.chance(0.5) ? `op_${randomText(rng, rng.int(1, 16))}` : randomText(rng, rng.int(1, 120));
    case "watch":
      return rng.chance(0.5) ? `watch_${randomText(rng, rng.int(1, 16))}` : randomText(rng, rng.int(1, 120));
    case "sha256":
      return rng.chance(0.5) ? "0".repeat(64) : randomText(rng, rng.int(1, 70));
    case "requestId":
      return `rq_${rng.int(0, 99)}`;
    case "name":
      if (route.includes("/seats/")) return rng.pick(["main", "fuzz-seat", `fuzz-${rng.int(0, 5)}`]);
      return route.startsWith("PUT /workspaces") || route.startsWith("GET /workspaces") ? rng.pick([...t.workspaces, "default", "nope"]) : `fuzz-${rng.int(0, 20)}`;
    default:
      return randomText(rng, rng.int(1, 20));
  }
}

/** Thread-list cursors (base64url of `c:<n>` or `r:<n>:<time>`), well-formed or nearly. */
const LIST_CURSORS = ["c:1", "c:999999999999999", "c:0", "r:1:2026-01-01T00:00:00.000Z", "r:1:9999-99-99T99:99:99.999Z", "r:999999999999999:0000-00-00T00:00:00.000Z", "x:1"].map((c) =>
  Buffer.from(c).toString("base64url"),
);

const QUERY_KEYS: Record<string, (t: FuzzTargets, rng: Rng) => string> = {
  after: (t, rng) => (rng.chance(0.7) ? String(rng.int(0, t.maxSeq + 2)) : rng.pick(LIST_CURSORS)),
  before: (t, rng) => (rng.chance(0.5) ? "latest" : String(rng.int(0, t.maxSeq + 2))),
  limit: (_, rng) => String(rng.int(0, 2000)),
  wait: (_, rng) => String(rng.int(0, 50)),
  since: (_, rng) => String(rng.int(0, 2 ** 40)),
  reason: (_, rng) => randomText(rng, rng.int(1, 1100)),
  owner: (_, rng) => rng.pick(["fuzz", "fuzz-2", "other"]),
  format: () => "prometheus",
  sort: (_, rng) => rng.pick(["created", "recent"]),
  archived: (_, rng) => rng.pick(["live", "archived", "all"]),
  role: (_, rng) => rng.pick(["chat", "head"]),
  type: (_, rng) => rng.pick(["chat", "external"]),
  workspace: (t, rng) => rng.pick(t.workspaces),
  parent: (t, rng) => rng.pick(t.kept),
  attached: (_, rng) => rng.pick(["true", "false"]),
  seats: (_, rng) => rng.pick(["open", "all"]),
  threads: (t, rng) => (rng.chance(0.5) ? t.kept.join(",") : Array.from({ length: rng.int(1, 200) }, () => t.live).join(",")),
};

function queryValue(key: string, t: FuzzTargets, rng: Rng): string {
  const good = QUERY_KEYS[key];
  if (good && rng.chance(0.5)) return good(t, rng);
  return rng.chance(0.9) ? rng.pick(BAD_IDS) : randomText(rng, rng.int(1, 3000));
}

function encodeQuery(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return "%ED%A0%80";
  }
}

function query(t: FuzzTargets, rng: Rng): string {
  const parts: string[] = [];
  for (let n = rng.int(0, 4); n > 0; n--) {
    const key = rng.chance(0.9) ? rng.pick(Object.keys(QUERY_KEYS)) : rng.pick(["", "=", "%", "a[b]", "x".repeat(100)]);
    const repeats = rng.chance(0.15) ? rng.int(2, 4) : 1;
    for (let r = 0; r < repeats; r++) parts.push(rng.chance(0.05) ? encodeQuery(key) : `${encodeQuery(key)}=${encodeQuery(queryValue(key, t, rng))}`);
  }
  if (rng.chance(0.05)) parts.push(rng.pick(["%", "%zz", "&&", "a=%ff", "="]));
  return parts.length > 0 ? `?${parts.join("&")}` : "";
}

/** Header values go through Node's checks: latin-1 without line breaks or NUL. */
function headerSafe(text: string): string {
  return [...text].filter((ch) => {
    const c = ch.codePointAt(0)!;
    return c === 9 || (c >= 32 && c <= 126) || (c >= 128 && c <= 255);
  }).join("");
}

function extraHeaders(t: FuzzTargets, rng: Rng): Record<string, string> {
  const out: Record<string, string> = {};
  if (rng.chance(0.15)) out["last-event-id"] = headerSafe(rng.chance(0.5) ? String(rng.int(0, t.maxSeq + 2)) : rng.pick(BAD_IDS));
  if (rng.chance(0.1)) out["idempotency-key"] = headerSafe(rng.chance(0.5) ? randomText(rng, rng.int(0, 300)) : `k${rng.int(0, 9)}`);
  if (rng.chance(0.2)) out["x-service-workspace"] = headerSafe(rng.chance(0.7) ? rng.pick(t.workspaces) : rng.pick(BAD_IDS));
  if (rng.chance(0.05)) out["x-service-session"] = headerSafe(randomText(rng, rng.int(1, 200)));
  if (rng.chance(0.05)) out["x-service-traffic"] = rng.pick(["work", "smoke", "fuzz", ""]);
  if (rng.chance(0.05)) out["x-service-internal"] = rng.pick(["", "token", "x".repeat(200)]);
  if (rng.chance(0.05)) out.accept = rng.pick(["text/plain", "application/openmetrics-text", "text/event-stream", "*/*"]);
  return out;
}

/** The request for one route: its params filled, a query, headers and a body, valid or not. */
export function requestFor(route: Route, t: FuzzTargets, rng: Rng, budget: { turns: number }): FuzzRequest {
  const key = `${route.method} ${route.path}`;
  const path = route.path.replace(PATH_PARAM, (_, name: string) => segment(param(name, key, t, rng, budget)));
  const headers = extraHeaders(t, rng);
  // Completions calls name the workspace to charge; without one they are refused before the body is read.
  if (route.path.startsWith("/v1/") && rng.chance(0.8)) headers["x-service-workspace"] = rng.pick(t.workspaces);
  const sendsBody = route.method !== "GET" ? rng.chance(0.95) : rng.chance(0.05);
  const made = sendsBody ? body(key, t, rng) : null;
  const labels = [key];
  let payload: Buffer | undefined;
  if (made) {
    payload = typeof made.text === "string" ? Buffer.from(made.text) : made.text;
    const type = rng.pick(CONTENT_TYPES);
    if (type) headers["content-type"] = type;
    labels.push(made.label, type ? `as ${type}` : "without content-type");
  }
  return { method: route.method, path: path + query(t, rng), headers, body: payload, label: labels.join(", ") };
}

/** Known paths with the methods they do not declare. */
export function oddMethodRequest(route: Route, declared: Set<string>, t: FuzzTargets, rng: Rng): FuzzRequest | null {
  const others = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "FOO", "M-SEARCH", "get", "PROPFIND", "TRACE"].filter((m) => !declared.has(m));
  if (others.length === 0) return null;
  const method = rng.pick(others);
  const req = requestFor({ method, path: route.path }, t, rng, { turns: 0 });
  return { ...req, label: `${method} on ${route.path} (declares ${[...declared].join(", ")}): ${req.label}` };
}
