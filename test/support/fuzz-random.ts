/** A seeded generator for the fuzz test: the same seed gives the same requests, so a failure can be replayed. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** mulberry32: small, fast, and good enough to spread cases. */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** `FUZZ_SEED` as a number (any text is hashed), or the fixed default. */
export function fuzzSeed(raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  if (/^\d+$/.test(raw)) return Number(raw) >>> 0;
  let h = 2166136261;
  for (const ch of raw) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619);
  return h >>> 0;
}

/** Text that has tripped parsers before: unicode edges, control characters, path tricks, numbers that are not. */
export const ODD_TEXT = [
  "",
  " ",
  "..",
  "../..",
  "%2e%2e",
  "\u0000",
  "\ud800",
  "\udfff\ud800",
  "\u202e\u0661\u0662",
  "😀".repeat(3),
  "é",
  "\r\n",
  "-1",
  "0",
  "1e3",
  "1.5",
  "0x10",
  "NaN",
  "Infinity",
  "99999999999999999999",
  "null",
  "true",
  "[]",
  "{}",
  "__proto__",
  "constructor",
  "latest",
  "<script>",
] as const;

/** A string of `length` drawn from one of a few alphabets (ASCII, unicode, control characters). */
export function randomText(rng: Rng, length: number): string {
  const kind = rng.int(0, 3);
  if (kind === 0) return "x".repeat(length);
  let out = "";
  const pieces = ["a", "Z", "0", " ", "é", "ü", "😀", "\u0000", "\n", '"', "\\", "/", "%", "\ud800", "漢"];
  while (out.length < length) out += kind === 1 ? String.fromCharCode(rng.int(32, 126)) : rng.pick(pieces);
  return out.slice(0, length);
}
