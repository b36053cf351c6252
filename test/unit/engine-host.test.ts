import { ENGINES_TOKEN_HEADER } from "../../src/api/engine.js";
import { mkdtempSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineHost } from "../../local-front/bindings/engines/engine-host.js";
import { bareEngineHost } from "../support/engine-host.js";
import { removeDir } from "../support/front.js";

const scratch = mkdtempSync(join(tmpdir(), "engine-host-"));
let host: EngineHost;
beforeAll(async () => {
  ({ host } = await bareEngineHost(scratch, "the-token"));
});
afterAll(async () => {
  await host.close();
  removeDir(scratch);
});

const turn = { turnId: "turn_1", threadId: "thr_1", engine: "pi", model: "sim-1", permissions: "allow", cwd: null, account: null, accountChoice: { only: null, exclude: [] }, proxyEnv: null, transcript: [], inputs: [{ seq: 2, text: "hi" }], freshSession: false, window: null, handoffTo: [], delegated: false };
const post = (path: string, body: unknown, token?: string) =>
  fetch(`http://${host.address}${path}`, { method: "POST", headers: token ? { [ENGINES_TOKEN_HEADER]: token } : {}, body: JSON.stringify(body) });

describe("the engine host", () => {
  it("measures the data directory's volume when asked, for the worker's judgement of an opaque write failure", async () => {
    const res = await fetch(`http://${host.address}/volume`, { headers: { [ENGINES_TOKEN_HEADER]: "the-token" } });
    expect(res.status).toBe(200);
    const fs = statfsSync(scratch);
    const v = (await res.json()) as { freeBytes: number; totalBytes: number };
    expect(v.totalBytes).toBe(fs.blocks * fs.bsize);
    expect(Math.abs(v.freeBytes - fs.bavail * fs.bsize)).toBeLessThan(64 * 1024 * 1024);
    expect((await fetch(`http://${host.address}/volume`)).status).toBe(403);
  });

  it("answers only the worker that holds this boot's token", async () => {
    expect((await post("/turns", turn)).status).toBe(403);
    expect((await post("/turns", turn, "a-guess")).status).toBe(403);
  });

  it("refuses an engine it cannot run with class engine-unavailable", async () => {
    const r = await post("/turns", { ...turn, engine: "engine_b" }, "the-token");
    expect(r.status).toBe(503);
    expect(await r.json()).toMatchObject({ class: "engine-unavailable" });
  });

  it("reports a pi turn without a provider as an auth failure, on the report stream", async () => {
    const r = await post("/turns", turn, "the-token");
    expect(r.headers.get("content-type")).toBe("application/x-ndjson");
    const lines = (await r.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.at(-1)).toMatchObject({ type: "end", outcome: "failed", failure: { class: "auth" } });
  });

  it("answers 404 for a turn it does not run, and 400 for a bad body", async () => {
    expect((await post("/turns/turn_x/interrupt", {}, "the-token")).status).toBe(404);
    const bad = await fetch(`http://${host.address}/turns`, { method: "POST", headers: { [ENGINES_TOKEN_HEADER]: "the-token" }, body: "{nope" });
    expect(bad.status).toBe(400);
  });
});
