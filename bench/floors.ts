import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { ensureToolPackage } from "../test/support/tool-packages.js";

const SQLITE_TOOL = join(import.meta.dirname, "tools/better-sqlite3");

/**
 * The Durable Object floor: a minimal worker that inserts one SQLite row per request
 * in a Durable Object, served on Miniflare's direct socket with no front.
 */
export async function startDurableObjectFloor(): Promise<{ url: string; close(): Promise<void> }> {
  const mf = new Miniflare({
    modules: true,
    compatibilityDate: "2026-04-01",
    cf: false,
    script: `
      import { DurableObject } from "cloudflare:workers";
      export class Log extends DurableObject {
        constructor(ctx, env) {
          super(ctx, env);
          ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, ts TEXT, body TEXT)");
        }
        append(body) {
          this.ctx.storage.sql.exec("INSERT INTO events (ts, body) VALUES (?, ?)", new Date().toISOString(), body);
          return 1;
        }
      }
      export default {
        async fetch(request, env) {
          const name = new URL(request.url).pathname;
          const body = await request.text();
          await env.LOG.get(env.LOG.idFromName(name)).append(body);
          return Response.json({ ok: true }, { status: 202 });
        },
      };`,
    durableObjects: { LOG: { className: "Log", useSQLite: true } },
    durableObjectsPersist: mkdtempSync(join(tmpdir(), "floor-do-")),
    unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
  });
  const url = await mf.unsafeGetDirectURL();
  return { url: url.origin, close: () => mf.dispose() };
}

/**
 * The same floor split as the runtime is: two workerd processes, `/t<n>` on process
 * n % 2, behind the runtime's routed pipe in a process of its own. What two processes
 * give the floor itself, to read the runtime's 64-thread figure against.
 */
export async function startSplitDurableObjectFloor(): Promise<{ url: string; close(): Promise<void> }> {
  const floors = [await startDurableObjectFloor(), await startDurableObjectFloor()];
  const front = await startChild("split-floor-front.ts", floors.map((f) => f.url));
  return {
    url: front.url,
    close: async () => {
      await front.close();
      for (const f of floors) await f.close();
    },
  };
}

/**
 * The naive durable baseline: Node's http server and better-sqlite3, WAL, synchronous=FULL.
 * better-sqlite3 is the bench's own tool package (bench/tools/better-sqlite3), installed
 * here on the first run: it compiles SQLite, which nothing else needs.
 */
export function startSqliteFloor(): Promise<{ url: string; close(): Promise<void> }> {
  ensureToolPackage(SQLITE_TOOL, (line) => console.log(`bench: ${line}`));
  return startChild("sqlite-floor-server.ts", [SQLITE_TOOL]);
}

/** A bench server in a child process that prints `listening <url>`. */
async function startChild(script: string, args: string[]): Promise<{ url: string; close(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", join(import.meta.dirname, script), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve) => {
    child.stdout!.on("data", (d: Buffer) => {
      const m = /listening (http:\/\/\S+)/.exec(String(d));
      if (m) resolve(m[1]!);
    });
  });
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
