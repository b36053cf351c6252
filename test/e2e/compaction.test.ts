import { describe, expect, it } from "vitest";
import { call, events, sim, waitFor, type LoggedEvent } from "../support/http.js";
import { startFront } from "../support/front.js";
import { useFront } from "../support/use-front.js";

/** A tool call whose output is `chars` characters: about a quarter as many tokens. */
const output = (chars: number) => ({ name: "shell", input: { command: `head -c ${chars} /dev/zero | tr '\\0' a` } });

const instruction = (n: number) => `instruction-${n}: always answer in lower case`;

async function spawn(base: string, spec: Record<string, unknown> = {}): Promise<string> {
  const r = await call(base, "POST", "/spawn", { model: "sim-8k", permissions: "allow", ...spec });
  expect(r.status).toBe(201);
  return r.body.threadId;
}

async function send(base: string, id: string, text: string) {
  const r = await call(base, "POST", `/threads/${id}/send`, { text });
  expect(r.status).toBe(200);
  return r.body;
}

const kinds = (log: LoggedEvent[], kind: string) => log.filter((e) => e.kind === kind);

/** The messages of the simulator's last model request, as text. */
async function lastPrompt(simulatorUrl: string): Promise<string> {
  const { requests } = (await (await fetch(`${simulatorUrl}/_sim/requests`)).json()) as { requests: { body: unknown }[] };
  return JSON.stringify(requests.at(-1)!.body);
}

describe("a thread on a small window, the runtime choosing at the deadline", () => {
  const front = useFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "300" } });

  it("completes every turn of a long tool-heavy thread, and every instruction reaches the model verbatim after the last reduction", async () => {
    const base = front().url;
    const id = await spawn(base);
    const turns = 30;
    for (let n = 1; n <= turns; n++) {
      const r = await send(base, id, sim({ tool: output(2400), reply: `turn ${n} done` }, instruction(n)));
      expect(r.outcome, JSON.stringify(r.failure)).toBe("completed");
      expect(r.reply.text).toBe(`turn ${n} done`);
    }
    const log = await events(base, id);
    expect(kinds(log, "turn-failed")).toEqual([]);
    const windows = kinds(log, "window");
    expect(windows.length).toBeGreaterThan(0);
    expect(windows.every((w) => w.body.tokensAfter < w.body.tokensBefore)).toBe(true);
    const forced = kinds(log, "window-pending").filter((e) => e.body.forced);
    expect(forced.length).toBeGreaterThan(0);
    // Stubs and collapses would each make room: a caller has a choice, and the deadline is waited.
    expect(forced[0]!.body).toMatchObject({ deadlineMs: 300, window: 8192, options: ["microcompact", "collapse", "summary"] });
    const dispositions = kinds(log, "compaction-disposition");
    expect(dispositions.length).toBe(forced.length);
    expect(dispositions.every((d) => d.body.settledBy === "deadline" && d.body.mode !== null)).toBe(true);
    // A reduction comes after the last of them: the instructions were kept through it.
    expect(windows.at(-1)!.seq).toBeGreaterThan(forced[0]!.seq);
    const prompt = await lastPrompt(front().simulatorUrl!);
    for (let n = 1; n <= turns; n++) expect(prompt).toContain(instruction(n));
    const status = (await call(base, "GET", `/threads/${id}/compact`)).body;
    expect(status).toMatchObject({ model: "sim-8k", window: 8192, warnAt: 5734, forcedAt: 7168, refusals: [] });
    expect(status.pending?.forced ?? false).toBe(false);
    expect(status.tokens).toBeLessThan(status.forcedAt);
    expect(status.lastReduction.seq).toBe(windows.at(-1)!.seq);
  });

  it("recovers inside a turn whose tool output fills the window: the turn stays open, says so, and ends normally", async () => {
    const base = front().url;
    const id = await spawn(base);
    const r = await send(base, id, sim({ tools: [output(12_000), output(12_000), output(12_000)], reply: "all read" }, "read three big files"));
    expect(r.outcome, JSON.stringify(r.failure)).toBe("completed");
    expect(r.reply.text).toBe("all read");
    const log = await events(base, id);
    const line = log.find((e) => e.kind === "system" && e.body.text === "window full, recovering (recut)");
    expect(line?.body.level).toBe("info");
    const recut = kinds(log, "window").find((w) => w.body.trigger === "recovery");
    expect(recut?.body.kind).toBe("microcompact");
    expect(recut!.seq).toBeGreaterThan(line!.seq);
    expect(kinds(log, "turn-ended").length).toBe(1);
    expect(kinds(log, "turn-failed")).toEqual([]);
    // The front's log says the refused run as window-full, and the turn as ended, never as failed.
    const said = front().output().split("\n").filter((l) => l.includes(`thread=${id} `));
    expect(said.filter((l) => l.includes("outcome=window-full")).length).toBeGreaterThan(0);
    expect(said.filter((l) => l.includes("turn ended") && l.includes("outcome=completed")).length).toBe(1);
    expect(said.filter((l) => l.includes("turn failed"))).toEqual([]);
    // The newest result stays whole; the two before it went to stubs.
    const prompt = await lastPrompt(front().simulatorUrl!);
    expect(prompt.match(/removed to save context/g)?.length).toBe(2);
  });

  it("stubs even the newest tool result when it alone is larger than the window, and the turn ends normally", async () => {
    const base = front().url;
    const id = await spawn(base);
    const r = await send(base, id, sim({ tool: output(40_000), reply: "too big to read whole" }, "read one huge file"));
    expect(r.outcome, JSON.stringify(r.failure)).toBe("completed");
    const recuts = kinds(await events(base, id), "window").filter((w) => w.body.trigger === "recovery");
    expect(recuts.map((w) => w.body.kind)).toEqual(["microcompact"]);
    expect(await lastPrompt(front().simulatorUrl!)).toContain("[tool output of 40012 characters removed to save context");
  });

  it("refuses with WindowNoHeadroom when nothing it may cut makes room, fails that turn saying why, and the thread goes on", async () => {
    const base = front().url;
    const id = await spawn(base);
    // Tool output to cut on the way, so the counts taken while the big message was in the context are not zero.
    for (let n = 1; n <= 4; n++) expect((await send(base, id, sim({ tool: output(1200) }, instruction(n)))).outcome).toBe("completed");
    const r = await send(base, id, `please read this: ${"y".repeat(40_000)}`);
    expect(r.outcome).toBe("failed");
    expect(r.failure.class).toBe("session");
    expect(r.failure.error).toMatch(/^the context window is full and the runtime could not reduce it \(WindowNoHeadroom\)/);
    // The front's log: the refused run as window-full, then the turn's end as failed, once.
    const lines = front().output().split("\n").filter((l) => l.includes(`turn=${r.turnId} `));
    expect(lines.filter((l) => l.includes("turn failed") && l.includes("class=session")).length).toBe(1);
    expect(lines.filter((l) => l.includes("turn ended"))).toEqual([]);
    const status = (await call(base, "GET", `/threads/${id}/compact`)).body;
    expect(status.refusals.length).toBeGreaterThan(0);
    expect(status.refusals.every((x: { refusal: string }) => x.refusal === "WindowNoHeadroom")).toBe(true);
    const log = await events(base, id);
    expect(log.some((e) => e.kind === "system" && e.body.level === "error" && e.body.text.startsWith("WindowNoHeadroom:"))).toBe(true);
    // The line before the turn was crossed too, and settled as refused.
    expect(kinds(log, "compaction-disposition").map((d) => d.body)).toEqual([{ settledBy: "refused", mode: null, refusal: "WindowNoHeadroom" }]);
    // The message that could never fit left the context (the log keeps it), and the count with it:
    // the next one gets its turn at once, without another forced window.
    const forcedBefore = kinds(log, "window-pending").filter((e) => e.body.forced).length;
    expect((await send(base, id, "a small question")).outcome).toBe("completed");
    expect(await lastPrompt(front().simulatorUrl!)).not.toContain("y".repeat(100));
    expect(kinds(await events(base, id), "window-pending").filter((e) => e.body.forced).length).toBe(forcedBefore);
    expect((await call(base, "GET", `/threads/${id}/compact`)).body.tokens).toBeLessThan(3000);
  });

  it("compacts on request with a mode, a summary by the thread's own model when no curator is configured", async () => {
    const base = front().url;
    const id = await spawn(base);
    for (let n = 1; n <= 4; n++) await send(base, id, sim({ tool: output(1200) }, instruction(n)));
    const done = await call(base, "POST", `/threads/${id}/compact`, { mode: "collapse" });
    expect(done.status).toBe(200);
    expect(done.body.reductions.map((w: { kind: string; trigger: string }) => [w.kind, w.trigger])).toEqual([["collapse", "request"]]);
    expect(done.body.tokens).toBeLessThan(done.body.reductions[0].tokensBefore);
    const again = await call(base, "POST", `/threads/${id}/compact`, { mode: "collapse" });
    expect(again.body.reductions).toEqual([]);
    const summary = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(summary.status).toBe(200);
    expect(summary.body.reductions).toMatchObject([{ kind: "summary", trigger: "request", summaryModel: "sim-8k" }]);
    expect((await call(base, "POST", `/threads/${id}/compact`, { mode: "shrink" })).status).toBe(400);
    expect((await call(base, "GET", `/threads/thr_00000000000000000000000000/compact`)).status).toBe(404);
    // A retired thread is not compacted, as it takes no messages.
    await call(base, "DELETE", `/threads/${id}?reason=done`);
    const retired = await call(base, "POST", `/threads/${id}/compact`, {});
    expect([retired.status, retired.body.code]).toEqual([409, "thread-archived"]);
  });

  it("gives a fork before a reduction the full history and a fork after it the reduced one", async () => {
    const base = front().url;
    const id = await spawn(base);
    for (let n = 1; n <= 5; n++) await send(base, id, sim({ tool: output(1200) }, instruction(n)));
    const before = (await events(base, id)).at(-1)!.seq;
    await call(base, "POST", `/threads/${id}/compact`, { mode: "microcompact" });
    const after = (await events(base, id)).at(-1)!.seq;
    const forkTranscript = async (atSeq: number) => {
      const child = (await call(base, "POST", `/threads/${id}/fork`, { atSeq })).body.threadId as string;
      return JSON.stringify((await events(base, child)).find((e) => e.kind === "fork")!.body.transcript);
    };
    expect(await forkTranscript(before)).not.toContain("removed to save context");
    expect(await forkTranscript(after)).toContain("removed to save context");
  });
});

describe("a forced window waiting for the caller", () => {
  const front = useFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "120000" } });

  /** Fills a thread until a message meets a forced window; answers the seq of its `window-pending`. */
  async function forcedWindow(base: string, id: string): Promise<LoggedEvent> {
    for (let n = 1; n <= 40; n++) {
      const posted = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: output(2400) }, instruction(n)), async: true });
      expect(posted.status).toBe(202);
      const forced = await waitFor(async () => {
        const log = await events(base, id);
        const pending = log.find((e) => e.kind === "window-pending" && e.body.forced);
        if (pending) return { pending };
        const turn = (await call(base, "GET", `/threads/${id}/turn`)).body;
        return !turn.running && turn.queued === 0 ? { pending: null } : null;
      });
      if (forced.pending) return forced.pending;
    }
    throw new Error("no forced window in 40 turns");
  }

  it("waits for POST /compact, settles by the caller's choice, then runs the turn", async () => {
    const base = front().url;
    const id = await spawn(base);
    const pending = await forcedWindow(base, id);
    expect(pending.body).toMatchObject({ forced: true, deadlineMs: 120000 });
    const status = (await call(base, "GET", `/threads/${id}/compact`)).body;
    expect(status.pending).toMatchObject({ seq: pending.seq, forced: true });
    expect(Date.parse(status.pending.deadlineAt)).toBeGreaterThan(Date.now() + 60_000);
    expect((await call(base, "GET", `/threads/${id}/turn`)).body).toMatchObject({ running: false, queued: 1 });
    const done = await call(base, "POST", `/threads/${id}/compact`, { mode: "microcompact" });
    expect(done.status).toBe(200);
    await waitFor(async () => {
      const turn = (await call(base, "GET", `/threads/${id}/turn`)).body;
      return !turn.running && turn.queued === 0;
    });
    const log = await events(base, id);
    const disposition = kinds(log, "compaction-disposition");
    expect(disposition.map((d) => d.body)).toEqual([{ settledBy: "request", mode: "microcompact" }]);
    expect(kinds(log, "turn-failed")).toEqual([]);
    expect(log.at(-1)!.kind).toBe("turn-ended");
    expect((await call(base, "GET", `/threads/${id}/compact`)).body.pending).toBeNull();
  });

  // Restarts the describe's front rather than one of its own: every front started costs the suite seconds.
  it("keeps a forced window across a restart: the queued message still waits for the caller, and runs once it compacts", async () => {
    const first = front();
    let second: Awaited<ReturnType<typeof startFront>> | undefined;
    try {
      const id = await spawn(first.url);
      const pending = await forcedWindow(first.url, id);
      await first.stop();
      second = await startFront({ dataDir: first.dataDir, env: { SERVICE_WINDOW_DEADLINE_MS: "120000" } });
      const base = second.url;
      const status = (await call(base, "GET", `/threads/${id}/compact`)).body;
      expect(status.pending).toMatchObject({ seq: pending.seq, forced: true });
      expect((await call(base, "GET", `/threads/${id}/turn`)).body.queued).toBe(1);
      expect((await call(base, "POST", `/threads/${id}/compact`, {})).status).toBe(200);
      await waitFor(async () => (await events(base, id)).at(-1)!.kind === "turn-ended");
      const log = await events(base, id);
      expect(kinds(log, "compaction-disposition").map((d) => d.body.settledBy)).toEqual(["request"]);
    } finally {
      // The describe's front removes the data directory they shared.
      await second?.stop();
    }
  });
});

/** A thread of five tool turns, each message an instruction, ready to be summarized. */
async function fiveTurns(base: string): Promise<string> {
  const id = await spawn(base);
  for (let n = 1; n <= 5; n++) expect((await send(base, id, sim({ tool: output(1200), reply: `turn ${n} done` }, instruction(n)))).outcome).toBe("completed");
  return id;
}

describe("summaries by the curator model", () => {
  const front = useFront({ env: { SERVICE_CURATOR_MODEL: "sim-broken", SERVICE_CURATOR_FALLBACK_MODEL: "sim-1" } });

  it("are written by the fallback when the curator fails, replace the cut range, and keep the user's messages verbatim", async () => {
    const base = front().url;
    const id = await fiveTurns(base);
    expect((await call(base, "GET", `/threads/${id}/compact`)).body.pending).toBeNull();
    const done = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(done.status).toBe(200);
    const [summary] = done.body.reductions;
    expect(summary).toMatchObject({ kind: "summary", trigger: "request", summaryModel: "sim-1" });
    expect(summary.summary.length).toBeGreaterThan(0);
    expect(summary.tokensAfter).toBeLessThan(summary.tokensBefore);
    expect((await send(base, id, "and now?")).outcome).toBe("completed");
    const prompt = await lastPrompt(front().simulatorUrl!);
    expect(prompt).toContain("[Summary of the conversation from event");
    for (let n = 1; n <= 5; n++) expect(prompt).toContain(instruction(n));
    // The cut tool results of the older turns are gone from the context; the log still has them.
    expect(prompt.match(/a{1200}/g)?.length ?? 0).toBeLessThan(5);
    expect((await events(base, id)).filter((e) => e.kind === "tool-result").length).toBe(5);
  });
});

describe.each([
  ["sim-broken", "a 500"],
  ["sim-slow", "no answer in time"],
  ["sim-cut", "a stream cut off"],
])("a curator model that fails (%s: %s)", (model) => {
  const front = useFront({ env: { SERVICE_CURATOR_MODEL: model, SERVICE_CURATOR_TIMEOUT_MS: "1500" } });

  it("cuts nothing with a summary: the cheap kinds run instead and say so, and no reduction names a model", async () => {
    const base = front().url;
    const id = await fiveTurns(base);
    const done = await call(base, "POST", `/threads/${id}/compact`, { mode: "summary" });
    expect(done.status).toBe(200);
    const reductions = done.body.reductions as { kind: string; summaryModel?: string; summaryFailed?: string }[];
    expect(reductions.length).toBeGreaterThan(0);
    expect(reductions.every((r) => r.kind !== "summary" && r.summaryModel === undefined && r.summaryFailed?.startsWith(`${model}: `))).toBe(true);
    const log = await events(base, id);
    expect(log.some((e) => e.kind === "system" && e.body.text.startsWith("no model wrote the summary"))).toBe(true);
    expect(kinds(log, "window").every((w) => w.body.kind !== "summary")).toBe(true);
    expect((await send(base, id, "still fine?")).outcome).toBe("completed");
  });
});
