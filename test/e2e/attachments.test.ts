import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeDir } from "../support/front.js";
import { call, events } from "../support/http.js";
import { EVERY_ENGINE } from "../support/engines.js";
import { useFront } from "../support/use-front.js";

const LIMIT = 65_536;
const front = useFront({ env: { SERVICE_ATTACHMENT_MAX_BYTES: String(LIMIT) } });
const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

async function simRequests(marker: string): Promise<string[]> {
  const { requests } = (await (await fetch(`${front().simulatorUrl}/_sim/requests`)).json()) as { requests: { body: unknown }[] };
  return requests.map((r) => JSON.stringify(r.body)).filter((b) => b.includes(marker));
}

describe.each(EVERY_ENGINE)("attachments on %s", (engine, spec) => {
  it("stores them by hash, places them in the working directory, names them in the prompt, and gives the image to the model", async () => {
    const base = front().url;
    const cwd = mkdtempSync(join(tmpdir(), `agent-runtime-attach-${engine}-`));
    dirs.push(cwd);
    const id = (await call(base, "POST", "/spawn", { ...spec, cwd, permissions: "allow" })).body.threadId as string;
    const marker = `attach-${engine}-1`;
    const sent = await call(base, "POST", `/threads/${id}/send`, {
      text: `${marker} read these`,
      attachments: [
        { name: "notes.txt", mediaType: "text/plain", text: "remember the blue door" },
        { name: "dot.png", mediaType: "image/png", base64: PNG },
      ],
    });
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const { attachments } = (await call(base, "GET", `/threads/${id}/attachments`)).body;
    expect(attachments).toEqual([
      { seq: sent.body.seq, name: "notes.txt", mediaType: "text/plain", bytes: 22, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), path: `.attachments/${sent.body.seq}/notes.txt` },
      { seq: sent.body.seq, name: "dot.png", mediaType: "image/png", bytes: Buffer.from(PNG, "base64").length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/), path: `.attachments/${sent.body.seq}/dot.png` },
    ]);
    // The log keeps the references, not the bytes.
    const message = (await events(base, id)).find((e) => e.seq === sent.body.seq)!;
    expect(message.body.attachments).toEqual(attachments.map(({ seq: _s, path: _p, ...ref }: Record<string, unknown>) => ref));
    const image = await fetch(`${base}/threads/${id}/attachments/${attachments[1].sha256}`);
    expect([image.status, image.headers.get("content-type")]).toEqual([200, "image/png"]);
    expect(Buffer.from(await image.arrayBuffer()).toString("base64")).toBe(PNG);
    expect(readFileSync(join(cwd, attachments[0].path), "utf8")).toBe("remember the blue door");
    const asked = (await simRequests(marker)).at(-1)!;
    expect(asked).toContain(`[attached: .attachments/${sent.body.seq}/notes.txt (text/plain, 22 bytes)]`);
    expect(asked).toMatch(/"type":"(image|image_url|input_image)"/);
    // The next turn's history names the files and carries no image bytes again.
    await call(base, "POST", `/threads/${id}/send`, { text: `${marker}-later and now?` });
    const later = (await simRequests(`${marker}-later`)).at(-1)!;
    expect(later).toContain(`.attachments/${sent.body.seq}/dot.png`);
  });
});

describe("attachments the runtime refuses or keeps from a model", () => {
  it("refuses one over the limit, bad base64 and a name given twice, writing nothing", async () => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-1" })).body.threadId as string;
    const big = await call(base, "POST", `/threads/${id}/messages`, { text: "x", attachments: [{ name: "big.bin", mediaType: "application/octet-stream", base64: Buffer.alloc(LIMIT + 1).toString("base64") }] });
    expect([big.status, big.body.code, big.body.limit]).toEqual([413, "attachment-too-large", LIMIT]);
    const bad = await call(base, "POST", `/threads/${id}/messages`, { text: "x", attachments: [{ name: "a", mediaType: "text/plain", base64: "not base64!" }] });
    expect([bad.status, bad.body.code]).toEqual([400, "attachment-invalid"]);
    const twice = await call(base, "POST", `/threads/${id}/messages`, { text: "x", attachments: [{ name: "a", mediaType: "text/plain", text: "1" }, { name: "a", mediaType: "text/plain", text: "2" }] });
    expect([twice.status, twice.body.code]).toEqual([400, "attachment-invalid"]);
    expect((await call(base, "POST", `/threads/${id}/messages`, { text: "x", attachments: [{ name: "../up", mediaType: "text/plain", text: "1" }] })).status).toBe(400);
    expect((await events(base, id)).filter((e) => e.kind === "message")).toHaveLength(0);
    const unknown = await call(base, "GET", `/threads/${id}/attachments/${"0".repeat(64)}`);
    expect([unknown.status, unknown.body.code]).toEqual([404, "attachment-not-found"]);
  });

  it.each([
    ["pi", {}],
    ["engine_b", { engine: "engine_b" }],
  ])("gives a model without image input the file and its name, never the image (%s)", async (engine, spec) => {
    const base = front().url;
    const id = (await call(base, "POST", "/spawn", { model: "sim-2", ...spec })).body.threadId as string;
    const marker = `text-only-${engine}`;
    const sent = await call(base, "POST", `/threads/${id}/send`, { text: `${marker} look`, attachments: [{ name: "dot.png", mediaType: "image/png", base64: PNG }] });
    // The simulator refuses image input to sim-2, as a provider refuses it to a text-only model.
    expect(sent.body.outcome, JSON.stringify(sent.body.failure)).toBe("completed");
    const asked = (await simRequests(marker)).at(-1)!;
    expect(asked).toContain(".attachments/");
    expect(asked).not.toMatch(/"type":"(image|image_url|input_image)"/);
  });
});
