/**
 * How well a finding's fingerprint (src/rules/finding-fingerprint.ts) tells the same finding
 * reworded from another finding about the same line: the measure behind "five rounds over
 * an unchanged head give no duplicate comments" (docs/rooms.md, "Fingerprints").
 *
 * THE SET. `{pairs: [{code, a, b, label: "same" | "different"}]}`: two finding bodies about
 * one line of code, `same` when they are one finding worded twice (a model re-running a
 * review), `different` when they are two problems. A pair is judged right when the two
 * fingerprints agree for `same` and differ for `different`.
 *
 * HELD OUT. test/fixtures/fingerprint-holdout.json was written by someone who saw neither
 * the rule nor its tests, and is measured once: the rule is not tuned on it.
 *
 *   node --import tsx bench/fingerprint-holdout.ts [path/to/set.json]
 *
 * prints each label's count right with its 95% Wilson interval, and exits 0 whatever the
 * numbers are.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { fingerprintOf } from "../src/rules/finding-fingerprint.js";
import { wilson } from "./wilson.js";

interface Pair {
  code: string;
  a: string;
  b: string;
  label: "same" | "different";
}

const path = process.argv[2] ?? resolve(import.meta.dirname, "../test/fixtures/fingerprint-holdout.json");
const { pairs } = JSON.parse(readFileSync(path, "utf8")) as { pairs: Pair[] };
const byLabel = new Map<string, { right: number; of: number; wrong: Pair[] }>();
for (const p of pairs) {
  const print = (body: string) => fingerprintOf({ path: "src/file", side: "RIGHT", code: p.code, body });
  const agree = (await print(p.a)) === (await print(p.b));
  const tally = byLabel.get(p.label) ?? { right: 0, of: 0, wrong: [] };
  tally.of++;
  if (agree === (p.label === "same")) tally.right++;
  else tally.wrong.push(p);
  byLabel.set(p.label, tally);
}
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
console.log(`| label | right | of | share | 95% Wilson |`);
console.log(`| --- | --- | --- | --- | --- |`);
let right = 0;
for (const [label, t] of byLabel) {
  const [lo, hi] = wilson(t.right, t.of);
  right += t.right;
  console.log(`| ${label} | ${t.right} | ${t.of} | ${pct(t.right / t.of)} | ${pct(lo)} to ${pct(hi)} |`);
}
const [lo, hi] = wilson(right, pairs.length);
console.log(`| all | ${right} | ${pairs.length} | ${pct(right / pairs.length)} | ${pct(lo)} to ${pct(hi)} |`);
for (const [label, t] of byLabel) for (const p of t.wrong) console.log(`wrong (${label}): ${JSON.stringify(p.a)} / ${JSON.stringify(p.b)}`);
