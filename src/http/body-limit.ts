import { createMiddleware } from "hono/factory";
import { CODES } from "../api/errors.js";
import type { AppEnv } from "./app-env.js";
import { refused } from "./answer.js";

/** Past this much, an oversized body is not read to its end: the connection is dropped instead. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/**
 * Refuses bodies over the configured size with 413. The rest of the body is read and
 * discarded first: workerd closes a connection whose request body was left unread, and
 * a client still sending would see a reset instead of the 413.
 */
export const bodyLimit = createMiddleware<AppEnv>(async (c, next) => {
  const max = c.var.config.maxBody;
  const declared = Number(c.req.header("content-length") ?? NaN);
  // A declared length within the limit bounds the body already: the common case costs
  // one header read, and the body stream is not even materialized.
  if (declared <= max) return next();
  const body = c.req.raw.body;
  if (!body) return next();
  const tooLarge = (): never => refused(413, `request body is larger than ${max} bytes`, CODES.bodyTooLarge, { limit: max });
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size <= max) chunks.push(value);
    if (size > DRAIN_LIMIT) {
      await reader.cancel();
      tooLarge();
    }
  }
  if (size > max || declared > max) tooLarge();
  const whole = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) (whole.set(chunk, at), (at += chunk.byteLength));
  c.req.raw = new Request(c.req.raw, { body: whole });
  await next();
});
