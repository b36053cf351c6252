/** Crockford's base32, the alphabet of every id. */
export const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * Thread ids: `thr_` then 26 characters, a millisecond time and 80 random bits in
 * Crockford's base32, so ids sort by creation and carry no guessable sequence.
 */
export function newThreadId(now = Date.now()): string {
  let time = "";
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  const random = crypto.getRandomValues(new Uint8Array(16));
  let tail = "";
  for (const b of random) tail += ALPHABET[b % 32];
  return `thr_${time}${tail}`;
}

const THREAD_ID = /^thr_[0-9a-hjkmnp-tv-z]{26}$/;

export function isThreadId(text: string): boolean {
  return THREAD_ID.test(text);
}

/** A short random id with a prefix (`prv_...`), for records that need no order. */
export function newId(prefix: string): string {
  let out = "";
  for (const b of crypto.getRandomValues(new Uint8Array(16))) out += ALPHABET[b % 32];
  return prefix + out;
}
