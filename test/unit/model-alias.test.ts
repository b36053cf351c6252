import { describe, expect, it } from "vitest";
import { piModel } from "../../local-front/bindings/engines/providers.js";
import { concreteModel } from "../../local-front/bindings/engines/prices.js";

const withAccount = { provider: "anthropic", account: "acct", baseUrl: "https://api.anthropic.com" } as unknown as Parameters<typeof piModel>[0];
const simulator = { provider: "anthropic", account: null, baseUrl: "http://127.0.0.1:1" } as unknown as Parameters<typeof piModel>[0];

describe("an engine_a alias called through pi-ai (the curator of an engine_a thread)", () => {
  it("becomes the newest undated id of its family in pi-ai's catalog", () => {
    for (const alias of ["sonnet", "opus", "haiku"]) {
      const id = concreteModel("anthropic", alias);
      expect(id).toMatch(new RegExp(`^claude-${alias}-\\d+-\\d+$`));
      expect(piModel(withAccount, alias).id).toBe(id);
    }
  });

  it("leaves every other id, every other provider and the simulator's calls as they are", () => {
    expect(concreteModel("anthropic", "claude-sonnet-4-5")).toBe("claude-sonnet-4-5");
    expect(concreteModel("openai", "sonnet")).toBe("sonnet");
    expect(piModel(simulator, "sonnet").id).toBe("sonnet");
  });
});
