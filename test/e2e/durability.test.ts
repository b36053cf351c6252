import { afterAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";

let dataDir: string | null = null;
let last: Front | null = null;
afterAll(async () => {
  await last?.stop().catch(() => {});
  if (dataDir) removeDir(dataDir);
});

describe("durability", () => {
  it("keeps every acknowledged append across a kill -9 of the front", async () => {
    const front = await startFront();
    dataDir = front.dataDir;
    const threads = await Promise.all([0, 1, 2, 3].map(() => front.client.spawn()));
    const acked = new Map<string, Map<number, string>>(threads.map((t) => [t.threadId, new Map()]));
    let stop = false;
    // Errors are expected once the front is being killed, and only then.
    let killing = false;
    // 16 writers over 4 threads, each recording what the runtime acknowledged.
    const writers = Array.from({ length: 16 }, async (_, w) => {
      const id = threads[w % 4]!.threadId;
      for (let i = 0; !stop; i++) {
        const text = `w${w}-${i}`;
        try {
          const { seq } = await front.client.post(id, { text });
          acked.get(id)!.set(seq, text);
        } catch (err) {
          if (!killing) throw err;
          return;
        }
      }
    });
    // Killed under load: once a good many appends were acknowledged, not after a guessed time.
    while ([...acked.values()].reduce((n, m) => n + m.size, 0) < 400) await new Promise((r) => setTimeout(r, 10));
    killing = true;
    await front.kill9();
    stop = true;
    await Promise.all(writers);
    const total = [...acked.values()].reduce((n, m) => n + m.size, 0);
    expect(total).toBeGreaterThan(100);

    last = await startFront({ dataDir: front.dataDir });
    for (const [id, seqs] of acked) {
      const stored = new Map<number, string>();
      const every: number[] = [];
      let after = "0";
      for (;;) {
        const page = await last.client.tail(id, { after, limit: 1000 });
        for (const e of page.events) {
          every.push(e.seq);
          if (e.kind === "message") stored.set(e.seq, e.body.text);
        }
        after = page.nextAfter;
        if (!page.hasMore) break;
      }
      for (const [seq, text] of seqs) expect(stored.get(seq), `${id} seq ${seq}`).toBe(text);
      // No gaps: the log (messages, and the turns they started) holds 1..n, and at most a
      // few messages were committed but never acknowledged.
      expect(every).toEqual(Array.from({ length: every.length }, (_, i) => i + 1));
      expect(stored.size - seqs.size).toBeLessThanOrEqual(16);
    }
  });
});
