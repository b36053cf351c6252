import { existsSync, lstatSync, mkdirSync, readlinkSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { chmod } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { shardDirs } from "../process/shard-layout.js";
import {
  companionOf,
  copyHashed,
  emptyOrAbsent,
  FORMAT,
  hashFile,
  isDir,
  isStore,
  list,
  modeOf,
  octal,
  Refusal,
  within,
  type Entry,
  type Manifest,
} from "./files.js";
import { copyStore, hasTable, replaceRow, select, whereEquals } from "./sqlite.js";

export interface BackupOptions {
  dataDir: string;
  engineStateDir: string;
  target: string;
  /** Also copy `scratch/` (threads' working directories); off by default. */
  scratch: boolean;
  build: string;
  log: (line: string) => void;
}

/**
 * The order namespaces are copied in: the indexes that name threads before the threads
 * (every thread they name is then in the backup), and the Host's running-turn index after
 * them (every turn a thread copy shows running is then in it, for the boot sweep to find).
 */
const ORDER = [/-Catalog$/, /-Workspace$/, null, /-Thread$/, /-Host$/];

function rank(namespace: string): number {
  const i = ORDER.findIndex((re) => re !== null && re.test(namespace));
  return i >= 0 ? i : ORDER.indexOf(null);
}

function vanished(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** A row of miniflare's R2 object index (`_mf_objects`): the key and the body file holding it. */
interface ObjectRow {
  key: string;
  blob_id: string;
  size: number;
  checksums: string;
  [column: string]: unknown;
}

/** Writes the backup directory: copies under `data/` and `engine/`, one manifest entry each. */
class Copier {
  readonly files: Entry[] = [];
  private readonly dirs = new Set<string>();

  constructor(
    readonly target: string,
    private readonly roots: Record<"data" | "engine", string>,
  ) {}

  /** The original of a backup path. */
  source(rel: string): string {
    const [root, ...rest] = rel.split("/");
    return join(this.roots[root as "data" | "engine"], ...rest);
  }

  /** The backup path of an original under `root`. */
  rel(root: "data" | "engine", path: string): string {
    const inner = relative(this.roots[root], path);
    return inner ? `${root}/${inner.split(sep).join("/")}` : root;
  }

  /** Records `rel` and every directory above it (with the originals' modes), creating them. */
  dir(rel: string): void {
    if (this.dirs.has(rel)) return;
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : null;
    if (parent) this.dir(parent);
    mkdirSync(join(this.target, rel), { mode: 0o700 });
    this.dirs.add(rel);
    this.files.push({ path: rel, kind: "dir", mode: octal(modeOf(this.source(rel))) });
  }

  private parentOf(rel: string): void {
    this.dir(rel.slice(0, rel.lastIndexOf("/")));
  }

  /**
   * A SQLite store, copied as of one commit while workerd keeps writing (`copyStore`), and
   * checked. Null if the store vanished first.
   */
  async store(rel: string): Promise<Entry | null> {
    const src = this.source(rel);
    if (!existsSync(src)) return null;
    this.parentOf(rel);
    const dst = join(this.target, rel);
    const mode = modeOf(src);
    copyStore(src, dst);
    await chmod(dst, mode);
    const entry: Entry = { path: rel, kind: "store", mode: octal(mode) };
    this.files.push(entry);
    return entry;
  }

  /** A plain file (or a blob body); null if it vanished before it could be read. */
  async file(rel: string, kind: "file" | "blob" = "file"): Promise<Entry | null> {
    this.parentOf(rel);
    const dst = join(this.target, rel);
    try {
      const src = this.source(rel);
      const mode = modeOf(src);
      const entry: Entry = { path: rel, kind, mode: octal(mode), ...(await copyHashed(src, dst, mode)) };
      this.files.push(entry);
      return entry;
    } catch (err) {
      if (!vanished(err)) throw err;
      rmSync(dst, { force: true });
      return null;
    }
  }

  symlink(rel: string): void {
    this.parentOf(rel);
    this.files.push({ path: rel, kind: "symlink", mode: "0777", target: readlinkSync(this.source(rel)) });
  }

  /**
   * Everything under `rel`: stores by the backup API (their -wal/-shm/-journal are left
   * behind), other files copied, symlinks recorded. `skip` leaves out originals.
   */
  async tree(rel: string, skip: (path: string) => boolean = () => false): Promise<void> {
    const src = this.source(rel);
    if (!isDir(src)) return;
    this.dir(rel);
    const names = list(src);
    const stores = new Set(names.filter((n) => isFile(join(src, n)) && isStore(join(src, n))));
    for (const name of names) {
      const path = join(src, name);
      const companion = companionOf(name);
      if (skip(path) || (companion !== null && stores.has(companion))) continue;
      await this.entry(`${rel}/${name}`, stores.has(name), skip);
    }
  }

  private async entry(rel: string, store: boolean, skip: (path: string) => boolean): Promise<void> {
    let st;
    try {
      st = lstatSync(this.source(rel));
    } catch (err) {
      if (vanished(err)) return;
      throw err;
    }
    if (st.isDirectory()) await this.tree(rel, skip);
    else if (st.isSymbolicLink()) this.symlink(rel);
    else if (st.isFile()) await (store ? this.store(rel) : this.file(rel));
  }

  /** The manifest, written last: a backup directory without one is incomplete. */
  async finish(manifest: Omit<Manifest, "files" | "finishedAt">): Promise<Manifest> {
    for (const entry of this.files) if (entry.kind === "store") Object.assign(entry, await hashFile(join(this.target, entry.path)));
    const done: Manifest = { ...manifest, finishedAt: new Date().toISOString(), files: this.files };
    const path = join(this.target, "manifest.json");
    writeFileSync(`${path}.tmp`, JSON.stringify(done, null, 2) + "\n", { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
    return done;
  }
}

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The blob directory is miniflare's R2 bucket: an object index (a SQLite store under
 * `blobs/miniflare-R2BucketObject/`, key `sha256/<hex>` to a body id) and the bodies
 * (`blobs/<bucket>/blobs/<body id>`, written once). The index is copied first (after the
 * Durable Object stores, so it names every blob their copies refer to), then exactly the
 * bodies the index copy names. A body written again (a repeated large body) gets a new id
 * and the old file is deleted: such a row is re-read from the live index and its copy updated.
 */
async function copyBlobs(copier: Copier, dataDir: string, name: string): Promise<number> {
  const blobsDir = join(dataDir, name);
  if (!isDir(blobsDir)) return 0;
  const bodyDirs = list(blobsDir)
    .map((name) => join(blobsDir, name, "blobs"))
    .filter(isDir);
  const indexes: Entry[] = [];
  const storesIn = async (dir: string): Promise<void> => {
    for (const name of list(dir)) {
      const path = join(dir, name);
      if (isDir(path) && !bodyDirs.includes(path)) await storesIn(path);
      else if (isFile(path) && isStore(path)) {
        const entry = await copier.store(copier.rel("data", path));
        if (entry) indexes.push(entry);
      }
    }
  };
  await storesIn(blobsDir);

  const findBody = (id: string) => bodyDirs.map((d) => join(d, id)).find((p) => existsSync(p)) ?? null;
  let bodies = 0;
  let recognised = false;
  for (const index of indexes) {
    const copy = join(copier.target, index.path);
    if (!hasTable(copy, "_mf_objects", { copy: true })) continue;
    recognised = true;
    const rows = select<ObjectRow>(copy, "SELECT * FROM _mf_objects WHERE blob_id IS NOT NULL", { copy: true });
    const parts = hasTable(copy, "_mf_multipart_parts", { copy: true }) ? select<{ blob_id: string }>(copy, "SELECT blob_id FROM _mf_multipart_parts", { copy: true }).map((p) => p.blob_id) : [];
    for (const row of rows) {
      await copyBody(copier, copy, copier.source(index.path), row, findBody);
      bodies++;
    }
    for (const id of parts) {
      const path = findBody(id);
      if (!path || !(await copier.file(copier.rel("data", path), "blob"))) throw new Error(`a multipart body ${id} vanished during the backup`);
      bodies++;
    }
  }
  // Whatever else lies in the blob directory; bodies too when no index was recognised.
  await copier.tree(`data/${name}`, (path) => (recognised && bodyDirs.some((d) => within(path, d))) || indexes.some((i) => copier.source(i.path) === path));
  return bodies;
}

async function copyBody(
  copier: Copier,
  /** The index's copy in the backup. */
  copy: string,
  liveIndex: string,
  row: ObjectRow,
  findBody: (id: string) => string | null,
): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const path = findBody(row.blob_id);
    const entry = path ? await copier.file(copier.rel("data", path), "blob") : null;
    if (entry) {
      const want = (JSON.parse(row.checksums) as { sha256?: string }).sha256;
      if (entry.bytes !== row.size || (want && want !== entry.sha256)) throw new Error(`blob ${row.key}: the copied body does not match its index row`);
      return;
    }
    const now = select<ObjectRow>(liveIndex, `SELECT * FROM _mf_objects WHERE ${whereEquals("key", row.key)}`)[0];
    if (!now?.blob_id || now.blob_id === row.blob_id) break;
    replaceRow(copy, "_mf_objects", now);
    row = now;
  }
  throw new Error(`blob ${row.key} vanished during the backup`);
}

/** The shards' store directories present in the data directory (local-front/process/shard-layout.ts), shard 0 first. */
function shardStoreDirs(dataDir: string): { objects: string; blobs: string }[] {
  const found: { objects: string; blobs: string }[] = [];
  for (let n = 0; ; n++) {
    const dirs = shardDirs(n);
    if (n > 0 && !isDir(join(dataDir, dirs.objects)) && !isDir(join(dataDir, dirs.blobs))) return found;
    found.push(dirs);
  }
}

export async function backup(o: BackupOptions): Promise<Manifest> {
  if (!isDir(o.dataDir)) throw new Refusal(`data directory ${o.dataDir} does not exist`);
  if (!emptyOrAbsent(o.target)) throw new Refusal(`${o.target} exists and is not an empty directory`);
  for (const [what, dir] of [["data directory", o.dataDir], ["engine state directory", o.engineStateDir]] as const)
    if (within(o.target, dir)) throw new Refusal(`${o.target} lies inside the ${what} ${dir}`);
  const startedAt = new Date().toISOString();
  mkdirSync(o.target, { recursive: true, mode: 0o700 });
  // The copies hold secrets (accounts, tokens, the proxy's CA key): owner only.
  await chmod(o.target, 0o700);
  const copier = new Copier(o.target, { data: o.dataDir, engine: o.engineStateDir });
  copier.dir("data");

  // 1. Durable Object stores, namespace by namespace, each listed when its turn comes:
  //    the catalog and other indexes first, threads last, so an index never names a
  //    thread whose store the backup lacks.
  //    The order holds across shards: every shard's threads (`do/`, `do-1/`) come after
  //    the indexes and before the host, which live on shard 0.
  const shards = shardStoreDirs(o.dataDir);
  const done = new Set<string>();
  for (;;) {
    const next = shards
      .flatMap(({ objects }, n) => list(join(o.dataDir, objects)).map((name) => ({ path: `${objects}/${name}`, name, n })))
      .filter((c) => !done.has(c.path))
      .sort((a, b) => rank(a.name) - rank(b.name) || a.n - b.n || a.name.localeCompare(b.name))[0];
    if (next === undefined) break;
    done.add(next.path);
    await copier.tree(`data/${next.path}`);
  }
  // 2. Each shard's blob index, then the bodies it names.
  let blobs = 0;
  for (const shard of shards) blobs += await copyBlobs(copier, o.dataDir, shard.blobs);

  // 3. The data directory's other files: workspaces.json, accounts.json,
  //    accounts-tokens.json, proxy/ (CA and placeholder key). Not the lock, not scratch
  //    unless asked, not the engine state directory when it lies inside.
  const skip = new Set(
    [...shards.flatMap((d) => [d.objects, d.blobs]), "front.pid", ...(o.scratch ? [] : ["scratch"])].map((n) => join(o.dataDir, n)),
  );
  await copier.tree("data", (path) => skip.has(path) || path === o.engineStateDir);

  // 4. Engine resume state, after the stores: every turn the logs name has its session.
  const engineState = isDir(o.engineStateDir);
  if (engineState) await copier.tree("engine", (path) => path === o.dataDir);

  const manifest = await copier.finish({
    format: FORMAT,
    startedAt,
    build: o.build,
    source: { dataDir: o.dataDir, engineStateDir: o.engineStateDir },
    engineState,
    scratch: o.scratch,
  });
  const count = (kind: Entry["kind"]) => manifest.files.filter((f) => f.kind === kind).length;
  const bytes = manifest.files.reduce((n, f) => n + (f.bytes ?? 0), 0);
  o.log(
    `backup: ${o.target}: ${count("store")} stores, ${blobs} blobs, ${count("file")} other files, ${(bytes / 1e6).toFixed(1)} MB` +
      ` from ${o.dataDir}${engineState ? ` and ${o.engineStateDir}` : ` (no engine state at ${o.engineStateDir})`}`,
  );
  return manifest;
}
