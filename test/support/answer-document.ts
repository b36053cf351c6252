import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openApiDocument } from "../../src/http/openapi.js";

/** The OpenAPI document every end-to-end answer is checked against (answer-check.ts), generated once a run. */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "agent-runtime-openapi-"));
  const path = join(dir, "openapi.json");
  writeFileSync(path, JSON.stringify(openApiDocument("test")));
  process.env.TEST_OPENAPI_DOCUMENT = path;
  return () => rmSync(dir, { recursive: true, force: true });
}
