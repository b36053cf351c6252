import { describe, expect, it } from "vitest";
import { attachmentBytes, attachmentPath, toBase64, withMentions } from "../../src/rules/attachments.js";

describe("a message's attachments", () => {
  it("decodes base64 and text, and refuses what is not base64 as a caller's mistake", () => {
    const ok = attachmentBytes([{ name: "a", mediaType: "text/plain", base64: "aGk=" }, { name: "b", mediaType: "text/plain", text: "hé" }], 100);
    expect(ok.ok && ok.value.map((b) => [...b])).toEqual([[104, 105], [104, 195, 169]]);
    for (const base64 of ["a=", "ab=", "abc==", "not base64!", "abcde"]) {
      const bad = attachmentBytes([{ name: "a", mediaType: "text/plain", base64 }], 100);
      expect(bad.ok ? "accepted" : [bad.status, bad.body.code], base64).toEqual([400, "attachment-invalid"]);
    }
  });

  it("refuses one over the limit before decoding it, and a name given twice", () => {
    const big = attachmentBytes([{ name: "a", mediaType: "application/octet-stream", base64: "A".repeat(4000) }], 100);
    expect(big.ok ? null : [big.status, big.body.code, big.body.limit]).toEqual([413, "attachment-too-large", 100]);
    const twice = attachmentBytes([{ name: "a", mediaType: "text/plain", text: "1" }, { name: "a", mediaType: "text/plain", text: "2" }], 100);
    expect(twice.ok ? null : twice.body.code).toBe("attachment-invalid");
  });

  it("names each file in the prompt where the engines place it, and encodes megabytes without overflowing", () => {
    expect(withMentions("look", 7, [{ name: "x.png", mediaType: "image/png", bytes: 3, sha256: "s" }])).toBe(`look\n\n[attached: ${attachmentPath(7, "x.png")} (image/png, 3 bytes)]`);
    expect(withMentions("look", 7, [])).toBe("look");
    const bytes = new Uint8Array(3 << 20).map((_, i) => i % 251);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString("base64"));
  });
});
