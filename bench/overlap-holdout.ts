/**
 * A held-out measure of the overlap pass (docs/code-host.md, "How well it judges"): one
 * labelled repository run through the runtime's dry pass, as `POST /github/overlap` answers
 * it, against the labels.
 *
 * HELD OUT. The Rust set (test/fixtures/code-host/overlap-holdout-rust*.json) was written on
 * 2026-11-27 by a helper session that saw neither the rule (src/rules/pr-overlap.ts, its
 * docs and tests) nor the other sets, and is measured once with this script. Do not change
 * the rule to raise its number: once the rule is changed after looking at its misses, the
 * set is a regression set, and a new held-out one must be written.
 *
 * It prints the confusion of labels and verdicts, the accuracy with its 95% Wilson
 * interval, and every pair judged a duplicate that is not labelled one (the error that
 * would comment wrongly on someone's work). It never asserts, and exits 0:
 *
 *   node --import tsx bench/overlap-holdout.ts [seed.json pairs.json]
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startCodeHostSimulator } from "../local-front/code-host-simulator/server.js";
import { Seed } from "../local-front/code-host-simulator/seed.js";
import { removeDir, startFront } from "../test/support/front.js";
import { call } from "../test/support/http.js";
import { wilson } from "./wilson.js";

const TOKEN = "ghp_holdout_measure";
const LABELS = ["duplicate", "complementary", "unrelated"] as const;

async function main(): Promise<void> {
  const here = (name: string) => resolve(import.meta.dirname, "../test/fixtures/code-host", name);
  const [seedPath, pairsPath] = process.argv.length >= 4 ? [process.argv[2]!, process.argv[3]!] : [here("overlap-holdout-rust.json"), here("overlap-holdout-rust-pairs.json")];
  const seed = Seed.parse(JSON.parse(readFileSync(seedPath, "utf8")));
  const repo = seed.repos[0]!;
  const labelled = (JSON.parse(readFileSync(pairsPath, "utf8")) as { pairs: { a: number; b: number; label: string }[] }).pairs;
  const sim = await startCodeHostSimulator({ seed: Seed.parse({ repos: [{ owner: "acme", name: repo.name, pulls: repo.pulls }] }) });
  sim.addToken(TOKEN, { login: "measure" });
  const dataDir = mkdtempSync(join(tmpdir(), "agent-runtime-overlap-holdout-"));
  writeFileSync(join(dataDir, "accounts.json"), JSON.stringify({ accounts: [{ id: "measure", provider: "github", token: TOKEN, baseUrl: sim.url }] }));
  const front = await startFront({ dataDir });
  try {
    const res = await call(front.url, "POST", "/github/overlap", { repo: `acme/${repo.name}` });
    if (res.status !== 200) throw new Error(`the pass answered ${res.status}: ${JSON.stringify(res.body)}`);
    const key = (a: number, b: number) => `${Math.min(a, b)}/${Math.max(a, b)}`;
    const verdicts = new Map((res.body.pairs as { older: number; newer: number; relation: string }[]).map((p) => [key(p.older, p.newer), p.relation]));
    const confusion: Record<string, Record<string, number>> = Object.fromEntries(LABELS.map((l) => [l, Object.fromEntries(LABELS.map((v) => [v, 0]))]));
    let right = 0;
    const misses: string[] = [];
    for (const p of labelled) {
      const verdict = verdicts.get(key(p.a, p.b)) ?? "unrelated";
      confusion[p.label]![verdict]!++;
      if (verdict === p.label) right++;
      else misses.push(`${key(p.a, p.b)}: labelled ${p.label}, judged ${verdict}`);
    }
    const labelOf = new Map(labelled.map((p) => [key(p.a, p.b), p.label]));
    const falseDuplicates = [...verdicts].filter(([k, v]) => v === "duplicate" && labelOf.get(k) !== "duplicate").map(([k]) => `${k} (${labelOf.get(k) ?? "unlisted"})`);
    const [lo, hi] = wilson(right, labelled.length);
    console.log(`set ${repo.name}: ${repo.pulls.length} pull requests, ${labelled.length} labelled pairs`);
    console.log(`label \\ verdict   ${LABELS.map((l) => l.padStart(15)).join("")}`);
    for (const l of LABELS) console.log(`${l.padEnd(17)} ${LABELS.map((v) => String(confusion[l]![v]).padStart(15)).join("")}`);
    console.log(`right: ${right}/${labelled.length} = ${(right / labelled.length).toFixed(3)} (95% Wilson interval ${lo.toFixed(3)} to ${hi.toFixed(3)})`);
    console.log(`false duplicates (would comment wrongly): ${falseDuplicates.length ? falseDuplicates.join(", ") : "none"}`);
    for (const m of misses) console.log(`  miss ${m}`);
  } finally {
    await front.stop();
    await sim.close();
    removeDir(dataDir);
  }
}

await main();
