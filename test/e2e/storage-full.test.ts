import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFront, type Front } from "../support/front.js";

/**
 * A full data volume, made for real: the front's data directory on a tmpfs of its own,
 * filled by a file beside the data so that only a little room is left. Mounting needs
 * root, which this machine and CI have; elsewhere the test says why it did not run.
 */
const ROOT = process.getuid?.() === 0;
const VOLUME_BYTES = 24 * 1024 * 1024;
/** What the filler leaves free: room for a start and some appends, gone in a few seconds. */
const ROOM_LEFT = 3 * 1024 * 1024;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

describe.skipIf(!ROOT)("a full data volume (mounts a tmpfs: needs root)", () => {
  let mountDir = "";
  let front: Front | undefined;
  const answers: { what: string; status: number; body: unknown }[] = [];

  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    const res = await fetch(front!.url + path, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    answers.push({ what: `${method} ${path}`, status: res.status, body: parsed });
    return { status: res.status, headers: res.headers, body: parsed };
  }

  beforeAll(async () => {
    mountDir = mkdtempSync(join(tmpdir(), "agent-runtime-full-"));
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${VOLUME_BYTES}`, "tmpfs", mountDir]);
    const dataDir = join(mountDir, "data");
    mkdirSync(dataDir);
    front = await startFront({ dataDir });
  });

  afterAll(async () => {
    await front?.stop();
    if (mountDir) {
      execFileSync("umount", ["-l", mountDir]);
      rmSync(mountDir, { recursive: true, force: true });
    }
  });

  it("refuses writes with 507 storage-full while full, says so, and resumes by itself with nothing acknowledged lost", async () => {
    const { status, body: spawned } = await call("POST", "/spawn", { type: "external", title: "fills the disk" });
    expect(status).toBe(201);
    const id = spawned.threadId as string;

    const filler = join(mountDir, "filler");
    const free = statfsSync(mountDir);
    writeFileSync(filler, Buffer.alloc(Number(free.bavail * free.bsize) - ROOM_LEFT));

    // Four writers append until each is refused; one writes bodies the blob store keeps apart from the log.
    const acked = new Map<number, string>();
    const refusals: Answer[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        const size = w === 0 ? 100_000 : 20_000;
        for (let i = 0; ; i++) {
          const text = `w${w}-${i} ${"x".repeat(size)}`;
          const r = await call("POST", `/threads/${id}/messages`, { text });
          if (r.status === 202) acked.set(r.body.seq as number, text);
          else return refusals.push(r);
          expect(i, "the volume never filled").toBeLessThan(500);
        }
      }),
    );
    expect(acked.size).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.status).toBe(507);
      expect(r.body).toMatchObject({ code: "storage-full" });
      expect(r.body.reason).toMatch(/SQLITE_FULL|ENOSPC|no space/i);
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    }

    // The refusal reaches the Host after its answer: wait for /health to say it.
    await until(async () => ((await call("GET", "/health")).body.storage as { state: string }).state === "full");
    const health = await call("GET", "/health");
    expect(health.status).toBe(200);
    expect(health.body.storage).toMatchObject({ state: "full", reason: expect.stringMatching(/SQLITE_FULL|ENOSPC|no space/i) });

    const attention = await call("GET", "/attention");
    expect(attention.status).toBe(200);
    const items = attention.body.items as { id: string; kind: string; detail: { threadIds: string[] } }[];
    expect(items.find((i) => i.kind === "storage-full")?.detail.threadIds).toContain(id);

    const incidents = await call("GET", "/incidents");
    const open = (incidents.body.incidents as { class: string; failures: number }[]).find((i) => i.class === "storage-full");
    expect(open?.failures).toBeGreaterThanOrEqual(refusals.length);

    // A spawn is refused the same way, and so is an operator's write to the Host (which writes nothing while full).
    for (const [method, path, body] of [
      ["POST", "/spawn", { type: "external", title: "while full" }],
      ["POST", "/drain", { reason: "while full" }],
    ] as const) {
      const r = await call(method, path, body);
      expect([path, r.status, r.body.code]).toEqual([path, 507, "storage-full"]);
      expect(r.headers.get("retry-after")).toBeTruthy();
    }
    expect(((await call("GET", "/health")).body.storage as { state: string }).state).toBe("full");

    // Reads go on while the volume is full.
    expect((await call("GET", `/threads/${id}`)).status).toBe(200);

    // Space returns: the next write is taken, without restarting anything.
    rmSync(filler);
    const after = await call("POST", `/threads/${id}/messages`, { text: "after the disk was freed" });
    expect(after.status).toBe(202);
    acked.set(after.body.seq as number, "after the disk was freed");
    const spawnedAfter = await call("POST", "/spawn", { type: "external", title: "after" });
    expect(spawnedAfter.status).toBe(201);

    await until(async () => ((await call("GET", "/health")).body.storage as { state: string }).state === "ok");
    const cleared = await call("GET", "/attention");
    expect((cleared.body.items as { kind: string }[]).some((i) => i.kind === "storage-full")).toBe(false);
    // The incident stays in the window once the fault closed.
    const past = await call("GET", "/incidents");
    expect((past.body.incidents as { class: string; threadIds: string[] }[]).find((i) => i.class === "storage-full")?.threadIds).toContain(id);

    // Every acknowledged event is in the log, as it was acknowledged.
    const logged = new Map<number, string>();
    for (let cursor = "0"; ; ) {
      const page = await call("GET", `/threads/${id}/tail?after=${cursor}&limit=1000`);
      expect(page.status).toBe(200);
      for (const e of page.body.events as { seq: number; kind: string; body: { text?: string } }[]) if (e.kind === "message") logged.set(e.seq, e.body.text ?? "");
      cursor = page.body.nextAfter as string;
      if (!page.body.hasMore) break;
    }
    for (const [seq, text] of acked) expect(logged.get(seq), `acknowledged seq ${seq}`).toBe(text);

    // No answer along the way was a 500 (or any 5xx but the full volume's own).
    expect(answers.filter((a) => a.status >= 500 && a.status !== 507)).toEqual([]);
  });

  it("refuses a spawn with 507 when it is the first write to meet the full volume, with no fault open yet", async () => {
    expect(((await call("GET", "/health")).body.storage as { state: string }).state).toBe("ok");
    // Every byte taken: a new thread's database, which workerd reports only as an opaque internal error, cannot be made.
    const filler = join(mountDir, "filler-all");
    const fd = openSync(filler, "w");
    try {
      for (const chunk = Buffer.alloc(1024 * 1024); ; ) writeSync(fd, chunk);
    } catch (err) {
      expect((err as NodeJS.ErrnoException).code).toBe("ENOSPC");
    }
    try {
      for (const chunk = Buffer.alloc(4096); ; ) writeSync(fd, chunk);
    } catch {
      // The last pages, too.
    }
    closeSync(fd);
    const refused = await call("POST", "/spawn", { type: "external", title: "first to meet the full volume" });
    expect([refused.status, refused.body.code]).toEqual([507, "storage-full"]);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    rmSync(filler);
    const taken = await call("POST", "/spawn", { type: "external", title: "once space returned" });
    expect(taken.status).toBe(201);
    expect(answers.filter((a) => a.status >= 500 && a.status !== 507)).toEqual([]);
  });
});

/** Polls a condition the runtime reaches on its own (the Host hears of a fault after the answer). */
async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("the condition did not hold in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}
