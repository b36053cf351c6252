import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeDir, startFront, type Front } from "../support/front.js";
import { call } from "../support/http.js";

/**
 * The caller rules as a browser meets them: headless Chromium (Debian's package, which the
 * test setup installs) loads pages from an allowed origin, a foreign one, and a rebinding
 * name, and each page talks to the real front the way a web page can.
 */
let front: Front;
let browser: Browser;
let app: Server;
let stranger: Server;
let appOrigin: string;
let strangerOrigin: string;

const PAGE = "<!doctype html><title>page</title><p>page</p>";

async function pageServer(): Promise<[Server, string]> {
  const server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html" }).end(PAGE));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

async function threadCount(): Promise<number> {
  return (await call(front.url, "GET", "/threads?limit=200&archived=all")).body.threads.length;
}

beforeAll(async () => {
  [app, appOrigin] = await pageServer();
  [stranger, strangerOrigin] = await pageServer();
  front = await startFront({ env: { SERVICE_ALLOWED_ORIGINS: appOrigin } });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    // --no-sandbox: the tests run as root, where Chromium's own sandbox will not start.
    // Chromium's Local Network Access checks would stop the rebinding page before it reached
    // the runtime; other browsers have no such check, so the runtime must refuse it itself.
    args: [
      "--no-sandbox",
      "--host-resolver-rules=MAP rebind.test 127.0.0.1",
      "--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await front?.stop();
  if (front) removeDir(front.dataDir);
  app?.close();
  stranger?.close();
});

describe("a browser page on an allowed origin", () => {
  it("spawns through a preflight, posts a message, follows the log with EventSource, and opens stream and the workspace feeds", async () => {
    const page = await browser.newPage();
    await page.goto(appOrigin);
    const seen = await page.evaluate(async (base) => {
      // JSON is not a "simple" content type: the browser sends a preflight first.
      const spawned = await fetch(`${base}/spawn`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "from a page" }) });
      const { threadId } = (await spawned.json()) as { threadId: string };
      const events: string[] = [];
      const source = new EventSource(`${base}/threads/${threadId}/follow?after=0`);
      const opened = new Promise<void>((resolve, reject) => {
        source.onopen = () => resolve();
        source.onerror = () => reject(new Error("EventSource failed"));
      });
      const arrived = new Promise<void>((resolve) => {
        source.onmessage = (e) => {
          events.push(e.data as string);
          if ((e.data as string).includes("hello from the page")) resolve();
        };
      });
      await opened;
      const posted = await fetch(`${base}/threads/${threadId}/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ text: "hello from the page", hold: true }) });
      await Promise.race([arrived, new Promise((r) => setTimeout(r, 10_000))]);
      source.close();
      // The live deltas and the workspace feeds are streams a page follows too.
      const opens = await Promise.all(
        [`${base}/threads/${threadId}/stream`, `${base}/workspaces/default/events`, `${base}/workspaces/default/changes`].map(
          (url) =>
            new Promise<string>((resolve) => {
              const s = new EventSource(url);
              s.onopen = () => (s.close(), resolve("open"));
              s.onerror = () => (s.close(), resolve("error"));
            }),
        ),
      );
      return { spawnStatus: spawned.status, threadId, postStatus: posted.status, events, opens };
    }, front.url);
    expect(seen.spawnStatus).toBe(201);
    expect(seen.postStatus).toBe(202);
    expect(seen.events.some((e) => e.includes("hello from the page"))).toBe(true);
    expect(seen.opens).toEqual(["open", "open", "open"]);
    const row = await call(front.url, "GET", `/threads/${seen.threadId}`);
    expect(row.body.title ?? row.body.thread?.title).toBe("from a page");
    await page.close();
  });
});

describe("a browser page on any other origin", () => {
  it("cannot spawn with a simple POST, read the thread list, or open a follow", async () => {
    const before = await threadCount();
    const id = (await call(front.url, "POST", "/spawn", {})).body.threadId as string;
    const page = await browser.newPage();
    await page.goto(strangerOrigin);
    const result = await page.evaluate(
      async ({ base, id }) => {
        // no-cors: the browser sends it and shows the page nothing; the runtime must refuse it anyway.
        await fetch(`${base}/spawn`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ permissions: "allow" }) });
        await fetch(`${base}/threads/${id}/messages`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ text: "run id -un", hold: true }) });
        const read = await fetch(`${base}/threads`).then(
          () => "read",
          () => "blocked",
        );
        const follow = await new Promise<string>((resolve) => {
          const source = new EventSource(`${base}/threads/${id}/follow?after=0`);
          source.onopen = () => (source.close(), resolve("open"));
          source.onerror = () => (source.close(), resolve("error"));
        });
        return { read, follow };
      },
      { base: front.url, id },
    );
    expect(result).toEqual({ read: "blocked", follow: "error" });
    expect(await threadCount()).toBe(before + 1);
    const log = (await call(front.url, "GET", `/threads/${id}/tail?after=0`)).body.events as { kind: string }[];
    expect(log.filter((e) => e.kind === "message")).toEqual([]);
    await page.close();
  });

  it("cannot use DNS rebinding: a page whose name resolves to loopback is refused on its own origin", async () => {
    const before = await threadCount();
    const port = new URL(front.url).port;
    const rebound = `http://rebind.test:${port}`;
    const page = await browser.newPage();
    // The attacker's server answered the page itself; its name now resolves to 127.0.0.1.
    await page.route(`${rebound}/`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: PAGE }));
    await page.goto(`${rebound}/`);
    const result = await page.evaluate(async () => {
      const list = await fetch("/threads");
      const spawn = await fetch("/spawn", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ permissions: "allow" }) });
      return { list: [list.status, ((await list.json()) as { code?: string }).code], spawn: [spawn.status, ((await spawn.json()) as { code?: string }).code] };
    });
    expect(result).toEqual({ list: [403, "untrusted-caller"], spawn: [403, "untrusted-caller"] });
    expect(await threadCount()).toBe(before);
    await page.close();
  });
});
