import type { TranscriptEntry, TurnInput } from "../api/engine.js";
import { FIRST_SEAT } from "../api/seats.js";
import type { HeldEntry } from "./compaction.js";

/**
 * How much of another seat's tool input or output a seat is shown: that it ran the tool
 * and what came of it matter to the next seat; every byte of it rarely does.
 */
export const FOREIGN_TOOL_CHARS = 2000;

/** What a seat starts from after accepting a handoff with `context: "summary"`. */
export interface SeatBase {
  /** The summary covers the transcript up to this row; later rows are shown whole. */
  row: number;
  summary: string;
}

const seatOf = (e: TranscriptEntry): string | null => (e.role === "user" ? null : (e.seat ?? FIRST_SEAT));

const clip = (text: string) => (text.length > FOREIGN_TOOL_CHARS ? `${text.slice(0, FOREIGN_TOOL_CHARS)}… (${text.length - FOREIGN_TOOL_CHARS} more characters)` : text);

/** A label on a line of its own: a line-based directive or command in the text below it stays intact. */
const labelled = (label: string, text: string) => `[${label}]\n${text}`;

/**
 * The shared transcript as one seat's engine is given it. The seat's own entries stay as
 * they were; another seat's words become assistant text labelled with that seat's name,
 * and its tool calls and results become labelled text too, since they were made with
 * tools (and a model) this seat's provider never offered and would refuse as its own.
 * Messages a sender named are labelled with the sender once more than one seat took part.
 * With one seat there is nobody to tell apart, and the view is the transcript unchanged.
 */
export function seatView(held: HeldEntry[], seat: string, base: SeatBase | null): { entries: TranscriptEntry[]; labelled: boolean } {
  const shown = base ? held.filter((h) => h.row === undefined || h.row > base.row) : held;
  const multi = shown.some((h) => {
    const of = seatOf(h.entry);
    return of !== null && of !== seat;
  });
  const entries: TranscriptEntry[] = base ? [{ role: "user", text: labelled(`summary of the conversation before seat ${seat} took the thread`, base.summary) }] : [];
  for (const { entry: e } of shown) {
    const of = seatOf(e);
    if (e.role === "user") entries.push({ role: "user", text: multi && e.from ? labelled(`from ${e.from}`, e.text) : e.text });
    else if (of === seat) entries.push(withoutSeat(e));
    else if (e.role === "assistant") entries.push({ role: "assistant", text: labelled(`seat ${of}`, e.text) });
    else if (e.role === "tool-call") entries.push({ role: "assistant", text: labelled(`seat ${of} called ${e.name}`, clip(JSON.stringify(e.input))) });
    else entries.push({ role: "assistant", text: labelled(`seat ${of}: ${e.name} ${e.isError ? "failed" : "returned"}`, clip(e.output)) });
  }
  return { entries, labelled: multi };
}

function withoutSeat(e: Exclude<TranscriptEntry, { role: "user" }>): TranscriptEntry {
  const { seat: _seat, ...rest } = e;
  return rest;
}

/**
 * The newest row at or before `row` that parts no tool call from its result (`held` with
 * their rows): a view that starts after it never shows a result without its call, which a
 * provider refuses.
 */
export function cleanCut(held: readonly HeldEntry[], row: number): number {
  const resultAt = new Map(held.flatMap((h) => (h.entry.role === "tool-result" && h.row !== undefined ? [[h.entry.callId, h.row] as const] : [])));
  let cut = row;
  for (const h of held) {
    if (h.entry.role !== "tool-call" || h.row === undefined || h.row > row) continue;
    const answered = resultAt.get(h.entry.callId);
    if (answered === undefined || answered > row) cut = Math.min(cut, h.row - 1);
  }
  return cut;
}

/** A transcript entry's `seat`: absent for the first seat, so a thread with one seat keeps the entries it always had. */
export function seatField(seat: string): { seat?: string } {
  return seat === FIRST_SEAT ? {} : { seat };
}

/** The turn's own messages, labelled with their senders when the view is. */
export function seatInputs(inputs: TurnInput[], labelledView: boolean): TurnInput[] {
  return labelledView ? inputs.map((i) => (i.from ? { ...i, text: labelled(`from ${i.from}`, i.text) } : i)) : inputs;
}
