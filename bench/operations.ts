/**
 * The operation and subscription rows of `npm run bench`: how soon a wake follows the
 * event that matched (from the watched event's commit to the wake message's commit, both
 * by their own timestamps), and what a delegation costs when its child answers at once.
 */
import type { Front } from "../test/support/front.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

interface Event {
  seq: number;
  ts: string;
  kind: string;
  body: Record<string, unknown>;
}

async function log(front: Front, id: string): Promise<Event[]> {
  const out: Event[] = [];
  let after = 0;
  for (;;) {
    const page = (await (await fetch(`${front.url}/threads/${id}/tail?after=${after}&limit=1000`)).json()) as { events: Event[]; nextAfter: number; hasMore: boolean };
    out.push(...page.events);
    if (!page.hasMore) return out;
    after = page.nextAfter;
  }
}

async function until<T>(probe: () => Promise<T | null>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error("bench: timed out waiting");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** 100 held messages on a watched thread, one at a time: each one's commit to its wake's commit on the watcher. */
async function wakeLatency(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const watcher = (await front.client.spawn({ model: "sim-1" })).threadId;
  const watched = (await front.client.spawn({ model: "sim-1" })).threadId;
  await front.client.subscribe(watcher, { watch: { thread: watched }, filter: { kinds: ["message"] } });
  const n = 100;
  const gaps: number[] = [];
  for (let i = 0; i < n; i++) {
    const sent = await front.client.post(watched, { text: `event ${i}`, hold: true });
    const wake = await until(async () => (await log(front, watcher)).find((e) => e.kind === "message" && ((e.body.wake as { seqs?: number[] } | undefined)?.seqs ?? []).includes(sent.seq)) ?? null);
    gaps.push(Date.parse(wake.ts) - Date.parse(sent.ts));
  }
  row(
    `a wake: the watched event's commit to the wake message's commit (${n}, one at a time)`,
    `p50 ${fmt(percentile(gaps, 50))} ms, p95 ${fmt(percentile(gaps, 95))} ms`,
    "the coalescing wait before a delivery: 25 ms",
    "",
    "p95 < 1000 ms",
  );
}

/** A delegation whose child answers at once: from `POST operations` to the parent's wake, against a plain send to a thread. */
async function delegation(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const parent = (await front.client.spawn({ model: "sim-1" })).threadId;
  const n = 30;
  const times: number[] = [];
  const sends: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const op = await front.client.startOperation(parent, { kind: "delegation", title: `task ${i}`, prompt: `do ${i}` });
    await until(async () => ((await log(front, parent)).some((e) => e.kind === "message" && e.body.from === `operation:${op.operation}`) ? true : null));
    times.push(performance.now() - t);
    const s = performance.now();
    const child = (await front.client.spawn({ model: "sim-1" })).threadId;
    await front.client.send(child, { text: `do ${i}` });
    sends.push(performance.now() - s);
  }
  row(
    `a delegation whose child answers at once: POST operations to the parent's wake (${n})`,
    `p50 ${fmt(percentile(times, 50), 1)} ms, p95 ${fmt(percentile(times, 95), 1)} ms`,
    `a spawn and the same turn sent to it straight: p50 ${fmt(percentile(sends, 50), 1)} ms`,
    fmt(percentile(times, 50) / percentile(sends, 50), 2),
    "",
  );
}

export async function operationRows(front: Front, row: Row, fmt: Fmt): Promise<void> {
  await wakeLatency(front, row, fmt);
  await delegation(front, row, fmt);
}
