import * as z from "zod";

/** A file's name as a message gives it: no path, nothing hidden behind `.` or `..`. */
export const AttachmentName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^/\\\0]+$/, "a file name, without / or \\")
  .refine((n) => n !== "." && n !== "..", "a file name, not . or ..");

/** `type/subtype`, as a Content-Type names it (no parameters). */
export const MediaType = z.string().max(200).regex(/^[a-z]+\/[A-Za-z0-9][A-Za-z0-9.+-]*$/, "a media type such as image/png or text/plain");

/** One attachment of a message: its bytes in base64, or text (stored as UTF-8). */
export const AttachmentInput = z.union([
  z.object({ name: AttachmentName, mediaType: MediaType, base64: z.string() }).strict(),
  z.object({ name: AttachmentName, mediaType: MediaType, text: z.string() }).strict(),
]);
export type AttachmentInput = z.infer<typeof AttachmentInput>;

/** At most this many attachments on one message. */
export const MAX_ATTACHMENTS = 16;

export const Attachments = z.array(AttachmentInput).max(MAX_ATTACHMENTS);

/** An attachment as the log and the routes show it: its content is in the blob store, by hash. */
export const AttachmentRef = z.object({ name: z.string(), mediaType: z.string(), bytes: z.number().int().nonnegative(), sha256: z.string() });
export type AttachmentRef = z.infer<typeof AttachmentRef>;

/** An attachment with the message that carried it. */
export const AttachmentEntry = AttachmentRef.extend({
  /** The message's seq. */
  seq: z.number().int().positive(),
  /** Where the engines find it, relative to the session's working directory. */
  path: z.string(),
});
export type AttachmentEntry = z.infer<typeof AttachmentEntry>;

/** `GET /threads/:id/attachments`: oldest first. */
export const AttachmentList = z.object({ attachments: z.array(AttachmentEntry) });

/** An attachment as an engine gets it with the turn's message (`TurnInput.attachments`). */
export interface EngineAttachment {
  name: string;
  mediaType: string;
  /** Relative to the session's working directory, where the engine host writes it. */
  path: string;
  base64: string;
}
