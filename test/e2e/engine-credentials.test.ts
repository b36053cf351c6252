import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, sim } from "../support/http.js";

const CANARIES = { OPENAI_API_KEY: "sk-canary-openai-5e1", ANTHROPIC_API_KEY: "sk-ant-canary-9c2" };
let front: Front;
const work = mkdtempSync(join(tmpdir(), "agent-runtime-creds-"));

beforeAll(async () => {
  // Real-looking keys in the front's environment, with the simulator on: no engine may see them.
  front = await startFront({ env: { ...CANARIES, SERVICE_SIMULATOR: "on" } });
});
afterAll(async () => {
  await front?.stop();
  removeDir(front.dataDir);
  removeDir(work);
});

describe("engines hold placeholder credentials only, and reach nothing outside 127.0.0.1", () => {
  for (const spec of [{ engine: "pi", model: "sim-1" }, { engine: "engine_a", model: "claude-sim" }, { engine: "engine_b", model: "gpt-sim" }]) {
    it(`${spec.engine}: a command's environment and every model call carry no real key`, async () => {
      await fetch(`${front.simulatorUrl}/_sim/requests`, { method: "DELETE" });
      const { threadId } = (await call(front.url, "POST", "/spawn", { ...spec, permissions: "allow", cwd: work })).body;
      const r = await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: "env" } } }) });
      expect(r.body.outcome, JSON.stringify(r.body.failure)).toBe("completed");
      const log = JSON.stringify((await call(front.url, "GET", `/threads/${threadId}/tail?limit=1000`)).body.events);
      const seen = JSON.stringify(await (await fetch(`${front.simulatorUrl}/_sim/requests`)).json());
      expect(log).toContain("PATH=");
      for (const key of Object.values(CANARIES)) {
        expect(log).not.toContain(key);
        expect(seen).not.toContain(key);
      }
    });
  }

  it("saw no engine try an outside host, and would have: a command that tries is refused", async () => {
    // The three turns above ran with the egress guard as every engine's proxy.
    expect(front.output()).not.toContain("refused egress");
    const { threadId } = (await call(front.url, "POST", "/spawn", { engine: "engine_a", model: "claude-sim", permissions: "allow", cwd: work })).body;
    const tries = "curl -s -o /dev/null -w '%{http_code}' --max-time 5 https://example.com/ || true";
    await call(front.url, "POST", `/threads/${threadId}/send`, { text: sim({ tool: { name: "shell", input: { command: tries } } }) });
    expect(front.output()).toContain("refused egress to example.com:443");
  });
});
