/**
 * The code-read rows of `npm run bench`: a literal search through the runtime over a
 * generated repository of 20,000 files, against ripgrep run directly on the same tree in
 * the same run (the ratio is the runtime's overhead), and the outline of a 5,000-line
 * TypeScript file.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rgPath } from "@vscode/ripgrep";
import { removeDir, startFront } from "../test/support/front.js";
import { percentile, processCpuMs, treeCpuMs } from "./load.js";
import { mulberry32 } from "./memory-set.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const FILES = Number(process.env.BENCH_CODE_FILES ?? 20_000);
const SEARCHES = 100;
/** Calls whose CPU is summed per process: /proc counts in 10 ms ticks, so a few ms a call needs many calls. */
const CPU_CALLS = 50;

/**
 * CPU a call costs each process on its way, in ms: the front (its parse, the pipe), the
 * workerd processes under it, and this client (its fetch, JSON and schema check). On a
 * shared 2-core machine this moves far less than the wall time does.
 */
async function cpuPerCall(pid: number, call: () => Promise<unknown>): Promise<{ front: number; workerd: number; client: number }> {
  const tree0 = treeCpuMs(pid) ?? NaN;
  const front0 = processCpuMs(pid) ?? NaN;
  const client0 = process.cpuUsage();
  for (let i = 0; i < CPU_CALLS; i++) await call();
  const client = process.cpuUsage(client0);
  const front = (processCpuMs(pid) ?? NaN) - front0;
  return { front: front / CPU_CALLS, workerd: ((treeCpuMs(pid) ?? NaN) - tree0 - front) / CPU_CALLS, client: (client.user + client.system) / 1000 / CPU_CALLS };
}

/** A repository of `FILES` TypeScript-like files in nested directories, committed, and one 5,000-line file. */
function makeRepo(dir: string): string[] {
  const rand = mulberry32(20);
  const words = Array.from({ length: 2000 }, (_, i) => `ident${i.toString(36)}`);
  const word = () => words[Math.floor(rand() * words.length)]!;
  for (let i = 0; i < FILES; i++) {
    const sub = join(dir, `pkg${i % 40}`, `mod${Math.floor(i / 40) % 25}`);
    mkdirSync(sub, { recursive: true });
    const lines = Array.from({ length: 20 + Math.floor(rand() * 40) }, () => `export const ${word()} = ${word()}(${word()}, "${word()} ${word()}");`);
    writeFileSync(join(sub, `file${i}.ts`), `${lines.join("\n")}\n`);
  }
  const big: string[] = [];
  for (let c = 0; big.length < 5000; c++) {
    big.push(`export class Service${c} {`, `  private cache = new Map<string, number>();`);
    for (let m = 0; m < 6; m++) big.push(`  method${m}(input: string): number {`, `    const key = input + "${c}-${m}";`, `    return this.cache.get(key) ?? ${m};`, `  }`);
    big.push(`}`, `export function helper${c}(x: number): number {`, `  return x * ${c};`, `}`, ``);
  }
  writeFileSync(join(dir, "big.ts"), `${big.slice(0, 5000).join("\n")}\n`);
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd: dir, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-qm", "bench");
  return words;
}

/** ripgrep as the code service runs it, read the same way: stopped once `limit` matches came. */
function rgDirect(cwd: string, pattern: string, limit: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const rg = spawn(rgPath, ["--json", "--no-config", "--no-follow", "--max-filesize", "16M", "--case-sensitive", "--fixed-strings", "-e", pattern, "--", "."], { cwd, stdio: ["ignore", "pipe", "ignore"] });
    let matches = 0;
    let rest = "";
    rg.stdout.on("data", (d: Buffer) => {
      const lines = (rest + d.toString("utf8")).split("\n");
      rest = lines.pop()!;
      for (const l of lines) if (l.startsWith('{"type":"match"') && ++matches >= limit) rg.kill();
    });
    rg.on("error", reject);
    rg.on("close", () => resolve(matches));
  });
}

export async function codeRows(row: Row, fmt: Fmt): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "agent-runtime-bench-code-"));
  const repo = join(work, "repo");
  mkdirSync(repo);
  const words = makeRepo(repo);
  const front = await startFront({ env: { SERVICE_CODE_ROOTS: repo } });
  try {
    const rand = mulberry32(21);
    const ours: number[] = [];
    const direct: number[] = [];
    // Interleaved, and warmed up once each, so both meet the same page cache.
    for (let i = 0; i < SEARCHES + 5; i++) {
      const pattern = `${words[Math.floor(rand() * words.length)]}(`;
      const t = performance.now();
      const r = await front.client.codeSearch({ pattern, root: "repo", limit: 200 });
      const tOurs = performance.now() - t;
      const d = performance.now();
      await rgDirect(repo, pattern, 200);
      const tDirect = performance.now() - d;
      if (r.matches.length === 0) throw new Error(`bench: no match for ${pattern}`);
      if (i >= 5) (ours.push(tOurs), direct.push(tDirect));
    }
    row(
      `a literal search through the runtime over ${FILES} files (${SEARCHES} patterns, at most 200 matches)`,
      `p50 ${fmt(percentile(ours, 50), 1)} ms, p95 ${fmt(percentile(ours, 95), 1)} ms`,
      `ripgrep run directly on the same tree, stopped at 200 matches the same way: p95 ${fmt(percentile(direct, 95), 1)} ms`,
      fmt(percentile(ours, 95) / percentile(direct, 95), 2),
      "",
    );
    const outlines: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      const o = await front.client.codeOutline({ root: "repo", path: "big.ts" });
      outlines.push(performance.now() - t);
      if (o.symbols.length < 500) throw new Error(`bench: the outline found ${o.symbols.length} symbols`);
    }
    const reads: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      await front.client.codeRead({ root: "repo", path: "big.ts", start: 1, end: 5000 });
      reads.push(performance.now() - t);
    }
    row(
      "the outline of a 5,000-line TypeScript file (30, the first with the grammar's load)",
      `p50 ${fmt(percentile(outlines, 50), 1)} ms, p95 ${fmt(percentile(outlines, 95), 1)} ms`,
      `a read of the same 5,000 lines: p50 ${fmt(percentile(reads, 50), 1)} ms`,
      fmt(percentile(outlines, 50) / percentile(reads, 50), 2),
      "< 50 ms",
    );
    const pid = front.proc.pid!;
    const o = await cpuPerCall(pid, () => front.client.codeOutline({ root: "repo", path: "big.ts" }));
    const r = await cpuPerCall(pid, () => front.client.codeRead({ root: "repo", path: "big.ts", start: 1, end: 5000 }));
    const all = (c: typeof o) => c.front + c.workerd + c.client;
    row(
      `the outline's CPU a call, by process (${CPU_CALLS} more after the row above)`,
      `${fmt(all(o), 1)} ms: the front ${fmt(o.front, 1)}, workerd ${fmt(o.workerd, 1)}, the client ${fmt(o.client, 1)}`,
      `a read of the same 5,000 lines: ${fmt(all(r), 1)} ms (the front ${fmt(r.front, 1)}, workerd ${fmt(r.workerd, 1)}, the client ${fmt(r.client, 1)})`,
      fmt(all(o) / all(r), 2),
      "",
    );
  } finally {
    await front.stop();
    removeDir(front.dataDir);
    removeDir(work);
  }
}
