import { completeSimple } from "@mariozechner/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UI_ASK, UI_CATALOG, UI_PROMPT, UI_RETRY, UI_STATE_LABEL } from "../../src/api/curator-prompts.js";
import type { UiNode, UiState } from "../../src/api/ui.js";
import { checkUiTree, uiTreeFromText } from "../../src/rules/ui-tree.js";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { PI_APIS, piModel, type PiApi } from "./support.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const STATE: UiState = {
  thread: {
    id: "thr_01",
    title: "Fix the login test",
    type: "chat",
    role: "chat",
    workspace: null,
    engine: "pi",
    model: "sim-1",
    stage: "waiting",
    turns: 1,
    cost: { usd: 0, inputTokens: 0, outputTokens: 0 },
    createdAt: "2026-11-27T10:00:00.000Z",
    updatedAt: "2026-11-27T10:00:00.000Z",
  },
  approvals: [{ approvalId: "appr_1", tool: "shell", input: '{"command":"ls"}' }],
  questions: [{ requestId: "q_1", question: "Which branch?" }],
  lastMessage: { seq: 2, text: "run ls", from: null },
  lastReply: { seq: 5, text: "I will list the files." },
  toolCalls: [],
  failure: null,
  seats: [],
  basedOnSeq: 6,
};

/** The interface request as `writeInterface` makes it (local-front/bindings/curator/interface.ts). */
async function answerTo(api: PiApi, state: UiState, retry = false): Promise<string> {
  const m = await completeSimple(
    piModel(api, sim.url),
    {
      systemPrompt: `${UI_PROMPT}\n\n${UI_CATALOG}\n\n${UI_STATE_LABEL}\n${JSON.stringify(state)}`,
      messages: [{ role: "user", content: retry ? `${UI_RETRY} tree.children[3].type: no\n\nYour answer was:\n{}\n\n${UI_ASK}` : UI_ASK, timestamp: 0 }],
    },
    { apiKey: "x", maxRetries: 0 },
  );
  expect(m.stopReason, m.errorMessage).toBe("stop");
  return m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

const actions = (tree: UiNode): unknown[] => (tree.type === "stack" || tree.type === "row" ? tree.children.flatMap(actions) : tree.type === "button" ? [tree.action] : []);

describe.each(PI_APIS)("the simulator's interface over %s", (api) => {
  it("is a tree the catalog takes, built from the state it was given", async () => {
    const tree = uiTreeFromText(await answerTo(api, STATE));
    expect(tree.ok).toBe(true);
    if (!tree.ok) return;
    expect(JSON.stringify(tree.value)).toContain("Fix the login test");
    expect(JSON.stringify(tree.value)).toContain("I will list the files.");
    expect(actions(tree.value)).toEqual(
      expect.arrayContaining([{ name: "approve", approvalId: "appr_1", decision: "allow" }, { name: "answer", requestId: "q_1" }, { name: "generate" }]),
    );
  });

  it("is refused by the catalog as the last message scripts it: once, or always", async () => {
    const once = { ...STATE, lastMessage: { seq: 2, text: "look\n@sim-ui invalid-once", from: null } };
    expect(checkUiTree(JSON.parse(await answerTo(api, once))).ok).toBe(false);
    expect(checkUiTree(JSON.parse(await answerTo(api, once, true))).ok).toBe(true);
    const always = { ...STATE, lastMessage: { seq: 2, text: "@sim-ui invalid", from: null } };
    expect(checkUiTree(JSON.parse(await answerTo(api, always))).ok).toBe(false);
    expect(checkUiTree(JSON.parse(await answerTo(api, always, true))).ok).toBe(false);
  });
});
