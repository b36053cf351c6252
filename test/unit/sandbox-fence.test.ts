import { spawn, spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, readFrontConfig } from "../../local-front/process/config.js";
import { Sandbox, SandboxRefused } from "../../local-front/bindings/sandbox/fence.js";
import { runtimePlaces } from "../../local-front/bindings/sandbox/runtime.js";
import { alive, identify, killIfSame } from "../../local-front/bindings/sandbox/identity.js";
import { StartedProcesses } from "../../local-front/bindings/sandbox/started.js";
import { removeDir } from "../support/front.js";

const root = mkdtempSync(join(tmpdir(), "sandbox-fence-"));
const data = join(root, "data");
const scratch = join(data, "scratch", "thr_1");
const work = join(root, "work");
for (const d of [scratch, work]) mkdirSync(d, { recursive: true });
writeFileSync(join(data, "accounts.json"), "secret-in-data");
writeFileSync(join(scratch, "mine.txt"), "mine");
writeFileSync(join(work, "work.txt"), "work");
const outside = join(root, "elsewhere-accounts.json");
writeFileSync(outside, "secret-elsewhere");
/** This runtime's programs, which the sessions below run on, and a stand-in checkout beside them that the tests may try to change. */
const programs = runtimePlaces(join(import.meta.dirname, "../.."));
const checkout = join(root, "runtime");
mkdirSync(join(checkout, "node_modules", "dep"), { recursive: true });
writeFileSync(join(checkout, "main.js"), "the-runtime");
afterAll(() => {
  sandbox.close();
  removeDir(root);
});

const sandbox = Sandbox.start("on", { hidden: [data, join(data, "accounts.json"), outside], readable: [], runtime: [...programs, checkout] }, new StartedProcesses(root), root);

function run(cwd: string, own: string[], script: string): string {
  const { file, args } = sandbox.command(["sh", "-c", script], { cwd, own });
  const r = spawnSync(file, args, { cwd, encoding: "utf8" });
  return r.stdout + r.stderr;
}

describe("the sandbox", () => {
  it("runs here (bubblewrap is installed by the test setup)", () => {
    expect(sandbox.state).toBe("bwrap");
  });

  it("hides the hidden places and shows the session's own", () => {
    const seen = run(scratch, [scratch], `cat mine.txt; cat ${join(data, "accounts.json")}; cat ${outside}; echo new > made.txt && cat made.txt`);
    expect(seen).toContain("mine");
    expect(seen).toContain("new");
    expect(seen).not.toContain("secret-in-data");
    expect(seen).not.toContain("secret-elsewhere");
    const fromWork = run(work, [], `cat work.txt; cat ${join(scratch, "mine.txt")}; touch /etc/sandbox-fence-probe 2>/dev/null || echo read-only`);
    expect(fromWork).toContain("work");
    expect(fromWork).not.toContain("mine\n");
    expect(fromWork).toContain("read-only");
  });

  it("refuses a working directory inside a hidden place that is not the session's own", () => {
    expect(() => sandbox.command(["true"], { cwd: data, own: [scratch] })).toThrow(SandboxRefused);
    expect(sandbox.refusalFor({ cwd: join(data, "scratch"), own: [scratch] })).toContain("private data");
    expect(sandbox.refusalFor({ cwd: scratch, own: [scratch] })).toBeNull();
  });

  it("keeps the runtime's programs read-only whatever the cwd, one inside them included, and the cwd writable elsewhere", () => {
    const inside = join(checkout, "node_modules", "dep");
    const { args } = sandbox.command(["true"], { cwd: inside, own: [] });
    const at = (flag: string, path: string) => args.findIndex((a, i) => a === flag && args[i + 1] === path);
    // bwrap mounts in order: the read-only bind comes after the writable one, so it wins.
    expect(at("--bind", inside)).toBeGreaterThan(-1);
    expect(at("--ro-bind", checkout)).toBeGreaterThan(at("--bind", inside));
    const tried = run(inside, [], `echo changed > ${join(checkout, "main.js")} || echo main-read-only; echo new > made.js || echo cwd-read-only`);
    expect(tried).toContain("main-read-only");
    expect(tried).toContain("cwd-read-only");
    expect(readFileSync(join(checkout, "main.js"), "utf8")).toBe("the-runtime");
    expect(existsSync(join(inside, "made.js"))).toBe(false);
    // The control: the same command in a cwd beside the runtime writes there, and only there.
    const beside = run(work, [], `echo changed > ${join(checkout, "main.js")} || echo main-read-only; echo new > made.js && cat made.js`);
    expect(beside).toContain("main-read-only");
    expect(beside).toContain("new");
    expect(readFileSync(join(work, "made.js"), "utf8")).toBe("new\n");
  });

  it("refuses a cwd that is / or holds the runtime's programs, by its real path", () => {
    const link = join(work, "link-to-root");
    symlinkSync(root, link);
    for (const cwd of ["/", root, link, dirname(dirname(process.execPath))])
      expect(sandbox.refusalFor({ cwd, own: [] }), cwd).toMatch(/holds the runtime's own programs .*; sessions may not work there/);
    expect(sandbox.refusalFor({ cwd: work, own: [] })).toBeNull();
  });

  it("runs a reader of the runtime's own (ripgrep over a code root holding the checkout) in a read-only cwd, which may hold the runtime", () => {
    expect(sandbox.refusalFor({ cwd: root, own: [], readOnly: true })).toBeNull();
    const { file, args } = sandbox.command(["sh", "-c", `cat ${join(checkout, "main.js")}; echo new > ${join(work, "made-by-reader")} || echo work-read-only`], { cwd: root, own: [], readOnly: true });
    expect(args.filter((a) => a === "--bind")).toEqual([]);
    // Under /tmp, as here, the cwd is bound back read-only: the private /tmp would hide it.
    expect(args.join(" ")).toContain(`--ro-bind ${root} ${root}`);
    const out = spawnSync(file, args, { cwd: root, encoding: "utf8" });
    expect(out.stdout + out.stderr).toContain("the-runtime");
    expect(out.stdout + out.stderr).toContain("work-read-only");
  });

  it("hides no other runtime's place that is /, holds the system or the programs, or is gone", () => {
    // In the cwd, which is bound back over the private /tmp: there it needs hiding.
    const theirs = join(work, "theirs");
    mkdirSync(theirs);
    const gone = join(root, "gone");
    const fenced = Sandbox.start("on", { hidden: [], others: () => ["/", "/usr", "/var/..", dirname(process.execPath), gone, theirs], readable: [], runtime: programs }, new StartedProcesses(root), mkdtempSync(join(root, "fenced-")));
    try {
      const { args } = fenced.command(["true"], { cwd: work, own: [] });
      const tmpfs = args.flatMap((a, i) => (a === "--tmpfs" ? [args[i + 1]] : []));
      expect(tmpfs).toEqual(["/tmp", theirs]);
      expect(spawnSync("bwrap", args, { cwd: work }).status).toBe(0);
    } finally {
      fenced.close();
    }
  });

  it("masks no place the private /tmp already hides, so a runtime starting or stopping under /tmp leaves a fence's arguments as they were", () => {
    const inCwd = join(work, "theirs-in-cwd");
    const underTmp = join(root, "theirs-under-tmp");
    for (const d of [inCwd, underTmp]) mkdirSync(d, { recursive: true });
    writeFileSync(join(underTmp, "secret.txt"), "secret-under-tmp");
    let others = [inCwd];
    const fenced = Sandbox.start("on", { hidden: [], others: () => others, readable: [], runtime: programs }, new StartedProcesses(root), mkdtempSync(join(root, "fenced-")));
    try {
      const before = fenced.command(["true"], { cwd: work, own: [] }).args;
      others = [inCwd, underTmp];
      const { args } = fenced.command(["sh", "-c", `cat ${join(underTmp, "secret.txt")}; ls ${inCwd} && echo listed`], { cwd: work, own: [] });
      expect(args.slice(0, args.indexOf("--chdir"))).toEqual(before.slice(0, before.indexOf("--chdir")));
      expect(args.flatMap((a, i) => (a === "--tmpfs" ? [args[i + 1]] : []))).toEqual(["/tmp", inCwd]);
      // Hidden all the same: under the session's own /tmp, nothing of the host's /tmp is there to read.
      const r = spawnSync("bwrap", args, { cwd: work, encoding: "utf8" });
      expect(r.stdout + r.stderr).not.toContain("secret-under-tmp");
      expect(r.stdout + r.stderr).toMatch(/No such file/);
      // The control: the place the cwd brings back is masked, an empty directory.
      expect(r.stdout).toContain("listed");
    } finally {
      fenced.close();
    }
  });

  it("refuses everything when bwrap is missing, and fences nothing when off", () => {
    const path = process.env.PATH;
    process.env.PATH = mkdtempSync(join(root, "no-bwrap-"));
    let missing: Sandbox;
    try {
      missing = Sandbox.start("on", { hidden: [], readable: [], runtime: programs }, new StartedProcesses(root), root);
    } finally {
      process.env.PATH = path;
    }
    expect(missing.state).toBe("unavailable");
    expect(() => missing.command(["true"], { cwd: work, own: [] })).toThrow(/bubblewrap \(bwrap\) is not installed: install Debian's bubblewrap package/);
    const off = Sandbox.start("off", { hidden: [data], readable: [], runtime: programs }, new StartedProcesses(root), root);
    expect(off.command(["cat", "x"], { cwd: data, own: [] })).toEqual({ file: "cat", args: ["x"] });
  });

  it("knows the runtime's programs by their real paths and as given, and the front passes them and its private places to the worker", () => {
    const elsewhere = join(root, "shared-deps", "node_modules");
    mkdirSync(elsewhere, { recursive: true });
    const tree = join(root, "tree");
    mkdirSync(tree);
    symlinkSync(elsewhere, join(tree, "node_modules"));
    const prefix = dirname(dirname(process.execPath));
    expect(runtimePlaces(tree)).toEqual([tree, join(tree, "node_modules"), elsewhere, prefix]);
    const cfg = readFrontConfig({ SERVICE_AGENTS_DATA_DIR: join(root, "cfg"), SERVICE_ENGINE_STATE_DIR: join(root, "state") }, tree);
    expect(cfg.runtime).toEqual(runtimePlaces(tree));
    expect(JSON.parse(cfg.workerVars.SERVICE_RUNTIME_FENCE!)).toEqual({ private: [join(root, "cfg"), join(root, "state")], runtime: runtimePlaces(tree) });
  });

  it("is configured by SERVICE_SANDBOX, on or off", () => {
    const env = { SERVICE_AGENTS_DATA_DIR: join(root, "cfg") };
    expect(readFrontConfig(env, root).sandbox).toBe("on");
    expect(readFrontConfig({ ...env, SERVICE_SANDBOX: "off" }, root).sandbox).toBe("off");
    expect(() => readFrontConfig({ ...env, SERVICE_SANDBOX: "maybe" }, root)).toThrow(ConfigError);
  });
});

async function serve(body: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe("the sandbox's network", () => {
  it("reaches the loopback addresses a session is given, and nothing else on the host's loopback", async () => {
    const given = await serve("the-proxy");
    const other = await serve("the-runtime-api");
    try {
      const { file, args } = sandbox.command(["sh", "-c", `curl -s -m 5 ${given.url}; echo; curl -s -m 5 ${other.url} || echo unreachable`], { cwd: work, own: [], reach: [given.url] });
      // Asynchronous: the bridge's sockets are served by this process.
      const out = await new Promise<string>((done) => {
        const child = spawn(file, args, { cwd: work });
        let text = "";
        child.stdout.on("data", (d: Buffer) => (text += d));
        child.on("close", () => done(text));
      });
      expect(out).toContain("the-proxy");
      expect(out).toContain("unreachable");
      expect(out).not.toContain("the-runtime-api");
    } finally {
      given.server.close();
      other.server.close();
    }
  });
});

describe("process identity", () => {
  it("kills a recorded process only while its start time still matches", async () => {
    const child = spawn("sleep", ["600"], { detached: true, stdio: "ignore" });
    const id = identify(child.pid!)!;
    expect(killIfSame({ pid: id.pid, start: String(Number(id.start) + 1) })).toBe(false);
    expect(alive(id.pid)).toBe(true);
    expect(killIfSame(id)).toBe(true);
    await new Promise((r) => child.once("exit", r));
    expect(alive(id.pid)).toBe(false);
  });
});
