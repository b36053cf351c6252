import { describe, expect, it } from "vitest";
import { answerProblem, checkAnswersOf } from "../support/answer-check.js";

/** The end-to-end suite's contract check (test/support/answer-check.ts), with its controls. */
describe("the answer check of the end-to-end suite", () => {
  const base = "http://127.0.0.1:1";
  checkAnswersOf(base);
  const json = "application/json";
  const health = { ok: true, build: "b", sandbox: { state: "bwrap" }, engines: null, spawn: { fields: { model: "string" } }, storage: { state: "ok" }, memoryAlert: null, memoryAlerts: [] };

  it("passes an answer the document allows", () => {
    expect(answerProblem(base, "GET", "/health", 200, json, health)).toBeNull();
    expect(answerProblem(base, "GET", "/threads/thr_1/turn?x=1", 404, json, { error: "no", code: "thread-not-found" })).toBeNull();
  });

  it("fails a body of the wrong shape, an undeclared status, an undeclared code and a refusal with no code", () => {
    expect(answerProblem(base, "GET", "/health", 200, json, { ...health, ok: "yes" })).toMatch(/does not match the document/);
    expect(answerProblem(base, "GET", "/health", 418, json, { error: "teapot", code: "thread-not-found" })).toMatch(/does not declare/);
    expect(answerProblem(base, "POST", "/spawn", 409, json, { error: "x", code: "thread-busy" })).toMatch(/code thread-busy/);
    expect(answerProblem(base, "POST", "/spawn", 409, json, { error: "x" })).toMatch(/no code/);
    expect(answerProblem(base, "GET", "/nowhere", 200, json, {})).toMatch(/no GET/);
  });

  it("leaves alone answers of servers that are not a front of this checkout", () => {
    expect(answerProblem("http://127.0.0.1:2", "GET", "/health", 200, json, { ok: "yes" })).toBeNull();
  });
});
