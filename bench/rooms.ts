/**
 * The review-room rows of `npm run bench` (docs/rooms.md), on the code-host simulator with
 * a real git repository behind it: a round from `POST /rooms/:id/rounds` to its ready
 * verdict, against the same kind of turn on a plain thread (a runtime tool call, then the
 * reply) sent in the same run; and finalize of a 50-finding verdict, against posting the
 * same review to the simulator directly with Octokit.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { startCodeHostSimulator } from "../local-front/code-host-simulator/server.js";
import { Seed } from "../local-front/code-host-simulator/seed.js";
import { removeDir, startFront, type Front } from "../test/support/front.js";
import { call, sim } from "../test/support/http.js";
import { percentile } from "./load.js";

type Row = (...cells: (string | number)[]) => void;
type Fmt = (n: number, digits?: number) => string;

const ROUNDS = Number(process.env.BENCH_ROOM_ROUNDS ?? 30);
const FINALIZES = Number(process.env.BENCH_ROOM_FINALIZES ?? 10);
const FINDINGS = 50;
const TOKEN = "ghp_bench_rooms_token";

async function until<T>(probe: () => Promise<T | null>): Promise<T> {
  for (;;) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function idle(front: Front, thread: string): Promise<void> {
  await until(async () => ((await call(front.url, "GET", `/threads/${thread}`)).body.turn === null ? true : null));
}

/** One round to its ready verdict, in ms. */
async function timedRound(front: Front, room: { id: string; threadId: string }, findings: unknown[]): Promise<number> {
  await idle(front, room.threadId);
  const prompt = sim({ tool: { name: "submit_verdict", input: { decision: "comment", summary: "Looked at it.", findings } }, reply: "done" });
  const t = performance.now();
  const started = await call(front.url, "POST", `/rooms/${room.id}/rounds`, { prompt });
  if (started.status !== 202) throw new Error(`bench: a round was refused: ${JSON.stringify(started.body)}`);
  const round = await until(async () => {
    const r = (await call(front.url, "GET", `/rooms/${room.id}/rounds/${started.body.round.n}`)).body.round;
    return r.state === "running" ? null : r;
  });
  const took = performance.now() - t;
  if (round.state !== "ready") throw new Error(`bench: round ${round.n} ${round.state}: ${round.failure}`);
  return took;
}

export async function roomRows(row: Row, fmt: Fmt): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), "agent-runtime-bench-rooms-"));
  const checkout = join(work, "widgets");
  const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd: checkout, stdio: "pipe" });
  mkdirSync(checkout);
  git("init", "-q", "-b", "main");
  writeFileSync(join(checkout, "app.ts"), "export const a = 1;\n");
  git("add", "-A");
  git("commit", "-qm", "first");
  git("checkout", "-q", "-b", "feature");
  writeFileSync(join(checkout, "app.ts"), `export const a = 1;\n${Array.from({ length: 60 }, (_, i) => `export const v${i} = ${i};`).join("\n")}\n`);
  git("commit", "-qam", "sixty more");
  const simulator = await startCodeHostSimulator({
    // Pull request 1 for the rounds; one more for each finalize, so each posts to a pull request with no threads yet.
    seed: Seed.parse({
      repos: [
        {
          owner: "acme",
          name: "widgets",
          git: checkout,
          pulls: Array.from({ length: FINALIZES + 1 }, (_, i) => ({ number: i + 1, title: "Sixty values", user: "alice", head: "feature", base: "main", createdAt: "2026-10-01T00:00:00Z" })),
        },
      ],
    }),
  });
  simulator.addToken(TOKEN, { login: "bench" });
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-bench-rooms-data-"));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "bench-bot", provider: "github", token: TOKEN, baseUrl: simulator.url }] }));
  const front = await startFront({ dataDir });
  const octokit = new Octokit({ auth: TOKEN, baseUrl: simulator.url });
  try {
    const armed = await call(front.url, "POST", "/workspaces/bench/rooms", { repo: "acme/widgets", pr: 1, model: "sim-1" });
    if (armed.status !== 201) throw new Error(`bench: the room was not armed: ${JSON.stringify(armed.body)}`);
    const room = armed.body.room as { id: string; threadId: string };
    const plain = (await front.client.spawn({ model: "sim-1", workspace: "bench" })).threadId;
    const one = [{ path: "app.ts", line: 2, severity: "minor", body: "Name the constant." }];
    const rounds: number[] = [];
    const turns: number[] = [];
    // Interleaved, so both meet the same machine.
    for (let i = 0; i < ROUNDS + 3; i++) {
      const r = await timedRound(front, room, one);
      const t = performance.now();
      const sent = await front.client.send(plain, { text: sim({ tool: { name: "recall", input: { query: "constants" } }, reply: "done" }, "review it") });
      const tPlain = performance.now() - t;
      if (sent.outcome !== "completed") throw new Error(`bench: the plain turn failed: ${JSON.stringify(sent.failure)}`);
      if (i >= 3) (rounds.push(r), turns.push(tPlain));
    }
    row(
      `a review round on the simulator, POST rounds to its ready verdict (pi, one finding, ${ROUNDS})`,
      `p50 ${fmt(percentile(rounds, 50), 1)} ms, p95 ${fmt(percentile(rounds, 95), 1)} ms`,
      `the same kind of turn (a runtime tool call, then the reply) on a plain thread: p50 ${fmt(percentile(turns, 50), 1)} ms`,
      fmt(percentile(rounds, 50) / percentile(turns, 50), 2),
      "",
    );

    const head = execFileSync("git", ["rev-parse", "feature"], { cwd: checkout }).toString().trim();
    const finals: number[] = [];
    const direct: number[] = [];
    for (let i = 0; i < FINALIZES; i++) {
      const pr = i + 2;
      const other = await call(front.url, "POST", "/workspaces/bench/rooms", { repo: "acme/widgets", pr, model: "sim-1" });
      if (other.status !== 201) throw new Error(`bench: the room of #${pr} was not armed: ${JSON.stringify(other.body)}`);
      const findings = Array.from({ length: FINDINGS }, (_, k) => ({ path: "app.ts", line: k + 2, severity: "nit", body: `Name v${k} after what it counts.` }));
      await timedRound(front, other.body.room, findings);
      await idle(front, other.body.room.threadId);
      const t = performance.now();
      const fin = await call(front.url, "POST", `/rooms/${other.body.room.id}/finalize`, {});
      finals.push(performance.now() - t);
      if (fin.status !== 200 || fin.body.review.posted !== FINDINGS) throw new Error(`bench: finalize posted ${JSON.stringify(fin.body)}`);
      // The same review again, posted directly to a pull request with no threads yet either (the first).
      const d = performance.now();
      await octokit.rest.pulls.createReview({
        owner: "acme",
        repo: "widgets",
        pull_number: 1,
        commit_id: head,
        event: "COMMENT",
        body: "Looked at it.",
        comments: findings.map((f) => ({ path: f.path, line: f.line, side: "RIGHT", body: f.body })),
      });
      direct.push(performance.now() - d);
    }
    row(
      `finalize of a ${FINDINGS}-finding verdict on the simulator (${FINALIZES}, each to a pull request with no threads yet; anchoring, the unresolved threads read, one review posted)`,
      `p50 ${fmt(percentile(finals, 50), 1)} ms, p95 ${fmt(percentile(finals, 95), 1)} ms`,
      `the same review posted directly with Octokit: p50 ${fmt(percentile(direct, 50), 1)} ms`,
      fmt(percentile(finals, 50) / percentile(direct, 50), 2),
      "",
    );
  } finally {
    await front.stop();
    await simulator.close();
    removeDir(dataDir);
    removeDir(work);
  }
}
