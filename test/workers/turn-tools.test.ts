import { describe, expect, it } from "vitest";
import { newThread, SPEC, value } from "./support.js";

type Stub = Awaited<ReturnType<typeof newThread>>["stub"];

async function runningTurn(stub: Stub): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const t = value(await stub.turnStatus());
    if (t.turn) return t.turn.turnId;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error("no turn started");
}

describe("a runtime tool call, as the Thread checks it (docs/tools.md)", () => {
  it("belongs to the running turn: its seat and permissions while it runs, turn-not-running before and after", async () => {
    const { stub } = await newThread({ permissions: "deny" });
    expect(await stub.toolTurn("turn_none")).toMatchObject({ ok: false, status: 409, body: { code: "turn-not-running" } });
    value(await stub.postMessage({ text: "hang" }));
    const turnId = await runningTurn(stub);
    expect(value(await stub.toolTurn(turnId))).toEqual({ room: null, inputs: [2], seat: "main", sourceSeq: 2, permissions: "deny", engine: "pi", model: SPEC.model });
    expect(await stub.toolTurn("turn_other")).toMatchObject({ ok: false, body: { code: "turn-not-running" } });
    // A thread that answers no delegation has nobody to report to.
    expect(await stub.reportToDelegator(turnId, JSON.stringify({ milestone: { text: "x" } }))).toMatchObject({ ok: false, status: 409, body: { code: "not-delegated" } });
    value(await stub.interrupt());
    expect(await stub.toolTurn(turnId)).toMatchObject({ ok: false, body: { code: "turn-not-running" } });
    expect(await stub.offerHandoffFromTurn(turnId, "main", null, "full")).toMatchObject({ ok: false, body: { code: "turn-not-running" } });
  });

  it("offers the thread from the holder's turn only", async () => {
    const { stub } = await newThread();
    value(await stub.joinSeat("other", { engine: "pi", model: "sim-2", placement: "host" }, null));
    value(await stub.postMessage({ text: "hang" }));
    const turnId = await runningTurn(stub);
    const offered = value(await stub.offerHandoffFromTurn(turnId, "other", "yours", "full"));
    expect(offered).toMatchObject({ from: "main", to: "other", offeredBy: "engine" });
    value(await stub.declineHandoff(offered.fromSeq));
    value(await stub.interrupt());
    // Seat other's turn: it does not hold the thread, so it cannot offer it.
    value(await stub.postMessage({ text: "hang", seat: "other" }));
    const othersTurn = await runningTurn(stub);
    expect(await stub.offerHandoffFromTurn(othersTurn, "main", null, "full")).toMatchObject({ ok: false, status: 409, body: { code: "seat-not-holder" } });
    value(await stub.interrupt());
  });
});
