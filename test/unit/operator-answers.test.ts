import { describe, expect, it } from "vitest";
import { OpenApiDocument } from "../../src/api/operator.js";
import { openApiDocument } from "../../src/http/openapi.js";

/**
 * The operator, host, accounts, completions, code and code-host routes declare what they
 * answer (issue 30): a typed client generated from the document reads their fields, and the
 * end-to-end suite's answer check (test/support/answer-check.ts) holds the routes to them.
 */
const ROUTES = [
  "GET /health",
  "GET /openapi.json",
  "GET /incidents",
  "GET /drain",
  "POST /drain",
  "DELETE /drain",
  "DELETE /drain/claim",
  "GET /accounts",
  "POST /accounts/{id}/access-token",
  "GET /v1/models",
  "GET /v1/models/{id}",
  "POST /v1/chat/completions",
  "GET /keeper/spawn-pause",
  "POST /keeper/spawn-pause/clear",
  "GET /host-load",
  "GET /live",
  "GET /limits",
  "GET /timings",
  "GET /metrics",
  "GET /metrics/history",
  "GET /metrics/estate",
  "GET /metrics/keeper",
  "GET /attention",
  "GET /attention/changes",
  "GET /attention/{id}",
  "GET /peers",
  "POST /peers/external",
  "DELETE /peers/external/{name}",
  "POST /previews",
  "GET /previews",
  "GET /previews/{id}",
  "DELETE /previews/{id}",
  "POST /internal/boot-sweep",
  "POST /internal/tools",
  "POST /internal/host-report",
  "GET /code/roots",
  "GET /code/files",
  "GET /code/outline",
  "GET /code/read",
  "POST /code/search",
  "GET /github/{owner}/{repo}/prs",
  "GET /github/{owner}/{repo}/prs/{number}/checks",
  "GET /github/{owner}/{repo}/prs/{number}/comments",
  "GET /github/{owner}/{repo}/prs/{number}/diff",
  "POST /github/overlap",
] as const;

type Schema = { type?: string; properties?: Record<string, unknown>; additionalProperties?: unknown };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>> };

describe("the operator and host routes' answers in the document", () => {
  const doc = openApiDocument("test") as Doc;

  it.each(ROUTES)("%s names the fields of its JSON success", (route) => {
    const [method, path] = route.split(" ") as [string, string];
    const responses = doc.paths[path]![method.toLowerCase()]!.responses;
    const success = Object.entries(responses).filter(([status]) => status.startsWith("2"));
    expect(success.length).toBeGreaterThan(0);
    for (const [, r] of success) {
      const schema = r.content!["application/json"]!.schema;
      expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0);
      // Only the document itself (OpenAPI's schema says the rest) and a provider's chat.completion pass unknown fields.
      if (route !== "GET /openapi.json" && route !== "POST /v1/chat/completions") expect(schema.additionalProperties).toBe(false);
    }
  });

  it("describes the document it serves", () => {
    expect(OpenApiDocument.safeParse(doc).success).toBe(true);
  });
});
