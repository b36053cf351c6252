import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call } from "../support/http.js";
import { useFront } from "../support/use-front.js";

/** A checkout registered as the code root `app`, with a directory to read by mistake. */
const app = join(mkdtempSync(join(tmpdir(), "agent-runtime-refusals-")), "app");
mkdirSync(join(app, "src"), { recursive: true });
writeFileSync(join(app, "src", "main.ts"), "one\ntwo\nthree\nfour\nfive\n");
const git = (...args: string[]) => execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: app, stdio: "pipe" });
git("init", "-q", "-b", "main");
git("add", "-A");
git("commit", "-qm", "first");

const front = useFront({ env: { SERVICE_CODE_ROOTS: app } });

async function thread(): Promise<string> {
  const res = await call(front().url, "POST", "/spawn", { model: "sim-1" });
  expect(res.status).toBe(201);
  return res.body.threadId;
}

async function raw(path: string, init: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(`${front().url}${path}`, init);
  return { status: res.status, body: await res.json() };
}

describe("every 400 carries a code", () => {
  it("names which part of the request was wrong: body, query, path or header", async () => {
    const base = front().url;
    const id = await thread();
    const post = (body: string, headers: Record<string, string> = {}) => raw(`/threads/${id}/messages`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    expect(await post("{not json")).toMatchObject({ status: 400, body: { code: "invalid-body" } });
    expect(await post(JSON.stringify({ text: 7 }))).toMatchObject({ status: 400, body: { code: "invalid-body", error: expect.stringContaining("text: ") } });
    expect(await call(base, "GET", `/threads/${id}/tail?limit=lots`)).toMatchObject({ status: 400, body: { code: "invalid-query" } });
    expect(await call(base, "GET", `/threads/${id}/tail?after=1&before=2`)).toMatchObject({ status: 400, body: { code: "invalid-query" } });
    expect(await call(base, "GET", `/threads/${id}/tail?after=99`)).toMatchObject({ status: 400, body: { code: "cursor-beyond-end" } });
    expect(await call(base, "DELETE", `/threads/${id}/messages/first`)).toMatchObject({ status: 400, body: { code: "invalid-param" } });
    expect(await post(JSON.stringify({ text: "hi" }), { "idempotency-key": "k".repeat(201) })).toMatchObject({ status: 400, body: { code: "invalid-header" } });
    expect(await call(base, "GET", "/no/such/route")).toMatchObject({ status: 404, body: { code: "route-not-found" } });
    // The control: the same message, well formed, is taken.
    expect((await post(JSON.stringify({ text: "hi" }), { "idempotency-key": "k" })).status).toBe(202);
  });
});

describe("an unknown key", () => {
  it("names the keys the route takes, at the level where it was found", async () => {
    const id = await thread();
    const typo = await call(front().url, "POST", `/threads/${id}/messages`, { txt: "hi" });
    expect(typo.status).toBe(400);
    expect(typo.body.code).toBe("invalid-body");
    expect(typo.body.error).toContain('unknown body key "txt"; POST /threads/:id/messages takes text, hold, onBusy, seat, attachments, from');
    const nested = await call(front().url, "POST", `/threads/${id}/subscriptions`, { watch: { thread: await thread() }, deliver: { seat: "main", now: true } });
    expect(nested.body.error).toContain('unknown body key "now" in deliver; POST /threads/:id/subscriptions takes in deliver seat');
    const query = await call(front().url, "GET", "/code/read?root=app&path=src/main.ts&from=2");
    expect(query).toMatchObject({ status: 400, body: { code: "invalid-query" } });
    expect(query.body.error).toContain('unknown query key "from"; GET /code/read takes root, path, start, end');
  });
});

describe("an empty message", () => {
  it("is refused on messages and send, spaces alone counting as empty, and taken with an attachment", async () => {
    const base = front().url;
    const id = await thread();
    for (const text of ["", "   \n"]) {
      expect(await call(base, "POST", `/threads/${id}/messages`, { text })).toMatchObject({ status: 400, body: { code: "message-empty" } });
      expect(await call(base, "POST", `/threads/${id}/send`, { text })).toMatchObject({ status: 400, body: { code: "message-empty" } });
    }
    expect((await call(base, "GET", `/threads/${id}/tail`)).body.events.filter((e: { kind: string }) => e.kind === "message")).toEqual([]);
    const attached = await call(base, "POST", `/threads/${id}/messages`, { text: "", attachments: [{ name: "notes.txt", mediaType: "text/plain", text: "read me" }] });
    expect(attached.status, JSON.stringify(attached.body)).toBe(202);
  });

  it("cannot be made by editing a held message, unless the message has an attachment", async () => {
    const base = front().url;
    const id = await thread();
    const draft = (await call(base, "POST", `/threads/${id}/messages`, { text: "draft", hold: true })).body.seq;
    expect(await call(base, "PATCH", `/threads/${id}/messages/${draft}`, { text: "  " })).toMatchObject({ status: 400, body: { code: "message-empty" } });
    expect((await call(base, "PATCH", `/threads/${id}/messages/${draft}`, { text: "better" })).status).toBe(200);
    const withFile = (await call(base, "POST", `/threads/${id}/messages`, { text: "see the file", hold: true, attachments: [{ name: "a.txt", mediaType: "text/plain", text: "x" }] })).body.seq;
    expect((await call(base, "PATCH", `/threads/${id}/messages/${withFile}`, { text: "" })).status).toBe(200);
  });
});

describe("a watch of the wrong shape", () => {
  it("names the two shapes a watch takes", async () => {
    const base = front().url;
    const id = await thread();
    const other = await thread();
    for (const watch of [{ threa: other }, other, { thread: other, workspace: "w" }]) {
      const res = await call(base, "POST", `/threads/${id}/subscriptions`, { watch });
      expect(res, JSON.stringify(watch)).toMatchObject({ status: 400, body: { code: "invalid-body" } });
      expect(res.body.error).toContain('watch: watch is {"thread": "<thread id>"} or {"workspace": "<workspace name>"}');
    }
    expect((await call(base, "POST", `/threads/${id}/subscriptions`, { watch: { thread: other } })).status).toBe(201);
  });
});

describe("code reads", () => {
  it("answer code-path-not-file for a directory, and say where its files are listed", async () => {
    const dir = await call(front().url, "GET", "/code/read?root=app&path=src");
    expect(dir).toMatchObject({ status: 400, body: { code: "code-path-not-file" } });
    expect(dir.body.error).toContain("GET /code/files?root=app&path=src");
    expect((await call(front().url, "GET", "/code/outline?root=app&path=src")).body.code).toBe("code-path-not-file");
    // The control: a directory that is not there is not found, and a file reads.
    expect((await call(front().url, "GET", "/code/read?root=app&path=lib")).body.code).toBe("code-path-not-found");
    expect((await call(front().url, "GET", "/code/read?root=app&path=src/main.ts")).status).toBe(200);
  });

  it("refuse a reversed line range as reversed, not as outside the file", async () => {
    const reversed = await call(front().url, "GET", "/code/read?root=app&path=src/main.ts&start=4&end=2");
    expect(reversed).toMatchObject({ status: 400, body: { code: "code-range-reversed", start: 4, end: 2 } });
    expect(reversed.body.error).toContain("end (2) comes before start (4)");
    expect((await call(front().url, "GET", "/code/read?root=app&path=src/main.ts&start=9&end=12")).body.code).toBe("code-range-outside");
    expect((await call(front().url, "GET", "/code/read?root=app&path=src/main.ts&start=2&end=4")).body).toMatchObject({ start: 2, end: 4, text: "two\nthree\nfour" });
  });
});
