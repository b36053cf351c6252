import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events, sim } from "../support/http.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-compaction-"));
afterAll(() => removeDir(work));

const front = useFront({ env: { SERVICE_WINDOW_DEADLINE_MS: "200" } });

/** A tool call whose output is `chars` characters: about a quarter as many tokens. */
const output = (chars: number) => ({ name: "shell", input: { command: `head -c ${chars} /dev/zero | tr '\\0' a` } });

async function requests(): Promise<string[]> {
  const { requests } = (await (await fetch(`${front().simulatorUrl}/_sim/requests`)).json()) as { requests: { body: unknown }[] };
  return requests.map((r) => JSON.stringify(r.body));
}

// The same scenario on every engine: a long, tool-heavy thread on a model whose window is
// 8,192 tokens (engine_b's own prompt and tools take about 4,800 of them, engine_a's 2,500).
describe.each([
  ["pi", { model: "sim-8k" }, 2400, 30],
  ["engine_b", { engine: "engine_b", model: "sim-8k" }, 800, 14],
  ["engine_a", { model: "claude-sim-8k" }, 1600, 16],
])("a long tool-heavy thread on a small window (%s)", (engine, spec, chars, turns) => {
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
    if (engine !== "pi") expect((await requests()).some((r) => r.includes("Earlier in this conversation:"))).toBe(true);
  });
});
