import { describe, expect, it } from "vitest";
import { CODES } from "../../src/api/errors.js";
import type { SpawnSpec } from "../../src/api/threads.js";
import { readConfig } from "../../src/platform/config.js";
import { engineForModel, providerOf, resolveSpawn } from "../../src/rules/spawn.js";

const config = readConfig({ SERVICE_DEFAULT_MODEL: "sim-1" });
const resolve = (input: SpawnSpec, c = config) => resolveSpawn(input, c);

describe("which engine a model selects", () => {
  it("takes the engine_a family (claude-*, opus, sonnet, haiku) to engine_a and every other id to pi, never to engine_b", () => {
    for (const model of ["claude-sonnet-4-5", "claude-3-haiku", "opus", "sonnet", "haiku"]) expect(engineForModel(model), model).toBe("engine_a");
    // The aliases are exact and the prefix needs its dash.
    for (const model of ["gpt-5", "sim-1", "claude", "claudette", "Opus", "opus-4", "o3"]) expect(engineForModel(model), model).toBe("pi");
  });
});

describe("which provider serves a model", () => {
  it("is the engine's own vendor for engine_a and engine_b, whatever the model", () => {
    expect(providerOf("engine_a", "sonnet")).toBe("anthropic");
    expect(providerOf("engine_a", "gpt-5")).toBe("anthropic");
    expect(providerOf("engine_b", "gpt-5")).toBe("openai");
    expect(providerOf("engine_b", "opus")).toBe("openai");
  });

  it("follows the model's family on pi", () => {
    expect(providerOf("pi", "claude-opus-4-1")).toBe("anthropic");
    expect(providerOf("pi", "haiku")).toBe("anthropic");
    expect(providerOf("pi", "gpt-5")).toBe("openai");
    expect(providerOf("pi", "sim-1")).toBe("openai");
  });
});

describe("resolving a spawn", () => {
  it("fills every omitted field with its default", () => {
    expect(resolve({})).toEqual({
      ok: true,
      value: {
        workspace: null,
        title: null,
        role: "chat",
        type: "chat",
        engine: "pi",
        model: "sim-1",
        permissions: "ask",
        cwd: null,
        account: null,
        proxyEnv: null,
        fallback: null,
        approvalTimeoutMs: null,
        questionTimeoutMs: null,
        onBusy: "queue",
        recall: null,
      },
    });
  });

  it("keeps what the caller gave", () => {
    const input: SpawnSpec = {
      workspace: "w1",
      title: "t",
      role: "worker",
      type: "review",
      engine: "engine_b",
      model: "gpt-5",
      permissions: "allow",
      cwd: "/repo",
      account: "o1",
      proxyEnv: { HTTPS_PROXY: "http://127.0.0.1:9" },
    };
    expect(resolve(input)).toEqual({ ok: true, value: { ...input, fallback: null, approvalTimeoutMs: null, questionTimeoutMs: null, onBusy: "queue", recall: null } });
  });

  it("gives an engine_a spawn without a model sonnet, and any other spawn without one the host's default model", () => {
    expect(resolve({ engine: "engine_a" })).toMatchObject({ ok: true, value: { engine: "engine_a", model: "sonnet" } });
    expect(resolve({ engine: "engine_b" })).toMatchObject({ ok: true, value: { engine: "engine_b", model: "sim-1" } });
    expect(resolve({ engine: "pi" }, readConfig({ SERVICE_DEFAULT_MODEL: "gpt-5" }))).toMatchObject({ ok: true, value: { engine: "pi", model: "gpt-5" } });
  });

  it("derives the engine from the model when the spawn names none, the default model included", () => {
    expect(resolve({ model: "opus" })).toMatchObject({ ok: true, value: { engine: "engine_a", model: "opus" } });
    expect(resolve({ model: "gpt-5" })).toMatchObject({ ok: true, value: { engine: "pi", model: "gpt-5" } });
    expect(resolve({}, readConfig({ SERVICE_DEFAULT_MODEL: "claude-sonnet-4-5" }))).toMatchObject({ ok: true, value: { engine: "engine_a", model: "claude-sonnet-4-5" } });
  });

  it("lets pi serve either family", () => {
    expect(resolve({ engine: "pi", model: "claude-opus-4-1" })).toMatchObject({ ok: true, value: { engine: "pi", model: "claude-opus-4-1" } });
    expect(resolve({ engine: "pi", model: "gpt-5" })).toMatchObject({ ok: true, value: { engine: "pi", model: "gpt-5" } });
  });

  it("refuses an engine that cannot serve the model with 422 engine-model-mismatch, naming both", () => {
    for (const [engine, model] of [
      ["engine_b", "opus"],
      ["engine_b", "claude-sonnet-4-5"],
      ["engine_a", "gpt-5"],
      ["engine_a", "sim-1"],
    ] as const) {
      const out = resolve({ engine, model });
      expect(out, `${engine} ${model}`).toMatchObject({ ok: false, status: 422, body: { code: CODES.engineModelMismatch, engine, model } });
    }
  });

  it("refuses engine_b with an engine_a default model rather than swapping the model", () => {
    const out = resolve({ engine: "engine_b" }, readConfig({ SERVICE_DEFAULT_MODEL: "haiku" }));
    expect(out).toMatchObject({ ok: false, status: 422, body: { code: CODES.engineModelMismatch, engine: "engine_b", model: "haiku" } });
  });

  it("refuses a build thread without a cwd with 400 spawn-cwd-required, and takes one with a cwd", () => {
    expect(resolve({ type: "build" })).toMatchObject({ ok: false, status: 400, body: { code: CODES.spawnCwdRequired } });
    expect(resolve({ type: "build", cwd: "/repo" })).toMatchObject({ ok: true, value: { type: "build", cwd: "/repo" } });
    for (const type of ["chat", "review", "completions", "external"] as const) expect(resolve({ type }).ok, type).toBe(true);
  });

  it("reports the engine mismatch before the missing cwd", () => {
    expect(resolve({ type: "build", engine: "engine_a", model: "gpt-5" })).toMatchObject({ ok: false, status: 422, body: { code: CODES.engineModelMismatch } });
  });
});

describe("the runtime's fence on a spawn's cwd", () => {
  // As the front passes it: the data directory and engine state, the checkout, its node_modules (a link's target elsewhere) and Node's prefix.
  const fenced = readConfig({
    SERVICE_RUNTIME_FENCE: JSON.stringify({
      private: ["/home/op/.service/agents-host", "/srv/engine-state"],
      runtime: ["/work/main", "/work/main/node_modules", "/opt/deps/node_modules", "/usr/local"],
    }),
  });
  const refusal = (cwd: string, type: SpawnSpec["type"] = "chat") => {
    const out = resolve({ type, cwd }, fenced);
    return out.ok ? null : { status: out.status, code: out.body.code, place: out.body.place };
  };

  it("refuses the root, the data directory and the engine state and anything inside them, for every type of thread", () => {
    for (const type of ["chat", "build", "review"] as const) expect(refusal("/", type), type).toEqual({ status: 400, code: CODES.spawnCwdFenced, place: "/" });
    expect(refusal("/.")).toMatchObject({ place: "/" });
    expect(refusal("/tmp/..")).toMatchObject({ place: "/" });
    expect(refusal("/home/op/.service/agents-host")).toMatchObject({ code: CODES.spawnCwdFenced, place: "/home/op/.service/agents-host" });
    expect(refusal("/home/op/.service/agents-host/scratch/thr_1")).toMatchObject({ place: "/home/op/.service/agents-host" });
    expect(refusal("/srv/engine-state/engine_a/homes/thr_1/")).toMatchObject({ place: "/srv/engine-state" });
  });

  it("refuses a cwd that holds the checkout, its node_modules or Node's prefix, written any way", () => {
    expect(refusal("/work")).toMatchObject({ code: CODES.spawnCwdFenced, place: "/work/main" });
    expect(refusal("/work/main")).toMatchObject({ place: "/work/main" });
    expect(refusal("/work/other/../main/")).toMatchObject({ place: "/work/main" });
    expect(refusal("/opt/deps")).toMatchObject({ place: "/opt/deps/node_modules" });
    expect(refusal("/opt/deps/node_modules")).toMatchObject({ place: "/opt/deps/node_modules" });
    expect(refusal("/usr")).toMatchObject({ place: "/usr/local" });
    expect(refusal("/usr/local")).toMatchObject({ place: "/usr/local" });
  });

  it("takes a sibling, a path that only shares a prefix, one above the data directory, and one inside the runtime (the sandbox keeps that read-only)", () => {
    for (const cwd of ["/work/main2", "/work/mai", "/work/wt/feature", "/opt/deps2", "/usr/local2", "/usr/lib", "/home/op", "/home/op/.service/agents-host2", "/srv/engine-state-b", "/work/main/src", "/tmp/does-not-exist-yet"])
      expect(refusal(cwd), cwd).toBeNull();
  });

  it("refuses only the root when the front passed nothing (plain wrangler, a worker test)", () => {
    expect(resolve({ cwd: "/" })).toMatchObject({ ok: false, body: { code: CODES.spawnCwdFenced, place: "/" } });
    expect(resolve({ cwd: "/work" }).ok).toBe(true);
  });
});

describe("resolving a spawn's failover chain", () => {
  it("keeps the thread's engine for a bare model id it can serve, and otherwise takes the model's own engine", () => {
    expect(resolve({ engine: "engine_b", model: "gpt-5", fallback: ["gpt-4o", "sonnet"] })).toMatchObject({
      ok: true,
      value: { fallback: [{ engine: "engine_b", model: "gpt-4o" }, { engine: "engine_a", model: "sonnet" }] },
    });
    expect(resolve({ engine: "engine_a", model: "opus", fallback: ["haiku", "gpt-5"] })).toMatchObject({
      ok: true,
      value: { fallback: [{ engine: "engine_a", model: "haiku" }, { engine: "pi", model: "gpt-5" }] },
    });
    expect(resolve({ engine: "pi", model: "gpt-5", fallback: ["opus", "sim-1"] })).toMatchObject({
      ok: true,
      value: { fallback: [{ engine: "pi", model: "opus" }, { engine: "pi", model: "sim-1" }] },
    });
  });

  it("keeps an entry that names its engine as given", () => {
    expect(resolve({ model: "gpt-5", fallback: [{ engine: "engine_b", model: "gpt-4o" }, "gpt-4o"] })).toMatchObject({
      ok: true,
      value: { engine: "pi", fallback: [{ engine: "engine_b", model: "gpt-4o" }, { engine: "pi", model: "gpt-4o" }] },
    });
  });

  it("stores an empty chain as none", () => {
    expect(resolve({ fallback: [] })).toMatchObject({ ok: true, value: { fallback: null } });
  });

  it("refuses an entry whose engine cannot serve its model with 422 engine-model-mismatch, naming the entry and its index", () => {
    const out = resolve({ model: "gpt-5", fallback: ["gpt-4o", { engine: "engine_b", model: "opus" }] });
    expect(out).toMatchObject({ ok: false, status: 422, body: { code: CODES.engineModelMismatch, engine: "engine_b", model: "opus", index: 1 } });
    expect(out.ok ? null : out.body.error).toMatch(/^fallback\[1\]: /);
    expect(resolve({ fallback: [{ engine: "engine_a", model: "gpt-5" }] })).toMatchObject({ ok: false, status: 422, body: { index: 0, engine: "engine_a" } });
  });
});
