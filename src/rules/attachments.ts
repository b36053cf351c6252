import type { AttachmentInput, AttachmentRef } from "../api/attachments.js";
import { CODES } from "../api/errors.js";
import { ok, refuse, type Outcome } from "../api/outcome.js";

/** Image types every provider here takes as image input; other images are files like any other. */
export const IMAGE_TYPES: readonly string[] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Where a message's attachment is placed, relative to the session's working directory: one folder per message, so names never collide. */
export function attachmentPath(seq: number, name: string): string {
  return `.attachments/${seq}/${name}`;
}

/** The line the prompt carries for each attachment, so the model knows the file is there (and the history keeps saying so). */
export function withMentions(text: string, seq: number, refs: readonly AttachmentRef[]): string {
  if (refs.length === 0) return text;
  const lines = refs.map((r) => `[attached: ${attachmentPath(seq, r.name)} (${r.mediaType}, ${r.bytes} bytes)]`);
  return `${text}\n\n${lines.join("\n")}`;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decoded with a plain loop: `Uint8Array.from` with a mapping function took twenty times as long on a megabyte. */
function fromBase64(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Bytes as base64, in slices: one `String.fromCharCode` over megabytes overflows the call stack. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * An attachment's bytes, or why they are refused: base64 that is not, two attachments of
 * one message with one name, or more than `maxBytes` (`SERVICE_ATTACHMENT_MAX_BYTES`).
 */
export function attachmentBytes(inputs: readonly AttachmentInput[], maxBytes: number): Outcome<Uint8Array[]> {
  const names = new Set<string>();
  const out: Uint8Array[] = [];
  for (const [i, a] of inputs.entries()) {
    if (names.has(a.name)) return refuse(400, `attachments[${i}]: the message has another attachment named ${a.name}`, CODES.attachmentInvalid);
    names.add(a.name);
    let bytes: Uint8Array;
    if ("text" in a) bytes = new TextEncoder().encode(a.text);
    else {
      const clean = a.base64.replace(/\s+/g, "");
      if (clean.length % 4 === 1 || !BASE64.test(clean)) return refuse(400, `attachments[${i}] (${a.name}): base64 is not valid base64`, CODES.attachmentInvalid);
      // Over the limit before decoding, a caller cannot make the runtime allocate it.
      if (Math.floor((clean.length * 3) / 4) > maxBytes + 2) return tooLarge(i, a.name, Math.floor((clean.length * 3) / 4), maxBytes);
      try {
        bytes = fromBase64(clean);
      } catch {
        // atob refuses padding in the wrong place, which the pattern lets through.
        return refuse(400, `attachments[${i}] (${a.name}): base64 is not valid base64`, CODES.attachmentInvalid);
      }
    }
    if (bytes.byteLength > maxBytes) return tooLarge(i, a.name, bytes.byteLength, maxBytes);
    out.push(bytes);
  }
  return ok(out);
}

function tooLarge(i: number, name: string, bytes: number, limit: number): Outcome<never> {
  return refuse(413, `attachments[${i}] (${name}) is ${bytes} bytes, over the limit of ${limit} (SERVICE_ATTACHMENT_MAX_BYTES)`, CODES.attachmentTooLarge, { limit, index: i });
}
