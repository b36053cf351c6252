import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-unanswered-"));
afterAll(() => removeDir(work));

const front = useFront();

// A turn that ends while a tool call waits (interrupted at its approval, or its tool still
// running) leaves a call without a result; providers refuse such a conversation, so the
// next turn must still get through on every engine.
describe.each(EVERY_ENGINE)("a tool call left without a result (%s)", (_engine, spec) => {
  it("interrupted at its approval: the next turn completes", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask" })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo never" } } }, "run it"), async: true });
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    const stopped = await call(base, "POST", `/threads/${id}/interrupt`, {});
    expect(stopped.body.outcome).toBe("failed");
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "are you there?" });
    expect(next.body.outcome, JSON.stringify(next.body.failure)).toBe("completed");
  });

  it("interrupted while its tool runs: the next turn completes", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "allow" })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "sleep 30" } } }, "run it"), async: true });
    await waitFor(async () => (await events(base, id)).some((e) => e.kind === "tool-call"));
    const stopped = await call(base, "POST", `/threads/${id}/interrupt`, {});
    expect(stopped.body.outcome).toBe("failed");
    const next = await call(base, "POST", `/threads/${id}/send`, { text: "are you there?" });
    expect(next.body.outcome, JSON.stringify(next.body.failure)).toBe("completed");
  });
});

describe("the transcript after a turn that left a call unanswered", () => {
  it("carries a result saying what happened, which a fork is given too", async () => {
    const base = front().url;
    // engine_b reports no result for a call its turn was interrupted at (pi and engine_a report one).
    const id = (await call(base, "POST", "/spawn", { engine: "engine_b", model: "gpt-sim", cwd: work, permissions: "ask" })).body.threadId as string;
    await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "shell", input: { command: "echo never" } } }, "run it"), async: true });
    await waitFor(async () => (await call(base, "GET", `/threads/${id}/turn`)).body.waitingOn.approvals[0]);
    await call(base, "POST", `/threads/${id}/interrupt`, {});
    const log = await events(base, id);
    const callId = log.find((e) => e.kind === "tool-call")!.body.callId;
    // The log keeps what happened: no tool-result event was written for the call.
    expect(log.some((e) => e.kind === "tool-result")).toBe(false);
    const fork = (await call(base, "POST", `/threads/${id}/fork`, { atSeq: log.at(-1)!.seq })).body.threadId as string;
    const transcript = (await events(base, fork)).find((e) => e.kind === "fork")!.body.transcript as { role: string; callId?: string; output?: string; isError?: boolean }[];
    expect(transcript.filter((t) => t.role === "tool-result")).toEqual([
      { role: "tool-result", callId, name: "exec_command", output: "(no result: the turn ended (interrupted) before this call finished)", isError: true },
    ]);
    expect((await call(base, "POST", `/threads/${fork}/send`, { text: "and now?" })).body.outcome).toBe("completed");
  });
});
