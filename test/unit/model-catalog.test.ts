import { describe, expect, it } from "vitest";
import { CODES } from "../../src/api/errors.js";
import { unknownModelRefusal } from "../../src/rules/model-catalog.js";

const closed = { closed: true, models: ["sim-1", "sim-2", "sim-8k", "claude-sim", "gpt-5"] };

describe("a model the simulator does not serve, while it stands in", () => {
  it("is refused with 400 model-not-found, naming the field and listing every id served", () => {
    const r = unknownModelRefusal([{ engine: "pi", model: "gpt-99", what: "model" }], closed);
    expect(r).toMatchObject({ status: 400, body: { code: CODES.modelNotFound, model: "gpt-99", engine: "pi", models: closed.models } });
    expect(r!.body.error).toMatch(/^model: no model "gpt-99": .*sim-1, sim-2, sim-8k, claude-sim, gpt-5 /);
  });

  it("accepts the ids it serves, the small-window ones included", () => {
    for (const model of ["sim-1", "sim-2", "sim-8k", "gpt-5"]) expect(unknownModelRefusal([{ engine: "pi", model, what: "model" }], closed), model).toBeNull();
  });

  it("checks every entry of a chain, and names the one it refuses", () => {
    const chain = [
      { engine: "pi" as const, model: "sim-1", what: "model" },
      { engine: "pi" as const, model: "sim-9", what: "fallback[0]" },
    ];
    expect(unknownModelRefusal(chain, closed)?.body).toMatchObject({ model: "sim-9", error: expect.stringMatching(/^fallback\[0\]: /) });
  });

  it("takes engine_a's family aliases on engine_a only: its client resolves them, pi would send them as they are", () => {
    for (const model of ["sonnet", "opus", "haiku"]) {
      expect(unknownModelRefusal([{ engine: "engine_a", model, what: "model" }], closed), model).toBeNull();
      expect(unknownModelRefusal([{ engine: "pi", model, what: "model" }], closed)?.body.code, model).toBe(CODES.modelNotFound);
    }
  });

  it("names a dozen ids in its sentence and the rest by count", () => {
    const many = { closed: true, models: Array.from({ length: 20 }, (_, i) => `m-${i}`) };
    const r = unknownModelRefusal([{ engine: "pi", model: "x", what: "model" }], many);
    expect(r!.body.error).toContain("m-11 and 8 more");
    expect(r!.body.models).toHaveLength(20);
  });
});

describe("with real accounts, or no account pool to ask", () => {
  it("refuses nothing: only the provider knows its catalog", () => {
    expect(unknownModelRefusal([{ engine: "pi", model: "gpt-99", what: "model" }], { closed: false, models: [] })).toBeNull();
    expect(unknownModelRefusal([{ engine: "pi", model: "gpt-99", what: "model" }], null)).toBeNull();
  });
});
