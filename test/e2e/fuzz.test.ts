import { mkdtempSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { oddMethodRequest, requestFor, type FuzzRequest, type FuzzTargets, type Route } from "../support/fuzz-cases.js";
import { fuzzSeed, Rng } from "../support/fuzz-random.js";
import { DRAINING_STATES, HOST_STATES, problemWith, send, type FuzzAnswer } from "../support/fuzz-send.js";
import { call, sim, waitFor } from "../support/http.js";
import { PROJECT_DIR } from "../support/front.js";
import { useFront } from "../support/use-front.js";

/** Replay a failure with `FUZZ_SEED=<seed> npx vitest run test/e2e/fuzz.test.ts` (and its `FUZZ_ROUNDS`, if set). */
const SEED = fuzzSeed(process.env.FUZZ_SEED, 13);
/** Lowered from 8 MB so bodies above the limit are cheap to send. */
const MAX_BODY = 65536;
/** Requests per route (`FUZZ_ROUNDS` for a longer run); with the odd methods and the drain phase, about four thousand in all. */
const ROUNDS = Number(process.env.FUZZ_ROUNDS) || 50;
const CONCURRENCY = 6;
/** Turns the fuzz may start on real threads (the rest of its turn-starting requests go to a record-only thread). */
const TURN_BUDGET = 40;
/** A request that hangs this long fails the test (the longest `wait` the fuzz asks for is 50 ms). */
const ANSWER_MS = 30_000;

const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-fuzz-"));
writeFileSync(
  join(dataDir, "workspaces.json"),
  JSON.stringify({ workspaces: [{ name: "fuzz", slug: "fuzz/fuzz" }, { name: "fuzz-models", slug: "fuzz/models", allowedModels: ["sim-1"] }] }),
);
const front = useFront({ dataDir, env: { SERVICE_AGENTS_MAX_BODY: String(MAX_BODY), SERVICE_AGENTS_BLOB_THRESHOLD: "2048" } });

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
afterAll(() => agent.destroy());

/**
 * Every route of the router, read off the app itself, so a route added later is fuzzed too.
 * The module is named by a variable: it is worker code, typechecked by the worker's
 * project and not by this one, and plain TypeScript that Node runs as it is.
 */
async function routerRoutes(): Promise<Route[]> {
  const appModule = join(PROJECT_DIR, "src/app.ts");
  const { app } = (await import(appModule)) as { app: { routes: Route[] } };
  const routes = new Map<string, Route>();
  for (const r of app.routes) if (r.method !== "ALL" && !r.path.includes("*")) routes.set(`${r.method} ${r.path}`, { method: r.method, path: r.path });
  return [...routes.values()];
}

/** The drain stops all new work, so its routes get a phase of their own. */
const isDrainRoute = (r: Route) => r.path === "/drain" || r.path.startsWith("/drain/");

/** Sends a request; a keep-alive connection the front closed between two requests is retried once on a fresh one, as Node's documentation advises. */
async function answer(req: FuzzRequest): Promise<FuzzAnswer> {
  const base = new URL(front().url);
  try {
    return await send(base, agent, req, ANSWER_MS);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ECONNRESET") throw err;
    return send(base, new Agent({ keepAlive: false }), req, ANSWER_MS);
  }
}

interface Failure {
  req: FuzzRequest;
  why: string;
}

async function run(requests: FuzzRequest[], concurrency: number, waitOutCodes: readonly string[], failures: Failure[]): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const req = requests[next++]!;
      try {
        const why = problemWith(req, await answer(req), waitOutCodes);
        if (why) failures.push({ req, why });
      } catch (err) {
        failures.push({ req, why: `no answer: ${(err as Error).message}` });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function report(failures: Failure[]): string {
  const lines = failures.slice(0, 25).map((f) => `- ${f.req.method} ${f.req.path.slice(0, 120)} [${f.req.label}]: ${f.why}`);
  return `FUZZ_SEED=${SEED} FUZZ_ROUNDS=${ROUNDS}: ${failures.length} bad answers\n${lines.join("\n")}`;
}

/** A thread's log as `tail` pages it, each event as its JSON text. */
async function log(id: string): Promise<string[]> {
  const out: string[] = [];
  let after = 0;
  for (;;) {
    const page = await call(front().url, "GET", `/threads/${id}/tail?after=${after}&limit=1000`);
    expect(page.status).toBe(200);
    out.push(...page.body.events.map((e: unknown) => JSON.stringify(e)));
    if (!page.body.hasMore) return out;
    after = Number(page.body.nextAfter);
  }
}

async function spawn(spec: Record<string, unknown> = {}): Promise<string> {
  const res = await call(front().url, "POST", "/spawn", spec);
  expect(res.status).toBe(201);
  return res.body.threadId;
}

/** Threads with real logs for the fuzz to aim at: held messages and a stored-apart body, a finished turn, an open approval. */
async function fixtures(): Promise<FuzzTargets> {
  const base = front().url;
  const held = await spawn({ title: "held" });
  for (const text of ["one", "two", "large ".repeat(1000)]) expect((await call(base, "POST", `/threads/${held}/messages`, { text, hold: true })).status).toBe(202);
  const answered = await spawn({ title: "answered", workspace: "fuzz" });
  expect((await call(base, "POST", `/threads/${answered}/send`, { text: "hello" })).body.outcome).toBe("completed");
  const asking = await spawn({ title: "asking" });
  expect((await call(base, "POST", `/threads/${asking}/messages`, { text: sim({ tool: { name: "shell", input: { command: "true" } } }) })).status).toBe(202);
  const approvals = await waitFor(async () => {
    const turn = await call(base, "GET", `/threads/${asking}/turn`);
    return turn.body.waitingOn?.approvals.length > 0 && (turn.body.waitingOn.approvals as string[]);
  });
  const live = await spawn({ title: "live" });
  const recordOnly = await spawn({ title: "record only", type: "external" });
  return { kept: [held, answered, asking], live, recordOnly, approvals, workspaces: ["fuzz", "fuzz-models"], maxSeq: 8, maxBody: MAX_BODY };
}

describe(`fuzzing every route (FUZZ_SEED=${SEED})`, () => {
  it("answers every malformed request with a JSON 4xx, stays up and keeps the logs", { timeout: 240_000 }, async () => {
    const routes = await routerRoutes();
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(["POST /spawn", "GET /threads/:id/tail", "POST /drain", "POST /v1/chat/completions"]));
    const targets = await fixtures();
    const before = new Map(await Promise.all(targets.kept.map(async (id) => [id, await log(id)] as const)));

    const rng = new Rng(SEED);
    const budget = { turns: TURN_BUDGET };
    const main: FuzzRequest[] = [];
    const fuzzed = routes.filter((r) => !isDrainRoute(r));
    for (let round = 0; round < ROUNDS; round++) for (const route of fuzzed) main.push(requestFor(route, targets, rng, budget));
    const declared = new Map<string, Set<string>>();
    for (const r of fuzzed) declared.set(r.path, (declared.get(r.path) ?? new Set()).add(r.method));
    for (const [path, methods] of declared)
      for (let i = 0; i < 4; i++) {
        const odd = oddMethodRequest({ method: "", path }, methods, targets, rng);
        if (odd) main.push(odd);
      }

    // The drain phase: arm, claim, release, and the routes that start work while it is armed, one at a time.
    const drainRoutes = routes.filter(isDrainRoute);
    const whileDraining = fuzzed.filter((r) => ["POST /spawn", "POST /threads/:id/messages", "POST /threads/:id/send", "POST /threads/:id/fork", "PATCH /threads/:id/messages/:seq"].includes(`${r.method} ${r.path}`));
    const drainPhase: FuzzRequest[] = [];
    for (let i = 0; i < 120; i++) drainPhase.push(requestFor(rng.chance(0.6) ? rng.pick(drainRoutes) : rng.pick(whileDraining), targets, rng, budget));

    const failures: Failure[] = [];
    await run(main, CONCURRENCY, HOST_STATES, failures);
    await run(drainPhase, 1, DRAINING_STATES, failures);
    expect(failures.length, report(failures)).toBe(0);

    // Whatever the fuzz left armed is disarmed, by its owner if it claimed it.
    const drain = await call(front().url, "GET", "/drain");
    if (drain.body.owner) expect((await call(front().url, "DELETE", `/drain/claim?owner=${encodeURIComponent(drain.body.owner)}`)).status).toBe(200);
    expect((await call(front().url, "DELETE", "/drain")).body.armed).toBe(false);

    expect(front().proc.exitCode, front().output()).toBeNull();
    expect((await call(front().url, "GET", "/health")).status).toBe(200);
    for (const [id, earlier] of before) {
      const now = await log(id);
      expect(now.map((e) => JSON.parse(e).seq)).toEqual(now.map((_, i) => i + 1));
      expect(now.slice(0, earlier.length)).toEqual(earlier);
    }
  });
});
