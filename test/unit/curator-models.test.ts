import { describe, expect, it } from "vitest";
import { curatorModels, readConfig } from "../../src/platform/config.js";

describe("the curator's models", () => {
  it("are the asking thread's (or workspace's) own model when none is configured, then the fallback", () => {
    expect(curatorModels(readConfig({}), "sim-8k")).toEqual(["sim-8k"]);
    expect(curatorModels(readConfig({ SERVICE_CURATOR_FALLBACK_MODEL: "sim-1" }), "claude-sim-8k")).toEqual(["claude-sim-8k", "sim-1"]);
  });

  it("are the configured curator, then its fallback, whatever model asks", () => {
    expect(curatorModels(readConfig({ SERVICE_CURATOR_MODEL: "sim-2", SERVICE_CURATOR_FALLBACK_MODEL: "sim-1" }), "sim-8k")).toEqual(["sim-2", "sim-1"]);
    expect(curatorModels(readConfig({ SERVICE_CURATOR_MODEL: "sim-1", SERVICE_CURATOR_FALLBACK_MODEL: "sim-1" }), "sim-8k")).toEqual(["sim-1"]);
  });
});
