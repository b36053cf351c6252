import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { SESSION_ENGINES } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-compaction-"));
afterAll(() => removeDir(work));

const front = useFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "200" } });
/**
 * A warning line just under the forced one: the engines' own compaction, which runs at the
 * warning line, stays out of the way of the tests that fill a context to just under the
 * forced line and then cross the window inside one turn.
 */
const late = useFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "200", SERVICE_WINDOW_WARN_PERCENT: "87" } });

/** A tool call whose output is `chars` characters: about a quarter as many tokens. */
const output = (chars: number) => ({ name: "shell", input: { command: `head -c ${chars} /dev/zero | tr '\\0' a` } });

// The same scenario on every engine: a long, tool-heavy thread on a model whose window is
// 8,192 tokens (engine_b's own prompt and tools take about 4,800 of them, engine_a's 2,500).
describe.each([
  ["pi", { model: "sim-8k" }, 2400, 30],
  ["engine_b", { engine: "engine_b", model: "sim-8k" }, 800, 14],
  ["engine_a", { model: "claude-sim-8k" }, 1600, 16],
])("a long tool-heavy thread on a small window (%s)", (engine, spec, chars, turns) => {
  // Up to 30 turns of a real engine: longer than the suite's minute on a slow, busy machine.
  it("completes every turn, the context reduced along the way", async () => {
    const base = front().url;
    const spawned = await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "allow" });
    expect(spawned.status).toBe(201);
    const id = spawned.body.threadId as string;
    for (let n = 1; n <= turns; n++) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(chars), reply: `turn ${n} done` }, `instruction-${n}`) });
      expect(r.body.outcome, `turn ${n}: ${JSON.stringify(r.body.failure)}`).toBe("completed");
    }
    const log = await events(base, id);
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
    expect(log.filter((e) => e.kind === "window").length).toBeGreaterThan(0);
    const status = (await call(base, "GET", `/threads/${id}/compact`)).body;
    expect(status.window).toBe(8192);
    // An engine with a session of its own compacts it itself at the line: its model writes the summary.
    const windows = log.filter((e) => e.kind === "window").map((e) => e.body);
    const said = log.filter((e) => e.kind === "system").map((e) => e.body.text);
    if (engine !== "pi") expect(windows.some((w) => w.kind === "summary" && w.summaryModel === spec.model && w.cut.length === 0), JSON.stringify({ windows, said })).toBe(true);
  }, 180_000);
});

// Each engine's own prompt leaves it a different room: the fill and the last output are sized so the
// last turn crosses the window, and the same turn fits again in a new session from the reduced context.
describe.each([
  ["engine_b", { engine: "engine_b", model: "sim-8k" }, 400, 6600, 7000],
  ["engine_a", { model: "claude-sim-8k" }, 1600, 6200, 8000],
])("a turn the provider refuses as too long (%s)", (_engine, spec, chars, fill, last) => {
  it("is recovered in a new session seeded from the reduced context: the turn stays open and ends normally", async () => {
    const base = late().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "allow" })).body.threadId as string;
    // Fill the context to just under the forced line, then one turn whose tool output crosses the window.
    let tokens = 0;
    for (let n = 1; tokens < fill; n++) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(chars), reply: `turn ${n} done` }, `instruction-${n}`) });
      expect(r.body.outcome).toBe("completed");
      tokens = (await call(base, "GET", `/threads/${id}/compact`)).body.tokens;
    }
    expect((await events(base, id)).filter((e) => e.kind === "window")).toEqual([]);
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(last), reply: "read it" }, "one more file") });
    expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
    const log = await events(base, id);
    const line = log.find((e) => e.kind === "system" && e.body.text === "window full, recovering (restarted)");
    expect(line).toBeDefined();
    expect(log.some((e) => e.kind === "window" && e.body.trigger === "recovery" && e.seq > line!.seq)).toBe(true);
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
    expect(log.at(-1)!.kind).toBe("turn-ended");
  });
});

describe("recoveries that never make room", () => {
  it("stop with WindowThrash instead of looping, and the thread takes its next message", async () => {
    const base = late().url;
    const id = (await call(base, "POST", "/spawn", { engine: "engine_b", model: "sim-8k", cwd: work, permissions: "allow" })).body.threadId as string;
    let tokens = 0;
    for (let n = 1; tokens < 6200; n++) {
      expect((await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(400) }, `instruction-${n}`) })).body.outcome).toBe("completed");
      tokens = (await call(base, "GET", `/threads/${id}/compact`)).body.tokens;
    }
    // Each new session runs the same tool again, and with engine_b's own prompt its output never fits.
    const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(8000), reply: "never" }, "read a file too big") });
    expect(r.body.outcome).toBe("failed");
    expect(r.body.failure.error).toMatch(/^the context window is full and the runtime could not reduce it \(WindowThrash\)/);
    const log = await events(base, id);
    const recoveries = log.filter((e) => e.kind === "system" && e.body.text === "window full, recovering (restarted)");
    expect(recoveries.length).toBe(4);
    expect(log.some((e) => e.kind === "system" && e.body.level === "error" && e.body.text.startsWith("WindowThrash:"))).toBe(true);
    expect((await call(base, "GET", `/threads/${id}/compact`)).body.refusals.map((x: { refusal: string }) => x.refusal)).toContain("WindowThrash");
    const after = await call(base, "POST", `/threads/${id}/send`, { text: "still there?" });
    expect(after.body.outcome, JSON.stringify(after.body.failure)).toBe("completed");
  });
});

describe.each(SESSION_ENGINES)("POST /compact on %s", (engine, spec) => {
  it("asks the engine to compact its own session: a summary its model wrote, its cost counted, and the next turn runs on it", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "allow" })).body.threadId as string;
    const early = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(early.status).toBe(200);
    expect(early.body.reductions).toEqual([]);
    for (let n = 1; n <= 2; n++) expect((await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(200) }, `instruction-${n}`) })).body.outcome).toBe("completed");
    const costBefore = (await call(base, "GET", `/threads/${id}`)).body.cost.usd;
    const done = await call(base, "POST", `/threads/${id}/compact`, {});
    expect(done.status).toBe(200);
    expect(done.body.reductions.map((w: Record<string, unknown>) => [w.kind, w.trigger, w.summaryModel, w.cut])).toEqual([["summary", "request", spec.model, []]]);
    expect((await call(base, "GET", `/threads/${id}`)).body.cost.usd).toBeGreaterThan(costBefore);
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "and now?" })).body.outcome).toBe("completed");
    const log = await events(base, id);
    expect(log.some((e) => e.kind === "system" && e.body.text === `the engine did not compact its session (${engine} has no session of this thread to compact); the cheap reductions run instead`)).toBe(true);
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
  });

  it("refuses a summary while a turn runs in the session it would compact", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask" })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(10) }, "wait for me"), async: true });
    const approval = await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0] as string | undefined);
    const busy = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("engine-busy");
    await call(base, "POST", `/threads/${id}/approvals/${approval}`, { decision: "deny" });
  });
});

describe("codex compacting on its own", () => {
  it("compacts mid-turn at the runtime's warning line, recorded as a window the engine's model wrote", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { engine: "engine_b", model: "sim-8k", cwd: work, permissions: "allow" })).body.threadId as string;
    // The first turn tells the window; the second crosses the warning line between its model calls.
    expect((await call(base, "POST", `/threads/${id}/send`, { text: "hello" })).body.outcome).toBe("completed");
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tools: [output(4000)], ask: "which one?", reply: "done" }, "go"), async: true });
    await waitFor(async () => {
      const turn = (await call(base, "GET", `/threads/${id}/turn`)).body;
      for (const q of turn.waitingOn.questions) await call(base, "POST", `/threads/${id}/questions/${q}/answer`, { answer: "the first" });
      return !turn.running && turn.queued === 0;
    }, 30_000);
    const log = await events(base, id);
    const own = log.filter((e) => e.kind === "window" && e.body.trigger === "engine");
    expect(own.map((e) => [e.body.kind, e.body.summaryModel, e.body.cut])).toEqual([["summary", "sim-8k", []]]);
    const started = log.filter((e) => e.kind === "turn-started").at(-1)!;
    expect(own[0]!.seq).toBeGreaterThan(started.seq);
    expect(log.filter((e) => e.kind === "turn-failed")).toEqual([]);
  });
});

describe("a session too full to resume", () => {
  it("is replaced at the next turn by one seeded from the reduced context, when the engine's own compaction did not make room", async () => {
    // With the warning line just under the forced one, the agent's own /compact is first asked at the
    // forced line, where its summarization no longer fits the 8,192-token window: the cheap kinds run.
    const base = late().url;
    const id = (await call(base, "POST", "/spawn", { model: "claude-sim-8k", cwd: work, permissions: "allow" })).body.threadId as string;
    let skipped: number | undefined;
    for (let n = 1; n <= 20 && skipped === undefined; n++) {
      const r = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(1600), reply: `turn ${n} done` }, `instruction-${n}`) });
      expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
      skipped = (await events(base, id)).find((e) => e.kind === "system" && e.body.text === "window full, recovering (resume-skipped)")?.seq;
    }
    expect(skipped).toBeDefined();
    const log = await events(base, id);
    const disposition = log.filter((e) => e.kind === "compaction-disposition").at(-1)!;
    expect(disposition.body).toMatchObject({ settledBy: "deadline" });
    expect(log.filter((e) => e.kind === "window" && e.seq < skipped! && e.body.kind !== "summary").length).toBeGreaterThan(0);
    // The line belongs to the turn that started the new session, right after its turn-started.
    expect(log.find((e) => e.seq === skipped! - 1)!.kind).toBe("turn-started");
  });
});
