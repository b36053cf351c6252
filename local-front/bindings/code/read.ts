import { createHash } from "node:crypto";
import type { ReadAnswer, ReadQuery } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { openFenced, readUpTo, type RootEntry } from "./fence.js";

/** A file larger than this is not read: the answer would be no use to a model and a burden to the front. */
export const READ_FILE_MAX = 16 * 1024 * 1024;
/** The text a read answers at most, in bytes; a range beyond it is cut (inside a line, if one line is longer) and says `truncated`. */
export const READ_TEXT_MAX = 256 * 1024;
/** Lines a read without `end` answers at most. */
const DEFAULT_LINES = 2000;

/** git's blob hash of the bytes as they are on disk (`git hash-object --no-filters`). */
export function blobHash(bytes: Buffer): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** A root's file, read whole through its descriptor, or the refusal: too large for `max`, or binary. */
export async function fileText(root: RootEntry, path: string, max: number): Promise<Outcome<{ rel: string; bytes: Buffer; text: string }>> {
  const f = await openFenced(root, path);
  if (!f.ok) return f;
  try {
    if (f.value.size > max) return refuse(413, `${path} is ${f.value.size} bytes; this stops at ${max}: search it instead`, CODES.codeFileTooLarge, { bytes: f.value.size, limit: max });
    const bytes = await readUpTo(f.value.handle, f.value.size);
    if (bytes.subarray(0, 8000).includes(0)) return refuse(415, `${path} is a binary file`, CODES.codeFileBinary, { bytes: bytes.length, blob: blobHash(bytes) });
    return ok({ rel: f.value.rel, bytes, text: bytes.toString("utf8") });
  } finally {
    await f.value.handle.close();
  }
}

export async function readLines(root: RootEntry, q: ReadQuery): Promise<Outcome<ReadAnswer>> {
  if (q.start !== undefined && q.end !== undefined && q.end < q.start)
    return refuse(400, `end (${q.end}) comes before start (${q.start}): a range runs from start to end, both lines included`, CODES.codeRangeReversed, { start: q.start, end: q.end });
  const file = await fileText(root, q.path, READ_FILE_MAX);
  if (!file.ok) return file;
  const { rel, bytes } = file.value;
  const lines = file.value.text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  const start = q.start ?? 1;
  const base = { root: root.name, path: rel, totalLines: lines.length, blob: blobHash(bytes), bytes: bytes.length };
  if (lines.length === 0 && start === 1) return ok({ ...base, start: 1, end: 0, text: "", truncated: false });
  const end = Math.min(q.end ?? start + DEFAULT_LINES - 1, lines.length);
  if (start > lines.length || end < start) return refuse(400, `lines ${start} to ${q.end ?? end} are outside ${q.path}, which has ${lines.length}`, CODES.codeRangeOutside, { totalLines: lines.length });
  const out: string[] = [];
  let size = 0;
  let truncated = false;
  for (let i = start - 1; i < end; i++) {
    const line = lines[i]!;
    const cost = Buffer.byteLength(line) + (out.length ? 1 : 0);
    if (size + cost > READ_TEXT_MAX) {
      truncated = true;
      // One line longer than the cap (a minified file) is cut inside, at a whole character.
      if (out.length === 0) out.push(Buffer.from(line).subarray(0, READ_TEXT_MAX).toString("utf8").replace(/\uFFFD$/, ""));
      break;
    }
    out.push(line);
    size += cost;
  }
  return ok({ ...base, start, end: start + out.length - 1, text: out.join("\n"), truncated });
}
