import { getModels as indexModels, getProviders } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { getModels } from "../../local-front/bindings/model-table.js";

describe("pi-ai's model table, loaded alone", () => {
  it("is the table the package's index answers with, for every provider", () => {
    const providers = getProviders();
    expect(providers.length).toBeGreaterThan(5);
    for (const provider of providers) {
      expect(getModels(provider).length, provider).toBe(indexModels(provider).length);
      expect(getModels(provider), provider).toEqual(indexModels(provider));
    }
  });
});
