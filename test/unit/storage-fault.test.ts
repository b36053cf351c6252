import { describe, expect, it } from "vitest";
import { CODES } from "../../src/api/errors.js";
import { hidesItsCause, isWriteMethod, NEARLY_FULL_BYTES, nearlyFull, STORAGE_RETRY_AFTER_S, storageFault, storageFullRefusal, wroteToTheVolume } from "../../src/rules/storage-fault.js";

describe("a storage fault", () => {
  it("is recognized in SQLite's, the kernel's and the blob store's words, and answers with their text", () => {
    expect(storageFault(new Error("database or disk is full: SQLITE_FULL"), true)).toBe("database or disk is full: SQLITE_FULL");
    expect(storageFault(new Error("database or disk is full: SQLITE_FULL"), false)).toBe("database or disk is full: SQLITE_FULL");
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    expect(storageFault(enospc, true)).toBe("ENOSPC: no space left on device, write");
    expect(storageFault(Object.assign(new Error(""), { code: "ENOSPC" }), true)).toBe("ENOSPC");
    expect(storageFault(new Error("pwrite(fd, data.begin(), data.size(), offset): No space left on device"), true)).toMatch(/No space/);
    expect(storageFault(new Error("EDQUOT: disk quota exceeded, write"), true)).toMatch(/quota/);
    expect(storageFault("database or disk is full", true)).toBe("database or disk is full");
    // This runtime's own words, as a refusal's text or the Host's passed on.
    expect(storageFault(new Error("the data volume is full: the Host writes nothing until a write succeeds again (x)"), false)).toMatch(/^the data volume is full/);
  });

  it("is found under wrappers that keep the error as their cause", () => {
    const wrapped = new Error("could not save sha256/ab", { cause: new Error("outer", { cause: new Error("database or disk is full: SQLITE_FULL") }) });
    expect(storageFault(wrapped, true)).toBe("database or disk is full: SQLITE_FULL");
  });

  it("counts SQLite's I/O error as a full volume on a write only: on a read it is a broken disk", () => {
    expect(storageFault(new Error("disk I/O error: SQLITE_IOERR"), true)).toBe("disk I/O error: SQLITE_IOERR");
    expect(storageFault(new Error("disk I/O error: SQLITE_IOERR"), false)).toBeNull();
  });

  it("is workerd's opaque error on a write only while the volume is known to be full", () => {
    const opaque = new Error("internal error; reference = 8o8d7oo2476uon7j3helub1o");
    expect(hidesItsCause(opaque)).toBe(true);
    expect(storageFault(opaque, true, true)).toBe(opaque.message);
    expect(storageFault(opaque, true, false)).toBeNull();
    expect(storageFault(opaque, false, true)).toBeNull();
    expect(hidesItsCause(new Error("database or disk is full: SQLITE_FULL"))).toBe(false);
  });

  it("takes a volume measured now with under 8 MiB free as full, and an unmeasured one as not", () => {
    expect(nearlyFull({ freeBytes: 3 * 1024 * 1024 })).toBe(true);
    expect(nearlyFull({ freeBytes: NEARLY_FULL_BYTES })).toBe(false);
    expect(nearlyFull({ freeBytes: 50e9 })).toBe(false);
    expect(nearlyFull(null)).toBe(false);
  });

  it("is not any other error", () => {
    for (const err of [new Error("no such table: events"), new Error("UNIQUE constraint failed"), new Error("internal error"), new Error("fullness of time"), null, undefined, 42, {}])
      expect(storageFault(err, true), String(err)).toBeNull();
    expect(storageFault(Object.assign(new Error("permission denied"), { code: "EACCES" }), true)).toBeNull();
  });

  it("is refused with 507 storage-full, the reason and Retry-After", () => {
    const r = storageFullRefusal("database or disk is full: SQLITE_FULL");
    expect(r).toMatchObject({ ok: false, status: 507, body: { code: CODES.storageFull, reason: "database or disk is full: SQLITE_FULL" } });
    expect(r.body.error).toMatch(/nothing of this write was kept/);
    expect(r.headers).toEqual({ "retry-after": String(STORAGE_RETRY_AFTER_S) });
  });

  it("takes only a write's success as the volume writing again, not a search or a recall sent by POST", () => {
    expect(wroteToTheVolume("POST", "/threads/thr_1/messages")).toBe(true);
    expect(wroteToTheVolume("POST", "/spawn")).toBe(true);
    expect(wroteToTheVolume("POST", "/workspaces/default/memory/retain")).toBe(true);
    expect(wroteToTheVolume("POST", "/workspaces/default/memory/recall")).toBe(false);
    expect(wroteToTheVolume("POST", "/code/search")).toBe(false);
    expect(wroteToTheVolume("POST", "/github/overlap")).toBe(false);
    expect(wroteToTheVolume("POST", "/accounts/claude/access-token")).toBe(false);
    expect(wroteToTheVolume("GET", "/threads/thr_1")).toBe(false);
  });

  it("tells writes from reads by method", () => {
    for (const m of ["POST", "PUT", "PATCH", "DELETE"]) expect(isWriteMethod(m)).toBe(true);
    for (const m of ["GET", "HEAD", "OPTIONS"]) expect(isWriteMethod(m)).toBe(false);
  });
});
