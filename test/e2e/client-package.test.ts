import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { useFront } from "../support/use-front.js";

const root = resolve(import.meta.dirname, "../..");
// Outside the checkout, so nothing below it can resolve a module from the root's node_modules.
const scratch = mkdtempSync(join(tmpdir(), "client-package-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const front = useFront();

const ENGINES = ["@anthropic-ai/claude-agent-sdk", "@openai/codex", "@mariozechner/pi-ai", "@mariozechner/pi-agent-core", "hono"];
const NPM = ["--prefer-offline", "--no-audit", "--no-fund"];

/** What git sees of the client, the contract and the root's manifests, ignored files included: a build or an install must leave it as it was. */
const checkout = () => execFileSync("git", ["status", "--porcelain", "--ignored", "--", "client", "src", "package.json", "package-lock.json"], { cwd: root, encoding: "utf8" });

describe("the client library as a package", () => {
  it("installs as client/README.md says, from a scratch folder, and an application server uses it from JavaScript and TypeScript", async () => {
    const before = checkout();

    // The README's two commands, run in the application server's folder.
    const app = join(scratch, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app-server", private: true, type: "module" }));
    const tarball = execFileSync(process.execPath, [join(root, "client/pack.mjs")], { cwd: app, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    expect(tarball).toBe("agent-runtime-client-0.1.0.tgz");
    execFileSync("npm", ["install", ...NPM, `./${tarball}`], { cwd: app, stdio: "pipe" });

    const files = execFileSync("tar", ["-tzf", join(app, tarball)], { encoding: "utf8" }).trim().split("\n").map((f) => f.replace(/^package\//, ""));
    expect(files).toEqual(expect.arrayContaining(["package.json", "README.md", "dist/client/index.js", "dist/client/index.d.ts", "dist/client/routes.js", "dist/src/api/contract.js"]));
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json" && f !== "README.md")).toEqual([]);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(app, "node_modules/@agent-runtime/client/package.json"), "utf8")) as { dependencies: Record<string, string>; scripts?: unknown };
    expect(Object.keys(manifest.dependencies)).toEqual(["zod"]);
    expect(manifest.scripts).toBeUndefined();
    const installed = execFileSync("npm", ["ls", "--all", "--parseable"], { cwd: app, encoding: "utf8" });
    for (const name of ENGINES) expect(installed, name).not.toContain(`node_modules/${name}`);

    writeFileSync(
      join(app, "use.mjs"),
      `import { RuntimeClient, RuntimeError } from "@agent-runtime/client";
const client = new RuntimeClient();
const { threadId } = await client.spawn({ title: "from the package" });
const row = await client.thread(threadId);
const page = await client.aguiPage(threadId);
const missing = await client.thread("thr_00000000000000000000000000").catch((e) => e);
console.log(JSON.stringify({
  resolved: import.meta.resolve("@agent-runtime/client"),
  title: row.title,
  aguiGroups: page.groups.length,
  missing: missing instanceof RuntimeError ? [missing.kind, missing.status, missing.code] : String(missing),
}));
`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ["use.mjs"], { cwd: app, encoding: "utf8", env: { ...process.env, SERVICE_AGENTS_URL: front().url } })) as {
      resolved: string;
      title: string;
      aguiGroups: number;
      missing: unknown;
    };
    expect(out.resolved).toMatch(/app\/node_modules\/@agent-runtime\/client\/dist\/client\/index\.js$/);
    expect(out.title).toBe("from the package");
    // The AG-UI calls check their answers with the contract's AG-UI schemas, which the package carries.
    expect(out.aguiGroups).toBe(1);
    expect(files).toContain("dist/src/api/agui.js");
    expect(out.missing).toEqual(["rejected", 404, "thread-not-found"]);

    // A TypeScript application server gets the types; the root's typescript only checks them.
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM", "DOM.AsyncIterable"], types: [] }, files: ["check.ts"] }),
    );
    writeFileSync(
      join(app, "check.ts"),
      `import { RuntimeClient, RuntimeError, type ClientSpawnSpec } from "@agent-runtime/client";
const spec: ClientSpawnSpec = { title: "typed", engine: "pi" };
const { threadId }: { threadId: string } = await new RuntimeClient().spawn(spec);
for await (const event of new RuntimeClient().follow(threadId, { after: 0 })) if (event.kind === "reply") console.log(event.seq);
for await (const { seq, event } of new RuntimeClient().followAgui(threadId)) if (event.type === "TEXT_MESSAGE_CONTENT") console.log(seq, event.delta);
export const kind: "transport" | "rejected" | "decode" = new RuntimeError("decode", "x").kind;
// @ts-expect-error the client library's engines are engine_a and pi
export const wrong: ClientSpawnSpec = { engine: "gpt" };
`,
    );
    execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: app, encoding: "utf8" });

    // client/ itself holds sources Node cannot load: installing it from its path refuses, and says what to run.
    const linked = join(scratch, "linked");
    mkdirSync(linked);
    writeFileSync(join(linked, "package.json"), JSON.stringify({ name: "linked", private: true, type: "module" }));
    const refused = spawnSync("npm", ["install", ...NPM, join(root, "client")], { cwd: linked, encoding: "utf8" });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("run node pack.mjs");

    expect(checkout()).toBe(before);
  }, 120_000);
});
