import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir, startFront } from "../support/front.js";
import { call, events, sim, waitFor } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const work = mkdtempSync(join(tmpdir(), "agent-runtime-memory-"));
afterAll(() => removeDir(work));

const front = useFront({ env: { SERVICE_CURATOR_MODEL: "sim-1" } });
const M = "/workspaces/default/memory";

async function retain(body: Record<string, unknown>, base = front().url): Promise<{ status: number; body: any }> {
  return call(base, "POST", `${M}/retain`, body);
}

async function recall(body: Record<string, unknown>): Promise<any[]> {
  const r = await call(front().url, "POST", `${M}/recall`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.memories;
}

describe("workspace memory", () => {
  it("keeps one memory for the same text, and the original stays as it was", async () => {
    const first = await retain({ text: "The staging database is reset every Monday at 06:00 UTC.", tags: ["ops"], importance: 0.9 });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ id: expect.stringMatching(/^mem_/), duplicate: false, retired: [], memory: { kind: "fact", tags: ["ops"], importance: 0.9, retired: null } });
    const again = await retain({ text: "  the staging database is reset every monday at 06:00 UTC. ", importance: 0.1 });
    expect([again.status, again.body.id, again.body.duplicate, again.body.memory.importance]).toEqual([200, first.body.id, true, 0.9]);
    const page = (await call(front().url, "GET", `${M}?tag=ops`)).body.memories.filter((m: any) => /staging database/i.test(m.text));
    expect(page).toHaveLength(1);
  });

  it("retires what a key or supersedes replaces, in the same write, and recalls the correction only", async () => {
    const old = await retain({ text: "The release branch for the billing service is release/2024.", key: "billing-release-branch" });
    const byKey = await retain({ text: "Billing releases are cut from the branch release/2025 now.", key: "billing-release-branch" });
    expect(byKey.body.retired).toEqual([old.body.id]);
    const wrong = await retain({ text: "The flaky checkout test is caused by the payment mock's timeout." });
    const fix = await retain({ text: "The flaky checkout test fails because its fixture clock is not frozen.", supersedes: wrong.body.id });
    expect(fix.body.retired).toEqual([wrong.body.id]);
    const found = await recall({ query: "which branch are billing releases cut from?" });
    expect(found.map((m) => m.id)).toContain(byKey.body.id);
    expect(found.map((m) => m.id)).not.toContain(old.body.id);
    const flaky = await recall({ query: "why is the checkout test flaky" });
    expect(flaky[0].id).toBe(fix.body.id);
    expect(flaky.map((m) => m.id)).not.toContain(wrong.body.id);
    // Asked for, the retired one comes too, below its correction, saying who retired it.
    const all = await recall({ query: "why is the checkout test flaky", includeRetired: true });
    const ids = all.map((m) => m.id);
    expect(ids.indexOf(fix.body.id)).toBeLessThan(ids.indexOf(wrong.body.id));
    expect(all.find((m) => m.id === wrong.body.id).retired).toMatchObject({ by: fix.body.id, reason: "superseded" });
    expect((await retain({ text: "x", supersedes: "mem_nope" })).body.code).toBe("memory-not-found");
    // Stale knowledge retained again, as a bare fact, does not come back beside its correction.
    const stale = await retain({ text: "The release branch for the billing service is release/2024." });
    expect([stale.status, stale.body.code, stale.body.id]).toEqual([409, "memory-retired", old.body.id]);
    expect((await call(front().url, "GET", `${M}/${byKey.body.id}`)).body.retired).toBeNull();
    // Named by its key, it is a correction itself: the old value holds again, and what held the key retires.
    const back = await retain({ text: "The release branch for the billing service is release/2024.", key: "billing-release-branch" });
    expect([back.status, back.body.id, back.body.duplicate, back.body.retired]).toEqual([200, old.body.id, true, [byKey.body.id]]);
    expect((await call(front().url, "GET", `${M}/${old.body.id}`)).body.retired).toBeNull();
  });

  it("refuses an edit that would break one memory per text or per key, and changes nothing then", async () => {
    const base = front().url;
    const a = await retain({ text: "The docs site builds with mkdocs.", key: "docs-builder" });
    const b = await retain({ text: "The api is documented with redoc." });
    const clash = await call(base, "PATCH", `${M}/${b.body.id}`, { text: "The docs site builds with MkDocs.", importance: 1, tags: ["docs"] });
    expect([clash.status, clash.body.code, clash.body.id]).toEqual([409, "memory-duplicate", a.body.id]);
    const keyClash = await call(base, "PATCH", `${M}/${b.body.id}`, { key: "docs-builder", importance: 1 });
    expect([keyClash.status, keyClash.body.code]).toEqual([409, "memory-duplicate"]);
    expect((await call(base, "GET", `${M}/${b.body.id}`)).body).toMatchObject({ text: "The api is documented with redoc.", importance: 0.5, tags: [], key: null });
    // Retired in the same edit, it may hold a text an active memory holds.
    const retiredToo = await call(base, "PATCH", `${M}/${b.body.id}`, { text: "The docs site builds with MkDocs.", retired: true });
    expect([retiredToo.status, retiredToo.body.retired?.reason]).toEqual([200, "person"]);
  });

  it("fills a token budget, not a count, filters by tags, and answers the same for the same data", async () => {
    for (let i = 0; i < 12; i++) await retain({ text: `Budget probe ${i}: the cache warmer for region ${i} runs hourly ${"and keeps its keys warm ".repeat(i % 3 + 1)}`, tags: i % 2 ? ["cache", "odd"] : ["cache"] });
    const small = await recall({ query: "cache warmer region hourly", budgetTokens: 60 });
    const large = await recall({ query: "cache warmer region hourly", budgetTokens: 2000 });
    expect(small.length).toBeGreaterThan(0);
    expect(large.length).toBeGreaterThan(small.length);
    expect(small.reduce((n, m) => n + m.tokens, 0)).toBeLessThanOrEqual(60);
    const odd = await recall({ query: "cache warmer region hourly", tags: ["odd"] });
    expect(odd.length).toBe(6);
    expect(odd.every((m) => m.tags.includes("odd"))).toBe(true);
    expect(await recall({ query: "cache warmer region hourly", budgetTokens: 2000 })).toEqual(large);
    for (let i = 1; i < large.length; i++) expect(large[i - 1].score).toBeGreaterThanOrEqual(large[i].score);
  });

  it("browses with cursors and filters, and lets a person edit and forget", async () => {
    const base = front().url;
    const seen: string[] = [];
    let before: number | null = null;
    do {
      const page: any = (await call(base, "GET", `${M}?tag=cache&limit=5${before ? `&before=${before}` : ""}`)).body;
      seen.push(...page.memories.map((m: any) => m.id));
      before = page.nextBefore;
    } while (before);
    expect(seen.length).toBe(12);
    expect(new Set(seen).size).toBe(12);
    const target = seen[0]!;
    const edited = await call(base, "PATCH", `${M}/${target}`, { text: "The cache warmer for region 11 runs every 30 minutes.", tags: ["cache", "edited"], importance: 1 });
    expect(edited.body).toMatchObject({ id: target, tags: ["cache", "edited"], importance: 1 });
    expect((await recall({ query: "cache warmer every 30 minutes" }))[0].id).toBe(target);
    const retired = await call(base, "PATCH", `${M}/${target}`, { retired: true });
    expect(retired.body.retired).toMatchObject({ reason: "person", by: null });
    expect((await call(base, "GET", `${M}?retired=only&tag=edited`)).body.memories.map((m: any) => m.id)).toEqual([target]);
    expect((await call(base, "DELETE", `${M}/${target}`)).body).toEqual({ id: target, forgotten: true });
    expect((await call(base, "GET", `${M}/${target}`)).body.code).toBe("memory-not-found");
    expect((await recall({ query: "cache warmer every 30 minutes", includeRetired: true })).map((m) => m.id)).not.toContain(target);
    expect((await call(base, "GET", "/workspaces/nowhere/memory")).body.code).toBe("workspace-not-found");
  });

  it("records a retain on the thread it came from, and lists what the thread recorded", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-1", cwd: work })).body.threadId;
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: "the deploy needs VPN access" });
    const kept = await retain({ text: "Deploys need the VPN: connect before running deploy.sh.", thread: id, seq: sent.body.seq, tags: ["deploy"] });
    expect(kept.status).toBe(201);
    const logged = (await events(base, id)).find((e) => e.kind === "memory-retained")!;
    expect(logged.body).toMatchObject({ workspace: "default", id: kept.body.id, sourceSeq: sent.body.seq, duplicate: false, tags: ["deploy"] });
    expect((await call(base, "GET", `/threads/${id}/memory`)).body.memories.map((m: any) => m.id)).toEqual([kept.body.id]);
    // Another thread that retains the same text recorded it too, and lists it.
    const other = (await call(base, "POST", "/spawn", { model: "sim-1", cwd: work })).body.threadId;
    expect((await retain({ text: "deploys need the VPN: connect before running deploy.sh.", thread: other })).body).toMatchObject({ id: kept.body.id, duplicate: true });
    expect((await call(base, "GET", `/threads/${other}/memory`)).body.memories.map((m: any) => m.id)).toEqual([kept.body.id]);
    // The log names the memory, never its text: forgetting it leaves nothing of it behind.
    expect(JSON.stringify(logged.body)).not.toContain("VPN");
    expect((await retain({ text: "x", thread: id, seq: 999 })).body.code).toBe("event-not-found");
    expect((await retain({ text: "x", seq: 1 })).status).toBe(400);
  });

  it("starts a thread spawned with recall from what its workspace remembers of its first message, and says so", async () => {
    const base = front().url;
    const kept = await retain({ text: "The e2e suite needs the browser binary at /usr/bin/chromium.", tags: ["e2e"] });
    const id = (await call(base, "POST", "/spawn", { model: "sim-1", cwd: work, recall: { budgetTokens: 400, tags: ["e2e"] } })).body.threadId;
    await call(base, "POST", `/threads/${id}/send`, { text: "recall-marker-1 set up the e2e suite's browser" });
    const { requests } = (await (await fetch(`${front().simulatorUrl}/_sim/requests`)).json()) as { requests: { body: unknown }[] };
    const asked = requests.map((r) => JSON.stringify(r.body)).filter((b) => b.includes("recall-marker-1"));
    expect(asked[0]).toContain(`[${kept.body.id}] (fact) The e2e suite needs the browser binary`);
    expect((await events(base, id)).find((e) => e.kind === "memory-recalled")!.body).toMatchObject({ ids: [kept.body.id] });
    // Only the first turn.
    await call(base, "POST", `/threads/${id}/send`, { text: "recall-marker-2 and the browser again" });
    expect((await events(base, id)).filter((e) => e.kind === "memory-recalled")).toHaveLength(1);
  });

  it("reflects with the curator model: reflections cite what they rest on, and a citation that resolves to nothing is dropped", async () => {
    const a = await retain({ text: "Friday deploy of the api failed: migrations locked the users table." });
    const b = await retain({ text: "Friday deploy of the worker failed: a migration held a lock for 10 minutes." });
    const script = JSON.stringify([
      { text: "Migrations that take locks make Friday deploys fail: run them apart from the deploy.", cites: [a.body.id, b.body.id, "mem_invented"] },
      { text: "This one rests on nothing real.", cites: ["mem_nothing"] },
    ]);
    // The simulator, standing in for the curator, answers what this memory's directive scripts.
    await retain({ text: `Reflection probe.\n@sim ${JSON.stringify({ reply: script })}` });
    const r = await call(front().url, "POST", `${M}/reflect`, { limit: 3 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.model).toBe("sim-1");
    expect(r.body.reflections).toHaveLength(1);
    expect(r.body.reflections[0]).toMatchObject({ kind: "reflection", cites: [a.body.id, b.body.id] });
    expect(r.body.droppedCitations.sort()).toEqual(["mem_invented", "mem_nothing"]);
    expect((await call(front().url, "GET", `${M}?kind=reflection`)).body.memories.map((m: any) => m.id)).toContain(r.body.reflections[0].id);
  });
});

describe.each(EVERY_ENGINE)("memory through the runtime's tools on %s", (engine, spec) => {
  it("retains and recalls: the model's calls are the routes'", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd: work, permissions: "ask" })).body.threadId;
    const fact = `On ${engine} the lint step needs NODE_OPTIONS=--max-old-space-size=4096.`;
    const kept = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "retain", input: { text: fact, tags: ["lint"] } }, reply: "kept" }) });
    expect(kept.body.outcome, JSON.stringify(kept.body.failure)).toBe("completed");
    const stored = (await call(base, "GET", `/threads/${id}/memory`)).body.memories;
    expect(stored).toMatchObject([{ text: fact, thread: id, seq: kept.body.seq, tags: ["lint"] }]);
    const asked = await call(base, "POST", `/threads/${id}/send`, { text: sim({ tool: { name: "recall", input: { query: `${engine} lint step memory` } }, reply: "recalled" }) });
    expect(asked.body.outcome, JSON.stringify(asked.body.failure)).toBe("completed");
    const result = (await events(base, id)).filter((e) => e.kind === "tool-result" && String(e.body.name).endsWith("recall")).at(-1)!;
    expect(result.body.output).toContain(stored[0].id);
    expect(result.body.output).toContain("max-old-space-size");
  });
});

describe("memory without a curator, and the alert", () => {
  // One front with no curator for both tests: the alert's test restarts it last.
  const plain = useFront();

  it("reflects with the runtime's default model when no curator model is configured", async () => {
    const f = plain();
    const a = await retain({ text: "The deploy failed on Friday: a migration held a lock." }, f.url);
    const script = JSON.stringify([{ text: "Migrations that lock tables fail deploys: run them apart.", cites: [a.body.id] }]);
    await retain({ text: `The Monday deploy waited on the same lock.\n@sim ${JSON.stringify({ reply: script })}` }, f.url);
    const reflected = await call(f.url, "POST", `${M}/reflect`, {});
    expect(reflected.status, JSON.stringify(reflected.body)).toBe(200);
    expect(reflected.body).toMatchObject({ model: "sim-1", reflections: [{ kind: "reflection", cites: [a.body.id] }] });
  });

  it("reflects by itself once enough memory accumulated (SERVICE_MEMORY_REFLECT_EVERY)", async () => {
    const f = await startFront({ env: { SERVICE_CURATOR_MODEL: "sim-1", SERVICE_MEMORY_REFLECT_EVERY: "3" } });
    try {
      const a = await retain({ text: "The api's p99 doubled after the ORM upgrade." }, f.url);
      const b = await retain({ text: "The worker's queries got slower after the ORM upgrade." }, f.url);
      expect((await call(f.url, "GET", `${M}?kind=reflection`)).body.memories).toEqual([]);
      const script = JSON.stringify([{ text: "The ORM upgrade slowed queries everywhere: profile before the next one.", cites: [a.body.id, b.body.id] }]);
      await retain({ text: `Third memory.\n@sim ${JSON.stringify({ reply: script })}` }, f.url);
      const reflections = await waitFor(async () => {
        const found = (await call(f.url, "GET", `${M}?kind=reflection`)).body.memories;
        return found.length ? found : null;
      });
      expect(reflections).toMatchObject([{ kind: "reflection", cites: [a.body.id, b.body.id] }]);
    } finally {
      await f.stop();
      removeDir(f.dataDir);
    }
  });

  it("raises and clears the alert across a restart", async () => {
    let f = plain();
    const { dataDir } = f;
    try {
      expect((await call(f.url, "GET", "/health")).body.memoryAlert).toBeNull();
      const big = await retain({ text: "x".repeat(9000) }, f.url);
      expect([big.status, big.body.code]).toEqual([413, "memory-too-large"]);
      expect((await call(f.url, "GET", "/health")).body.memoryAlert).toMatchObject({ workspace: "default", code: "memory-too-large" });
      await f.stop();
      // A store that refuses every write: the alert stays open, from when it opened.
      f = await startFront({ dataDir, env: { SERVICE_FAULTS: "memory-retain" } });
      const since = (await call(f.url, "GET", "/health")).body.memoryAlert.since;
      const failed = await retain({ text: "The nightly job needs 8 GB." }, f.url);
      expect([failed.status, failed.body.code]).toEqual([503, "memory-store-failed"]);
      expect((await call(f.url, "GET", "/health")).body.memoryAlert).toMatchObject({ code: "memory-store-failed", since });
      await f.stop();
      f = await startFront({ dataDir });
      expect((await retain({ text: "The nightly job needs 8 GB." }, f.url)).status).toBe(201);
      expect((await call(f.url, "GET", "/health")).body.memoryAlert).toBeNull();
      expect((await call(f.url, "POST", `${M}/recall`, { query: "nightly job memory" })).body.memories).toHaveLength(1);
    } finally {
      // The last front started here; the shared one removes the data directory.
      if (f !== plain()) await f.stop();
    }
  });
});
