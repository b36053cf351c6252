/**
 * Context compaction as pure rules (docs/compaction.md): how many tokens a context holds,
 * where its two lines stand, which entries each kind of reduction cuts, and how the
 * context for the next model call is rebuilt from the transcript with the reductions
 * applied. Nothing here rewrites the log: a reduction is a list of seq ranges, recorded
 * as a `window` event, and applied whenever the context is rebuilt.
 */
import type { TranscriptEntry } from "../api/engine.js";
import type { CompactionMode, SeqRange, WindowBody, WindowKind } from "../api/compaction.js";

/** A transcript entry with the seq of the event it came from (and, from the Thread's table, its row: the transcript's order). */
export interface HeldEntry {
  seq: number;
  entry: TranscriptEntry;
  row?: number;
}

export interface WindowSettings {
  /** The warning line, as a share of the window (0.70: a warning once 70 % is in use). */
  warnRatio: number;
  /** Tokens kept free for the model's answer: a call that would leave less is forced. */
  reserveTokens: number;
  /** Tool results a microcompact leaves whole, newest first. */
  keepToolResults: number;
  /** Turns (a user message and what answered it) a collapse or summary leaves whole, newest first. */
  keepTurns: number;
  /** Tokens of user messages a summary keeps verbatim, newest first; older ones go into the summary. */
  userBudgetTokens: number;
  /** Reductions allowed within the last `thrashTurns` turns before the runtime refuses with WindowThrash. */
  thrashLimit: number;
  thrashTurns: number;
}

export const DEFAULT_WINDOW_SETTINGS: WindowSettings = {
  warnRatio: 0.7,
  reserveTokens: 1024,
  keepToolResults: 3,
  keepTurns: 2,
  userBudgetTokens: 2000,
  thrashLimit: 4,
  thrashTurns: 2,
};

/**
 * Tokens as the runtime estimates them: four characters a token, rounded up, plus a few
 * for the message's framing. Providers count exactly only what they were sent; between
 * calls this estimate fills the gap, and the next call's reported usage corrects it.
 */
export function estimateText(text: string): number {
  return Math.ceil(text.length / 4);
}

const FRAMING_TOKENS = 4;

export function estimateEntry(e: TranscriptEntry): number {
  switch (e.role) {
    case "user":
    case "assistant":
      return estimateText(e.text) + FRAMING_TOKENS;
    case "tool-call":
      return estimateText(e.name) + estimateText(JSON.stringify(e.input ?? null)) + FRAMING_TOKENS;
    case "tool-result":
      return estimateText(e.output) + FRAMING_TOKENS;
  }
}

export function estimateEntries(entries: readonly HeldEntry[]): number {
  return entries.reduce((sum, h) => sum + estimateEntry(h.entry), 0);
}

export interface Lines {
  window: number;
  /** A context above this many tokens gets a warning. */
  warnAt: number;
  /** A context above this many tokens does not leave the reserve for the answer: the next call is forced. */
  forcedAt: number;
}

export function linesOf(window: number, s: WindowSettings): Lines {
  const reserve = Math.min(s.reserveTokens, Math.floor(window / 4));
  return { window, warnAt: Math.floor(window * s.warnRatio), forcedAt: window - reserve };
}

/** What the reductions aim for: half the window, well under the warning line, so one reduction buys many turns. */
export function targetOf(lines: Lines): number {
  return Math.floor(lines.window / 2);
}

/** The stub a microcompact leaves in place of a tool result's body. */
export function toolStub(seq: number, chars: number): string {
  return `[tool output of ${chars} characters removed to save context; it is event ${seq} in this thread's log]`;
}

export function summaryEntry(range: SeqRange[], text: string): TranscriptEntry {
  const from = range[0]![0];
  const to = range.at(-1)![1];
  return { role: "user", text: `[Summary of the conversation from event ${from} to event ${to}, written to save context]\n${text}` };
}

/** What takes the place of the turns a drop cut, so the model knows something came before. */
const DROP_NOTICE_OPENING = "[Earlier conversation (events ";

export function dropEntry(range: SeqRange[]): TranscriptEntry {
  const seqs = range.map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`)).join(", ");
  return { role: "user", text: `${DROP_NOTICE_OPENING}${seqs}) was dropped to save context: no summary of it could be written. It is still in this thread's log.]` };
}

/** The entry a reduction leaves in place of its cut, if any: a summary's text, a drop's notice. */
function placeholderOf(w: WindowBody): TranscriptEntry | null {
  if (w.kind === "summary" && w.summary !== undefined) return summaryEntry(w.cut, w.summary);
  return w.kind === "drop" ? dropEntry(w.cut) : null;
}

const inRanges = (seq: number, ranges: readonly SeqRange[]) => ranges.some(([a, b]) => seq >= a && seq <= b);

/**
 * A reduction as the context applies it: with `upToRow`, the transcript's newest row when
 * it was made. A row added later is never its to cut, even with a seq inside one of its
 * ranges: a message queued behind a turn joins the transcript after a reduction has cut
 * around its seq.
 */
export type AppliedWindow = WindowBody & { upToRow?: number };

/** The context with every reduction applied, in order; the entries keep their transcript order. */
export function applyWindows(held: readonly HeldEntry[], windows: readonly AppliedWindow[]): HeldEntry[] {
  let view = [...held];
  for (const w of windows) {
    if (w.cut.length === 0) continue;
    const cuts = (h: HeldEntry) => inRanges(h.seq, w.cut) && (w.upToRow === undefined || (h.row ?? 0) <= w.upToRow);
    if (w.kind === "microcompact") {
      view = view.map((h) =>
        h.entry.role === "tool-result" && cuts(h) && !h.entry.output.startsWith("[tool output of ")
          ? { ...h, entry: { ...h.entry, output: toolStub(h.seq, h.entry.output.length) } }
          : h,
      );
      continue;
    }
    const at = view.findIndex(cuts);
    const kept = view.filter((h) => !cuts(h));
    const placeholder = placeholderOf(w);
    if (placeholder && at >= 0) {
      const before = view.slice(0, at).filter((h) => !cuts(h)).length;
      kept.splice(before, 0, { seq: w.cut[0]![0], entry: placeholder });
    }
    view = kept;
  }
  return view;
}

/**
 * The seqs to cut as ranges. A range never spans an entry that stays: the transcript's
 * order is not always the seqs' order (a message queued behind a running turn has a
 * lower seq than that turn's replies), so the ranges are taken over all the context's
 * seqs in order, broken at every entry that is kept.
 */
export function rangesOf(view: readonly HeldEntry[], cut: ReadonlySet<number>): SeqRange[] {
  const seqs = [...new Set(view.map((h) => h.seq))].sort((a, b) => a - b);
  const ranges: SeqRange[] = [];
  let open: SeqRange | null = null;
  for (const seq of seqs) {
    if (cut.has(seq)) {
      if (open) open[1] = seq;
      else ranges.push((open = [seq, seq]));
    } else open = null;
  }
  return ranges;
}

/** Where each turn of the context starts: at a user message that follows something else. */
function turnStarts(view: readonly HeldEntry[]): number[] {
  const starts: number[] = [];
  view.forEach((h, i) => {
    if (h.entry.role === "user" && (i === 0 || view[i - 1]!.entry.role !== "user")) starts.push(i);
  });
  return starts;
}

/** Index of the first entry of the turns a collapse or summary must leave whole. */
function protectedFrom(view: readonly HeldEntry[], keepTurns: number): number {
  const starts = turnStarts(view);
  return starts.length <= keepTurns ? 0 : starts[starts.length - keepTurns]!;
}

/** Tool results replaced by a stub, all but the newest few; no model. */
export function planMicrocompact(view: readonly HeldEntry[], s: WindowSettings): Set<number> {
  const results = view.filter((h) => h.entry.role === "tool-result" && !h.entry.output.startsWith("[tool output of "));
  const older = results.slice(0, Math.max(0, results.length - s.keepToolResults));
  // A stub is itself about 25 tokens: replacing a shorter output saves nothing.
  return new Set(older.filter((h) => estimateEntry(h.entry) > 40).map((h) => h.seq));
}

/**
 * Older turns collapsed to their user messages and final replies; no model. A turn's tool
 * calls and results go together, so no call is left without its result or the reverse.
 */
export function planCollapse(view: readonly HeldEntry[], s: WindowSettings): Set<number> {
  const end = protectedFrom(view, s.keepTurns);
  const cut = new Set<number>();
  let lastReply: number | null = null;
  const closeTurn = () => {
    if (lastReply !== null) cut.delete(lastReply);
    lastReply = null;
  };
  for (let i = 0; i < end; i++) {
    const h = view[i]!;
    if (h.entry.role === "user") {
      closeTurn();
      continue;
    }
    cut.add(h.seq);
    if (h.entry.role === "assistant") lastReply = h.seq;
  }
  closeTurn();
  return cut;
}

/**
 * What a summary replaces: everything before the turns kept whole, except user messages,
 * which stay verbatim (newest first) while they fit `userBudgetTokens`.
 */
export function planSummary(view: readonly HeldEntry[], s: WindowSettings): Set<number> {
  const end = protectedFrom(view, s.keepTurns);
  const cut = new Set<number>();
  let budget = s.userBudgetTokens;
  for (let i = end - 1; i >= 0; i--) {
    const h = view[i]!;
    if (h.entry.role === "user" && estimateEntry(h.entry) <= budget) {
      budget -= estimateEntry(h.entry);
      continue;
    }
    cut.add(h.seq);
  }
  return cut;
}

/**
 * The last resort when no summary could be written and the context still does not fit:
 * the oldest turns (a user message and everything that answered it) leave the context
 * whole, oldest first, until `excess` tokens are gone. Nothing from the row `keepFromRow`
 * on is cut, nor whatever came before the first turn. A running turn's first input is
 * that row, not its newest run of user messages: a steered turn has a second one after
 * its tool results, and the message the turn answers comes before it.
 */
export function planDrop(view: readonly HeldEntry[], excess: number, keepFromRow = Number.POSITIVE_INFINITY): Set<number> {
  const kept = view.findIndex((h) => h.row !== undefined && h.row >= keepFromRow);
  const end = kept < 0 ? view.length : kept;
  const starts = turnStarts(view.slice(0, end));
  const cut = new Set<number>();
  let saved = 0;
  let real = false;
  for (let t = 0; t < starts.length && saved < excess; t++) {
    for (const h of view.slice(starts[t], starts[t + 1] ?? end)) {
      cut.add(h.seq);
      saved += estimateEntry(h.entry);
      real ||= !isDropNotice(h);
    }
  }
  // An earlier drop's notice alone is no cut: the new notice would take its place, and a
  // recovery would drop and write it again until WindowThrash.
  return real ? cut : new Set();
}

/** The notice an earlier drop left in the context (a placeholder: it has no transcript row). */
function isDropNotice(h: HeldEntry): boolean {
  return h.row === undefined && h.entry.role === "user" && h.entry.text.startsWith(DROP_NOTICE_OPENING);
}

/** The entries a summary is written from: the cut range as the curator reads it. */
export function summarySource(view: readonly HeldEntry[], cut: ReadonlySet<number>): HeldEntry[] {
  return view.filter((h) => cut.has(h.seq));
}

/** The kinds, cheapest first: the runtime's own choice tries them in this order. */
export const CHEAPEST_FIRST: readonly CompactionMode[] = ["microcompact", "collapse", "summary"];

export function planOf(mode: CompactionMode, view: readonly HeldEntry[], s: WindowSettings): Set<number> {
  return mode === "microcompact" ? planMicrocompact(view, s) : mode === "collapse" ? planCollapse(view, s) : planSummary(view, s);
}

/** Tokens a plan takes off the context, less what it puts in its place (a summary, a drop's notice). */
export function savingOf(mode: WindowKind, view: readonly HeldEntry[], cut: ReadonlySet<number>, summaryTokens = 0): number {
  let saved = 0;
  for (const h of view) {
    if (!cut.has(h.seq)) continue;
    saved += mode === "microcompact" && h.entry.role === "tool-result" ? estimateEntry(h.entry) - estimateText(toolStub(h.seq, h.entry.output.length)) - FRAMING_TOKENS : estimateEntry(h.entry);
  }
  return Math.max(0, saved - summaryTokens);
}

/**
 * WindowThrash: more than `thrashLimit` reductions within the current turn and the
 * `thrashTurns - 1` before it. Reducing that often means each one buys almost nothing
 * (a single tool result larger than the window, say), and going on would loop.
 */
export function thrashes(reductionTurns: readonly number[], currentTurn: number, s: WindowSettings): boolean {
  return reductionTurns.filter((t) => t > currentTurn - s.thrashTurns).length >= s.thrashLimit;
}
