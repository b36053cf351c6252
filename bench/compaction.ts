/**
 * The compaction rows of `npm run bench`: a long tool-heavy `pi` thread on a small window
 * against the same script on a window that never fills, a thread of long messages in the
 * default configuration against the same on a large window, and the time the non-model
 * reductions take on a 200,000-token transcript.
 */
import type { WindowBody } from "../src/api/compaction.js";
import { applyWindows, DEFAULT_WINDOW_SETTINGS, estimateEntries, planCollapse, planMicrocompact, rangesOf, type HeldEntry } from "../src/rules/compaction.js";
import { removeDir, startFront, type Front } from "../test/support/front.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;

const TURNS = Number(process.env.BENCH_COMPACTION_TURNS ?? 300);
/** Every tenth message plants an instruction the model must keep seeing. */
const planted = (n: number) => `PLANTED-${n}: never write outside the working directory`;
const message = (n: number) =>
  `@sim ${JSON.stringify({ tool: { name: "shell", input: { command: "head -c 1200 /dev/zero | tr '\\0' a" } }, reply: `step ${n} done` })}\n${n % 10 === 0 ? planted(n) : `step ${n}`}`;

interface ThreadRun {
  failedByWindow: number;
  failedOther: number;
  windows: Record<string, number>;
  tokensPerTurn: number;
  lastPrompt: string;
}

async function runThread(front: Front, model: string): Promise<ThreadRun> {
  const { threadId } = await front.client.spawn({ model, permissions: "allow" });
  let failedByWindow = 0;
  let failedOther = 0;
  for (let n = 1; n <= TURNS; n++) {
    const r = await front.client.send(threadId, { text: message(n) });
    if (r.outcome === "failed") {
      if (/context window is full/.test(r.failure?.error ?? "")) failedByWindow++;
      else failedOther++;
    }
  }
  const windows: Record<string, number> = {};
  let input = 0;
  let after: number | string = 0;
  for (;;) {
    const page = (await front.client.tail(threadId, { after, limit: 1000 })) as { events: { kind: string; body: Record<string, unknown> }[]; nextAfter?: string; hasMore?: boolean };
    for (const e of page.events) {
      if (e.kind === "window") windows[String(e.body.kind)] = (windows[String(e.body.kind)] ?? 0) + 1;
      if (e.kind === "usage") input += Number(e.body.inputTokens);
    }
    if (!page.hasMore || !page.nextAfter) break;
    after = page.nextAfter;
  }
  const { requests } = (await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json()) as { requests: { body: { model?: string } }[] };
  const last = [...requests].reverse().find((q) => q.body.model === model);
  return { failedByWindow, failedOther, windows, tokensPerTurn: input / TURNS, lastPrompt: JSON.stringify(last?.body ?? "") };
}

export async function longThread(row: Row, fmt: (n: number, digits?: number) => string): Promise<void> {
  // The runtime chooses at once (no caller waits on the window); the simulator's sim-1 writes the summaries.
  const front = await startFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "0", SERVICE_CURATOR_MODEL: "sim-1" } });
  try {
    const small = await runThread(front, "sim-8k");
    const large = await runThread(front, "sim-1");
    const plantedNs = Array.from({ length: Math.floor(TURNS / 10) }, (_, i) => (i + 1) * 10);
    const kept = plantedNs.filter((n) => small.lastPrompt.includes(planted(n))).length;
    const kinds = Object.entries(small.windows).map(([k, v]) => `${v} ${k}`).join(", ") || "none";
    row(
      `a ${TURNS}-turn tool-heavy pi thread on sim-8k (8,192 tokens), curator sim-1`,
      `${small.failedByWindow} turns failed by a full window (${small.failedOther} otherwise); reductions: ${kinds}; ${fmt(small.tokensPerTurn)} input tokens a turn`,
      `the same script on sim-1 (200,000 tokens, never reduced): ${fmt(large.tokensPerTurn)} input tokens a turn`,
      fmt(small.tokensPerTurn / large.tokensPerTurn, 3),
      "0 failed by a full window",
    );
    row(
      "planted instructions (every tenth message) verbatim in the last prompt after the last reduction",
      `${kept} of ${plantedNs.length}`,
      "the newest within the 2,000-token budget stay verbatim; older ones only through the summaries, which the simulator writes extractively (docs/simulator.md)",
      "",
      "",
    );
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
}

/** A message of `words` words, which the simulator echoes: a turn of 600 words takes a fifth of an 8,192-token window. */
const wordy = (n: number, words: number) => `message ${n}: ${Array.from({ length: words }, (_, i) => `w${n}x${i}`).join(" ")}`;

/** Each turn's wall time as the sender waits for it, and how many failed. */
async function timedTurns(front: Front, model: string, words: number, turns: number): Promise<{ times: number[]; failed: number }> {
  const { threadId } = await front.client.spawn({ model, permissions: "allow" });
  const times: number[] = [];
  let failed = 0;
  for (let n = 1; n <= turns; n++) {
    const t = performance.now();
    if ((await front.client.send(threadId, { text: wordy(n, words) })).outcome !== "completed") failed++;
    times.push(performance.now() - t);
  }
  return { times, failed };
}

/**
 * Issue 27's thread: 24 turns of long messages on sim-8k in the default configuration (no
 * curator model, the 10 s forced-window deadline), against the same script on sim-1, whose
 * window never fills. Before issue 27, 19 of 24 turns failed and each forced window waited 10 s.
 */
export async function defaultConfigThread(row: Row, fmt: (n: number, digits?: number) => string): Promise<void> {
  const front = await startFront();
  try {
    for (const words of [600, 900]) {
      const small = await timedTurns(front, "sim-8k", words, 24);
      const large = await timedTurns(front, "sim-1", words, 24);
      const p = (times: number[]) => `p50 ${fmt(percentile(times, 50))} ms, p95 ${fmt(percentile(times, 95))} ms`;
      row(
        `a 24-turn pi thread of ${words}-word messages on sim-8k, default configuration (turn wall time)`,
        `${p(small.times)}; ${small.failed} failed`,
        `the same script on sim-1 (200,000 tokens): ${p(large.times)}; ${large.failed} failed`,
        fmt(percentile(small.times, 95) / percentile(large.times, 95), 2),
        "0 failed, no turn waits the 10 s deadline",
      );
    }
  } finally {
    await front.stop();
    removeDir(front.dataDir);
  }
}

/** A transcript of about `tokens` tokens: turns of a message, two tool calls with 700-character results, and a reply. */
function transcript(tokens: number): HeldEntry[] {
  const out: HeldEntry[] = [];
  let seq = 1;
  for (let t = 0; estimateEntries(out) < tokens; t++) {
    out.push({ seq: seq++, entry: { role: "user", text: `message ${t}: please look at the next file and say what it does` } });
    for (let i = 0; i < 2; i++) {
      const callId = `c${t}.${i}`;
      out.push({ seq: seq++, entry: { role: "tool-call", callId, name: "shell", input: { command: `cat src/file-${t}-${i}.ts` } } });
      out.push({ seq: seq++, entry: { role: "tool-result", callId, name: "shell", output: "x".repeat(700), isError: false } });
    }
    out.push({ seq: seq++, entry: { role: "assistant", text: `file ${t} defines a small helper` } });
  }
  return out;
}

export function reductionTimes(row: Row, fmt: (n: number, digits?: number) => string): void {
  const held = transcript(200_000);
  const time = (plan: (view: HeldEntry[]) => Set<number>, kind: WindowBody["kind"]) => {
    const times: number[] = [];
    for (let i = 0; i < 60; i++) {
      const t = performance.now();
      const cut = plan(held);
      const w: WindowBody = { kind, cut: rangesOf(held, cut), tokensBefore: 0, tokensAfter: 0, trigger: "line" };
      applyWindows(held, [w]);
      times.push(performance.now() - t);
    }
    return times.slice(10);
  };
  const micro = time((v) => planMicrocompact(v, DEFAULT_WINDOW_SETTINGS), "microcompact");
  const collapse = time((v) => planCollapse(v, DEFAULT_WINDOW_SETTINGS), "collapse");
  for (const [kind, times] of [["microcompact", micro], ["collapse", collapse]] as const)
    row(
      `${kind} on a ${fmt(estimateEntries(held))}-token transcript (${held.length} entries): plan, ranges, context rebuilt`,
      `p50 ${fmt(percentile(times, 50), 1)} ms, p95 ${fmt(percentile(times, 95), 1)} ms`,
      "",
      "",
      "p95 < 50 ms",
    );
}
