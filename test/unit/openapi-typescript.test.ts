import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { CONTRACT, PATH_PARAM } from "../../src/api/contract.js";
import { openApiDocument } from "../../src/http/openapi.js";

/**
 * The document generates a usable client: openapi-typescript (installed apart, see
 * test/support/tool-packages.ts) turns it into types, and a caller can read every success
 * body's fields from them.
 */
const tools = resolve(import.meta.dirname, "../tools/openapi-typescript/node_modules");
const load = (name: string) => import(pathToFileURL(join(tools, name)).href);
const { default: openapiTS, astToString } = await load("openapi-typescript/dist/index.mjs");
const ts = (await load("typescript/lib/typescript.js")).default;

const document = openApiDocument("test");
const generated: string = astToString(await openapiTS(document as never));

/** Each operation's 2xx responses as openapi-typescript wrote them: `operationId -> status -> media -> type`. */
function successTypes(): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  const ops = generated.slice(generated.indexOf("export interface operations"));
  let op = "";
  let status = "";
  for (const line of ops.split("\n")) {
    const named = /^ {4}"?([A-Za-z0-9_]+)"?: \{$/.exec(line);
    if (named) op = named[1]!;
    const st = /^ {12}(\d{3}): \{$/.exec(line);
    if (st) status = st[1]!;
    // A type on one line ends with `;`; an object type opens a block of its own lines.
    const media = /^ {20}"([^"]+)": (.+?);?$/.exec(line);
    if (media && status.startsWith("2")) {
      const byMedia = out.get(op) ?? new Map<string, string>();
      byMedia.set(`${status} ${media[1]}`, media[2]!);
      out.set(op, byMedia);
    }
  }
  return out;
}

describe("a client generated from /openapi.json by openapi-typescript", () => {
  const types = successTypes();

  it("has a type for every route", () => {
    expect(types.size).toBe(Object.keys(CONTRACT).length);
  });

  it("types every success body: none is Record<string, never> or a bare object", () => {
    const untyped = [...types].flatMap(([op, byMedia]) => [...byMedia].filter(([, t]) => /^(Record<string, never>|Record<string, unknown>|\{\s*\})$/.test(t)).map(([m]) => `${op} ${m}`));
    expect(untyped).toEqual([]);
  });

  it("describes event streams as text/event-stream with their frames, and bytes as bytes", () => {
    for (const [key, route] of Object.entries(CONTRACT)) {
      const [method, path] = key.split(" ") as [string, string];
      const op = (document as { paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, Record<string, unknown>> }> }>> }).paths[path.replace(PATH_PARAM, "{$1}")]![method.toLowerCase()]!;
      const content = op.responses[String(route.status ?? 200)]!.content;
      if (route.media === "sse" || route.media === "json-or-sse") expect(Object.keys(content["text/event-stream"]?.["x-events"] ?? {}), key).not.toEqual([]);
      if (route.media === "binary") expect(content["*/*"]?.schema, key).toMatchObject({ type: "string", format: "binary" });
    }
  });

  it("compiles, and a caller reads fields of the answers it gets", () => {
    const dir = mkdtempSync(join(tmpdir(), "openapi-ts-"));
    writeFileSync(join(dir, "api.d.ts"), generated);
    writeFileSync(
      join(dir, "use.ts"),
      `import type { paths } from "./api";
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends { responses: infer R } ? R extends Record<S, { content: { "application/json": infer A } }> ? A : never : never;
export const seq: number = (null as unknown as Answer<"/threads/{id}/messages", "post", 202>).seq;
export const threadId: string = (null as unknown as Answer<"/spawn", "post", 201>).threadId;
export const running: boolean = (null as unknown as Answer<"/threads/{id}/turn", "get", 200>).running;
export const seats: string = (null as unknown as Answer<"/threads/{id}/seats", "get", 200>).seats[0]!.name;
export const ok: boolean = (null as unknown as Answer<"/health", "get", 200>).ok;
`,
    );
    const program = ts.createProgram([join(dir, "use.ts")], { strict: true, noEmit: true, skipLibCheck: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler });
    const problems = ts.getPreEmitDiagnostics(program).map((d: { messageText: unknown }) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  });
});
