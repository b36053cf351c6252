/**
 * A held-out measure of conversation summaries: does the summary the curator writes keep
 * what a coding agent needs later?
 *
 * WHO AND WHEN. The set (test/fixtures/summary-holdout.json) and this script were written
 * on 2026-11-27 by a helper session that never saw the summarizer: it did not open the
 * simulator's summary rule, its tests, the compaction bench or the docs that describe them.
 * The conversations and what each must keep come from the writer's own idea of what
 * matters to an agent that continues a conversation, not from how any summarizer picks
 * sentences.
 *
 * HELD OUT. The set is measured once, by someone else, and never tuned on: do not change
 * the summarizer to raise this number, and do not edit the set after seeing a result. A
 * set that has been looked at while changing the rule is no longer held out; write a new
 * one instead.
 *
 * THE SET. About a dozen realistic conversations between a user and a coding agent (a
 * web service, a data pipeline, a CLI tool, infra, a refactor, a bug hunt, ...), each
 * 30-80 entries of user messages, agent replies, tool calls and long noisy tool results.
 * In each, 5-6 things the agent must still know later are planted from early to late and
 * phrased in varied ways, each tagged with a `kind`:
 *   rule        an instruction ("never push to main", "don't touch vendor/")
 *   statement   a plain fact with no cue word ("Priya owns the ingestion DAGs")
 *   correction  a later fact that replaces an earlier one ("logs-eu-2, not logs-eu-1")
 *   preference  how the user wants things done ("answer in French from now on")
 *   identifier  a ticket, path, commit, name to reuse
 * An item is kept when the summary contains, case-insensitively, any of its `anyOf` key
 * strings (distinctive fragments, so a paraphrase that keeps the fact counts). `mustNotKeep`
 * lists stale values that a correction replaced; they are reported separately, as a
 * summary may rightly say "X, not Y".
 *
 * THE REQUEST. Each conversation goes to the provider simulator's OpenAI chat-completions
 * endpoint (model `sim-1`) the way the runtime's `writeSummary`
 * (local-front/bindings/curator/summary.ts) sends it through pi-ai: the transcript
 * rendered by summary.ts's own `rendered()`, the system prompt
 * `${SUMMARY_PROMPT}\n\nThe conversation so far:\n\n${rendered}` and one user message
 * "Write the summary now.", streamed.
 *
 * It prints, never asserts, and exits 0:
 *
 *   node --import tsx bench/summary-holdout.ts [path/to/set.json] [--show]
 *
 * `--show` also prints each summary after the table.
 */
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import { startSimulator } from "../local-front/simulator/server.js";
import { rendered } from "../local-front/bindings/curator/summary.js";
import { SUMMARY_PROMPT } from "../src/api/curator-prompts.js";
import type { TranscriptEntry } from "../src/api/engine.js";

type Kind = "rule" | "statement" | "correction" | "preference" | "identifier";

interface SetEntry {
  role: "user" | "agent" | "call" | "result";
  text: string;
  tool?: string;
  error?: boolean;
}

interface Item {
  id: string;
  kind?: Kind;
  anyOf: string[];
}

interface Conversation {
  id: string;
  topic?: string;
  entries: SetEntry[];
  mustKeep: Item[];
  mustNotKeep?: Item[];
}

/** What a call's text is, by tool: the argument an agent's tool would take. */
const INPUT_KEY: Record<string, string> = { shell: "command", read: "path", edit: "path", write: "path", ls: "path", grep: "pattern" };

/** The set's entries as the runtime's transcript entries; a result answers the call before it. */
export function transcript(entries: SetEntry[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let n = 0;
  let open: { callId: string; name: string } | null = null;
  for (const e of entries) {
    switch (e.role) {
      case "user":
        out.push({ role: "user", text: e.text });
        break;
      case "agent":
        out.push({ role: "assistant", text: e.text });
        break;
      case "call": {
        const name = e.tool ?? "shell";
        open = { callId: `call_${++n}`, name };
        out.push({ role: "tool-call", callId: open.callId, name, input: { [INPUT_KEY[name] ?? "input"]: e.text } });
        break;
      }
      case "result": {
        const name = e.tool ?? open?.name ?? "shell";
        const callId = open?.callId ?? `call_${++n}`;
        out.push({ role: "tool-result", callId, name, output: e.text, isError: e.error === true });
        open = null;
        break;
      }
    }
  }
  return out;
}

const words = (s: string) => s.split(/\s+/).filter(Boolean).length;
const has = (summary: string, item: Item) => item.anyOf.some((k) => summary.toLowerCase().includes(k.toLowerCase()));

async function summarize(client: OpenAI, conv: Conversation): Promise<string> {
  const document = `The conversation so far:\n\n${rendered(transcript(conv.entries))}`;
  const stream = await client.chat.completions.create({
    model: "sim-1",
    messages: [
      { role: "system", content: `${SUMMARY_PROMPT}\n\n${document}` },
      { role: "user", content: "Write the summary now." },
    ],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  return text.trim();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const show = args.includes("--show");
  const path = args.find((a) => !a.startsWith("--")) ?? "test/fixtures/summary-holdout.json";
  const summaries: [string, string][] = [];
  const set = JSON.parse(readFileSync(path, "utf8")) as { conversations: Conversation[] };
  const sim = await startSimulator();
  const client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "sim", maxRetries: 0 });
  const byKind = new Map<string, { kept: number; of: number }>();
  let kept = 0;
  let of = 0;
  let stale = 0;
  let staleOf = 0;
  const rows: string[][] = [];
  const missed: string[] = [];
  try {
    for (const conv of set.conversations) {
      let summary: string;
      try {
        summary = await summarize(client, conv);
        summaries.push([conv.id, summary]);
      } catch (err) {
        rows.push([conv.id, "-", "-", "-", "-", `error: ${(err as Error).message}`]);
        for (const item of conv.mustKeep) {
          const k = byKind.get(item.kind ?? "untagged") ?? { kept: 0, of: 0 };
          k.of++;
          byKind.set(item.kind ?? "untagged", k);
          of++;
          missed.push(`${conv.id}/${item.id} (${item.kind ?? "untagged"})`);
        }
        continue;
      }
      let k = 0;
      for (const item of conv.mustKeep) {
        const hit = has(summary, item);
        const bucket = byKind.get(item.kind ?? "untagged") ?? { kept: 0, of: 0 };
        bucket.of++;
        if (hit) bucket.kept++;
        byKind.set(item.kind ?? "untagged", bucket);
        if (hit) k++;
        else missed.push(`${conv.id}/${item.id} (${item.kind ?? "untagged"})`);
      }
      const staleHits = (conv.mustNotKeep ?? []).filter((item) => has(summary, item)).map((i) => i.id);
      kept += k;
      of += conv.mustKeep.length;
      stale += staleHits.length;
      staleOf += (conv.mustNotKeep ?? []).length;
      const inputWords = words(conv.entries.map((e) => e.text).join("\n"));
      rows.push([conv.id, `${k}/${conv.mustKeep.length}`, `${staleHits.length}/${(conv.mustNotKeep ?? []).length}`, String(words(summary)), String(inputWords), staleHits.join(",")]);
    }
  } finally {
    await sim.close();
  }

  const head = ["conversation", "kept", "stale", "summary words", "input words", "stale items present"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(`Summary hold-out: ${path}, ${set.conversations.length} conversations\n`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log("");
  console.log(`kept ${kept} of ${of} items (${of ? ((100 * kept) / of).toFixed(1) : "0.0"}%)`);
  for (const [kind, b] of [...byKind].sort()) console.log(`  ${kind.padEnd(11)} ${b.kept} of ${b.of}`);
  console.log(`stale facts still present: ${stale} of ${staleOf}`);
  const sw = rows.map((r) => Number(r[3])).filter((n) => Number.isFinite(n));
  if (sw.length) console.log(`summary words: min ${Math.min(...sw)}, median ${sw.sort((a, b) => a - b)[Math.floor(sw.length / 2)]}, max ${Math.max(...sw)}`);
  if (missed.length) console.log(`\nnot kept:\n  ${missed.join("\n  ")}`);
  if (show) for (const [id, text] of summaries) console.log(`\n=== ${id} (${words(text)} words)\n${text}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(0);
  },
);
