/**
 * The seat, steering and attachment rows of `npm run bench`: what a second seat costs a
 * turn, how much sooner a steered message is answered than a queued one, and what an
 * attachment costs a message and a turn. Each against a baseline taken in the same run.
 */
import type { Front } from "../test/support/front.js";
import { sim } from "../test/support/http.js";
import { percentile, sequential } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const TURNS = 100;

async function sendOk(front: Front, id: string, body: Parameters<Front["client"]["send"]>[1]): Promise<void> {
  const r = await front.client.send(id, body);
  if (r.outcome !== "completed") throw new Error(`turn failed: ${JSON.stringify(r.failure)}`);
}

/** Turns on a thread whose two seats take turns about (each sees the other's words labelled), against a thread with one seat. */
async function twoSeats(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const one = (await front.client.spawn({ model: "sim-1" })).threadId;
  const two = (await front.client.spawn({ model: "sim-1" })).threadId;
  await front.client.joinSeat(two, { name: "second", model: "sim-2" });
  // Interleaved, so both threads meet the same machine: one turn on each, in turn.
  const single: number[] = [];
  const alternating: number[] = [];
  const timed = async (into: number[], send: () => Promise<void>) => {
    const t = performance.now();
    await send();
    into.push(performance.now() - t);
  };
  for (let n = 0; n < TURNS + 10; n++) {
    await timed(single, () => sendOk(front, one, { text: `turn ${n}` }));
    await timed(alternating, () => sendOk(front, two, { text: `turn ${n}`, ...(n % 2 ? { seat: "second" } : {}) }));
  }
  // The first ten of each warm up.
  const stats = (xs: number[]) => ({ p50: percentile(xs.slice(10), 50), p99: percentile(xs.slice(10), 99) });
  const [s1, s2] = [stats(single), stats(alternating)];
  row(
    `a turn on a thread whose two seats alternate (${TURNS} turns, each seat's view labelled)`,
    `p50 ${fmt(s2.p50, 1)} ms, p99 ${fmt(s2.p99, 1)} ms`,
    `the same turns on a thread with one seat, interleaved: p50 ${fmt(s1.p50, 1)} ms`,
    fmt(s2.p50 / s1.p50, 2),
    "",
  );
}

/**
 * A message sent while a turn runs a 300 ms command, answered: steered into that turn,
 * against queued for the next one. From the message's post to the end of the turn that
 * answers it.
 */
async function steering(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const rounds = 20;
  const answered = async (onBusy: "steer" | "queue"): Promise<number> => {
    const id = (await front.client.spawn({ model: "sim-1", permissions: "allow" })).threadId;
    await front.client.post(id, { text: sim({ tool: { name: "shell", input: { command: "sleep 0.3" } }, reply: "done" }) });
    // Sent once the command runs, so both wait out the same rest of it.
    for (;;) {
      const page = await front.client.tail(id, { after: 0 });
      if (page.events.some((e) => e.kind === "tool-call")) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const t = performance.now();
    const r = await front.client.send(id, { text: "also this", onBusy });
    if (r.outcome !== "completed") throw new Error(`the ${onBusy} turn failed: ${JSON.stringify(r.failure)}`);
    return performance.now() - t;
  };
  const steered: number[] = [];
  const queued: number[] = [];
  for (let i = 0; i < rounds; i++) {
    steered.push(await answered("steer"));
    queued.push(await answered("queue"));
  }
  const s = percentile(steered, 50);
  const q = percentile(queued, 50);
  row(
    "a message to a turn running a 300 ms command, answered: steered into it (pi)",
    `p50 ${fmt(s, 1)} ms`,
    `queued for the next turn: p50 ${fmt(q, 1)} ms`,
    fmt(s / q, 2),
    "",
  );
}

/** A held message carrying a 1 MiB attachment (stored apart, by hash), against the same megabyte as its text; and a turn with a 256 KiB file. */
async function attachments(front: Front, row: Row, fmt: Fmt): Promise<void> {
  const id = (await front.client.spawn({ model: "sim-1" })).threadId;
  const mib = Buffer.alloc(1 << 20);
  let k = 0;
  const withFile = async () => {
    // Different bytes each time: a repeated attachment would cost one hash and no store.
    mib.writeUInt32LE(k++, 0);
    await front.client.post(id, { text: "see the file", hold: true, attachments: [{ name: "data.bin", mediaType: "application/octet-stream", base64: mib.toString("base64") }] });
  };
  // The same bytes as text instead: a large body, which the log also stores apart by hash.
  const big = "x".repeat(1 << 20);
  const plain = async () => void (await front.client.post(id, { text: `${k++}${big}`, hold: true }));
  await sequential(5, withFile);
  const attached = await sequential(50, withFile);
  const bare = await sequential(50, plain);
  row(
    "a message with a 1 MiB attachment, accepted (held: no turn)",
    `p50 ${fmt(attached.p50, 1)} ms`,
    `the same megabyte as the message's text (a large body, stored apart too): p50 ${fmt(bare.p50, 1)} ms`,
    fmt(attached.p50 / bare.p50, 2),
    "",
  );
  const turnsOn = (await front.client.spawn({ model: "sim-1" })).threadId;
  const text = "x".repeat(256 * 1024);
  let j = 0;
  const fileTurn = () => sendOk(front, turnsOn, { text: `read it ${j++}`, attachments: [{ name: `notes-${j}.txt`, mediaType: "text/plain", text }] });
  const bareTurn = () => sendOk(front, turnsOn, { text: `no file ${j++}` });
  const filed = await sequential(30, fileTurn);
  const unfiled = await sequential(30, bareTurn);
  row(
    "a turn whose message carries a 256 KiB file (placed in the working directory)",
    `p50 ${fmt(filed.p50, 1)} ms`,
    `a turn without: p50 ${fmt(unfiled.p50, 1)} ms`,
    fmt(filed.p50 / unfiled.p50, 2),
    "",
  );
}

export async function seatRows(front: Front, row: Row, fmt: Fmt): Promise<void> {
  await twoSeats(front, row, fmt);
  await steering(front, row, fmt);
  await attachments(front, row, fmt);
}
