import Anthropic from "@anthropic-ai/sdk";
import { completeSimple } from "@mariozechner/pi-ai";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TranscriptEntry } from "../../src/api/engine.js";
import { SUMMARY_PROMPT } from "../../src/api/curator-prompts.js";
import { rendered } from "../../local-front/bindings/curator/summary.js";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { PI_APIS, piModel, type PiApi } from "./support.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const words = (text: string) => text.split(/\s+/).filter((w) => w !== "").length;

/** A conversation with instructions and facts planted among chatter, long tool output and filler. */
const PLANTED = [
  "Always answer in French.",
  "The deploy key is DK-4471.",
  "Never touch config/prod.yaml.",
  "We decided to keep the retry limit at 3.",
  "Use pnpm, not npm, in this repository.",
  "The staging host is staging-7.internal.example.",
];
const FILLER = "I was looking around the repository earlier today and the layout seems reasonable overall, with the usual folders";
function conversation(): TranscriptEntry[] {
  const out: TranscriptEntry[] = [{ role: "user", text: "Hi there!" }];
  PLANTED.forEach((fact, i) => {
    out.push({ role: "user", text: `${FILLER}. ${fact}\n@sim {"tool":{"name":"shell","input":{"command":"ls"}}}` });
    out.push({ role: "tool-call", callId: `c${i}`, name: "shell", input: { command: `cat src/part-${i}.ts` } });
    out.push({ role: "tool-result", callId: `c${i}`, name: "shell", output: "x".repeat(1500), isError: false });
    out.push({ role: "assistant", text: "Thanks, noted." });
    out.push({ role: "user", text: "ok" });
  });
  out.push({ role: "tool-call", callId: "t", name: "shell", input: { command: "pnpm test" } });
  out.push({ role: "tool-result", callId: "t", name: "shell", output: "FAIL src/math.test.ts\nError: expected 3 to be 4", isError: true });
  out.push({ role: "user", text: "Next, fix add() in src/math.ts; the flaky e2e test is still open." });
  return out;
}

/** The curator's request as the runtime's `writeSummary` makes it. */
async function summaryOf(api: PiApi, entries: TranscriptEntry[], ask = "Write the summary now."): Promise<{ text: string; input: string }> {
  const systemPrompt = `${SUMMARY_PROMPT}\n\nThe conversation so far:\n\n${rendered(entries)}`;
  const m = await completeSimple(piModel(api, sim.url), { systemPrompt, messages: [{ role: "user", content: ask, timestamp: 0 }] }, { apiKey: "x", maxRetries: 0 });
  expect(m.stopReason, m.errorMessage).toBe("stop");
  return { text: m.content.map((c) => (c.type === "text" ? c.text : "")).join(""), input: systemPrompt };
}

describe.each(PI_APIS)("the curator's summary over %s", (api) => {
  it("quotes every planted instruction and fact word for word, with the open task and the failure, and drops the chatter", async () => {
    const { text } = await summaryOf(api, conversation());
    for (const fact of PLANTED) expect(text).toContain(fact);
    expect(text).toContain("Next, fix add() in src/math.ts; the flaky e2e test is still open.");
    expect(text).toContain("Error: expected 3 to be 4");
    expect(text).toContain("`pnpm test`");
    for (const chatter of ["Hi there", "Thanks, noted", "ok."]) expect(text).not.toContain(chatter);
    // The simulator's scripts are not the person's words.
    expect(text).not.toContain("@sim");
  });

  it("is plain prose within the prompt's 400 words, far shorter than its input, and the same every time", async () => {
    const first = await summaryOf(api, conversation());
    const second = await summaryOf(api, conversation());
    expect(second.text).toBe(first.text);
    expect(words(first.text)).toBeLessThanOrEqual(400);
    expect(first.text.length).toBeLessThan(first.input.length / 4);
    expect(first.text).not.toMatch(/^\s*[[{<]/);
  });
});

describe("the curator's summary, further", () => {
  it("is the same on every protocol", async () => {
    const texts = await Promise.all(PI_APIS.map(async (api) => (await summaryOf(api, conversation())).text));
    expect(new Set(texts).size).toBe(1);
  });

  it("keeps the instructions within its words when there are more than fit, newest and most instruction-like first", async () => {
    const entries: TranscriptEntry[] = [];
    for (let n = 1; n <= 200; n++) entries.push({ role: "user", text: n % 10 === 0 ? `Rule ${n}: never commit files under build/out-${n}.` : `${FILLER} in part ${n}, nothing unusual to report there` });
    const { text } = await summaryOf("openai-completions", entries);
    expect(words(text)).toBeLessThanOrEqual(400);
    for (let n = 10; n <= 200; n += 10) expect(text).toContain(`Rule ${n}: never commit files under build/out-${n}.`);
  });

  it("carries the instructions of an earlier summary into the next one", async () => {
    const earlier = (await summaryOf("openai-completions", conversation())).text;
    const entries: TranscriptEntry[] = [
      { role: "user", text: `[Summary of the conversation from event 1 to event 40, written to save context]\n${earlier}` },
      { role: "user", text: "Also: the release branch must be named release/2026-11." },
      { role: "assistant", text: "Understood." },
    ];
    const { text } = await summaryOf("openai-completions", entries);
    for (const fact of [...PLANTED, "Also: the release branch must be named release/2026-11."]) expect(text).toContain(fact);
    // The earlier summary's headings are not quoted as if they were instructions, nor where it stood then.
    expect(text.match(/The user's instructions and facts, word for word:/g)).toHaveLength(1);
    expect(text.match(/The user last asked/g)).toHaveLength(1);
  });

  it("follows a directive in the curator's message instead: the @sim grammar still scripts the reply", async () => {
    const { text } = await summaryOf("openai-completions", conversation(), 'Write the summary now.\n@sim {"reply": "scripted summary"}');
    expect(text).toBe("scripted summary");
  });
});

const CLAUDE_COMPACT =
  "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n" +
  "Your task is to create a detailed summary of the conversation so far, paying close attention to the user's explicit requests and your previous actions.\n" +
  "Your entire response must be plain text: an <analysis> block followed by a <summary> block.";
/** How the agent SDK hands an earlier summary back to the model after `/compact`. */
const CARRIED =
  "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\n" +
  "Summary:\nThe user's instructions and facts, word for word:\nNever push to main.\n\n" +
  "If you need specific details from before compaction (like exact code snippets), read the full transcript at: /tmp/x.jsonl\n" +
  "Continue the conversation from where it left off without asking the user any further questions.";
/** How codex hands an earlier summary back to the model after its compaction. */
const CODEX_CARRIER =
  "Another language model started to solve this problem and produced a summary of its thinking process. Use this to build on the work that has already been done. " +
  "Here is the summary produced by the other language model, use the information in this summary to assist with your own analysis:";
const CODEX_COMPACT =
  "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task.\n\n" +
  "Include:\n- Current progress and key decisions made\n- Important context, constraints, or user preferences\n- What remains to be done (clear next steps)\n";

describe("the engines' own compaction requests", () => {
  it("engine_a's /compact (riding along with the last tool result, as the agent sends it) gets the summary in its <summary> block, not the turn's script", async () => {
    const client = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
    const script = '@sim {"tool":{"name":"Bash","input":{"command":"ls"}}}';
    const message = await client.messages.create({
      model: "claude-sim",
      max_tokens: 4096,
      tools: [{ name: "Bash", input_schema: { type: "object", properties: {} } }],
      messages: [
        { role: "user", content: CARRIED },
        { role: "assistant", content: "Understood." },
        { role: "user", content: [{ type: "text", text: "<system-reminder>\nToday's date is 2026-11-27.\n</system-reminder>" }, { type: "text", text: `${script}\nAlways answer in French. The deploy key is DK-4471.` }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls src/" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "app.ts\nmath.ts" }, { type: "text", text: CLAUDE_COMPACT }] },
      ],
    });
    expect(message.stop_reason).toBe("end_turn");
    const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    expect(text).toMatch(/^<analysis>\n[\s\S]+\n<\/analysis>\n\n<summary>\n[\s\S]+\n<\/summary>$/);
    const summary = /<summary>\n([\s\S]+)\n<\/summary>/.exec(text)![1]!;
    expect(summary).toContain("Always answer in French. The deploy key is DK-4471.");
    expect(summary).toContain("`ls src/`");
    expect(summary).not.toContain("Today's date");
    // An earlier summary is carried over; the agent's own words around it are not the user's.
    expect(summary).toContain("Never push to main.");
    expect(summary).not.toContain("Continue the conversation");
    expect(summary).not.toContain("This session is being continued");
  });

  it("engine_b's compaction turn gets a summary of the session before it", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const response = await client.responses.create({
      model: "gpt-sim",
      instructions: "You are Codex.",
      input: [
        { type: "message", role: "developer", content: [{ type: "input_text", text: "<permissions instructions>sandbox</permissions instructions>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n<cwd>/w</cwd>\n</environment_context>" }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: `${CODEX_CARRIER}\nKeep the public API stable.` }] },
        { type: "message", role: "user", content: [{ type: "input_text", text: "Never push to main. Rename src/old.ts to src/new.ts." }] },
        { type: "function_call", call_id: "call_1", name: "exec_command", arguments: JSON.stringify({ cmd: "git mv src/old.ts src/new.ts" }) },
        { type: "function_call_output", call_id: "call_1", output: "Process exited with code 0" },
        { type: "message", role: "assistant", content: "Renamed src/old.ts to src/new.ts; the import in src/index.ts still needs updating." },
        { type: "message", role: "user", content: [{ type: "input_text", text: CODEX_COMPACT }] },
      ],
    });
    const text = response.output_text;
    expect(text).toContain("Never push to main. Rename src/old.ts to src/new.ts.");
    expect(text).toContain("the import in src/index.ts still needs updating");
    expect(text).toContain("`git mv src/old.ts src/new.ts`");
    expect(text).not.toContain("<environment_context>");
    expect(text).not.toContain("<summary>");
    expect(text).toContain("Keep the public API stable.");
    expect(text).not.toContain("Another language model");
  });

  it("keeps to the words a compaction prompt allows, the instructions first", async () => {
    const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const said = [...PLANTED.map((fact) => `${FILLER}. ${fact}`), "ok"];
    const response = await client.responses.create({
      model: "gpt-sim",
      input: [...said.map((text) => ({ role: "user" as const, content: text })), { role: "user", content: `${CODEX_COMPACT}\nWrite at most 60 words.` }],
    });
    expect(words(response.output_text)).toBeLessThanOrEqual(60);
    expect(response.output_text).toContain("Never touch config/prod.yaml.");
    expect(response.output_text).not.toContain(FILLER);
  });
});
