import { describe, expect, it } from "vitest";
import { classifyProviderError } from "../../local-front/bindings/engines/provider-failure.js";
import { engineDied } from "../../local-front/bindings/engines/turn.js";

/** Error texts as pi-ai reports them (docs/simulator.md lists where each comes from). */
describe("classifying a provider's error", () => {
  it.each([
    ["429 You exceeded your current quota, please check your plan and billing details.", "quota"],
    ['400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}', "quota"],
    ["429 Rate limit reached for requests", "quota"],
    ['429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit"}}', "quota"],
    ["401 Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.", "auth"],
    ['401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}', "auth"],
    ["404 The model `nope` does not exist or you do not have access to it.", "model-not-found"],
    ['404 {"type":"error","error":{"type":"not_found_error","message":"model: nope"}}', "model-not-found"],
    ["400 The model `sim-1` is not supported for this account.", "unsupported-model"],
    ['403 {"type":"error","error":{"type":"permission_error","message":"Your account does not have access to this model."}}', "unsupported-model"],
    ["terminated", "session"],
    ["500 The server had an error while processing your request.", "unknown"],
  ])("%s -> %s", (message, cls) => {
    expect(classifyProviderError(null, message)).toEqual({ class: cls, error: message });
  });
});

/** An engine's process that died mid-turn, as Node reports its end: by a signal, or by a status (bwrap and the forwarder turn a signal into 128 + its number). */
describe("an engine process that died mid-turn", () => {
  it.each([
    [null, "SIGKILL", "codex app-server was killed by SIGKILL during the turn"],
    [137, null, "codex app-server exited with status 137 (128 + SIGKILL: killed by SIGKILL) during the turn"],
    [134, null, "codex app-server exited with status 134 (128 + SIGABRT: killed by SIGABRT) during the turn"],
    [1, null, "codex app-server exited with status 1 during the turn"],
  ] as const)("%s %s -> session", (code, signal, error) => {
    expect(engineDied("codex app-server", code, signal)).toEqual({ class: "session", error });
  });
});
