/**
 * The code-host rows of `npm run bench`: a page of pull requests read through the runtime
 * against the same page read from the code-host simulator directly with Octokit (the
 * ratio is the runtime's hops and reshaping), and one overlap pass over the labelled set
 * against the host reads it needs, made directly the same way.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Octokit } from "@octokit/rest";
import { startCodeHostSimulator } from "../local-front/code-host-simulator/server.js";
import { Seed } from "../local-front/code-host-simulator/seed.js";
import { removeDir, startFront } from "../test/support/front.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const READS = 200;
const PASSES = 20;
const TOKEN = "ghp_bench_token";

export async function codeHostRows(row: Row, fmt: Fmt): Promise<void> {
  const overlapSet = Seed.parse(JSON.parse(readFileSync(resolve(import.meta.dirname, "../test/fixtures/code-host/overlap-set.json"), "utf8")));
  const pulls = overlapSet.repos[0]!.pulls;
  const sim = await startCodeHostSimulator({ seed: Seed.parse({ repos: [{ owner: "acme", name: "overlap-set", pulls }] }) });
  sim.addToken(TOKEN, { login: "bench" });
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-bench-code-host-"));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "bench-bot", provider: "github", token: TOKEN, baseUrl: sim.url }] }));
  const front = await startFront({ dataDir });
  const octokit = new Octokit({ auth: TOKEN, baseUrl: sim.url });
  try {
    const ours: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < READS + 10; i++) {
      const t = performance.now();
      const page = await front.client.pulls("acme/overlap-set", { limit: 30 });
      const tOurs = performance.now() - t;
      const d = performance.now();
      await octokit.rest.pulls.list({ owner: "acme", repo: "overlap-set", per_page: 30 });
      const tDirect = performance.now() - d;
      if (page.prs.length === 0) throw new Error("bench: no pull requests read");
      if (i >= 10) (ours.push(tOurs), direct.push(tDirect));
    }
    row(
      `a page of 30 pull requests through the runtime (${READS})`,
      `p50 ${fmt(percentile(ours, 50), 2)} ms, p95 ${fmt(percentile(ours, 95), 2)} ms`,
      `the same page from the simulator with Octokit directly: p50 ${fmt(percentile(direct, 50), 2)} ms`,
      fmt(percentile(ours, 50) / percentile(direct, 50), 2),
      "",
    );
    const passes: number[] = [];
    const reads: number[] = [];
    for (let i = 0; i < PASSES + 2; i++) {
      const t = performance.now();
      const pass = await front.client.overlap({ repo: "acme/overlap-set" });
      const tPass = performance.now() - t;
      const d = performance.now();
      const open = await octokit.paginate(octokit.rest.pulls.list, { owner: "acme", repo: "overlap-set", state: "open", per_page: 100 });
      await Promise.all(open.map((p) => octokit.paginate(octokit.rest.pulls.listFiles, { owner: "acme", repo: "overlap-set", pull_number: p.number, per_page: 100 })));
      const tReads = performance.now() - d;
      if (pass.considered !== pulls.length) throw new Error(`bench: the pass considered ${pass.considered}`);
      if (i >= 2) (passes.push(tPass), reads.push(tReads));
    }
    row(
      `a dry overlap pass over ${pulls.length} open pull requests (${PASSES})`,
      `p50 ${fmt(percentile(passes, 50), 1)} ms, p95 ${fmt(percentile(passes, 95), 1)} ms`,
      `its host reads (the list, every pull request's files) made directly with Octokit: p50 ${fmt(percentile(reads, 50), 1)} ms`,
      fmt(percentile(passes, 50) / percentile(reads, 50), 2),
      "",
    );
  } finally {
    await front.stop();
    await sim.close();
    removeDir(dataDir);
  }
}
