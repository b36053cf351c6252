import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call, events, sim } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-code-"));
const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-code-data-"));
const app = join(work, "app");
const lib = join(work, "lib");
const secret = join(work, "secret.txt");
let front: Front;

const git = (cwd: string, ...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdio: "pipe" }).toString().trim();

function repo(dir: string, files: Record<string, string | Buffer>): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  git(dir, "add", "-A");
  git(dir, "commit", "-qm", "first");
  return git(dir, "rev-parse", "HEAD");
}

const TS = `export interface Shape {\n  area(): number;\n}\n\nexport class Circle implements Shape {\n  constructor(private r: number) {}\n  area(): number {\n    return Math.PI * this.r ** 2;\n  }\n}\n\nexport function total(shapes: Shape[]): number {\n  return shapes.reduce((n, s) => n + s.area(), 0);\n}\n\nexport const double = (x: number) => x * 2;\n\nexport type Id = string;\n`;
let appHead: string;

beforeAll(async () => {
  writeFileSync(secret, "the host's secret\n");
  appHead = repo(app, {
    "src/shapes.ts": TS,
    "src/util.py": "class Cache:\n    def get(self, key):\n        return None\n\ndef warm():\n    pass\n",
    "cmd/main.go": "package main\n\ntype Server struct{}\n\nfunc (s *Server) Start() {}\n\nfunc main() {}\n",
    "src/lib.rs": "pub struct Pool;\n\nimpl Pool {\n    pub fn take(&self) {}\n}\n\npub trait Job {}\n\npub fn run() {}\n",
    "README.md": "# App\nThe Needle is here.\nneedle again, needle twice\n",
    "data.bin": Buffer.from([0, 1, 2, 3, 0, 255]),
    "big.txt": `${"line of text\n".repeat(30_000)}`,
    "deep.ts": `export const deep = ${"[".repeat(20_000)}${"]".repeat(20_000)};\n`,
  });
  symlinkSync(secret, join(app, "leak.txt"));
  writeFileSync(join(app, ".env"), "TOKEN=hunter2\n");
  writeFileSync(join(app, "notes.txt"), "hunter2 untracked\n");
  // An ignore file that would bring hidden and ignored files back into ripgrep's walk.
  writeFileSync(join(app, ".ignore"), "!.env\n!.git/\n");
  symlinkSync(work, join(app, "up"));
  // More files than one sandboxed ripgrep may be given (bubblewrap takes 9,000 arguments).
  const many: Record<string, string> = { "index.js": "function helper() {}\nmodule.exports = { helper };\n// needle in lib\n" };
  for (let i = 0; i < 9000; i++) many[`gen/f${i}.txt`] = i === 8999 ? "last-of-many\n" : `${i}\n`;
  repo(lib, many);
  writeFileSync(join(dataDir, "workspaces.json"), JSON.stringify({ workspaces: [{ name: "alpha", slug: "acme/alpha", repos: [{ name: "library", path: lib }] }] }));
  front = await startFront({ dataDir, env: { SERVICE_CODE_ROOTS: app } });
});
afterAll(async () => {
  await front?.stop();
  removeDir(dataDir);
  removeDir(work);
});

describe("code reads of registered repositories", () => {
  it("lists the roots with their branch and head", async () => {
    const roots = (await call(front.url, "GET", "/code/roots")).body.roots;
    expect(roots).toEqual([
      { name: "app", path: expect.stringMatching(/app$/), workspace: null, branch: "main", head: appHead },
      { name: "library", path: expect.stringMatching(/lib$/), workspace: "alpha", branch: "main", head: expect.stringMatching(/^[0-9a-f]{40}$/) },
    ]);
  });

  it("pages the tracked files under a path, with a glob", async () => {
    const all = (await call(front.url, "GET", "/code/files?root=app")).body;
    expect(all).toMatchObject({ root: "app", commit: appHead, nextCursor: null });
    expect(all.files).toEqual(["README.md", "big.txt", "cmd/main.go", "data.bin", "deep.ts", "src/lib.rs", "src/shapes.ts", "src/util.py"]);
    const first = (await call(front.url, "GET", "/code/files?root=app&limit=3")).body;
    const second = (await call(front.url, "GET", `/code/files?root=app&limit=3&cursor=${encodeURIComponent(first.nextCursor)}`)).body;
    expect([...first.files, ...second.files]).toEqual(all.files.slice(0, 6));
    expect((await call(front.url, "GET", "/code/files?root=app&glob=src/")).body.files).toEqual(["src/lib.rs", "src/shapes.ts", "src/util.py"]);
    expect((await call(front.url, "GET", "/code/files?root=app&path=src&glob=*.ts")).body.files).toEqual(["src/shapes.ts"]);
    expect((await call(front.url, "GET", "/code/files?root=app&glob=**/*.{go,rs}")).body.files).toEqual(["cmd/main.go", "src/lib.rs"]);
  });

  it("reads a line range with the line count and the blob's hash, and cuts at the cap", async () => {
    const r = (await call(front.url, "GET", "/code/read?root=app&path=src/shapes.ts&start=5&end=6")).body;
    expect(r).toMatchObject({ start: 5, end: 6, totalLines: 18, text: "export class Circle implements Shape {\n  constructor(private r: number) {}", truncated: false });
    expect(r.blob).toBe(git(app, "hash-object", "src/shapes.ts"));
    const big = (await call(front.url, "GET", "/code/read?root=app&path=big.txt&start=1&end=30000")).body;
    expect(big).toMatchObject({ totalLines: 30_000, truncated: true, start: 1 });
    expect(big.end).toBeLessThan(30_000);
    expect(big.text.split("\n")).toHaveLength(big.end);
    expect((await call(front.url, "GET", "/code/read?root=app&path=data.bin")).body.code).toBe("code-file-binary");
    expect((await call(front.url, "GET", "/code/read?root=app&path=src/shapes.ts&start=99")).body.code).toBe("code-range-outside");
  });

  it("outlines TypeScript, Python, Go and Rust with a real parser", async () => {
    const outlined = await call(front.url, "GET", "/code/outline?root=app&path=src/shapes.ts");
    // The code service's answer passes the worker unparsed, and still goes with its length, not in chunks.
    expect([outlined.headers.get("content-type"), outlined.headers.get("content-length"), outlined.headers.get("transfer-encoding")]).toEqual(["application/json", String(Buffer.byteLength(JSON.stringify(outlined.body))), null]);
    const ts = outlined.body;
    expect(ts.language).toBe("typescript");
    expect(ts.symbols.map((s: any) => [s.kind, s.name, s.parent])).toEqual([
      ["interface", "Shape", null],
      ["class", "Circle", null],
      ["method", "constructor", "Circle"],
      ["method", "area", "Circle"],
      ["function", "total", null],
      ["function", "double", null],
      ["type", "Id", null],
    ]);
    expect(ts.symbols.find((s: any) => s.name === "total")).toMatchObject({ range: { start: { line: 12, column: 8 } }, signature: "function total(shapes: Shape[]): number {" });
    const kinds = async (path: string) => (await call(front.url, "GET", `/code/outline?root=app&path=${path}`)).body.symbols.map((s: any) => `${s.kind}:${s.name}${s.parent ? `@${s.parent}` : ""}`);
    expect(await kinds("src/util.py")).toEqual(["class:Cache", "method:get@Cache", "function:warm"]);
    expect(await kinds("cmd/main.go")).toEqual(["struct:Server", "method:Start@Server", "function:main"]);
    expect(await kinds("src/lib.rs")).toEqual(["struct:Pool", "impl:Pool", "method:take@Pool", "trait:Job", "function:run"]);
    expect((await call(front.url, "GET", "/code/outline?root=app&path=README.md")).body.code).toBe("code-language-unknown");
    // A deeply nested file outlines without overflowing the front's stack.
    const deep = await call(front.url, "GET", "/code/outline?root=app&path=deep.ts");
    expect([deep.status, deep.body.symbols]).toEqual([200, []]);
  });

  it("searches one root or all, literal or regex, with globs, case and a limit", async () => {
    const s = (await call(front.url, "POST", "/code/search", { pattern: "needle", caseSensitive: false })).body;
    expect(s.commits).toEqual({ app: appHead, library: expect.any(String) });
    expect(s.matches.map((m: any) => `${m.root}:${m.path}:${m.line}:${m.column}`)).toEqual(["app:README.md:2:5", "app:README.md:3:1", "app:README.md:3:15", "library:index.js:3:4"]);
    const readme = "# App\nThe Needle is here.\n";
    expect(s.matches[0]).toMatchObject({ byteOffset: Buffer.byteLength(readme.slice(0, readme.indexOf("Needle"))), text: "The Needle is here." });
    expect((await call(front.url, "POST", "/code/search", { pattern: "needle" })).body.matches).toHaveLength(3);
    expect((await call(front.url, "POST", "/code/search", { pattern: "need+le", regex: true, root: "app", glob: "*.md" })).body.matches).toHaveLength(2);
    expect((await call(front.url, "POST", "/code/search", { pattern: "need+le", root: "app" })).body.matches).toHaveLength(0);
    const limited = (await call(front.url, "POST", "/code/search", { pattern: "line of text", root: "app", limit: 5 })).body;
    expect([limited.matches.length, limited.limitHit]).toEqual([5, true]);
    expect((await call(front.url, "POST", "/code/search", { pattern: "(", regex: true })).body.code).toBe("code-search-invalid");
    expect((await call(front.url, "POST", "/code/search", { pattern: "last-of-many", root: "library" })).body.matches.map((m: any) => m.path)).toEqual(["gen/f8999.txt"]);
    // The link to the host's file is not followed.
    expect((await call(front.url, "POST", "/code/search", { pattern: "secret" })).body.matches).toEqual([]);
  });

  it("fences every path to its root: .., absolute paths and links that leave it are refused", async () => {
    for (const path of ["../secret.txt", "/etc/passwd", "src/../../secret.txt", "leak.txt", "up/secret.txt", "src/\0x"]) {
      const r = await call(front.url, "GET", `/code/read?root=app&path=${encodeURIComponent(path)}`);
      expect([path, r.status, r.body.code]).toEqual([path, 400, "code-path-fenced"]);
      expect(JSON.stringify(r.body)).not.toContain("the host's secret");
    }
    expect((await call(front.url, "GET", "/code/files?root=app&path=up")).body.code).toBe("code-path-fenced");
    expect((await call(front.url, "GET", "/code/read?root=nope&path=x")).body.code).toBe("code-root-not-found");
    expect((await call(front.url, "GET", "/code/read?root=app&path=missing.ts")).body.code).toBe("code-path-not-found");
    // Only what the checkout tracks is read: not git's own files, not a hidden or untracked one.
    for (const path of [".git/config", ".env", "notes.txt"]) expect([path, (await call(front.url, "GET", `/code/read?root=app&path=${path}`)).body.code]).toEqual([path, "code-path-not-found"]);
    for (const glob of ["*", ".env", "**/.env"]) expect((await call(front.url, "POST", "/code/search", { pattern: "TOKEN=", root: "app", glob })).body.matches).toEqual([]);
    expect((await call(front.url, "POST", "/code/search", { pattern: "hunter2", root: "app" })).body.matches).toEqual([]);
    expect((await call(front.url, "POST", "/code/search", { pattern: "repositoryformatversion", root: "app" })).body.matches).toEqual([]);
    expect((await call(front.url, "POST", "/code/search", { pattern: "x", glob: "{a,{b,c}}" })).body.code).toBe("code-glob-invalid");
    expect((await call(front.url, "GET", `/code/files?root=app&path=${encodeURIComponent(":(top)")}`)).body.code).toBe("code-path-not-found");
  });

  it("refuses a build thread whose cwd is inside a registered checkout", async () => {
    const r = await call(front.url, "POST", "/spawn", { type: "build", cwd: join(app, "src") });
    expect([r.status, r.body.code]).toEqual([400, "spawn-cwd-fenced"]);
    expect((await call(front.url, "POST", "/spawn", { type: "build", cwd: `${lib}/../lib` })).body.code).toBe("spawn-cwd-fenced");
    // Nor in a directory that holds one: its working directory is writable, all of it.
    expect((await call(front.url, "POST", "/spawn", { type: "build", cwd: work })).body.code).toBe("spawn-cwd-fenced");
    // A chat thread may read there, and a build thread may work beside it.
    expect((await call(front.url, "POST", "/spawn", { cwd: app })).status).toBe(201);
    expect((await call(front.url, "POST", "/spawn", { type: "build", cwd: mkdtempSync(join(tmpdir(), "agent-runtime-build-")) })).status).toBe(201);
  });

  it("fails a build thread's turn whose cwd leads into a registered checkout through a link", async () => {
    const outside = mkdtempSync(join(tmpdir(), "agent-runtime-build-link-"));
    symlinkSync(join(app, "src"), join(outside, "into"));
    // Also when the directory is still to be made: the engine would make it inside the checkout.
    for (const cwd of [join(outside, "into"), join(outside, "into", "new", "deeper")]) {
      const id = (await call(front.url, "POST", "/spawn", { type: "build", cwd })).body.threadId;
      const sent = await call(front.url, "POST", `/threads/${id}/send`, { text: "write here" });
      expect([sent.body.outcome, sent.body.failure?.class], cwd).toEqual(["failed", "permission"]);
      expect(sent.body.failure.error).toContain("registered checkout");
    }
    expect(existsSync(join(app, "src", "new"))).toBe(false);
    removeDir(outside);
  });
});

describe.each(EVERY_ENGINE)("code reads through the runtime's tools on %s", (_engine, spec) => {
  it("searches and reads the roots its thread may read, and no other workspace's", async () => {
    const base = front.url;
    const result = async (id: string, name: string, input: Record<string, unknown>) => {
      const sent = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name, input }, reply: "read" }) });
      expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
      return (await events(base, id)).filter((e) => e.kind === "tool-result" && String(e.body.name).endsWith(name)).at(-1)!.body;
    };
    const inAlpha = (await call(base, "POST", "/spawn", { ...spec, workspace: "alpha", cwd: work, permissions: "ask" })).body.threadId;
    const found = await result(inAlpha, "code_search", { pattern: "needle" });
    expect(found.output).toContain("app/README.md:3:1: needle again, needle twice");
    expect(found.output).toContain("library/index.js:3:4");
    expect((await result(inAlpha, "code_read", { root: "app", path: "src/shapes.ts", start: 12, end: 12 })).output).toContain("12: export function total(shapes: Shape[]): number {");
    expect((await result(inAlpha, "code_outline", { root: "library", path: "index.js" })).output).toContain("function helper");
    const inDefault = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask" })).body.threadId;
    expect((await result(inDefault, "code_search", { pattern: "needle" })).output).not.toContain("library/");
    expect(await result(inDefault, "code_read", { root: "library", path: "index.js" })).toMatchObject({ isError: true, output: expect.stringContaining("code-root-not-found") });
  });
});
