import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../src/http/openapi.js";

/**
 * The seats, handoffs, operations, subscriptions, gate and merge, compaction, workspace,
 * memory and room routes declare what they answer (issue 30): a typed client generated
 * from the document reads their fields, and the end-to-end suite's answer check
 * (test/support/answer-check.ts) holds the routes to them. The workspace's event streams
 * (`/events`, `/changes`) are SSE and are not here.
 */
const ROUTES = [
  "GET /threads/{id}/seats",
  "POST /threads/{id}/seats",
  "POST /threads/{id}/seats/replace",
  "DELETE /threads/{id}/seats/{name}",
  "POST /threads/{id}/handoff",
  "GET /threads/{id}/handoffs",
  "POST /threads/{id}/handoffs/{fromSeq}/accept",
  "POST /threads/{id}/handoffs/{fromSeq}/decline",
  "GET /threads/{id}/operations",
  "POST /threads/{id}/operations",
  "GET /threads/{id}/operations/{operation}",
  "POST /threads/{id}/operations/{operation}",
  "GET /threads/{id}/subscriptions",
  "POST /threads/{id}/subscriptions",
  "DELETE /threads/{id}/subscriptions/{watch}",
  "POST /threads/{id}/gate",
  "POST /threads/{id}/merge",
  "GET /threads/{id}/compact",
  "POST /threads/{id}/compact",
  "GET /workspaces",
  "GET /workspaces/{name}",
  "GET /workspaces/{name}/head",
  "PUT /workspaces/{name}/policy",
  "GET /workspaces/{name}/approvals",
  "GET /workspaces/{name}/questions",
  "GET /workspaces/{name}/tail",
  "GET /workspaces/{name}/memory",
  "GET /workspaces/{name}/memory/{id}",
  "PATCH /workspaces/{name}/memory/{id}",
  "DELETE /workspaces/{name}/memory/{id}",
  "POST /workspaces/{name}/memory/recall",
  "POST /workspaces/{name}/memory/reflect",
  "POST /workspaces/{name}/memory/retain",
  "POST /workspaces/{name}/rooms",
  "GET /workspaces/{name}/rooms",
  "GET /rooms/capabilities",
  "GET /rooms/{id}",
  "POST /rooms/{id}/rounds",
  "GET /rooms/{id}/rounds/{n}",
  "POST /rooms/{id}/finalize",
  "POST /workspaces/{name}/prs/{number}/agents",
  "GET /workspaces/{name}/prs/{number}/receipt",
  "GET /metrics/cost-per-merged-pr",
] as const;

type Schema = { properties?: Record<string, unknown>; additionalProperties?: unknown; anyOf?: Schema[]; oneOf?: Schema[] };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>> };

/** The object schemas an answer may be: itself, or each branch of a union (a tail's forward and reverse pages). */
const objectsOf = (s: Schema): Schema[] => (s.anyOf ?? s.oneOf)?.flatMap(objectsOf) ?? [s];

describe("the thread work, workspace, memory and room routes' answers in the document", () => {
  const doc = openApiDocument("test") as Doc;

  it.each(ROUTES)("%s names every field of its JSON success, and no other", (route) => {
    const [method, path] = route.split(" ") as [string, string];
    const responses = doc.paths[path]![method.toLowerCase()]!.responses;
    const success = Object.entries(responses).filter(([status]) => status.startsWith("2"));
    expect(success.length).toBeGreaterThan(0);
    for (const [, r] of success)
      for (const schema of objectsOf(r.content!["application/json"]!.schema)) {
        expect(Object.keys(schema.properties ?? {}).length).toBeGreaterThan(0);
        expect(schema.additionalProperties).toBe(false);
      }
  });
});
