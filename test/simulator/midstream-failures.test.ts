import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator, type Simulator } from "../../local-front/simulator/server.js";
import { parseSse, PI_APIS, piModel, piUser, post, PROTOCOLS, requestBody, runPi } from "./support.js";

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

const script = (fail: string) => `@sim {"fail":"${fail}","chunks":4}\nfour words in it`;

async function raw(protocol: keyof typeof PROTOCOLS, fail: string) {
  const { path, auth } = PROTOCOLS[protocol];
  const res = await post(sim.url, path, requestBody(protocol, script(fail), { stream: true }), auth);
  return { status: res.status, frames: parseSse(res.text) };
}

describe("failing after the stream began, in each protocol's shape", () => {
  it("chat completions: one data: {error} frame after the first delta, and no [DONE]", async () => {
    const { status, frames } = await raw("openai-chat", "stream-error");
    expect(status).toBe(200);
    expect(frames.map((f) => f.data).filter((d) => d.includes('"content":"echo: "'))).toHaveLength(1);
    expect(JSON.parse(frames.at(-1)!.data)).toEqual({ error: { message: expect.any(String), type: "server_error", param: null, code: "server_error" } });
    expect(frames.some((f) => f.data === "[DONE]")).toBe(false);
  });

  it("Responses: an error event, or response.failed, ends the stream", async () => {
    const error = await raw("openai-responses", "stream-error");
    expect(error.frames.at(-1)!.event).toBe("error");
    expect(JSON.parse(error.frames.at(-1)!.data)).toMatchObject({ type: "error", code: "server_error", sequence_number: error.frames.length - 1 });
    const failed = await raw("openai-responses", "stream-failed");
    expect(failed.frames.at(-1)!.event).toBe("response.failed");
    expect(JSON.parse(failed.frames.at(-1)!.data)).toMatchObject({ response: { status: "failed", error: { code: "server_error" } } });
    expect(failed.frames.some((f) => f.event === "response.completed")).toBe(false);
  });

  it("Anthropic: an error event with overloaded_error, no message_stop", async () => {
    const { frames } = await raw("anthropic-messages", "stream-error");
    expect(frames.at(-1)).toEqual({ event: "error", data: JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }) });
    expect(frames.some((f) => f.event === "message_stop")).toBe(false);
  });

  it.each(Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[])("%s: stream-end stops after the first delta with no terminal frame", async (protocol) => {
    const { status, frames } = await raw(protocol, "stream-end");
    expect(status).toBe(200);
    const last = frames.at(-1)!;
    expect(last.data).toContain("echo");
    expect(frames.some((f) => f.data === "[DONE]" || f.event === "message_stop" || f.event === "response.completed")).toBe(false);
  });

  it("the official SDKs raise the error frames as errors", async () => {
    const openai = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "x", maxRetries: 0 });
    const chat = await openai.chat.completions.create({ model: "sim-1", stream: true, messages: [{ role: "user", content: script("stream-error") }] });
    const chatErr = await (async () => {
      for await (const _ of chat);
    })().catch((e: unknown) => e);
    expect(chatErr).toBeInstanceOf(OpenAI.APIError);
    const anthropic = new Anthropic({ baseURL: sim.url, apiKey: "x", maxRetries: 0 });
    const messageErr = await anthropic.messages.stream({ model: "claude-sim", max_tokens: 100, messages: [{ role: "user", content: script("stream-error") }] }).finalMessage().catch((e: unknown) => e);
    expect(messageErr).toBeInstanceOf(Anthropic.APIError);
    expect((messageErr as Error).message).toContain("overloaded_error");
  });

  it("overloaded before the stream: 503 on OpenAI, 529 overloaded_error on Anthropic", async () => {
    for (const protocol of Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[]) {
      const { path, auth } = PROTOCOLS[protocol];
      const res = await post(sim.url, path, requestBody(protocol, script("overloaded"), { stream: true }), auth);
      if (protocol === "anthropic-messages") {
        expect(res.status).toBe(529);
        expect(res.json()).toEqual({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
      } else {
        expect(res.status).toBe(503);
        expect(res.json().error).toMatchObject({ type: "server_error" });
      }
    }
  });

  /** What pi-ai reports for each, the runtime's pi engine classifies from this. */
  const PI: Record<string, Record<string, RegExp>> = {
    "stream-error": { "openai-completions": /server had an error/, "openai-responses": /^Error Code server_error: /, "anthropic-messages": /overloaded_error/ },
    "stream-failed": { "openai-completions": /server had an error/, "openai-responses": /^server_error: /, "anthropic-messages": /overloaded_error/ },
  };
  for (const fail of Object.keys(PI))
    it.each(PI_APIS)(`pi-ai on %s reports ${fail} as an error, keeping the text before it`, async (api) => {
      const { message } = await runPi(piModel(api, sim.url), { messages: [piUser(script(fail))] });
      expect(message.stopReason).toBe("error");
      expect(message.errorMessage).toMatch(PI[fail]![api]!);
    });

  it.each(PI_APIS)("pi-ai on %s after stream-end", async (api) => {
    const { message } = await runPi(piModel(api, sim.url), { messages: [piUser(script("stream-end"))] });
    // pi-ai 0.73.1 takes a chat or Responses stream that just stops for a finished answer
    // (only Anthropic's client insists on message_stop); what it has then is no usage, since
    // both protocols send usage in their last frames. The pi engine tells a cut answer by that.
    if (api === "anthropic-messages") expect(message).toMatchObject({ stopReason: "error", errorMessage: "Anthropic stream ended before message_stop" });
    else expect(message).toMatchObject({ stopReason: "stop", usage: { input: 0, output: 0 } });
  });
});
