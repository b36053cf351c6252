import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useFront } from "../support/use-front.js";

const clientDir = resolve(import.meta.dirname, "../../client");
const scratch = mkdtempSync(join(tmpdir(), "client-package-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const front = useFront();

const ENGINES = ["@anthropic-ai/claude-agent-sdk", "@openai/codex", "@mariozechner/pi-ai", "@mariozechner/pi-agent-core", "hono"];

describe("the client library as a package", () => {
  it("packs built JavaScript and types only, and an application server installs and uses it", async () => {
    // `npm pack` builds it first (prepack).
    const packed = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: clientDir, encoding: "utf8" })) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(["package.json", "README.md", "dist/client/index.js", "dist/client/index.d.ts", "dist/src/api/answers.js"]));
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json" && f !== "README.md")).toEqual([]);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(clientDir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies)).toEqual(["zod"]);

    const app = join(scratch, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app-server", private: true, type: "module" }));
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(scratch, packed[0]!.filename)], { cwd: app, stdio: "pipe" });
    const installed = execFileSync("npm", ["ls", "--all", "--parseable"], { cwd: app, encoding: "utf8" });
    for (const name of ENGINES) expect(installed, name).not.toContain(`node_modules/${name}`);

    writeFileSync(
      join(app, "use.mjs"),
      `import { RuntimeClient, RuntimeError } from "@agent-runtime/client";
const client = new RuntimeClient();
const { threadId } = await client.spawn({ title: "from the package" });
const row = await client.thread(threadId);
const missing = await client.thread("thr_00000000000000000000000000").catch((e) => e);
console.log(JSON.stringify({
  resolved: import.meta.resolve("@agent-runtime/client"),
  title: row.title,
  missing: missing instanceof RuntimeError ? [missing.kind, missing.status, missing.code] : String(missing),
}));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ["use.mjs"], { cwd: app, encoding: "utf8", env: { ...process.env, SERVICE_AGENTS_URL: front().url } })) as {
      resolved: string;
      title: string;
      missing: unknown;
    };
    expect(out.resolved).toMatch(/node_modules\/@agent-runtime\/client\/dist\/client\/index\.js$/);
    expect(out.title).toBe("from the package");
    expect(out.missing).toEqual(["rejected", 404, "thread-not-found"]);
  }, 120_000);
});
