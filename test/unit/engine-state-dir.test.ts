import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { engineStateDirOf } from "../../local-front/process/config.js";

/** Where the front, backup and restore look for engine state (docs/decisions.md, "Runtimes on one host are apart"). */
describe("the engine state directory", () => {
  const saved = process.env.HOME;
  let home: string;
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "agent-runtime-home-"));
    process.env.HOME = home;
  });
  afterEach(() => removeDir(home));
  afterAll(() => {
    process.env.HOME = saved;
  });

  const defaultData = () => join(home, ".service", "agents-host");
  const former = () => join(home, ".service", "engine");

  it("defaults inside the data directory, the default one or another", () => {
    expect(engineStateDirOf({})).toBe(join(defaultData(), "engine"));
    expect(engineStateDirOf({ SERVICE_AGENTS_DATA_DIR: join(home, "b") })).toBe(join(home, "b", "engine"));
  });

  it("is SERVICE_ENGINE_STATE_DIR when set", () => {
    expect(engineStateDirOf({ SERVICE_AGENTS_DATA_DIR: join(home, "b"), SERVICE_ENGINE_STATE_DIR: join(home, "elsewhere") })).toBe(join(home, "elsewhere"));
  });

  it("stays at the former default for an installation upgraded in place, and only there", () => {
    mkdirSync(former(), { recursive: true });
    // The default data directory, with state at ~/.service/engine and none inside: its threads resume from there.
    expect(engineStateDirOf({})).toBe(former());
    // Another data directory never shares it.
    expect(engineStateDirOf({ SERVICE_AGENTS_DATA_DIR: join(home, "b") })).toBe(join(home, "b", "engine"));
    // Once state is inside the data directory, that is the one.
    mkdirSync(join(defaultData(), "engine"), { recursive: true });
    expect(engineStateDirOf({})).toBe(join(defaultData(), "engine"));
  });
});
