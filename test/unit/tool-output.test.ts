import { describe, expect, it } from "vitest";
import { capToolOutput, TOOL_OUTPUT_CAP } from "../../src/rules/tool-output.js";

describe("capToolOutput", () => {
  it("keeps an output that fits, to the byte", () => {
    const fits = "x".repeat(TOOL_OUTPUT_CAP);
    expect(capToolOutput(fits)).toBe(fits);
  });

  it("cuts a larger one at the cap and says how large it was", () => {
    const out = capToolOutput("y".repeat(TOOL_OUTPUT_CAP + 10));
    expect(out).toBe(`${"y".repeat(TOOL_OUTPUT_CAP)}\n[output cut at ${TOOL_OUTPUT_CAP} bytes of ${TOOL_OUTPUT_CAP + 10}]`);
  });

  it("never leaves half a character at the cut", () => {
    // "é" is two bytes: one of them would cross the cap.
    const out = capToolOutput("a" + "é".repeat(TOOL_OUTPUT_CAP / 2));
    const kept = out.slice(0, out.lastIndexOf("\n[output cut"));
    expect(kept).not.toContain("\uFFFD");
    expect(new TextEncoder().encode(kept).length).toBe(TOOL_OUTPUT_CAP - 1);
  });
});
