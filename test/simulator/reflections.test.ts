import { completeSimple } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REFLECT_PROMPT } from "../../src/api/curator-prompts.js";
import { memoryList } from "../../src/rules/memory-rank.js";
import { parseReflections } from "../../local-front/bindings/memory/reflect.js";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { PI_APIS, piModel, type PiApi } from "./support.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const MEMORIES = [
  { id: "mem_01", kind: "episode", text: "Friday deploy of the api failed: migrations locked the users table." },
  { id: "mem_02", kind: "fact", text: "The staging database resets on Mondays." },
  { id: "mem_03", kind: "episode", text: "Friday deploy of the worker failed: a migration held a lock for 10 minutes." },
  { id: "mem_04", kind: "fact", text: "The e2e suite needs the browser binary installed first." },
  { id: "mem_05", kind: "episode", text: "The e2e suite failed on CI because the browser binary was missing.\nInstalling it in the setup step fixed it." },
  { id: "mem_06", kind: "fact", text: "Lint runs with NODE_OPTIONS=--max-old-space-size=4096." },
];

/** The reflection request as the runtime's `writeReflections` makes it. */
async function reflectionsOf(api: PiApi, memories: typeof MEMORIES): Promise<string> {
  const m = await completeSimple(
    piModel(api, sim.url),
    { systemPrompt: REFLECT_PROMPT, messages: [{ role: "user", content: `The memories, oldest first:\n\n${memoryList(memories)}\n\nWrite the reflections now.`, timestamp: 0 }] },
    { apiKey: "x", maxRetries: 0 },
  );
  expect(m.stopReason, m.errorMessage).toBe("stop");
  return m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

describe.each(PI_APIS)("the curator's reflections over %s", (api) => {
  it("are a JSON array in the asked shape whose citations are the given memories, grouped by what they share", async () => {
    const text = await reflectionsOf(api, MEMORIES);
    const parsed = JSON.parse(text) as { text: string; cites: string[] }[];
    expect(Array.isArray(parsed)).toBe(true);
    expect(parseReflections(text)).toEqual(parsed);
    const ids = new Set(MEMORIES.map((m) => m.id));
    for (const r of parsed) {
      expect(Object.keys(r).sort()).toEqual(["cites", "text"]);
      expect(r.cites.length).toBeGreaterThanOrEqual(2);
      for (const id of r.cites) expect(ids.has(id)).toBe(true);
    }
    expect(parsed.length).toBeLessThanOrEqual(5);
    const cited = parsed.map((r) => [...r.cites].sort());
    expect(cited).toContainEqual(["mem_01", "mem_03"]);
    expect(cited).toContainEqual(["mem_04", "mem_05"]);
    const deploys = parsed.find((r) => r.cites.includes("mem_01"))!;
    expect(deploys.text).toContain("Friday deploy of the api failed");
    expect(deploys.text).toContain("Friday deploy of the worker failed");
  });

  it("are the same every time, and an empty array when no two memories share anything", async () => {
    expect(await reflectionsOf(api, MEMORIES)).toBe(await reflectionsOf(api, MEMORIES));
    const apart = [MEMORIES[1]!, MEMORIES[5]!];
    expect(JSON.parse(await reflectionsOf(api, apart))).toEqual([]);
  });
});

describe("reflections, further", () => {
  it("draw at most the five the prompt asks for", async () => {
    const many = Array.from({ length: 20 }, (_, i) => ({ id: `mem_${i}`, kind: "fact", text: `Service topic${Math.floor(i / 2)} owns queue${Math.floor(i / 2)} and alerts on lag.` }));
    const parsed = JSON.parse(await reflectionsOf("openai-completions", many)) as unknown[];
    expect(parsed.length).toBe(5);
  });

  it("give way to a directive in a memory: the @sim grammar still scripts the answer", async () => {
    const script = JSON.stringify([{ text: "scripted", cites: ["mem_01"] }]);
    const text = await reflectionsOf("openai-completions", [...MEMORIES, { id: "mem_07", kind: "fact", text: `Probe.\n@sim ${JSON.stringify({ reply: script })}` }]);
    expect(text).toBe(script);
  });
});
