import type BetterSqlite3 from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

// From the bench's tool package, whose directory bench/floors.ts passes (it installs it).
const Database = createRequire(join(process.argv[2]!, "package.json"))("better-sqlite3") as typeof BetterSqlite3;

const db = new Database(join(mkdtempSync(join(tmpdir(), "floor-sqlite-")), "log.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = FULL");
db.exec("CREATE TABLE events (seq INTEGER PRIMARY KEY, thread TEXT, ts TEXT, body TEXT)");
const insert = db.prepare("INSERT INTO events (thread, ts, body) VALUES (?, ?, ?)");

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (d: Buffer) => (body += d));
  req.on("end", () => {
    const info = insert.run(req.url, new Date().toISOString(), body);
    const out = JSON.stringify({ seq: Number(info.lastInsertRowid) });
    res.writeHead(202, { "content-type": "application/json", "content-length": Buffer.byteLength(out) });
    res.end(out);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as { port: number };
  console.log(`listening http://127.0.0.1:${port}`);
});
process.on("SIGTERM", () => process.exit(0));
