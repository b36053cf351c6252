import { describe, expect, it } from "vitest";
import { CODES } from "../../src/api/errors.js";
import { emptyMessageRefusal } from "../../src/rules/message-empty.js";

describe("an empty message", () => {
  it("is refused with 400 message-empty when it has no text and no attachment, spaces alone counting as none", () => {
    for (const text of ["", " ", "\n\t  "]) expect(emptyMessageRefusal({ text }), JSON.stringify(text)).toMatchObject({ status: 400, body: { code: CODES.messageEmpty } });
    expect(emptyMessageRefusal({ text: "", attachments: [] })?.body.code).toBe(CODES.messageEmpty);
  });

  it("is taken with text, or with an attachment and no text", () => {
    expect(emptyMessageRefusal({ text: "hi" })).toBeNull();
    expect(emptyMessageRefusal({ text: " . " })).toBeNull();
    expect(emptyMessageRefusal({ text: "", attachments: [{ name: "a.txt", mediaType: "text/plain", text: "x" }] })).toBeNull();
  });
});
