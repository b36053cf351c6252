import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { placeAttachments } from "../../local-front/bindings/engines/attachments.js";

const root = mkdtempSync(join(tmpdir(), "agent-runtime-placement-"));
afterAll(() => import("node:fs").then((fs) => fs.rmSync(root, { recursive: true, force: true })));

const input = (path: string, text = "data") => [{ seq: 5, text: "x", attachments: [{ name: "f", mediaType: "text/plain", path, base64: Buffer.from(text).toString("base64") }] }];

describe("placing a message's attachments in the working directory", () => {
  it("writes each at its path, making the folders on the way", async () => {
    const cwd = mkdtempSync(join(root, "cwd-"));
    await placeAttachments(cwd, input(".attachments/5/notes.txt", "hello"));
    expect(readFileSync(join(cwd, ".attachments/5/notes.txt"), "utf8")).toBe("hello");
  });

  it("refuses a path out of the directory", async () => {
    const cwd = mkdtempSync(join(root, "cwd-"));
    await expect(placeAttachments(cwd, input("../escape.txt"))).rejects.toThrow(/leaves the working directory/);
    expect(existsSync(join(root, "escape.txt"))).toBe(false);
  });

  it("follows no link a session planted, on the way or at the file", async () => {
    const cwd = mkdtempSync(join(root, "cwd-"));
    const outside = mkdtempSync(join(root, "host-"));
    symlinkSync(outside, join(cwd, ".attachments"));
    await expect(placeAttachments(cwd, input(".attachments/5/f"))).rejects.toThrow(/not a directory/);
    expect(existsSync(join(outside, "5"))).toBe(false);
    const cwd2 = mkdtempSync(join(root, "cwd-"));
    mkdirSync(join(cwd2, ".attachments/5"), { recursive: true });
    const secret = join(outside, "secret");
    writeFileSync(secret, "keep");
    symlinkSync(secret, join(cwd2, ".attachments/5/f"));
    await expect(placeAttachments(cwd2, input(".attachments/5/f"))).rejects.toThrow();
    expect(readFileSync(secret, "utf8")).toBe("keep");
  });
});
