import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, userInfo } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * The host's runtimes and their secret places, so that a session of one runtime cannot read
 * another's (docs/credentials.md, "Other runtimes on the host"). Each front records its
 * places when it starts, in `<passwd home>/.service/runtimes/<hash of its data dir>.json`,
 * and keeps the entry when it stops: its secrets stay on disk, and hiding them costs
 * nothing. The entries hold paths only, no secret; they live under `~/.service`, which
 * every sandbox hides whole, so no session can read or change them.
 */
interface Entry {
  dataDir: string;
  places: string[];
}

/** Where runtimes keep their state by default: hidden whole from every session. */
function serviceParent(home: string): string {
  return join(home, ".service");
}

function registryOf(home: string): string {
  return join(serviceParent(home), "runtimes");
}

/**
 * The account's home as /etc/passwd (or NSS) gives it, never `HOME`: two runtimes of one
 * user started with different `HOME`s must still meet in one registry. An account with no
 * passwd entry (a container's arbitrary uid) has no other home to agree on.
 */
export function accountHome(): string {
  try {
    const home = userInfo().homedir;
    if (isAbsolute(home) && home !== "/") return home;
  } catch {
    // No passwd entry for this uid.
  }
  return homedir();
}

/** Every account in /etc/passwd with a home of its own, so a front that runs as root also hides another user's runtimes. */
function accounts(): { home: string; uid: number }[] {
  let passwd = "";
  try {
    passwd = readFileSync("/etc/passwd", "utf8");
  } catch {
    // No passwd file (a minimal container): the front's own homes still count.
  }
  return passwd.split("\n").flatMap((line) => {
    const fields = line.split(":");
    const home = fields[5] ?? "";
    const uid = Number(fields[2]);
    return isAbsolute(home) && home !== "/" && Number.isInteger(uid) ? [{ home, uid }] : [];
  });
}

/**
 * Another account's `~/.service`, if it is a real directory that account owns: otherwise
 * that account could point it (a symlink) at `/usr` or a third user's files and have
 * every session of this runtime lose them.
 */
export function othersService(home: string, uid: number): string | null {
  const dir = serviceParent(home);
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === uid ? dir : null;
  } catch {
    return null;
  }
}

/**
 * A place another account's entry names counts only if that account owns it: its entries
 * cannot hide the system (or a third user's files) from this runtime's sessions.
 */
function ownedBy(path: string, uid: number): boolean {
  try {
    return statSync(path).uid === uid;
  } catch {
    return false;
  }
}

/** Each readable entry in `dir`, with the account that wrote it. */
function entriesIn(dir: string): { path: string; uid: number; entry: Entry }[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    try {
      const entry = JSON.parse(readFileSync(path, "utf8")) as Entry;
      if (typeof entry.dataDir !== "string" || !Array.isArray(entry.places)) return [];
      return [{ path, uid: statSync(path).uid, entry }];
    } catch {
      // Not an entry, or removed meanwhile.
      return [];
    }
  });
}

/**
 * Records this runtime's places, and drops entries none of whose places exist any more (a
 * removed data directory has no secret left to hide). Written whole and renamed, owner only.
 */
export function recordPlaces(dataDir: string, places: string[]): void {
  const dir = registryOf(accountHome());
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const { path, entry } of entriesIn(dir)) if (!entry.places.some((p) => existsSync(p))) rmSync(path, { force: true });
  const file = entryOf(dir, dataDir);
  writeFileSync(`${file}.tmp`, JSON.stringify({ dataDir, places } satisfies Entry), { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

function entryOf(dir: string, dataDir: string): string {
  return join(dir, `${createHash("sha256").update(dataDir).digest("hex").slice(0, 16)}.json`);
}

/**
 * Drops `dataDir`'s entry, for a data directory about to be deleted: fences built from then
 * on no longer mask its places. A place that vanishes between a fence's build and bwrap's
 * mount fails a sandbox started in those milliseconds (docs/decisions.md, "A pi session's
 * commands run in one kept sandbox"), so the entry goes first and the places after.
 */
export function forgetPlaces(dataDir: string): void {
  rmSync(entryOf(registryOf(accountHome()), dataDir), { force: true });
}

/**
 * Every place a session must not read, whichever runtime started it: each home's
 * `~/.service` (the default data directory and engine state, and the registry itself), and
 * every place the registries name. The front's own `HOME` counts beside its passwd home:
 * its default places are under it, and an earlier build recorded there. Read again for
 * each session, so a runtime started later is hidden from sessions started after it.
 */
export function registeredPlaces(): string[] {
  const ownUid = process.getuid?.() ?? -1;
  const services = new Set([serviceParent(homedir()), serviceParent(accountHome())]);
  for (const { home, uid } of accounts()) {
    const dir = uid === ownUid ? serviceParent(home) : othersService(home, uid);
    if (dir) services.add(dir);
  }
  const found = [...services];
  for (const service of services)
    for (const { uid, entry } of entriesIn(join(service, "runtimes")))
      for (const place of entry.places)
        if (typeof place === "string" && isAbsolute(place) && (uid === ownUid || ownedBy(place, uid))) found.push(place);
  return found;
}
