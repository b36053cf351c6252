import { describe, expect, it } from "vitest";
import { parseReflections } from "../../local-front/bindings/memory/reflect.js";

describe("a curator's reflections, as parsed (local-front/bindings/memory/reflect.ts)", () => {
  it("finds the array after words with brackets of their own, and in a code fence", () => {
    const r = [{ text: "Locks break Friday deploys.", cites: ["mem_a", "mem_b"] }];
    expect(parseReflections(`Drawing on [mem_a] and [mem_b]:\n\`\`\`json\n${JSON.stringify(r)}\n\`\`\``)).toEqual(r);
    expect(parseReflections(`${JSON.stringify(r)}\n\nBased on [mem_a] and [mem_b].`)).toEqual(r);
  });

  it("drops a bad item and keeps the rest, and says why when there is no array", () => {
    const text = JSON.stringify([{ text: "ok", cites: ["mem_a"] }, { text: "x".repeat(3000), cites: [] }, { cites: ["mem_b"] }]);
    expect(parseReflections(text)).toEqual([{ text: "ok", cites: ["mem_a"] }]);
    expect(parseReflections("echo: nothing here")).toMatch(/no JSON array/);
  });
});
