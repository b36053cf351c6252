import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { ReadAnswer, ReadQuery } from "../../../src/api/code.js";
import { CODES } from "../../../src/api/errors.js";
import { ok, refuse, type Outcome } from "../../../src/api/outcome.js";
import { fencedFile, type RootEntry } from "./fence.js";

/** A file larger than this is not read: the answer would be no use to a model and a burden to the front. */
export const READ_FILE_MAX = 16 * 1024 * 1024;
/** The text a read answers at most; a range beyond it is cut at a line and says `truncated`. */
export const READ_TEXT_MAX = 256 * 1024;
/** Lines a read without `end` answers at most. */
const DEFAULT_LINES = 2000;

/** git's blob hash of the bytes: the same as `git hash-object`. */
export function blobHash(bytes: Buffer): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

export async function readLines(root: RootEntry, q: ReadQuery): Promise<Outcome<ReadAnswer>> {
  const f = await fencedFile(root, q.path);
  if (!f.ok) return f;
  if (f.value.size > READ_FILE_MAX) return refuse(413, `${q.path} is ${f.value.size} bytes; reads stop at ${READ_FILE_MAX}: search it instead`, CODES.codeFileTooLarge, { bytes: f.value.size });
  const bytes = await readFile(f.value.real);
  if (bytes.subarray(0, 8000).includes(0)) return refuse(415, `${q.path} is a binary file`, CODES.codeFileBinary, { bytes: bytes.length, blob: blobHash(bytes) });
  const lines = bytes.toString("utf8").split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  const start = q.start ?? 1;
  if (lines.length === 0 && start === 1) return ok({ root: root.name, path: f.value.rel, start: 1, end: 0, totalLines: 0, text: "", blob: blobHash(bytes), bytes: bytes.length, truncated: false });
  const end = Math.min(q.end ?? start + DEFAULT_LINES - 1, lines.length);
  if (start > Math.max(lines.length, 1) || end < start) return refuse(400, `lines ${start} to ${q.end ?? end} are outside ${q.path}, which has ${lines.length}`, CODES.codeRangeOutside, { totalLines: lines.length });
  let text = "";
  let last = start - 1;
  let truncated = false;
  for (let i = start - 1; i < end; i++) {
    const next = (i === start - 1 ? "" : "\n") + lines[i]!;
    if (text.length + next.length > READ_TEXT_MAX && last >= start) {
      truncated = true;
      break;
    }
    text += next;
    last = i + 1;
  }
  return ok({ root: root.name, path: f.value.rel, start, end: Math.max(last, start), totalLines: lines.length, text, blob: blobHash(bytes), bytes: bytes.length, truncated });
}
