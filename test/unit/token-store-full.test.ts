import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TokenStore } from "../../local-front/bindings/accounts/token-store.js";

const scratch = mkdtempSync(join(tmpdir(), "token-store-full-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the token store on a full volume", () => {
  it("keeps a rotated token in memory when the file cannot be written, and writes it once it can", () => {
    const path = join(scratch, "tokens.json");
    // The store writes a temporary file first: pointed at /dev/full, that write fails with ENOSPC.
    symlinkSync("/dev/full", `${path}.tmp`);
    const login = { refreshToken: "refresh-1" };
    const store = new TokenStore(path);
    expect(() => store.put("acct", login, { refreshToken: "refresh-2", accessToken: "access-2", expiresAt: 1 })).not.toThrow();
    expect(existsSync(path)).toBe(false);
    expect(store.get("acct", login).refreshToken).toBe("refresh-2");

    unlinkSync(`${path}.tmp`);
    store.get("acct", login);
    expect(JSON.parse(readFileSync(path, "utf8")).acct.refreshToken).toBe("refresh-2");
    expect(new TokenStore(path).get("acct", login).refreshToken).toBe("refresh-2");
  });

  it("still throws what is not a full volume", () => {
    const store = new TokenStore(join(scratch, "missing-dir", "tokens.json"));
    expect(() => store.put("acct", { refreshToken: "r" }, { refreshToken: "r2" })).toThrow(/ENOENT/);
  });
});
