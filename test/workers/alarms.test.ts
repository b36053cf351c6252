import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Thread } from "../../objects/thread.js";
import { waitFor } from "../support/wait-for.js";
import { newThread, stubOf, value } from "./support.js";

// The object's one alarm (objects/lib/alarm-schedule.ts): every timed thing expires on time
// with its in-memory state gone. workerd's clock cannot be moved, so time passes the other
// way: the durable time a due time is computed from (an event's `ts`, a deadline in the
// state) is moved back, and the alarm is run.

type Stub = ReturnType<typeof stubOf>;
type Event = { seq: number; ts: string; kind: string; body: any };

async function events(stub: Stub): Promise<Event[]> {
  return JSON.parse(value(await stub.page({ after: 0, limit: 1000, waitMs: 0 }))).events;
}

/** Throws the instance away with its timers and memory, as an eviction does; the next call builds a new one. */
async function evict(id: string): Promise<Stub> {
  await runInDurableObject(stubOf(id), (_t: Thread, state) => state.abort("evicted")).catch(() => {});
  const stub = stubOf(id);
  value(await stub.get());
  return stub;
}

const alarmOf = (stub: Stub) => runInDurableObject(stub, (_t: Thread, state) => state.storage.getAlarm());

/** Waits until the alarm is set to `at` (a new instance sets it a moment after it is built). */
async function alarmAt(stub: Stub, at: number): Promise<void> {
  await waitFor(async () => (await alarmOf(stub)) === at, 3000).catch(async () => expect(await alarmOf(stub)).toBe(at));
}

/** As if `ms` more had passed since the event at `seq`. */
function age(stub: Stub, seq: number, ms: number): Promise<void> {
  return runInDurableObject(stub, (_t: Thread, state) => {
    const { ts } = state.storage.sql.exec<{ ts: string }>("SELECT ts FROM events WHERE seq = ?", seq).one();
    state.storage.sql.exec("UPDATE events SET ts = ? WHERE seq = ?", new Date(Date.parse(ts) - ms).toISOString(), seq);
  });
}

describe("the thread's one alarm", () => {
  it("expires a gate's approval past a minute with no turn running, after the instance that opened it was evicted", async () => {
    const { id, stub } = await newThread({ approvalTimeoutMs: 90_000 });
    const gate = value(await stub.gate({ mode: "human", step: "ship", async: true }));
    const opened = (await events(stub)).find((e) => e.seq === gate.seq)!;
    const due = Date.parse(opened.ts) + 90_000;
    // The catalog's safety net, a minute out, comes first.
    expect(await alarmOf(stub)).toBeLessThan(due);
    let now = await evict(id);
    // That alarm fires with no turn running: nothing is due yet, and the wait's time is kept.
    expect(await runDurableObjectAlarm(now)).toBe(true);
    expect(await alarmOf(now)).toBe(due);
    await age(now, gate.seq, 90_000);
    now = await evict(id);
    await runDurableObjectAlarm(now);
    const log = await waitFor(async () => {
      const all = await events(now);
      return all.some((e) => e.kind === "gate") && all;
    });
    expect(log.find((e) => e.kind === "approval-resolved")!.body).toEqual({ approvalId: gate.approvalId, decision: "deny", expired: true });
    expect(log.find((e) => e.kind === "gate")!.body).toMatchObject({ gate: gate.gate, passed: false, reasons: ["nobody answered the gate's approval in time"] });
  });

  it("keeps a question's expiry when an earlier alarm fires, and dismisses it then", async () => {
    const { stub } = await newThread({ questionTimeoutMs: 20_000 });
    value(await stub.postMessage({ text: "askme" }));
    const asked = await waitFor(async () => (await events(stub)).find((e) => e.kind === "question"));
    const due = Date.parse(asked.ts) + 20_000;
    // Sooner than the running turn's keep-alive (30 s).
    await alarmAt(stub, due);
    // An alarm before it (another part's): the question's time is what the alarm is set to after it.
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alarmOf(stub)).toBe(due);
    await age(stub, asked.seq, 20_000);
    await runDurableObjectAlarm(stub);
    const log = await waitFor(async () => {
      const all = await events(stub);
      return all.some((e) => e.kind === "turn-ended") && all;
    });
    expect(log.find((e) => e.kind === "question-resolved")!.body).toEqual({ requestId: asked.body.requestId, action: "dismiss", expired: true });
    expect(log.find((e) => e.kind === "reply")!.body.text).toBe("told: dismiss");
  });

  it("settles a forced window at its deadline when the instance waiting it out was evicted", async () => {
    const { id, stub } = await newThread({ permissions: "allow" });
    const message = (n: number) => `withtool smallwindow ${n} ${"word ".repeat(160)}`;
    let pending: { deadlineAt: string | null } | null = null;
    for (let n = 1; n <= 12 && !pending; n++) {
      stub.send({ text: message(n) }).catch(() => {});
      for (let i = 0; i < 400; i++) {
        const status = value(await stub.compactionStatus());
        if (status.pending?.forced) {
          pending = status.pending;
          break;
        }
        const turn = value(await stub.turnStatus());
        if (!turn.running && turn.queued === 0) break;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    expect(pending?.deadlineAt).toBeTruthy();
    const deadline = Date.parse(pending!.deadlineAt!);
    let now = await evict(id);
    // The new instance waits nothing out in memory: the alarm comes at the deadline.
    await alarmAt(now, deadline);
    expect(value(await now.turnStatus())).toMatchObject({ running: false, queued: 1 });
    // The deadline passes.
    await runInDurableObject(now, (_t: Thread, state) => {
      state.storage.sql.exec("UPDATE thread SET state = json_set(state, '$.window.pending.deadlineAt', ?)", Date.now() - 1000);
    });
    now = await evict(id);
    await runDurableObjectAlarm(now);
    await waitFor(async () => {
      const turn = value(await now.turnStatus());
      return !turn.running && turn.queued === 0;
    });
    const log = await events(now);
    expect(log.filter((e) => e.kind === "compaction-disposition").map((e) => e.body.settledBy)).toEqual(["deadline"]);
    expect(log.at(-1)!.kind).toBe("turn-ended");
  });

  it("cancels a handoff offer nobody answers within SERVICE_HANDOFF_TIMEOUT_MS, after an eviction", async () => {
    const { id, stub } = await newThread();
    value(await stub.joinSeat("other", { engine: "pi", model: "sim-2", placement: "host" }, null));
    const offer = value(await stub.offerHandoff("other", null, "full"));
    // vitest.config.ts sets the timeout to 90 s for the workers tests.
    const due = Date.parse(offer.ts) + 90_000;
    let now = await evict(id);
    expect(await runDurableObjectAlarm(now)).toBe(true);
    expect(await alarmOf(now)).toBe(due);
    await age(now, offer.fromSeq, 90_000);
    now = await evict(id);
    await runDurableObjectAlarm(now);
    const cancelled = await waitFor(async () => (await events(now)).find((e) => e.kind === "handoff-cancelled"));
    expect(cancelled.body).toEqual({ fromSeq: offer.fromSeq, reason: "nobody accepted or declined it within 90000 ms", expired: true });
    expect(value(await now.handoffList()).handoffs[0]).toMatchObject({ fromSeq: offer.fromSeq, state: "cancelled", answeredSeq: cancelled.seq });
    // The next offer is not held off by it.
    value(await now.offerHandoff("other", null, "full"));
  });
});
